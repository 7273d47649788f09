"""kiln.mindrecord — MindSpore's `mindspore.mindrecord`: MindRecord files, the same bytes as MindSpore's.

`FileWriter` writes rows (dicts) under a schema; `FileReader` reads them back as dicts; `kiln.dataset.MindDataset`
reads them into a pipeline. Files written by MindSpore 2.10 load in Kiln with identical rows and files Kiln writes
load in MindSpore. The format is described in Note [MindRecord format] (kiln/mindrecord/_format.py) and
docs/dataset.md; MindSpore's exception types are in `kiln.mindrecord.errors` (also exported here).

`Cifar10ToMR` converts CIFAR-10's Python archive. Not provided: MindPage, the other *ToMR converters, and
encryption (set_enc_key/set_enc_mode/set_dec_mode)."""
from .errors import (MindRecordException, MRMAddSchemaError, MRMCommitError, MRMDefineIndexError,
                     MRMGetMetaError, MRMInvalidSchemaError, MRMOpenForAppendError, MRMWriteDatasetError,
                     ParamTypeError, ParamValueError, PathNotExistsError)
from .cifar10_to_mr import Cifar10ToMR
from .filereader import FileReader
from .filewriter import FileWriter

__all__ = ["FileWriter", "FileReader", "MindRecordException", "ParamValueError",
           "ParamTypeError", "MRMInvalidSchemaError", "MRMAddSchemaError", "MRMGetMetaError", "MRMDefineIndexError",
           "MRMWriteDatasetError", "MRMCommitError", "MRMOpenForAppendError", "PathNotExistsError", "Cifar10ToMR"]

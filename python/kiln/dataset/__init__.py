"""kiln.dataset — MindSpore's `mindspore.dataset`: data sources, pipeline operations and iterators.

Sources: NumpySlicesDataset, GeneratorDataset, MnistDataset, Cifar10Dataset, Cifar100Dataset, ImageFolderDataset, CSVDataset,
MindDataset (MindRecord files, see kiln.mindrecord).
Samplers: SequentialSampler, RandomSampler, DistributedSampler, SubsetSampler, SubsetRandomSampler,
WeightedRandomSampler, PKSampler, Sampler. Operations are methods of `Dataset` (map, batch, shuffle, repeat, project, rename,
zip, concat, take, skip, split, filter); iterators: `create_tuple_iterator`, `create_dict_iterator`.
Per-sample operations live in `kiln.dataset.transforms` and `kiln.dataset.vision`. See docs/dataset.md."""
from . import config  # noqa: F401 (re-export)
from .engine.cache import DatasetCache  # noqa: F401 (re-export)
from .engine.datasets import Dataset
from .engine.file_sources import Cifar10Dataset, Cifar100Dataset, CSVDataset, ImageFolderDataset, MnistDataset, Shuffle  # noqa: F401 (re-export)
from .engine.tfrecord_source import Schema, TFRecordDataset  # noqa: F401 (re-export)
from .engine.iterators import DictIterator, TupleIterator  # noqa: F401 (re-export)
from .engine.mindrecord_source import MindDataset  # noqa: F401 (re-export)
from .engine.operations import BatchDataset, BatchInfo, FilterDataset, MapDataset  # noqa: F401 (re-export)
from .engine.structural import (ConcatDataset, ProjectDataset, RenameDataset, RepeatDataset, ShuffleDataset,  # noqa: F401 (re-export)
                                SkipDataset, TakeDataset, ZipDataset)
from .engine.sources import GeneratorDataset, NumpySlicesDataset  # noqa: F401 (re-export)
from .samplers import (DistributedSampler, PKSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,  # noqa: F401 (re-export)
                       SubsetSampler, WeightedRandomSampler)
from . import transforms  # noqa: F401 (re-export)
from . import vision  # noqa: F401 (re-export)
from . import text  # noqa: F401 (re-export)
from . import audio  # noqa: F401 (re-export)


def zip(datasets):  # MindSpore's name
    """Zips a tuple of datasets (rows side by side; as many rows as the shortest). See Dataset.zip.

    Raises:
        TypeError: not a tuple of Datasets. ValueError: fewer than 2 datasets, duplicate column names."""
    if not isinstance(datasets, tuple) or len(datasets) < 2:
        raise ValueError(f"zip: datasets must be a tuple of at least 2 Datasets, but got {datasets!r:.100}.")
    if not isinstance(datasets[0], Dataset):
        raise TypeError(f"zip: every input must be a Dataset, but got {type(datasets[0]).__name__}.")
    return datasets[0].zip(datasets[1:])

"""The engine of kiln.dataset: pipeline nodes, sources, iterators and workers. As MindSpore's
`mindspore.dataset.engine`, it also exports the dataset classes and the samplers (`from mindspore.dataset.engine
import GeneratorDataset`)."""
from .datasets import Dataset  # noqa: F401 (re-export)
from .file_sources import Cifar10Dataset, Cifar100Dataset, CSVDataset, ImageFolderDataset, MnistDataset, Shuffle  # noqa: F401 (re-export)
from .tfrecord_source import Schema, TFRecordDataset  # noqa: F401 (re-export)
from .iterators import DictIterator, TupleIterator  # noqa: F401 (re-export)
from .mindrecord_source import MindDataset  # noqa: F401 (re-export)
from .operations import BatchDataset, BatchInfo, FilterDataset, MapDataset  # noqa: F401 (re-export)
from .sources import GeneratorDataset, NumpySlicesDataset  # noqa: F401 (re-export)
from .structural import (ConcatDataset, ProjectDataset, RenameDataset, RepeatDataset, ShuffleDataset,  # noqa: F401 (re-export)
                         SkipDataset, TakeDataset, ZipDataset)
from ..samplers import (DistributedSampler, RandomSampler, Sampler, SequentialSampler,  # noqa: F401 (re-export)
                        SubsetRandomSampler, SubsetSampler, WeightedRandomSampler)

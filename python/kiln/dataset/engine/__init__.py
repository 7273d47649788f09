"""The engine of kiln.dataset: pipeline nodes, sources, iterators and workers. As MindSpore's
`mindspore.dataset.engine`, it also exports the dataset classes and the samplers (`from mindspore.dataset.engine
import GeneratorDataset`)."""
from .datasets import Dataset  # noqa: F401
from .file_sources import Cifar10Dataset, CSVDataset, ImageFolderDataset, MnistDataset, Shuffle  # noqa: F401
from .tfrecord_source import Schema, TFRecordDataset  # noqa: F401
from .iterators import DictIterator, TupleIterator  # noqa: F401
from .mindrecord_source import MindDataset  # noqa: F401
from .operations import BatchDataset, BatchInfo, FilterDataset, MapDataset  # noqa: F401
from .sources import GeneratorDataset, NumpySlicesDataset  # noqa: F401
from .structural import (ConcatDataset, ProjectDataset, RenameDataset, RepeatDataset, ShuffleDataset,  # noqa: F401
                         SkipDataset, TakeDataset, ZipDataset)
from ..samplers import (DistributedSampler, RandomSampler, Sampler, SequentialSampler,  # noqa: F401
                        SubsetRandomSampler, SubsetSampler, WeightedRandomSampler)

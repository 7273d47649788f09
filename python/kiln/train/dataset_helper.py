"""MindSpore's DatasetHelper and connect_network_with_dataset: the pieces of Model's loop that custom training loops
use directly.

    helper = DatasetHelper(dataset, dataset_sink_mode=True, sink_size=100, epoch_num=10)
    net = connect_network_with_dataset(train_net, helper)
    for epoch in range(10):
        for inputs in helper:          # sink mode: `dataset_size // sink_size` empty tuples per epoch
            loss = net(*inputs)        # runs `sink_size` steps on the next batches; the last step's outputs

Without sink mode the helper yields each batch's columns (a list of Tensors), one epoch per iteration, and the
network is called on them as usual. In sink mode the network returned by connect_network_with_dataset reads its
batches itself through kiln.data_sink (a compiled step and a producer thread; MindSpore 2.10 supports sink mode only
on Ascend/GPU, Kiln on the CPU too), so each call runs sink_size steps — as MindSpore's GetNext-fed graph does.
"""
import numbers

from ..common import dtype as mstype
from ..nn.cell import Cell
from .data_sink import data_sink

__all__ = ["DatasetHelper", "connect_network_with_dataset"]


def _int(value, name, low):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"For 'DatasetHelper', the argument '{name}' must be int, but got {type(value).__name__}.")
    if value < low and not (name == "sink_size" and value == -1):
        raise ValueError(f"For 'DatasetHelper', the argument '{name}' must be "
                         f"{'-1 or positive' if name == 'sink_size' else f'>= {low}'}, but got {value}.")
    return int(value)


class DatasetHelper:
    """Iterates a dataset the way Model's loop does (module docstring).

    Args:
        dataset (Dataset): a kiln.dataset pipeline.
        dataset_sink_mode (bool): True (default): sink mode — iteration yields one empty tuple per sink, and a network
            connected with connect_network_with_dataset reads the batches; False: iteration yields the batches.
        sink_size (int): steps per sink, -1 (default) for the dataset size; sink mode only.
        epoch_num (int): epochs the helper will be iterated (>= 1; the dataset iterator is made for them).

    Raises:
        TypeError: bad argument types. ValueError: sink_size 0 or < -1, epoch_num < 1, an empty dataset.
    """

    def __init__(self, dataset, dataset_sink_mode=True, sink_size=-1, epoch_num=1):
        if not isinstance(dataset_sink_mode, bool):
            raise TypeError(f"For 'DatasetHelper', the argument 'dataset_sink_mode' must be bool, but got "
                            f"{type(dataset_sink_mode).__name__}.")
        if not hasattr(dataset, "create_tuple_iterator") or not hasattr(dataset, "get_dataset_size"):
            raise TypeError(f"For 'DatasetHelper', the argument 'dataset' must be a Dataset, but got "
                            f"{type(dataset).__name__}.")
        sink_size = _int(sink_size, "sink_size", 1)
        self._epoch_num = _int(epoch_num, "epoch_num", 1)
        size = dataset.get_dataset_size()
        if size <= 0:
            raise ValueError("For 'DatasetHelper', the dataset is empty (its dataset size is 0).")
        self.dataset = dataset
        self.dataset_sink_mode = dataset_sink_mode
        self._size = size
        self._sink_size = size if sink_size == -1 else sink_size
        self._iterator = None
        self._sink_fn = None  # (network, sink function) once a network is connected

    def __iter__(self):
        if self.dataset_sink_mode:
            # MindSpore's loop count: the batches of one epoch in sinks of sink_size (at least one sink)
            for _ in range(max(1, self._size // self._sink_size)):
                yield ()
            return
        if self._iterator is None:
            self._iterator = self.dataset.create_tuple_iterator(num_epochs=self._epoch_num)
        for row in self._iterator:
            yield list(row)

    def sink_size(self):
        """Steps per sink (the dataset size for sink_size=-1). RuntimeError outside sink mode (MindSpore has no
        sink size there either)."""
        if not self.dataset_sink_mode:
            raise RuntimeError("For 'DatasetHelper', sink_size() is only defined in dataset sink mode.")
        return self._sink_size

    def types_shapes(self):
        """(types, shapes) of the dataset's columns: lists of mindspore dtypes and of shapes."""
        return [mstype.pytype_to_dtype(t) for t in self.dataset.output_types()], self.dataset.output_shapes()

    def release(self):
        """Stops the sink's producer thread (sink mode; nothing otherwise). The connected network cannot run after."""
        if self._sink_fn is not None:
            self._sink_fn[1]._kiln_sink.shutdown()


class _SinkNetwork(Cell):
    """The network of connect_network_with_dataset in sink mode: each call runs sink_size steps of `network` on the
    dataset's next batches and returns the last step's outputs."""

    def __init__(self, network, sink):
        super().__init__(auto_prefix=False)
        self.network = network
        self._sink = sink

    def __call__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError("The network of connect_network_with_dataset reads its inputs from the dataset: call it "
                            "with the (empty) inputs DatasetHelper yields in sink mode, not with tensors.")
        return self._sink()

    def construct(self, *args):
        return self._sink()


def connect_network_with_dataset(network, dataset_helper):
    """The network to call in a DatasetHelper loop in sink mode: `net()` (or `net(*inputs)` with the helper's empty
    inputs) runs sink_size steps of `network` (compiled, fed by kiln.data_sink) and returns the last outputs. One
    dataset connects to one network (the same network may be connected again).

    Raises:
        RuntimeError: the helper is not in sink mode (as MindSpore). ValueError: the dataset is connected to another
            network. TypeError: bad argument types.
    """
    if not isinstance(dataset_helper, DatasetHelper):
        raise TypeError(f"For 'connect_network_with_dataset', the argument 'dataset_helper' must be a DatasetHelper, "
                        f"but got {type(dataset_helper).__name__}.")
    if not callable(network):
        raise TypeError(f"For 'connect_network_with_dataset', the network must be a Cell or callable, but got "
                        f"{type(network).__name__}.")
    if not dataset_helper.dataset_sink_mode:
        raise RuntimeError("The API 'connect_network_with_dataset' should be called in dataset sink mode.")
    if dataset_helper._sink_fn is not None:
        connected, sink = dataset_helper._sink_fn
        if connected is not network:
            raise ValueError("The dataset has been connected to other network, please check the code.")
    else:
        sink = data_sink(network, dataset_helper.dataset, dataset_helper._sink_size)
        dataset_helper._sink_fn = (network, sink)
    return _SinkNetwork(network, sink)

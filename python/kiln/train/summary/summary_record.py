"""SummaryRecord (MindSpore 2.10's `mindspore.train.summary.SummaryRecord`), writing TensorBoard event files.

MindSpore writes its own summary format (MindInsight's `summary.proto`, files named
`<prefix>.out.events.summary.<time>.<device>.<host><suffix>`); Kiln writes TensorBoard's event files
(`<prefix>.out.tfevents.<time>.<device>.<host><suffix>`, "tfevents" being what TensorBoard looks for), read by
TensorBoard and tensorboardX's readers. See docs/summaries.md and docs/decisions/summaries.md.
"""
import atexit
import logging
import os
import platform
import re
import threading
import time
from urllib.parse import quote

import numpy as np

from ...common.tensor import Tensor as _Tensor
from ...ops import summary_ops as _summary_ops
from .._utils import _make_directory
from ._event_file import EventFile, FileFull

__all__ = ["SummaryRecord"]

_logger = logging.getLogger("kiln.train")
_instance_lock = threading.Lock()
_TENSOR_PLUGINS = ("tensor", "scalar", "image", "histogram")
_MINDINSIGHT_PLUGINS = ("graph", "train_lineage", "eval_lineage", "dataset_graph", "custom_lineage_data",
                        "landscape")
_EXPORT_OPTIONS = {"tensor_format": {"npy", None}}
_NAME_RE = r"^\w+[0-9a-zA-Z\_\.]*$"


def _check_type(arg_name, value, types):
    """MindSpore's Validator.check_value_type: TypeError naming the argument (bool is not an int)."""
    types = tuple(types)
    ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
    if not ok:
        names = [t.__name__ for t in types]
        want = f"'{names[0]}'" if len(names) == 1 else f"one of '{names}'"
        raise TypeError(f"The type of '{arg_name}' should be {want}, but got type '{type(value).__name__}'.")


def _process_export_options(export_options):
    """Checks `export_options` as MindSpore 2.10 does; returns it (None for no export)."""
    if export_options is None:
        return None
    if not isinstance(export_options, dict):
        raise TypeError(f"For `export_options` the type should be a valid type of ['dict', 'NoneType'], but got "
                        f"{type(export_options).__name__}.")
    for key, fmt in export_options.items():
        if not isinstance(key, str):
            raise TypeError(f"For `export_option` the type should be a valid type of ['str'], but got "
                            f"{type(key).__name__}.")
        if fmt is not None and not isinstance(fmt, str):
            raise TypeError(f"For `export_format` the type should be a valid type of ['str', 'NoneType'], but got "
                            f"{type(fmt).__name__}.")
    unexpected = set(export_options) - set(_EXPORT_OPTIONS)
    if unexpected:
        raise ValueError(f'For "SummaryRecord", the keys {unexpected} of "export_options" are unsupported, '
                         f'expect the follow keys: {list(_EXPORT_OPTIONS)}')
    for key, fmt in export_options.items():
        bad = {fmt} - _EXPORT_OPTIONS[key]
        if bad:
            raise ValueError(f'For "SummaryRecord", the export_format {bad} of "export_options" are unsupported '
                             f'for {key}, expect the follow values: {list(_EXPORT_OPTIONS[key])}')
    return export_options


def _to_numpy(plugin, value, who="SummaryRecord"):
    """MindSpore's _check_to_numpy: a copy of the tensor's values, with its rank rules per plugin (ValueError)."""
    arr = _summary_ops._numpy_copy(value)
    if plugin == "scalar":
        if arr.size == 1:
            return arr
        raise ValueError(f'For "{who}", the v rank must be less than or equal to 1, but got {len(arr)}.')
    if plugin == "image":
        if arr.ndim == 4:
            return arr
        raise ValueError(f'For "{who}", the tensor seems not to hold a valid image.')
    if arr.ndim > 0:
        return arr
    raise ValueError(f'For "{who}", the value should not be empty.')


def _device_id():
    try:
        from ...communication import management
        if management.GlobalComm.INITED:
            return management.get_rank()
    except (ImportError, AttributeError, RuntimeError):
        pass
    return 0


class SummaryRecord:
    """Records summary data (scalars, images, histograms, tensors) into a TensorBoard event file.

    Values come from `add_value` and from the summary ops (`ops.ScalarSummary`, `ImageSummary`, `TensorSummary`,
    `HistogramSummary`) run in a network since the last record, in PyNative and in GRAPH_MODE / `jit`; `record(step)`
    writes all of them as one event of that step. Only one SummaryRecord may be open at a time (MindSpore's rule).
    Close it (a `with` block, or `close()`); at exit an open one is closed.

    Args:
        log_dir (str): the directory (created when missing).
        file_prefix (str): the file name's start. Default "events".
        file_suffix (str): the file name's end. Default "_MS". Both must match `^\\w+[0-9a-zA-Z_.]*$`.
        num_process (int): accepted for MindSpore's signature; Kiln writes in the calling thread (no process pool).
        network (Cell): accepted; the graph is not written (TensorBoard's GraphDef has no Kiln graph exporter yet,
            see docs/summaries.md).
        max_file_size (int, optional): the most bytes the file may hold; when the next event would pass it, a
            warning is logged and nothing more is written. A negative value is ignored with a warning (MindSpore).
        raise_exception (bool): raise OSError/RuntimeError of writing instead of logging them. Default False.
        export_options (dict, optional): {"tensor_format": "npy"} also saves each recorded tensor summary as
            `<log_dir>/export_<time>/tensor/<tag>_<step>.npy`.

    The file is `<log_dir>/<file_prefix>.out.tfevents.<seconds>.<device id>.<host><file_suffix>` (the `log_dir`
    property), created at the first record that writes something.

    Raises:
        RuntimeError: another SummaryRecord is open.
        TypeError: log_dir, file_prefix or file_suffix is not a str, max_file_size not an int, raise_exception not
            a bool.
        ValueError: a prefix/suffix with other characters, unknown export_options.
        ImportError: tensorboardX is not installed (`pip install kiln[summary]`).
    """

    count = 0

    def __init__(self, log_dir, file_prefix="events", file_suffix="_MS", num_process=32, network=None,
                 max_file_size=None, raise_exception=False, export_options=None):
        self._check_count()
        with _instance_lock:
            self._check_count()
            SummaryRecord.count += 1
        self._closed = True  # until initialized (close() of a half-made instance must not double-decrement)
        try:
            self._initialize(log_dir, file_prefix, file_suffix, num_process, network, max_file_size,
                             raise_exception, export_options)
        except BaseException:
            with _instance_lock:
                SummaryRecord.count -= 1
            raise

    def _initialize(self, log_dir, file_prefix, file_suffix, num_process, network, max_file_size, raise_exception,
                    export_options):
        try:
            import tensorboardX  # noqa: F401 (checks the optional dependency up front)
        except ImportError as e:
            raise ImportError("SummaryRecord writes TensorBoard event files with tensorboardX's protobufs: install "
                              "it with `pip install tensorboardX` (or `pip install kiln[summary]`).") from e
        path = _make_directory(log_dir, "log_dir")
        if not isinstance(max_file_size, (int, type(None))) or isinstance(max_file_size, bool):
            raise TypeError(f"For 'SummaryRecord', the 'max_file_size' should be int type, but got type "
                            f"{type(max_file_size)}")
        if not isinstance(file_prefix, str) or not isinstance(file_suffix, str):
            raise TypeError(f"For 'SummaryRecord', `file_prefix` and `file_suffix`  should be str, but got type "
                            f"{type(file_prefix) if not isinstance(file_prefix, str) else type(file_suffix)}")
        for s in (file_prefix, file_suffix):
            if re.match(_NAME_RE, s, re.ASCII) is None:
                raise ValueError(f"The '{s}' is illegal, it must be match regular'{_NAME_RE}' by flags're.ASCII.'")
        if max_file_size is not None and max_file_size < 0:
            _logger.warning("For 'SummaryRecord', the 'max_file_size' should be greater than 0. but got value %s.",
                            max_file_size)
            max_file_size = None
        _check_type("raise_exception", raise_exception, [bool])
        from ...nn import Cell
        _check_type("network", network, [Cell, type(None)])
        self._export_options = _process_export_options(export_options)
        seconds = str(int(time.time()))
        name = f"{file_prefix}.out.tfevents.{seconds}.{_device_id()}.{platform.node()}{file_suffix}"
        self._base_dir, self.file_prefix, self.file_suffix = path, file_prefix, file_suffix
        self.network, self.max_file_size, self.raise_exception = network, max_file_size, raise_exception
        self._num_process = num_process
        self._file_path = os.path.join(path, name)
        self._export_dir = os.path.join(path, f"export_{seconds}") if self._export_options else None
        self._file = EventFile(self._file_path, max_file_size)
        self._writable = True
        self._mode = "train"
        self._pool = {}  # (plugin, tag) -> np.ndarray, in insertion order
        self._graph_warned = False
        self._closed = False
        atexit.register(self.close)

    @classmethod
    def _check_count(cls):
        if cls.count > 0:
            raise RuntimeError(
                f"For '{cls.__name__}', only one instance is supported in a training process, you are trying to "
                f"create a new one when the existing instance number is {cls.count}. Please check your scripts.")

    def __enter__(self):
        if self._closed:
            raise ValueError(f'For "{type(self).__name__}", SummaryRecord has been closed, please check if close() '
                             'method is called')
        return self

    def __exit__(self, *err):
        self.close()

    @property
    def log_dir(self):
        """The full path of the event file (str)."""
        return self._file_path

    def set_mode(self, mode):
        """'train' (default) or 'eval'; in 'eval' record() leaves out the summary ops' values.

        Raises:
            ValueError: another mode."""
        if mode not in ("train", "eval"):
            raise ValueError(f'For "{type(self).__name__}.set_mode", {mode!r} is not a recognized mode, expect the '
                             'parameter "mode" is "train" or "eval"')
        self._mode = mode

    def add_value(self, plugin, name, value):
        """Adds a value for the next record().

        Args:
            plugin (str): 'scalar' (one element), 'image' (NCHW, C = 1 or 3), 'histogram' (rank >= 1) or 'tensor'
                (rank >= 1).
            name (str): the tag (not empty). A second value of the same plugin and tag before record() replaces
                the first (with a warning), as MindSpore promises.
            value (Tensor): the value (a copy is taken now).
        Raises:
            ValueError: `name` is not a non-empty str; the value's rank does not suit the plugin; `plugin` is
                unknown, or one of MindInsight's own (graph, lineage, dataset graph, landscape), which TensorBoard
                files cannot hold.
            TypeError: `value` is not a Tensor.
        """
        if plugin in _TENSOR_PLUGINS:
            if not name or not isinstance(name, str):
                raise ValueError(f'For "{type(self).__name__}", the parameter "name" type should be str, but got '
                                 f'{type(name)}.')
            if not isinstance(value, _Tensor):
                raise TypeError(f'For "{type(self).__name__}", the parameter "value" expect to be Tensor, but got '
                                f'{type(value).__name__}')
            arr = _to_numpy(plugin, value)
            if (plugin, name) in self._pool:
                _logger.warning("For \"%s.add_value\", '%s/%s' has duplicate values. Only the newest one will be "
                                "recorded.", type(self).__name__, name, plugin)
                del self._pool[(plugin, name)]
            self._pool[(plugin, name)] = arr
        elif plugin in _MINDINSIGHT_PLUGINS:
            raise ValueError(f'For "{type(self).__name__}.add_value", the plugin {plugin!r} holds MindInsight data '
                             '(a graph, lineage, dataset graph or loss landscape protobuf) that TensorBoard event '
                             'files have no place for; Kiln records tensor, scalar, image and histogram values.')
        else:
            raise ValueError(f'For "{type(self).__name__}.add_value", no such "plugin" of {plugin!r} , expect value '
                             'is one of [tensor, scalar, image, histogram, train_lineage, eval_lineage, '
                             'dataset_graph, custom_lineage_data, graph, landscape]')

    def _add_summary_op_values(self):
        for key, arr in _summary_ops._drain().items():
            m = re.match(r"(.+)\[:(.+)\]", key)
            tag, plugin = m.group(1), m.group(2).lower()
            try:
                arr = _to_numpy(plugin, arr, who=f"{plugin.capitalize()}Summary")
            except ValueError as e:  # a dynamic shape the op could not check at the call
                _logger.error("%s", e)
                continue
            self._pool.pop((plugin, tag), None)
            self._pool[(plugin, tag)] = arr

    def record(self, step, train_network=None, plugin_filter=None):
        """Writes the values added since the last record, and (in 'train' mode) the summary ops' values, as one
        event of `step`.

        Args:
            step (int): the step number.
            train_network (Cell, optional): accepted (MindSpore's graph source); the graph is not written.
            plugin_filter (Callable[[str], bool], optional): writes only the plugins for which it is true (the
                others are dropped).
        Returns:
            bool: True; False when the record is closed (logged).
        Raises:
            TypeError: `step` is not an int or `train_network` not a Cell.
            OSError: writing failed and raise_exception is True (otherwise logged; the file is then given up).
        """
        from ...nn import Cell
        _check_type("step", step, [int])
        _check_type("train_network", train_network, [Cell, type(None)])
        if self._closed:
            _logger.error("For '%s', The record writer is closed, please check if close() method is called",
                          type(self).__name__)
            return False
        if (self.network is not None or train_network is not None) and not self._graph_warned:
            _logger.warning("SummaryRecord: the network graph is not written to TensorBoard files (Kiln has no "
                            "GraphDef exporter); scalars, images, histograms and tensors are.")
            self._graph_warned = True
        if self._mode == "train":
            self._add_summary_op_values()
        pool, self._pool = self._pool, {}
        if plugin_filter:
            pool = {k: v for k, v in pool.items() if plugin_filter(k[0])}
        if pool:
            self._write(step, pool)
        return True

    def _write(self, step, pool):
        from tensorboardX.proto import event_pb2, summary_pb2
        from ._values import image_problem, make_value
        values = []
        for (plugin, tag), arr in pool.items():
            if plugin == "image":
                problem = image_problem(arr)
                if problem:
                    _logger.error("SummaryRecord: the image %r is not written: %s.", tag, problem)
                    continue
            values.append(make_value(plugin, tag, arr))
        event = event_pb2.Event(wall_time=time.time(), step=int(step), summary=summary_pb2.Summary(value=values))
        try:
            if self._writable and values:
                self._file.write(event)
            if self._export_options and self._export_options.get("tensor_format") == "npy":
                self._export_npy(step, pool)
        except FileFull as e:
            _logger.warning("%s", e)
            self._give_up()
        except (OSError, RuntimeError) as e:
            _logger.error("SummaryRecord: writing %s failed: %s", self._file_path, e)
            self._give_up()
            if self.raise_exception:
                raise

    def _export_npy(self, step, pool):
        out = _make_directory(os.path.join(self._export_dir, "tensor"), "export_dir")
        for (plugin, tag), arr in pool.items():
            if plugin == "tensor":
                np.save(os.path.join(out, f"{quote(tag, safe='')}_{int(step)}.npy"), arr)

    def _give_up(self):
        self._writable = False
        try:
            self._file.close()
        except OSError:
            pass

    def flush(self):
        """Writes buffered events to the file (logged error when closed)."""
        if self._closed:
            _logger.error("For '%s', the record writer is closed and can not flush, please check if close() method "
                          "is called", type(self).__name__)
            return
        try:
            self._file.flush()
        except OSError as e:
            _logger.error("SummaryRecord: flushing %s failed: %s", self._file_path, e)
            if self.raise_exception:
                raise

    def close(self):
        """Flushes and closes the file; another SummaryRecord may be opened after. Closing twice does nothing."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        try:
            self._file.close()
        finally:
            with _instance_lock:
                SummaryRecord.count -= 1

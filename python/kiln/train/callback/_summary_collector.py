"""SummaryCollector (MindSpore 2.10's `mindspore.train.SummaryCollector`): a Model.train callback that records the
loss, the learning rate, input images, parameter histograms and the summary ops' values into a TensorBoard event
file through SummaryRecord (see docs/summaries.md for what is written and where it differs from MindSpore)."""
import logging
import re

import numpy as np

from ...common.tensor import Tensor as _Tensor
from .._utils import check_value_type as _check_value_type
from ._callback import Callback

__all__ = ["SummaryCollector"]

_logger = logging.getLogger("kiln.train")
_TENSOR_SUMMARY_LIMIT = 20  # MindSpore's default number of steps that record TensorSummary values
_HISTOGRAM_DEFAULT_COUNT = 5  # without histogram_regular: the optimizer's first five parameters


class SummaryCollector(Callback):
    """Collects training data into a TensorBoard event file in `summary_dir` while Model.train runs.

    Written at the first step and then every `collect_freq` steps (epochs with dataset sink mode), each at its step:
        - `loss/auto` (scalar): the mean of the network's first output (collect_metric).
        - `learning_rate/auto` (scalar): the optimizer's `get_lr()` (its first group's) after the step. MindSpore
          puts the learning rate into its train lineage, which TensorBoard files have no place for; Kiln writes it
          as a scalar while `collect_train_lineage` is True.
        - `input_data/auto` (image): the batch's first column when it is an NCHW image batch, C = 1 or 3
          (collect_input_data; otherwise a warning and no more tries).
        - `<parameter name>/auto` (histogram): the optimizer's parameters whose name matches `histogram_regular`
          (re.match), or its first five when that is None.
        - the values of the summary ops in the network (ScalarSummary, ...), TensorSummary values only at the steps
          of `collect_tensor_freq` (by default at most 20 steps spread over the training).

    Args:
        summary_dir (str): the directory of the event file (created when missing).
        collect_freq (int): collect every this many steps (epochs in sink mode); > 0. Default 10.
        num_process (int): accepted for MindSpore's signature (Kiln writes in the training thread).
        collect_specified_data (dict, optional): which data to collect; the keys MindSpore 2.10 accepts:
            collect_metric, collect_graph, collect_train_lineage, collect_eval_lineage, collect_input_data,
            collect_dataset_graph (bools), histogram_regular (str or None), collect_landscape (dict or None).
            Checked as MindSpore checks them. collect_graph, collect_eval_lineage, collect_dataset_graph,
            collect_landscape and custom_lineage_data describe MindInsight's own data (graph and lineage protobufs,
            loss-landscape checkpoints): nothing is written for them.
        keep_default_action (bool): with collect_specified_data, also collect what it does not name. Default True.
        custom_lineage_data (dict, optional): str keys, int/float/str values (checked; MindInsight lineage, not
            written).
        collect_tensor_freq (int, optional): the step interval of TensorSummary values; > 0.
        max_file_size (int, optional): the most bytes of the event file; > 0.
        export_options (dict, optional): as SummaryRecord's ({"tensor_format": "npy"}).

    Raises:
        TypeError / ValueError: as MindSpore 2.10 for arguments of the wrong type or value (a non-positive
            collect_freq, an unknown collect_specified_data key, an invalid histogram_regular, ...); ValueError
            when the callback list holds two SummaryCollectors.
    """

    _DEFAULT_SPECIFIED_DATA = {
        'collect_metric': True,
        'collect_graph': True,
        'collect_train_lineage': True,
        'collect_eval_lineage': True,
        'collect_input_data': True,
        'collect_dataset_graph': True,
        'histogram_regular': None,
        'collect_landscape': {'landscape_size': 40, 'unit': 'step', 'num_samples': 2048,
                              'create_landscape': {'train': True, 'result': True},
                              'intervals': [[1, 2, 3, 4, 5, 6, 7, 8, 9],
                                            [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]]},
    }

    def __init__(self, summary_dir, collect_freq=10, num_process=32, collect_specified_data=None,
                 keep_default_action=True, custom_lineage_data=None, collect_tensor_freq=None, max_file_size=None,
                 export_options=None):
        from .._utils import _make_directory
        from ..summary.summary_record import _process_export_options
        super().__init__()
        self._summary_dir = _make_directory(summary_dir, "summary_dir")
        self._record = None
        self._check_positive('collect_freq', collect_freq)
        self._collect_freq = collect_freq
        self._check_positive('collect_tensor_freq', collect_tensor_freq, allow_none=True)
        self._collect_tensor_freq = collect_tensor_freq
        self._tensor_collect_range = None
        self._check_positive('max_file_size', max_file_size, allow_none=True)
        self._max_file_size = max_file_size
        self._export_options = _process_export_options(export_options)
        _check_value_type('keep_default_action', keep_default_action, bool)
        self._collect_specified_data = self._process_specified_data(collect_specified_data, keep_default_action)
        landscape = self._collect_specified_data.get('collect_landscape', None)
        _check_value_type('collect_landscape', landscape, [dict, type(None)])
        if landscape:
            self._check_collect_landscape_data(landscape)
        self._custom_lineage_data = self._check_custom_lineage(custom_lineage_data)
        self._num_process = num_process
        self._optimizer = None  # None: not looked for yet; False: none found
        self._is_parse_loss_success = True
        self._first_step = True
        self._dataset_sink_mode = True

    # ---- argument checks (MindSpore 2.10's) ----
    def _check_positive(self, name, value, allow_none=False):
        if allow_none and value is None:
            return
        _check_value_type(name, value, int)
        if value <= 0:
            raise ValueError(f'For "{type(self).__name__}", the value of `{name}` should be greater than 0, but got '
                             f'`{value}`.')

    @staticmethod
    def _check_custom_lineage(custom_lineage_data):
        data = {} if custom_lineage_data is None else custom_lineage_data
        _check_value_type('custom_lineage_data', data, [dict, type(None)])
        for key, value in data.items():
            _check_value_type(f'custom_lineage_data -> {key}', key, str)
            _check_value_type(f'the value of custom_lineage_data -> {key}', value, (int, str, float))
        return data

    def _process_specified_data(self, specified_data, action):
        _check_value_type('collect_specified_data', specified_data, [dict, type(None)])
        if specified_data is None:
            return dict(self._DEFAULT_SPECIFIED_DATA) if action else {}
        for param_name in specified_data:
            _check_value_type(param_name, param_name, [str])
        unexpected = set(specified_data) - set(self._DEFAULT_SPECIFIED_DATA)
        if unexpected:
            raise ValueError(f'For "{type(self).__name__}", the keys {unexpected} of `collect_specified_data` are '
                             f'unsupported, expect the follow keys: {list(self._DEFAULT_SPECIFIED_DATA.keys())}')
        if 'histogram_regular' in specified_data:
            regular = specified_data.get('histogram_regular')
            _check_value_type('histogram_regular', regular, (str, type(None)))
            if isinstance(regular, str):
                try:
                    re.match(regular, '')
                except re.error as exc:
                    raise ValueError(f'For `collect_specified_data`, the value of `histogram_regular` is not a valid '
                                     f'regular expression. Detail: {exc}.') from exc
        for item in set(self._DEFAULT_SPECIFIED_DATA) - {'histogram_regular', 'collect_landscape'}:
            if item in specified_data:
                _check_value_type(item, specified_data.get(item), bool)
        if action:
            result = dict(self._DEFAULT_SPECIFIED_DATA)
            result.update(specified_data)
            return result
        return dict(specified_data)

    def _check_collect_landscape_data(self, landscape):
        name = type(self).__name__
        default = self._DEFAULT_SPECIFIED_DATA['collect_landscape']
        unexpected = set(landscape) - set(default)
        if unexpected:
            raise ValueError(f'For "{name}", the keys {unexpected} of `collect_landscape` are unsupported, expect the '
                             f'follow keys: {list(default.keys())}')
        size = landscape.get("landscape_size", 40)
        _check_value_type('landscape_size', size, int)
        if size < 3 or size > 256:
            raise ValueError(f'For "{name}", the "landscape_size" in collect_specified_data should be less than 256 '
                             f'and more than 3, but got the: {size}')
        unit = landscape.get("unit", "step")
        _check_value_type('unit', unit, str)
        if unit not in ("step", "epoch"):
            raise ValueError(f'For "{name}", unit in collect_specified_data should be step or epoch, but got the: '
                             f'{unit}.')
        _check_value_type("num_samples", landscape.get("num_samples", 2048), int)
        create = landscape.get("create_landscape", {"train": True, "result": True})
        _check_value_type('create_landscape', create, dict)
        for param, value in create.items():
            if param not in ("train", "result"):
                raise ValueError(f'For "{name}", the key to create landscape should be in ["train", "result"], but '
                                 f'got the: {param}.')
            _check_value_type(param, value, bool)
        intervals = landscape.get("intervals")
        _check_value_type('intervals', intervals, list)
        for interval in intervals:
            _check_value_type('each interval inintervals', interval, list)
            if len(interval) < 3:
                raise ValueError(f'For "{name}", the length of each list in "intervals" should not be less than '
                                 f'three, but got the: {interval}')
            for j in interval:
                if not isinstance(j, int):
                    raise TypeError(f'For "{name}", the value of each list in "intervals" should be int, but got '
                                    f'the: {type(j)}')

    # ---- the record ----
    def __enter__(self):
        self._open()
        self._first_step, self._dataset_sink_mode = True, True
        return self

    def __exit__(self, *err):
        if self._record is not None:
            self._record.close()
            self._record = None

    def _open(self):
        from ..summary import SummaryRecord
        if self._record is None:
            self._record = SummaryRecord(log_dir=self._summary_dir, max_file_size=self._max_file_size,
                                         raise_exception=False, export_options=self._export_options)

    @property
    def log_dir(self):
        """The event file's path while the collector is open (Model.train), else None (Kiln's addition)."""
        return self._record.log_dir if self._record is not None else None

    # ---- hooks ----
    def begin(self, run_context):
        cb_params = run_context.original_args()
        n = sum(type(cb).__name__ == type(self).__name__ for cb in (cb_params.list_callback or []))
        if n > 1:
            raise ValueError(f"There are more than one {type(self).__name__} instance in callback list,but expected "
                             f"only one {type(self).__name__} instance.")
        if cb_params.mode not in ("train", "eval"):
            raise ValueError(f'Only support `train` (model.train) and `eval` (model.eval) mode, but got '
                             f'`{cb_params.mode}` mode.')
        self._open()
        self._record.set_mode(cb_params.mode)
        self._dataset_sink_mode = bool(getattr(cb_params, "dataset_sink_mode", False))

    def step_end(self, run_context):
        cb_params = run_context.original_args()
        if cb_params.mode != "train":
            return
        if not self._dataset_sink_mode:
            self._collect_tensor_data(cb_params)

    def epoch_end(self, run_context):
        cb_params = run_context.original_args()
        # (MindSpore collects here in both modes; without sink mode that repeats the step step_end just recorded)
        if self._dataset_sink_mode:
            self._collect_tensor_data(cb_params)
        if self._record is not None:
            self._record.flush()

    def end(self, run_context):
        if self._record is not None:
            self._record.flush()

    # ---- collection (MindSpore 2.10's schedule) ----
    def _collect_tensor_data(self, cb_params):
        if cb_params.mode != "train":
            return
        if self._first_step:
            self._tensor_collect_range = self._get_tensor_collect_range(cb_params, self._dataset_sink_mode)
            self._collect_at_step_end(cb_params, plugin_filter=None)
            self._first_step = False
            self._record.flush()
            return
        current = cb_params.cur_epoch_num if self._dataset_sink_mode else cb_params.cur_step_num
        if current % self._collect_freq == 0 and current in self._tensor_collect_range:
            self._collect_at_step_end(cb_params, plugin_filter=None)
        elif current in self._tensor_collect_range:
            self._collect_at_step_end(cb_params, lambda plugin: plugin == "tensor")
        elif current % self._collect_freq == 0:
            self._collect_at_step_end(cb_params, lambda plugin: plugin != "tensor")

    def _get_tensor_collect_range(self, cb_params, dataset_sink_mode):
        total_step = cb_params.epoch_num
        if not dataset_sink_mode:
            total_step *= cb_params.batch_num
        if self._collect_tensor_freq is not None:
            return range(0, total_step + 1, self._collect_tensor_freq)
        summary_to_collect = len(range(0, total_step + 1, self._collect_freq))
        if summary_to_collect > _TENSOR_SUMMARY_LIMIT:
            tensor_freq = total_step // (_TENSOR_SUMMARY_LIMIT - 1)
            if tensor_freq > 1:
                return range(0, total_step + 1, tensor_freq)[:_TENSOR_SUMMARY_LIMIT]
            return range(0, total_step + 1)[:_TENSOR_SUMMARY_LIMIT + 1]
        return range(0, total_step + 1, self._collect_freq)

    def _collect_at_step_end(self, cb_params, plugin_filter):
        self._record.set_mode("train")
        self._collect_input_data(cb_params)
        self._collect_metric(cb_params)
        self._collect_learning_rate(cb_params)
        self._collect_histogram(cb_params)
        self._record.record(int(cb_params.cur_step_num), plugin_filter=plugin_filter)

    def _collect_input_data(self, cb_params):
        if not self._collect_specified_data.get('collect_input_data'):
            return
        data = getattr(cb_params, 'train_dataset_element', None)
        if isinstance(data, (list, tuple)) and data:
            data = data[0]
        shape = tuple(data.shape) if isinstance(data, _Tensor) else None
        if shape is None or len(shape) != 4 or shape[1] not in (1, 3) or 0 in shape:
            _logger.warning("The input data of network are not image, so will not collect by SummaryCollector.")
            self._collect_specified_data['collect_input_data'] = False
            return
        self._record.add_value("image", "input_data/auto", data)

    def _get_loss(self, cb_params):
        if not self._is_parse_loss_success:
            return None
        output = getattr(cb_params, "net_outputs", None)
        if output is None:
            _logger.warning("Can not find any output by this network, so SummaryCollector will not collect loss.")
            self._is_parse_loss_success = False
            return None
        if isinstance(output, (int, float, _Tensor)):
            loss = output
        elif isinstance(output, (list, tuple)) and output:
            loss = output[0]
        else:
            _logger.warning("The output type could not be identified, expect type is one of [int, float, Tensor, "
                            "list, tuple], so no loss was recorded in SummaryCollector.")
            self._is_parse_loss_success = False
            return None
        arr = loss.asnumpy() if isinstance(loss, _Tensor) else np.asarray(loss)
        from ...common.tensor import Tensor
        return Tensor(np.mean(arr))

    def _collect_metric(self, cb_params):
        if not self._collect_specified_data.get('collect_metric'):
            return
        loss = self._get_loss(cb_params)
        if loss is not None:
            self._record.add_value("scalar", "loss/auto", loss)

    def _get_optimizer(self, cb_params):
        if self._optimizer is False:
            return None
        if self._optimizer is not None:
            return self._optimizer
        from ...nn.optim.optimizer import Optimizer
        optimizer = getattr(cb_params, "optimizer", None)
        if optimizer is None:
            network = cb_params.train_network if cb_params.mode == 'train' else cb_params.eval_network
            for _, cell in network.cells_and_names():
                if isinstance(cell, Optimizer):
                    optimizer = cell
                    break
                candidate = getattr(cell, 'optimizer', None)
                if isinstance(candidate, Optimizer):
                    optimizer = candidate
                    break
        if not isinstance(optimizer, Optimizer):
            _logger.warning("Can not find optimizer in network, or the optimizer does not inherit MindSpore's "
                            "optimizer, so we will not collect data about optimizer in SummaryCollector.")
            self._optimizer = False
            return None
        self._optimizer = optimizer
        return optimizer

    def _collect_learning_rate(self, cb_params):
        if not self._collect_specified_data.get('collect_train_lineage'):
            return
        optimizer = self._get_optimizer(cb_params)
        if optimizer is None:
            return
        lr = optimizer.get_lr()
        if isinstance(lr, (list, tuple)):
            lr = lr[0]
        from ...common.tensor import Tensor
        value = np.atleast_1d(lr.asnumpy() if isinstance(lr, _Tensor) else np.asarray(lr)).reshape(-1)[0]
        self._record.add_value("scalar", "learning_rate/auto", Tensor(np.asarray(value)))

    def _collect_histogram(self, cb_params):
        if 'histogram_regular' not in self._collect_specified_data:
            return
        optimizer = self._get_optimizer(cb_params)
        if optimizer is None:
            return
        parameters = list(optimizer.parameters)
        regular = self._collect_specified_data.get('histogram_regular')
        if regular is not None:
            chosen = [p for p in parameters if re.match(regular, p.name)]
        else:
            chosen = parameters[:_HISTOGRAM_DEFAULT_COUNT]
        for p in chosen:
            self._record.add_value("histogram", p.name + "/auto", p)

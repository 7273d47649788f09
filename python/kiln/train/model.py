"""Model (MindSpore's mindspore.train.Model): the training, evaluation and prediction loops around a network,
with callbacks and metrics.

Model builds its networks as MindSpore does: train network = TrainOneStepCell(WithLossCell(network, loss_fn),
optimizer) (WithLossCell only without an optimizer; the network itself without either), eval network =
WithEvalCell(network, loss_fn) with eval_indexes [0, 1, 2] when metrics are given without eval_network, predict
network = network. Each network is a Cell, so in GRAPH_MODE each call runs one compiled graph (the whole training
step: forward, gradients, optimizer update), exactly as a user's own `@jit` step.

Datasets: Model uses only `get_dataset_size()` and `create_tuple_iterator(num_epochs=1, output_numpy=False)`
(one iterator per epoch, yielding lists of Tensors), and in sink mode kiln.train.data_sink."""
import logging

import numpy as np


from ..common.tensor import Tensor as _Tensor
from .. import context
from .._parallel_context import ParallelMode  # noqa: F401  (MindSpore's module has it: `from ...train.model import ParallelMode`)
from ..nn.cell import Cell
from ..nn.wrap import WithLossCell, WithEvalCell, TrainOneStepCell, TrainOneStepWithLossScaleCell
from .metrics import get_metrics, get_metric_fn, Loss
from .callback import _CallbackManager, _InternalCallbackParam, RunContext, ModelCheckpoint
from .callback import __all__ as _internal_cb_names
from ._model_utils import (_check_int, _check_bool, _check_dataset, _as_tuple, _transform_callbacks, _first_batch,
                           _precompile)

__all__ = ["Model"]

_logger = logging.getLogger("kiln.train")
_KWARGS = ("loss_scale_manager", "keep_batchnorm_fp32", "boost_config_dict", "acc_level")
_MAX_SINKS = 4  # data_sink functions kept per Model (train and eval datasets of the last calls)
_OLD_HOOKS = {"begin", "end", "epoch_begin", "epoch_end", "step_begin", "step_end"}


class Model:
    """High-level training and evaluation (MindSpore's Model).

    Args:
        network (Cell): the network (its output goes to loss_fn).
        loss_fn (Cell, optional): the loss; without it, `network` must return the loss itself (or be a complete
            train step when there is no optimizer either).
        optimizer (Cell, optional): an nn.Optimizer over the network's parameters.
        metrics (set/list of names or dict name → Metric, optional): e.g. {'accuracy'} / {'acc', 'loss'}; needed
            by eval and by fit with a validation set.
        eval_network (Cell, optional): returns (loss, prediction, label) (with eval_indexes) or the metrics'
            inputs; default WithEvalCell(network, loss_fn).
        eval_indexes (list of 3 ints, optional): positions of loss, prediction and label in eval_network's output.
        amp_level (str): 'O0' (default), 'O1', 'O2', 'O3': the train network is amp.build_train_network(network,
            optimizer, loss_fn, level=amp_level, ...) (O2: float16 except BatchNorm/LayerNorm, dynamic loss scale
            unless loss_scale_manager is given; O3: all float16; see kiln.amp). The network is converted in place,
            so eval and predict run it in the same precision; the eval network casts outputs to float32 before the
            loss for O2/O3. Unlike MindSpore on CPU, the loss-scale train cell runs on CPU.
        boost_level (str): 'O0' only (MindSpore's boost levels are Ascend-specific).
        **kwargs: loss_scale_manager (a FixedLossScaleManager/DynamicLossScaleManager: the train network becomes
            TrainOneStepWithLossScaleCell with the manager's update cell, whose output is (loss, overflow, scale);
            FixedLossScaleManager(drop_overflow_update=False) gives TrainOneStepCell(sens=loss_scale)),
            keep_batchnorm_fp32 (accepted; it only matters with amp), boost_config_dict, acc_level (accepted with
            boost_level 'O0').

    Properties: train_network, eval_network, predict_network.

    Raises:
        TypeError: network not a Cell; loss_fn/optimizer/eval_network not Cells.
        ValueError: an unknown keyword argument; amp_level/boost_level other than 'O0'; a loss_scale_manager
            without an optimizer; metrics without loss_fn or eval_network; eval_indexes not a list of three.
        TypeError: a loss_scale_manager that is not a LossScaleManager.
    """

    def __init__(self, network, loss_fn=None, optimizer=None, metrics=None, eval_network=None, eval_indexes=None,
                 amp_level="O0", boost_level="O0", **kwargs):
        if not isinstance(network, Cell):
            raise TypeError(f"For 'Model', the argument 'network' must be a Cell, but got {type(network).__name__}.")
        for name, v in (("loss_fn", loss_fn), ("optimizer", optimizer), ("eval_network", eval_network)):
            if v is not None and not isinstance(v, Cell):
                raise TypeError(f"For 'Model', the argument '{name}' must be a Cell or None, but got "
                                f"{type(v).__name__}.")
        for arg in kwargs:
            if arg not in _KWARGS:
                raise ValueError(f"The argument in 'kwargs' should be 'loss_scale_manager' or 'keep_batchnorm_fp32' "
                                 f"or 'boost_config_dict' or 'acc_level', but got '{arg}'.")
        if optimizer is None and amp_level != "O0":
            raise ValueError("Auto mixed precision will not work because 'optimizer' is None.Please set "
                             "amp_level='O0' to disable auto mixed precision or set 'optimizer' not be None to use "
                             "auto mixed precision.")
        if not isinstance(amp_level, str) or amp_level not in ("O0", "O1", "O2", "O3"):
            raise ValueError(f"For 'Model', the 'amp_level' must be one of 'O0', 'O1', 'O2', 'O3', but got "
                             f"{amp_level!r}.")
        keep_bn = kwargs.get("keep_batchnorm_fp32")
        if keep_bn is not None and not isinstance(keep_bn, bool):
            raise TypeError(f"For 'Model', the 'keep_batchnorm_fp32' must be bool, but got {type(keep_bn).__name__}.")
        boost_level = kwargs.get("acc_level", boost_level)
        if boost_level != "O0":
            raise ValueError(f"For 'Model', Kiln supports boost_level='O0' only, but got {boost_level!r}.")
        lsm = kwargs.get("loss_scale_manager")
        if lsm is not None:
            from .loss_scale_manager import LossScaleManager
            if not isinstance(lsm, LossScaleManager):
                raise TypeError(f"For 'Model', the 'loss_scale_manager' must be a LossScaleManager, but got "
                                f"{type(lsm).__name__}.")
            if optimizer is None:
                raise ValueError("The argument 'optimizer' can not be None when set 'loss_scale_manager'.")
        self._network = network
        self._loss_fn = loss_fn
        self._optimizer = optimizer
        self._loss_scale_manager = lsm
        self._loss_scale_manager_set = "loss_scale_manager" in kwargs
        self._keep_bn_fp32 = keep_bn
        self._amp_level = amp_level
        self._boost_level = boost_level
        self._metrics = metrics
        # Data-parallel mode: the TrainOneStepCell built below all-reduces the gradients (nn.DistributedGradReducer)
        from .._parallel_context import get_auto_parallel_context
        self._parallel_mode = get_auto_parallel_context("parallel_mode")
        self._device_number = get_auto_parallel_context("device_num")
        self._train_network = self._build_train_network()
        _pass_inputs(self._network, self._loss_fn, self._train_network)
        self._build_eval_network(metrics, eval_network, eval_indexes)
        self._predict_network = network
        self._current_epoch_num = 0
        self._current_step_num = 0
        self.epoch_iter = 0
        self.batch_num = -1
        self._sinks = {}  # (network id, dataset id, sink size) -> (dataset, network, sink function)

    # ------------------------------------------------------------------------------------------ building
    def _build_train_network(self):
        network = self._network
        from ..nn.wrap.grad_accumulation import is_grad_accumulation
        micro = is_grad_accumulation(network) if self._optimizer is not None else 0
        if not micro and self._optimizer is not None:
            from .._parallel_context import get_auto_parallel_context
            if get_auto_parallel_context("pipeline_stages") > 1:  # MindSpore: _TrainGradAccuStepCell, 1/micro_size
                micro = next((c.micro_size for _, c in network.cells_and_names() if hasattr(c, "micro_size")), 1)
        if micro and (self._amp_level != "O0" or self._keep_bn_fp32 is not None
                      or (self._loss_scale_manager is not None
                          and self._loss_scale_manager.get_update_cell() is not None)):
            raise ValueError("For 'Model', a network with GradAccumulation (or pipeline stages) trains with "
                             "amp_level='O0' and no "
                             "dynamic loss scale manager in Kiln (the gradient is scaled by 1/micro_size through "
                             "TrainOneStepCell's sens); got amp_level="
                             f"{self._amp_level!r}, loss_scale_manager={type(self._loss_scale_manager).__name__}.")
        if self._optimizer is not None and (self._amp_level != "O0" or self._keep_bn_fp32 is not None):
            from .amp import build_train_network
            amp_config = {}
            if self._loss_scale_manager_set:
                amp_config["loss_scale_manager"] = self._loss_scale_manager
            if self._keep_bn_fp32 is not None:
                amp_config["keep_batchnorm_fp32"] = self._keep_bn_fp32
            return build_train_network(network, self._optimizer, self._loss_fn, level=self._amp_level,
                                       **amp_config)
        if self._optimizer is not None:
            if self._loss_fn is not None:
                network = WithLossCell(network, self._loss_fn)
            lsm = self._loss_scale_manager
            if micro:  # MindSpore's _TrainGradAccuStepCell: the summed micro-batch gradients times 1/micro_size
                scale = 1.0 if lsm is None else float(lsm.get_loss_scale())
                return TrainOneStepCell(network, self._optimizer, scale / micro)
            if lsm is None:
                return TrainOneStepCell(network, self._optimizer)
            update_cell = lsm.get_update_cell()
            if update_cell is not None:
                return TrainOneStepWithLossScaleCell(network, self._optimizer, scale_sense=update_cell)
            return TrainOneStepCell(network, self._optimizer, lsm.get_loss_scale())
        elif self._loss_fn is not None:
            network = WithLossCell(network, self._loss_fn)
        return network

    def _build_eval_network(self, metrics, eval_network, eval_indexes):
        self._metric_fns = get_metrics(metrics)
        self._eval_network = eval_network
        self._eval_indexes = eval_indexes
        if not self._metric_fns:
            return
        if eval_network is not None:
            if eval_indexes is not None and not (isinstance(eval_indexes, list) and len(eval_indexes) == 3):
                raise ValueError(f"The argument 'eval_indexes' must be a list or None. If 'eval_indexes' is a list, "
                                 f"length of it must be three. But got 'eval_indexes' {eval_indexes}")
            return
        if self._loss_fn is None:
            raise ValueError("If `metrics` is set, `eval_network` must not be None. Do not set `metrics` if you "
                             "don't want an evaluation.\nIf evaluation is required, you need to specify "
                             "`eval_network`, which will be used in the framework to evaluate the model.\nFor the "
                             "simple scenarios with one data, one label and one logits, `eval_network` is optional, "
                             "and then you can set `eval_network` or `loss_fn`. For the latter case, framework will "
                             "automatically build an evaluation network with `network` and `loss_fn`.")
        self._eval_network = WithEvalCell(self._network, self._loss_fn, self._amp_level in ("O2", "O3"))
        self._eval_indexes = [0, 1, 2]

    @property
    def train_network(self):
        """The network one training step calls (TrainOneStepCell(WithLossCell(...), optimizer) by default)."""
        return self._train_network

    @property
    def eval_network(self):
        """The evaluation network (WithEvalCell(network, loss_fn) by default; None without metrics)."""
        return self._eval_network

    @property
    def predict_network(self):
        """The prediction network (the network itself)."""
        return self._predict_network

    # ------------------------------------------------------------------------------------------- metrics
    def _clear_metrics(self):
        for m in self._metric_fns.values():
            m.clear()

    def _update_metrics(self, outputs):
        if isinstance(outputs, _Tensor):
            outputs = (outputs,)
        if not isinstance(outputs, tuple):
            raise ValueError(f"The argument 'outputs' should be tuple, but got {type(outputs)}.")
        if self._eval_indexes is not None and len(outputs) < 3:
            raise ValueError(f"The length of 'outputs' must be >= 3, but got {len(outputs)}")
        for metric in self._metric_fns.values():
            if self._eval_indexes is None:
                metric.update(*outputs)
            elif isinstance(metric, Loss):
                metric.update(outputs[self._eval_indexes[0]])
            else:
                metric.update(outputs[self._eval_indexes[1]], outputs[self._eval_indexes[2]])

    def _get_metrics(self):
        return {k: m.eval() for k, m in self._metric_fns.items()}

    # ----------------------------------------------------------------------------------------- checks
    @staticmethod
    def _check_methods_for_custom_callbacks(callbacks, current_mode):
        """MindSpore's rule: a custom callback defining old-style hooks (begin, step_end, ...) only warns in
        train/eval, and is refused (ValueError) by fit, whose evaluation would call them too."""
        for cb in _transform_callbacks(callbacks):
            name = type(cb).__name__
            if name in _internal_cb_names:
                continue
            bad = set(type(cb).__dict__) & _OLD_HOOKS
            if not bad:
                continue
            msg = (f"For {name} callback, {bad} methods may not be supported in later version, Use methods prefixed "
                   f"with 'on_train' or 'on_eval' instead when using customized callbacks.")
            if current_mode in ("train", "eval"):
                _logger.warning(msg)
            else:
                raise ValueError(msg)

    def _check_train_args(self, api, epoch, train_dataset, dataset_sink_mode, sink_size, initial_epoch):
        _check_bool(dataset_sink_mode, "dataset_sink_mode", api)
        _check_int(sink_size, "sink_size", api)
        epoch = _check_int(epoch, "epoch", api, 1)
        initial_epoch = _check_int(initial_epoch, "initial_epoch", api, 0)
        if initial_epoch >= epoch:
            raise ValueError(f"For '{api}', the parameter 'epoch' must bigger than parameter 'initial_epoch', but "
                             f"got the parameter 'epoch' is {epoch}, 'initial_epoch' is {initial_epoch}.")
        _check_dataset(train_dataset, "train_dataset", api)
        size = train_dataset.get_dataset_size()
        if size == 0:
            raise ValueError("There is no valid data in dataset, please check dataset file firstly.")
        if sink_size == -1:
            sink_size = size
        if sink_size < -1 or sink_size == 0:
            raise ValueError(f"For '{api}', The argument 'sink_size' must be -1 or positive, but got {sink_size}.")
        return epoch, sink_size, initial_epoch

    # ------------------------------------------------------------------------------------------ training
    def train(self, epoch, train_dataset, callbacks=None, dataset_sink_mode=False, sink_size=-1, initial_epoch=0):
        """Trains for `epoch - initial_epoch` epochs over train_dataset.

        Args:
            epoch (int ≥ 1): the last epoch number (epochs initial_epoch+1 ... epoch run).
            train_dataset: a Dataset whose rows are (data, label) with a loss_fn, or the train network's inputs.
            callbacks (Callback or list, optional): run in order at each hook (see Callback).
            dataset_sink_mode (bool): run through kiln.data_sink: each "epoch" is one call running sink_size steps
                (the dataset loops), with one step_begin/step_end per sink and cur_step_num advancing by sink_size
                (MindSpore's sink semantics; MindSpore itself refuses sink on CPU, Kiln supports it everywhere).
            sink_size (int): steps per sink (default -1: the dataset size); only used with sink mode.
            initial_epoch (int ≥ 0): epochs already done (resuming; cur_epoch_num starts at initial_epoch + 1).

        Raises:
            TypeError: a bad argument type, a dataset without the Dataset methods, a callback that is not a
                Callback. ValueError: epoch < 1, initial_epoch >= epoch, an empty dataset, sink_size 0 or < -1,
                dataset rows of the wrong length with a loss_fn. Exceptions of callbacks and of the network
                propagate (callbacks are exited first).
        """
        epoch, sink_size, initial_epoch = self._check_train_args("Model.train", epoch, train_dataset,
                                                                 dataset_sink_mode, sink_size, initial_epoch)
        if callbacks:
            self._check_methods_for_custom_callbacks(callbacks, "train")
        self._train(epoch, train_dataset, callbacks, dataset_sink_mode, sink_size, initial_epoch)

    def fit(self, epoch, train_dataset, valid_dataset=None, valid_frequency=1, callbacks=None,
            dataset_sink_mode=False, valid_dataset_sink_mode=False, sink_size=-1, initial_epoch=0):
        """Trains as `train` and evaluates on valid_dataset after each `valid_frequency`-th epoch (an int: every
        that many epochs; a list: those epoch numbers), before on_train_epoch_end. The results are in
        cb_params.metrics and cb_params.eval_results (metrics plus 'eval_loss') during on_train_epoch_end (for
        EarlyStopping, ReduceLROnPlateau, History, LossMonitor). Custom callbacks also get the on_eval_* hooks of
        those evaluations; Kiln's own callbacks do not, except TimeMonitor (MindSpore's rule).

        Raises: as train; TypeError: valid_frequency neither int nor list; ValueError: valid_dataset without
        metrics; a custom callback overriding old-style hooks (begin, step_end, ...).
        """
        api = "Model.fit"
        _check_bool(valid_dataset_sink_mode, "valid_dataset_sink_mode", api)
        epoch, sink_size, initial_epoch = self._check_train_args(api, epoch, train_dataset, dataset_sink_mode,
                                                                 sink_size, initial_epoch)
        if isinstance(valid_frequency, bool) or not isinstance(valid_frequency, (int, list)):
            raise TypeError(f"For 'Model.fit', the type of 'valid_frequency' must be a list or an integer, but got "
                            f"type {type(valid_frequency)}.")
        if isinstance(valid_frequency, int) and valid_frequency < 1:
            raise ValueError(f"For 'Model.fit', the 'valid_frequency' must be >= 1, but got {valid_frequency}.")
        if valid_dataset is not None:
            _check_dataset(valid_dataset, "valid_dataset", api)
            if not self._metric_fns:
                raise ValueError("For 'Model.fit', if valid_dataset is not None, the model argument 'metrics' can not "
                                 "beNone or empty, you should set the argument 'metrics' for model.")
        if callbacks:
            self._check_methods_for_custom_callbacks(callbacks, "fit")
        self._train(epoch, train_dataset, callbacks, dataset_sink_mode, sink_size, initial_epoch,
                    (valid_dataset, valid_frequency, valid_dataset_sink_mode))

    def _train(self, epoch, train_dataset, callbacks, sink_mode, sink_size, initial_epoch, valid_infos=None):
        cb_params = _InternalCallbackParam()
        cb_params.cur_step_num = 0
        cb_params.train_network = self._train_network
        cb_params.epoch_num = epoch - initial_epoch
        cb_params.batch_num = sink_size if sink_mode and sink_size > 0 else train_dataset.get_dataset_size()
        self.batch_num = cb_params.batch_num
        cb_params.mode = "train"
        cb_params.loss_fn = self._loss_fn
        cb_params.optimizer = self._optimizer
        cb_params.parallel_mode = self._parallel_mode
        cb_params.device_number = self._device_number
        cb_params.train_dataset = train_dataset
        cb_params.list_callback = _transform_callbacks(callbacks)
        cb_params.train_dataset_element = None
        cb_params.network = self._network
        cb_params.last_save_ckpt_step = None
        cb_params.latest_ckpt_file = None
        cb_params.loss_scale_mananger = self._loss_scale_manager  # (sic) MindSpore's key
        valid_infos = valid_infos or (None, 1, False)
        with _CallbackManager(cb_params.list_callback) as list_callback:
            try:
                if sink_mode:
                    self._train_sink_process(epoch, train_dataset, list_callback, cb_params, sink_size,
                                             initial_epoch, valid_infos)
                else:
                    self._train_process(epoch, train_dataset, list_callback, cb_params, initial_epoch, valid_infos)
            except BaseException:
                self._exception_save(cb_params)
                raise

    @staticmethod
    def _exception_save(cb_params):
        for cb in cb_params.list_callback:
            if isinstance(cb, ModelCheckpoint) and cb._config.exception_save:
                try:
                    cb._save_breakpoint(cb_params)
                except Exception as e:  # noqa: BLE001 (the original error matters more: logged)
                    _logger.warning("ModelCheckpoint: the breakpoint checkpoint could not be saved: %s", e)

    def _train_process(self, epoch, train_dataset, list_callback, cb_params, initial_epoch, valid_infos):
        network = self._train_network
        network.set_train(True)
        cb_params.dataset_sink_mode = False
        run_context = RunContext(cb_params)
        inputs_checked = False  # the first row completes a dynamic signature (_complete_dynamic_inputs)
        list_callback.on_train_begin(run_context)
        for i in range(initial_epoch, epoch):
            cb_params.cur_epoch_num = i + 1
            self._current_epoch_num = i + 1
            self._current_step_num = 0
            list_callback.on_train_epoch_begin(run_context)
            for element in train_dataset.create_tuple_iterator(num_epochs=1, output_numpy=False):
                element = _as_tuple(element)
                if self._loss_fn is not None and len(element) != 2:
                    raise ValueError(f"When 'loss_fn' is not None, 'train_dataset' should return two elements, but "
                                     f"got {len(element)}, please check the number of elements returned by "
                                     f"'train_dataset'")
                cb_params.cur_step_num += 1
                self._current_step_num = int((cb_params.cur_step_num - 1) % cb_params.batch_num + 1)
                cb_params.train_dataset_element = element
                list_callback.on_train_step_begin(run_context)
                if not network.training:  # a callback may have evaluated in between
                    network.set_train(True)
                if not inputs_checked:
                    _complete_dynamic_inputs(network, element)
                    inputs_checked = True
                cb_params.net_outputs = network(*element)
                self._update_loss_scale(cb_params.net_outputs)
                list_callback.on_train_step_end(run_context)
                if run_context.get_stop_requested():
                    break
            if self._end_train_epoch(valid_infos, cb_params, list_callback, run_context):
                break
        list_callback.on_train_end(run_context)

    def _end_train_epoch(self, valid_infos, cb_params, list_callback, run_context):
        """The end of a training epoch (both loops): evaluation when fit asks for it, the epoch-end hooks, the
        per-epoch results dropped again. Returns True when a callback requested to stop."""
        self._eval_during_train(valid_infos, cb_params, list_callback)
        list_callback.on_train_epoch_end(run_context)
        cb_params.pop("metrics", None)
        cb_params.pop("eval_results", None)
        return run_context.get_stop_requested()

    def _update_loss_scale(self, outputs):
        """MindSpore's rule: with a manager that drops overflow updates, tell it the step's overflow flag."""
        lsm = self._loss_scale_manager
        if lsm is not None and lsm.get_drop_overflow_update():
            lsm.update_loss_scale(bool(np.all(outputs[1].asnumpy())))

    def _sink_function(self, network, dataset, sink_size):
        """kiln.data_sink(network, dataset, sink_size), made once per (network, dataset, sink_size): a sunk dataset
        keeps its position between calls (and a prefetching implementation its queue)."""
        key = (id(network), id(dataset), sink_size)
        entry = self._sinks.pop(key, None)
        if entry is None or entry[0] is not dataset or entry[1] is not network:
            from .data_sink import data_sink
            entry = (dataset, network, data_sink(network, dataset, sink_size=sink_size))
        self._sinks[key] = entry  # most recently used last
        while len(self._sinks) > _MAX_SINKS:  # bounded: a new dataset per train() call must not pile up
            self._sinks.pop(next(iter(self._sinks)))
        return entry[2]

    def _train_sink_process(self, epoch, train_dataset, list_callback, cb_params, sink_size, initial_epoch,
                            valid_infos):
        size = train_dataset.get_dataset_size()
        if size % sink_size != 0:
            _logger.info("In dataset_sink mode (dataset_size %% sink_size) should equal to 0, it is suggested to "
                         "pad/drop data or adjust sink_size. But got 'dataset_size': %s, 'sink_size': %s.",
                         size, sink_size)
        network = self._train_network
        network.set_train(True)
        sink = self._sink_function(network, train_dataset, sink_size)
        cb_params.sink_size = sink_size
        cb_params.dataset_sink_mode = True
        run_context = RunContext(cb_params)
        list_callback.on_train_begin(run_context)
        self.epoch_iter = 0
        while self.epoch_iter < epoch - initial_epoch:
            cb_params.cur_epoch_num = self.epoch_iter + 1 + initial_epoch
            self._current_epoch_num = cb_params.cur_epoch_num
            self._current_step_num = 0
            list_callback.on_train_epoch_begin(run_context)
            cb_params.cur_step_num += sink_size
            self._current_step_num = int((cb_params.cur_step_num - 1) % cb_params.batch_num + 1)
            list_callback.on_train_step_begin(run_context)
            if not network.training:
                network.set_train(True)
            cb_params.net_outputs = sink()
            list_callback.on_train_step_end(run_context)
            if self._end_train_epoch(valid_infos, cb_params, list_callback, run_context):
                break
            self.epoch_iter += 1
        list_callback.on_train_end(run_context)

    @staticmethod
    def _should_eval(epoch, frequency):
        return epoch % frequency == 0 if isinstance(frequency, int) else epoch in frequency

    def _eval_during_train(self, valid_infos, cb_params, list_callback):
        valid_dataset, frequency, valid_sink = valid_infos
        if valid_dataset is None or not self._should_eval(cb_params.cur_epoch_num, frequency):
            return
        saved = (cb_params.cur_step_num, cb_params.batch_num, cb_params.dataset_sink_mode, cb_params.net_outputs)
        eval_callbacks = [cb for cb in list_callback._callbacks
                          if type(cb).__name__ not in _internal_cb_names or type(cb).__name__ == "TimeMonitor"]
        cb_params.eval_network = self._eval_network
        cb_params.valid_dataset = valid_dataset
        cb_params.batch_num = valid_dataset.get_dataset_size()
        cb_params.mode = "eval"
        cb_params.cur_step_num = 0
        self._clear_metrics()
        with _CallbackManager(eval_callbacks) as eval_list:
            self._eval_process(valid_dataset, eval_list, cb_params, valid_sink, add_eval_loss=True)
        cb_params.mode = "train"
        (cb_params.cur_step_num, cb_params.batch_num, cb_params.dataset_sink_mode, cb_params.net_outputs) = saved
        self._train_network.set_train(True)

    # ---------------------------------------------------------------------------------------- evaluation
    def eval(self, valid_dataset, callbacks=None, dataset_sink_mode=False):
        """Evaluates the metrics over valid_dataset; returns {metric name: value} (e.g. {'acc': 0.93}).

        The eval network runs in inference mode (set_train(False)) on each batch; its output feeds the metrics
        (loss, prediction, label for the default WithEvalCell). Hooks: on_eval_begin, on_eval_epoch_begin, per
        step on_eval_step_begin/on_eval_step_end, on_eval_epoch_end, on_eval_end. With dataset_sink_mode=True the
        batches come through kiln.data_sink (one step per call: the metrics need every step's output).

        Raises:
            ValueError: the Model has no metrics. TypeError: a bad dataset or callbacks.
        """
        _check_bool(dataset_sink_mode, "dataset_sink_mode", "Model.eval")
        _check_dataset(valid_dataset, "valid_dataset", "Model.eval")
        if not self._metric_fns:
            raise ValueError("For Model.eval, the model argument 'metrics' can not be None or empty, you should set "
                             "the argument 'metrics' for model.")
        if callbacks:
            self._check_methods_for_custom_callbacks(callbacks, "eval")
        cb_params = _InternalCallbackParam()
        cb_params.eval_network = self._eval_network
        cb_params.valid_dataset = valid_dataset
        cb_params.batch_num = valid_dataset.get_dataset_size()
        cb_params.mode = "eval"
        cb_params.cur_step_num = 0
        cb_params.list_callback = _transform_callbacks(callbacks)
        cb_params.network = self._network
        self._clear_metrics()
        with _CallbackManager(cb_params.list_callback) as list_callback:
            return self._eval_process(valid_dataset, list_callback, cb_params, dataset_sink_mode)

    def _eval_process(self, valid_dataset, list_callback, cb_params, sink_mode, add_eval_loss=False):
        network = self._eval_network
        network.set_train(False)
        cb_params.dataset_sink_mode = sink_mode
        run_context = RunContext(cb_params)
        eval_loss_fn = get_metric_fn("loss") if add_eval_loss else None
        list_callback.on_eval_begin(run_context)
        list_callback.on_eval_epoch_begin(run_context)
        if sink_mode:
            sink = self._sink_function(network, valid_dataset, 1)
            steps = (None for _ in range(valid_dataset.get_dataset_size()))
        else:
            steps = valid_dataset.create_tuple_iterator(num_epochs=1, output_numpy=False)
        for element in steps:
            cb_params.cur_step_num += 1
            if element is not None:
                element = _as_tuple(element)
            cb_params.eval_dataset_element = element
            list_callback.on_eval_step_begin(run_context)
            if network.training:
                network.set_train(False)
            outputs = sink() if sink_mode else network(*element)
            cb_params.net_outputs = outputs
            list_callback.on_eval_step_end(run_context)
            self._update_metrics(outputs)
            if eval_loss_fn is not None:
                eval_loss_fn.update(outputs[self._eval_indexes[0]] if self._eval_indexes else
                                    _as_tuple(outputs)[0])
            if run_context.get_stop_requested():
                break
        list_callback.on_eval_epoch_end(run_context)
        metrics = self._get_metrics()
        cb_params.metrics = metrics
        if eval_loss_fn is not None:
            cb_params.eval_results = dict(metrics)
            cb_params.eval_results["eval_loss"] = eval_loss_fn.eval()
        list_callback.on_eval_end(run_context)
        return metrics

    # ---------------------------------------------------------------------------------------- prediction
    def predict(self, *predict_data, backend=None, config=None):
        """The predict network's output on the inputs (in inference mode: set_train(False)).

        Args:
            *predict_data: Tensors (or None/int/float/str, passed through).
            backend: None only (MindSpore's 'lite' backend is not available).
        Raises:
            TypeError: an input of another type (a NumPy array: wrap it in a Tensor).
            ValueError: an empty Tensor; backend not None.
        """
        if backend is not None:
            raise ValueError(f"For Model.predict, `backend` should be None in Kiln, but got {backend!r}.")
        for item in predict_data:
            if item is None:
                continue
            if isinstance(item, _Tensor):
                if item.size == 0:
                    raise ValueError("For Model.predict, the input data can not be empty.")
                continue
            if not isinstance(item, (int, float, str)):
                raise TypeError(f"For Model.predict, the types of input data must be in the Union(Tensor, None, int, "
                                f"float, str), but got type {type(item).__name__}.")
        net = self._predict_network
        if net.training:
            net.set_train(False)
        return net(*predict_data)

    # ------------------------------------------------------------------------------------------ build
    def build(self, train_dataset=None, valid_dataset=None, sink_size=-1, epoch=1, sink_mode=True):
        """Compiles the train network (on train_dataset's first batch) and the eval network (on valid_dataset's
        first batch) ahead of training, so that the first step does not pay for compilation. Only GRAPH_MODE
        compiles; in PyNative there is nothing to prepare. Compiling traces the step without running it: no
        parameter changes and no batch is consumed from the training loop's point of view.

        Raises:
            ValueError: both datasets None; epoch < 1; valid_dataset without metrics.
            TypeError: a dataset without the Dataset methods.
        """
        _check_int(epoch, "epoch", "Model.build", 1)
        _check_int(sink_size, "sink_size", "Model.build")
        _check_bool(sink_mode, "sink_mode", "Model.build")
        if train_dataset is None and valid_dataset is None:
            raise ValueError("The argument 'train_dataset' and 'valid_dataset' can not both be None or empty.")
        if train_dataset is not None:
            _check_dataset(train_dataset, "train_dataset", "Model.build")
        if valid_dataset is not None:
            _check_dataset(valid_dataset, "valid_dataset", "Model.build")
            if not self._metric_fns:
                raise RuntimeError("If define `valid_dataset`, metric fn can not be None or empty, you should set the "
                                   "argument 'metrics' for model.")
        if context.get_context("mode") != context.GRAPH_MODE:
            return
        if train_dataset is not None:
            self._train_network.set_train(True)
            batch = _first_batch(train_dataset)
            _complete_dynamic_inputs(self._train_network, batch)
            _precompile(self._train_network, batch)
        if valid_dataset is not None:
            self._eval_network.set_train(False)
            _precompile(self._eval_network, _first_batch(valid_dataset))


def _pass_inputs(network, loss_fn, train_network):
    """MindSpore's rule: the network's set_inputs (with those of the loss function after its first, the logits,
    when both are set) become the train network's, so that a dynamic (None) batch compiles one training graph."""
    if train_network is network:
        return
    net_inputs = network.get_inputs()
    if not net_inputs:
        return
    net_inputs = list(net_inputs)
    loss_inputs = loss_fn.get_inputs() if loss_fn is not None and hasattr(loss_fn, "get_inputs") else None
    if loss_inputs:
        net_inputs += list(loss_inputs)[1:]
    train_network.set_inputs(*net_inputs)


def _complete_dynamic_inputs(network, element):
    """When the train network's inputs (from the network's set_inputs) are dynamic but name fewer tensors than a
    dataset row has (the labels: the loss function has no set_inputs), the others get a dynamic batch axis too: the
    dataset's columns share the batch. (MindSpore derives them from the dataset; a smaller last batch
    (drop_remainder=False) then reuses the one graph.)"""
    from .._compiler import dynamic as _dynamic
    from ..common.tensor import Tensor
    inputs = network.get_inputs()
    if not inputs or _dynamic.spec_of(inputs) is None or len(inputs) >= len(element):
        return
    extra = [Tensor(shape=[None] + list(e.shape[1:]), dtype=e.dtype)
             for e in element[len(inputs):] if isinstance(e, Tensor) and len(e.shape) >= 1]
    if len(extra) == len(element) - len(inputs):
        network.set_inputs(*inputs, *extra)

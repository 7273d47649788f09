"""EarlyStopping and ReduceLROnPlateau (MindSpore's rules; the monitored value comes from Model.fit's evaluation,
cb_params.eval_results, or is the training loss for monitor='loss')."""
import logging

import numpy as np

from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...common import dtype as mstype
from ...common.parameter import Parameter
from ._callback import Callback, _handle_loss
from ._checks import non_negative_int, check_bool, check_number, check_str

__all__ = ["EarlyStopping", "ReduceLROnPlateau"]

_logger = logging.getLogger("kiln.train")

# Metrics for which smaller is better (mode='auto'), as MindSpore's list.
_SMALLER_BETTER = ("hausdorff_distance", "mae", "mse", "loss", "perplexity", "mean_surface_distance",
                   "root_mean_square_distance", "eval_loss")


def _monitor_value(cb_params, monitor, api):
    """The monitored value as a 0-d NumPy array, or None (with a warning) when it is not available."""
    candidates = {}
    if monitor == "loss":
        value = _handle_loss(cb_params.get("net_outputs"))
        if isinstance(value, _Tensor):
            value = float(np.mean(value.asnumpy()))
    else:
        candidates = cb_params.get("eval_results", {}) or {}
        value = candidates.get(monitor)
    if value is None:
        _logger.warning("%s is conditioned on %s, which is not available. Available choices are: %s", api, monitor,
                        sorted({"loss", *candidates}))
        return None
    value = np.asarray(value.asnumpy() if isinstance(value, _Tensor) else value)
    if value.shape != ():
        raise ValueError(f"{api} only supports scalar monitor now, but the monitored '{monitor}' has shape "
                         f"{value.shape}.")
    if not np.isfinite(value):
        _logger.warning("%s: invalid (NaN or infinite) %s.", api, monitor)
    return value


class _Plateau(Callback):
    def _init_mode(self, api):
        if self.mode not in ("auto", "min", "max"):
            raise ValueError(f"For '{api}', mode should be 'auto', 'min' or 'max', but got {self.mode}.")
        self._smaller = self.mode == "min" or (self.mode == "auto" and self.monitor in _SMALLER_BETTER)
        self._reset_best()

    def _reset_best(self):
        self.best = np.inf if self._smaller else -np.inf

    def is_improvement(self, a, b):
        """a better than b by more than min_delta (below for 'min', above for 'max')."""
        return bool(np.less(a, b - self.min_delta)) if self._smaller else bool(np.greater(a, b + self.min_delta))


class EarlyStopping(_Plateau):
    """Stops training when the monitored value stops improving (MindSpore's EarlyStopping).

    At each training epoch end: wait += 1; if the value improves on the best by more than min_delta, it becomes
    the best and (when it also beats `baseline`, if given) wait = 0; when wait >= patience, training stops
    (run_context.request_stop()) and, with restore_best_weights, the weights of the best epoch are loaded back.
    Note MindSpore's rule: with patience=0 training stops after the first epoch that has a value.

    Args:
        monitor (str): 'eval_loss' (default; Model.fit's evaluation loss), 'loss' (the training loss) or a metric
            name of Model.fit's evaluation (e.g. 'acc').
        min_delta (int/float): the smallest change that counts as an improvement (its absolute value; default 0).
        patience (int ≥ 0): epochs without improvement before stopping (default 0).
        verbose (bool): print when stopping/restoring (default False).
        mode (str): 'auto' (min for losses and error metrics, max otherwise), 'min' or 'max'.
        baseline (int/float, optional): a value to beat before the patience counter resets.
        restore_best_weights (bool): load the best epoch's weights when stopping (default False).
    Attributes: best, wait, stopped_epoch.

    Raises:
        TypeError: an argument of the wrong type. ValueError: a bad mode or a negative patience.
        ValueError (at epoch end): a monitored value that is not a scalar.
    A missing monitored value (no evaluation this epoch) is skipped with a warning.
    """

    def __init__(self, monitor="eval_loss", min_delta=0, patience=0, verbose=False, mode="auto", baseline=None,
                 restore_best_weights=False):
        super().__init__()
        api = "EarlyStopping"
        self.monitor = check_str(monitor, "monitor", api)
        self.min_delta = abs(check_number(min_delta, "min_delta", api))
        self.patience = non_negative_int(patience, "patience", api)
        self.verbose = check_bool(verbose, "verbose", api)
        self.mode = check_str(mode, "mode", api)
        self.baseline = None if baseline is None else check_number(baseline, "baseline", api)
        self.restore_best_weights = check_bool(restore_best_weights, "restore_best_weights", api)
        self.wait = 0
        self.stopped_epoch = 0
        self.best_weights_param_dict = None
        self._init_mode(api)

    def on_train_begin(self, run_context):
        """Resets the state."""
        self.wait = 0
        self.stopped_epoch = 0
        self._reset_best()
        self.best_weights_param_dict = None

    @staticmethod
    def _snapshot(network):
        return {name: Parameter(_Tensor._from_numpy(np.array(p.asnumpy(), copy=True)), name=name)
                for name, p in network.parameters_dict().items()}

    def on_train_epoch_end(self, run_context):
        """Updates best/wait and requests the stop."""
        cb_params = run_context.original_args()
        current = _monitor_value(cb_params, self.monitor, "EarlyStopping")
        if current is None:
            return
        if self.restore_best_weights and self.best_weights_param_dict is None:
            self.best_weights_param_dict = self._snapshot(cb_params.train_network)
        self.wait += 1
        if self.is_improvement(current, self.best):
            self.best = current
            if self.restore_best_weights:
                self.best_weights_param_dict = self._snapshot(cb_params.train_network)
            if self.baseline is None or self.is_improvement(current, self.baseline):
                self.wait = 0
        if self.wait >= self.patience:
            self.stopped_epoch = cb_params.get("cur_epoch_num")
            run_context.request_stop()
            if self.restore_best_weights and self.best_weights_param_dict is not None:
                if self.verbose:
                    print("Restoring model weights from the end of the best epoch.")
                from ..serialization import load_param_into_net
                load_param_into_net(cb_params.train_network, self.best_weights_param_dict)

    def on_train_end(self, run_context):
        """Prints the stop epoch when verbose."""
        if self.stopped_epoch > 0 and self.verbose:
            print("Epoch %05d: early stopping" % self.stopped_epoch)


class ReduceLROnPlateau(_Plateau):
    """Multiplies the learning rate by `factor` when the monitored value stops improving (MindSpore's
    ReduceLROnPlateau).

    At each training epoch end: during cooldown the counter decreases and wait = 0; an improvement (by more than
    min_delta) sets best and wait = 0; otherwise, outside cooldown, wait += 1, and when wait >= patience the
    learning rate becomes max(lr·factor, min_lr) (if lr > min_lr), cooldown restarts and wait = 0.

    Args:
        monitor (str): 'eval_loss' (default), 'loss' or a metric name of Model.fit's evaluation.
        factor (float in (0, 1)): default 0.1. patience (int ≥ 0): default 10. verbose (bool).
        mode: 'auto' | 'min' | 'max'. min_delta (int/float): default 1e-4. cooldown (int ≥ 0): default 0.
        min_lr (int/float): default 0.
    The optimizer must have a fixed learning rate (a Parameter); the new value is written into it, so compiled
    graphs see it at the next step.

    Raises:
        TypeError / ValueError: bad arguments (factor outside (0, 1), bad mode, negative counts).
        ValueError (at epoch end): a dynamic or per-group learning rate; a non-scalar monitored value.
    """

    def __init__(self, monitor="eval_loss", factor=0.1, patience=10, verbose=False, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0):
        super().__init__()
        api = "ReduceLROnPlateau"
        self.monitor = check_str(monitor, "monitor", api)
        factor = check_number(factor, "factor", api)
        if not 0.0 < factor < 1.0:
            raise ValueError(f"For 'ReduceLROnPlateau', the 'factor' must be in range of (0.0, 1.0), but got "
                             f"{factor}.")
        self.factor = float(factor)
        self.patience = non_negative_int(patience, "patience", api)
        self.verbose = check_bool(verbose, "verbose", api)
        self.mode = check_str(mode, "mode", api)
        self.min_delta = abs(check_number(min_delta, "min_delta", api))
        self.cooldown = non_negative_int(cooldown, "cooldown", api)
        self.min_lr = check_number(min_lr, "min_lr", api)
        self.cooldown_counter = 0
        self.wait = 0
        self._init_mode(api)

    def on_train_begin(self, run_context):
        """Resets the state."""
        self.cooldown_counter = 0
        self.wait = 0
        self._reset_best()

    def on_train_epoch_end(self, run_context):
        """Updates the counters and reduces the learning rate on a plateau."""
        cb_params = run_context.original_args()
        optimizer = cb_params.get("optimizer")
        cur_lr = getattr(optimizer, "learning_rate", None)
        if not isinstance(cur_lr, Parameter) or getattr(optimizer, "is_group_lr", False):
            raise ValueError("ReduceLROnPlateau does not support dynamic learning rate and group learning rate now.")
        current = _monitor_value(cb_params, self.monitor, "ReduceLROnPlateau")
        if current is None:
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self.is_improvement(current, self.best):
            self.best = current
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                lr = np.float32(cur_lr.asnumpy())
                if lr > self.min_lr:  # the product in float32, as MindSpore's Parameter * factor
                    new_lr = max(float(lr * np.float32(self.factor)), self.min_lr)
                    cur_lr.set_data(_kernels.full([], new_lr, mstype.float32))
                    if self.verbose:
                        print("Epoch %05d: ReduceLROnPlateau reducing learning rate to %s." %
                              (cb_params.cur_epoch_num, np.float32(new_lr)))  # "0.15", as MindSpore prints
                self.cooldown_counter = self.cooldown
                self.wait = 0

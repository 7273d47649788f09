"""Callback, RunContext and the callback manager (MindSpore's mindspore.train.callback._callback).

Dispatch rules (MindSpore 2.10): Model calls the `on_train_*` / `on_eval_*` hooks. The base class implements each
of them by calling the old-style alias: on_train_begin and on_eval_begin → begin, on_*_epoch_begin → epoch_begin,
on_*_epoch_end → epoch_end, on_*_step_begin → step_begin, on_*_step_end → step_end, on_*_end → end. A subclass
therefore overrides either the new hooks or the old aliases (an old alias then runs in training and in
evaluation)."""
from contextlib import ExitStack

import numpy as np

from ...common.tensor import Tensor as _Tensor

__all__ = ["Callback", "RunContext"]



class Callback:
    """Base class of callbacks. Override the hooks you need; each receives a RunContext, whose
    `original_args()` holds the cb_params (see RunContext) and whose `request_stop()` ends training after the
    current step.

    Hooks, in the order Model.train calls them: on_train_begin; per epoch on_train_epoch_begin, per step
    on_train_step_begin / on_train_step_end, on_train_epoch_end; on_train_end. Model.eval: on_eval_begin,
    on_eval_epoch_begin, per step on_eval_step_begin / on_eval_step_end, on_eval_epoch_end, on_eval_end.
    Each new-style hook calls its old-style alias (begin, epoch_begin, step_begin, step_end, epoch_end, end) by
    default. A callback is also a context manager: Model enters it before training and exits it after.
    """

    def __enter__(self):
        return self

    def __exit__(self, *err):
        """Release resources here if any."""

    # old-style aliases (train and eval)
    def begin(self, run_context):
        """Called once before the network runs (alias of on_train_begin and on_eval_begin)."""

    def epoch_begin(self, run_context):
        """Called before each epoch (alias of on_train_epoch_begin and on_eval_epoch_begin)."""

    def epoch_end(self, run_context):
        """Called after each epoch (alias of on_train_epoch_end and on_eval_epoch_end)."""

    def step_begin(self, run_context):
        """Called before each step (alias of on_train_step_begin and on_eval_step_begin)."""

    def step_end(self, run_context):
        """Called after each step (alias of on_train_step_end and on_eval_step_end)."""

    def end(self, run_context):
        """Called once after the network ran (alias of on_train_end and on_eval_end)."""

    # training
    def on_train_begin(self, run_context):
        """Called once before training; calls begin()."""
        self.begin(run_context)

    def on_train_epoch_begin(self, run_context):
        """Called before each training epoch; calls epoch_begin()."""
        self.epoch_begin(run_context)

    def on_train_epoch_end(self, run_context):
        """Called after each training epoch (after the evaluation of Model.fit); calls epoch_end()."""
        self.epoch_end(run_context)

    def on_train_step_begin(self, run_context):
        """Called before each training step; calls step_begin()."""
        self.step_begin(run_context)

    def on_train_step_end(self, run_context):
        """Called after each training step; calls step_end()."""
        self.step_end(run_context)

    def on_train_end(self, run_context):
        """Called once after training; calls end()."""
        self.end(run_context)

    # evaluation
    def on_eval_begin(self, run_context):
        """Called once before evaluation; calls begin()."""
        self.begin(run_context)

    def on_eval_epoch_begin(self, run_context):
        """Called before the evaluation epoch; calls epoch_begin()."""
        self.epoch_begin(run_context)

    def on_eval_epoch_end(self, run_context):
        """Called after the evaluation epoch; calls epoch_end()."""
        self.epoch_end(run_context)

    def on_eval_step_begin(self, run_context):
        """Called before each evaluation step; calls step_begin()."""
        self.step_begin(run_context)

    def on_eval_step_end(self, run_context):
        """Called after each evaluation step; calls step_end()."""
        self.step_end(run_context)

    def on_eval_end(self, run_context):
        """Called once after evaluation; calls end()."""
        self.end(run_context)


_HOOKS = ("begin", "epoch_begin", "epoch_end", "step_begin", "step_end", "end",
          "on_train_begin", "on_train_epoch_begin", "on_train_epoch_end", "on_train_step_begin",
          "on_train_step_end", "on_train_end", "on_eval_begin", "on_eval_epoch_begin", "on_eval_epoch_end",
          "on_eval_step_begin", "on_eval_step_end", "on_eval_end")


class _CallbackManager(Callback):
    """Runs a list of callbacks in order at each hook (MindSpore's CallbackManager).

    Args:
        callbacks: None, a Callback, or a list of Callbacks.
    Raises:
        TypeError: another type, or a list element that is not a Callback.
    As a context manager it enters every callback (an ExitStack: all entered ones are exited, also on error)."""

    def __init__(self, callbacks):
        self._callbacks, self._stack = [], None
        if isinstance(callbacks, Callback):
            self._callbacks.append(callbacks)
        elif isinstance(callbacks, (list, tuple)):
            for cb in callbacks:
                if not isinstance(cb, Callback):
                    raise TypeError(f"When the 'callbacks' is a list, the elements in 'callbacks' must be Callback "
                                    f"functions, but got {type(cb).__name__}.")
                self._callbacks.append(cb)
        elif callbacks is not None:
            raise TypeError(f"The 'callbacks' is not a Callback or a list of Callback, but got "
                            f"{type(callbacks).__name__}.")

    def __enter__(self):
        if self._stack is None:
            stack = ExitStack()
            stack.__enter__()
            callbacks = []
            try:
                for cb in self._callbacks:
                    target = stack.enter_context(cb)
                    callbacks.append(target if isinstance(target, Callback) else cb)
            except BaseException:
                stack.close()
                raise
            self._stack = stack
            self._callbacks = callbacks
        return self

    def __exit__(self, *err):
        stack, self._stack = self._stack, None
        return stack.__exit__(*err) if stack is not None else None


def _make_dispatch(name):
    def dispatch(self, run_context):
        for cb in self._callbacks:
            getattr(cb, name)(run_context)
    dispatch.__name__ = name
    dispatch.__doc__ = f"Calls {name}(run_context) on every callback, in order."
    return dispatch


for _name in _HOOKS:
    setattr(_CallbackManager, _name, _make_dispatch(_name))


class _InternalCallbackParam(dict):
    """The cb_params: a dict whose keys are also attributes (`cb_params.cur_step_num`)."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(f"'cb_params' has no attribute '{key}'.") from None

    def __setattr__(self, key, value):
        self[key] = value


class RunContext:
    """The information Model passes to every callback hook.

    `original_args()` returns the cb_params (a dict whose keys are also attributes). Training sets:
    train_network, epoch_num (epochs to run in this call), batch_num (steps per epoch; sink_size in sink mode),
    cur_epoch_num (1-based, counting initial_epoch), cur_step_num (steps done since the start of this call, 1-based
    at step_end; a sink advances it by sink_size), net_outputs (the train network's output: the loss), mode
    ('train'), loss_fn, optimizer, train_dataset, train_dataset_element (the current batch), network,
    parallel_mode ('stand_alone'), device_number (1), list_callback, dataset_sink_mode, sink_size (sink mode),
    last_save_ckpt_step, latest_ckpt_file, and in Model.fit after an evaluation, metrics and eval_results.
    Evaluation sets: eval_network, valid_dataset, metrics (at the end), mode ('eval'), batch_num, cur_step_num,
    net_outputs, eval_dataset_element, list_callback, network, dataset_sink_mode.

    `request_stop()` asks Model to stop after the current step (train) or step (eval); `get_stop_requested()`
    tells whether it was asked.

    Raises:
        TypeError: original_args not a dict.
    """

    def __init__(self, original_args):
        if not isinstance(original_args, dict):
            raise TypeError(f"The argument 'original_args' of RunContext should be dict type, but got "
                            f"{type(original_args)}.")
        self._original_args = original_args
        self._stop_requested = False

    def original_args(self):
        """The cb_params dict."""
        return self._original_args

    def request_stop(self):
        """Asks Model to stop training (or evaluation) after the current step."""
        self._stop_requested = True

    def get_stop_requested(self):
        """True after request_stop()."""
        return self._stop_requested


def _handle_loss(loss):
    """The loss from net_outputs as MindSpore's callbacks read it: a Tensor → the mean of its values as a Python
    float; a tuple/list → its first element when that is a Tensor (returned as the Tensor, as MindSpore does);
    anything else unchanged."""
    if isinstance(loss, (tuple, list)):
        if loss and isinstance(loss[0], _Tensor):
            loss = loss[0]
    elif isinstance(loss, _Tensor):
        loss = float(np.mean(loss.asnumpy()))
    return loss

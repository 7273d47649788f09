"""History (MindSpore's) with a plot() that writes the curves as a PNG (Kiln addition, matplotlib), and
LambdaCallback."""
import logging
import math

import numpy as np

from ...common.tensor import Tensor as _Tensor
from ._callback import Callback

__all__ = ["History", "LambdaCallback"]

_logger = logging.getLogger("kiln.train")


class History(Callback):
    """Records the network output (the loss) and Model.fit's evaluation metrics at each epoch end.

    `history` is {'net_output': [loss at the last step of each epoch (mean of the output, a NumPy float32)],
    '<metric>': [...], 'eval_loss': [...] (with Model.fit)}; `epoch` is {'epoch': [epoch numbers]}. A
    train call resets `epoch` but appends to `history`, as MindSpore's History.

    `plot(path)` (Kiln addition) writes the recorded curves against the epoch number as a PNG; with
    `History(plot_path=PATH)` (Kiln addition) that PNG is written by itself at the end of every `Model.train` /
    `Model.fit` run (the loss view the progress bar lacks). MindSpore's `History()` takes no arguments.

    Args:
        plot_path (str, optional): where to write the curves at the end of each training run.
        plot_title (str, optional): the figure's title.
    Raises:
        TypeError: plot_path not a str/PathLike (at construction).
    """

    def __init__(self, plot_path=None, plot_title=None):
        super().__init__()
        import os
        if plot_path is not None and not isinstance(plot_path, (str, os.PathLike)):
            raise TypeError(f"For 'History', the 'plot_path' must be a str or None, but got "
                            f"{type(plot_path).__name__}.")
        self.history = {}
        self.epoch = None
        self.plot_path, self.plot_title = plot_path, plot_title

    def on_train_end(self, run_context):
        """Writes the curves to plot_path (when given and something numeric was recorded: a run whose outputs and
        metrics are none of them real numbers logs a warning instead of failing after training)."""
        if self.plot_path is not None and self.history:
            if not any(_numeric(v) for v in self.history.values()):
                _logger.warning("History: nothing numeric was recorded (keys: %s), so no plot is written to %s.",
                                sorted(self.history), self.plot_path)
                return
            self.plot(self.plot_path, title=self.plot_title)

    def begin(self, run_context):
        """Resets the epoch list."""
        self.epoch = {"epoch": []}

    def epoch_end(self, run_context):
        """Appends this epoch's loss and metrics."""
        cb_params = run_context.original_args()
        if self.epoch is None:
            self.epoch = {"epoch": []}
        self.epoch["epoch"].append(cb_params.get("cur_epoch_num", 1))
        out = cb_params.get("net_outputs")
        if isinstance(out, (tuple, list)) and out and isinstance(out[0], _Tensor):
            out = out[0]
        if isinstance(out, _Tensor):
            out = np.mean(out.asnumpy())
        current = {"net_output": out}
        metrics = cb_params.get("metrics")
        if metrics:
            current.update(metrics)
        for k, v in current.items():
            self.history.setdefault(k, []).append(v)

    def plot(self, path, keys=None, title=None):
        """Writes the curves of `history` (every key with numeric values, or `keys`) against the epoch as a PNG.

        One subplot per quantity (losses and metrics have different scales), sharing the epoch axis; uses
        matplotlib's Agg backend (no display needed). An epoch whose value is None (no output recorded) is a gap in
        its curve. Returns the path written.

        Args:
            path (str): the output file (a .png is written whatever the extension).
            keys (list of str, optional): which entries of `history` to draw (default: all numeric ones).
            title (str, optional): the figure title.
        Raises:
            RuntimeError: nothing recorded yet.
            KeyError: a key not in history.
            ValueError: a key whose values are not real numbers (arrays, strings, complex), or no such key at
                all when `keys` is None.
            TypeError: path not a str/PathLike.
        """
        import os
        # A Figure drawn by the Agg canvas directly: no pyplot, no global backend change, no display needed.
        from matplotlib.figure import Figure
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"For 'History.plot', the 'path' must be a str, but got {type(path).__name__}.")
        if not self.history:
            raise RuntimeError("For 'History.plot', nothing was recorded yet: pass the History to Model.train or "
                               "Model.fit first.")
        if keys is None:
            keys = [k for k, v in self.history.items() if _numeric(v)]
            if not keys:
                raise ValueError(f"For 'History.plot', no entry of the history holds real numbers to plot (keys: "
                                 f"{sorted(self.history)}).")
        for k in keys:
            if k not in self.history:
                raise KeyError(f"For 'History.plot', '{k}' is not in the history (keys: {sorted(self.history)}).")
            if not _numeric(self.history[k]):
                raise ValueError(f"For 'History.plot', the values of '{k}' are not real numbers, so they cannot be "
                                 f"plotted.")
        fig = Figure(figsize=(6, 2.6 * max(len(keys), 1)))
        FigureCanvasAgg(fig)
        axes = fig.subplots(len(keys), 1, sharex=True, squeeze=False)[:, 0]
        epochs_all = (self.epoch or {}).get("epoch", [])
        for ax, k in zip(axes, keys):
            values = [math.nan if v is None else float(np.asarray(v)) for v in self.history[k]]
            # `history` spans every train call, `epoch` only the last one: use its numbers when they line up.
            xs = epochs_all if len(epochs_all) == len(values) else list(range(1, len(values) + 1))
            ax.plot(xs, values, marker="o", markersize=3)
            ax.set_ylabel(k)
            ax.grid(True, alpha=0.3)
        axes[-1].set_xlabel("epoch")
        if title:
            fig.suptitle(title)
        fig.tight_layout()
        fig.savefig(os.fspath(path), format="png")
        return path


def _numeric(values):
    """True when every value is None (an epoch without output) or a real scalar (bool, int, float, a 0-d array or
    Tensor of such a dtype), and at least one is not None."""
    def real_scalar(v):
        a = np.asarray(v)
        return a.shape == () and (np.issubdtype(a.dtype, np.number) or a.dtype == np.bool_) and np.isrealobj(a)
    try:
        return any(v is not None for v in values) and all(v is None or real_scalar(v) for v in values)
    except (TypeError, ValueError):
        return False


class LambdaCallback(Callback):
    """A callback made of functions: each argument (default None: nothing) is a function(run_context) called at
    that hook (on_train_epoch_begin, on_train_epoch_end, on_train_step_begin, on_train_step_end, on_train_begin,
    on_train_end, on_eval_epoch_begin, on_eval_epoch_end, on_eval_step_begin, on_eval_step_end, on_eval_begin,
    on_eval_end).

    Raises:
        TypeError: an argument that is neither None nor callable.
    """

    def __init__(self, on_train_epoch_begin=None, on_train_epoch_end=None, on_train_step_begin=None,
                 on_train_step_end=None, on_train_begin=None, on_train_end=None, on_eval_epoch_begin=None,
                 on_eval_epoch_end=None, on_eval_step_begin=None, on_eval_step_end=None, on_eval_begin=None,
                 on_eval_end=None):
        super().__init__()
        fns = dict(on_train_epoch_begin=on_train_epoch_begin, on_train_epoch_end=on_train_epoch_end,
                   on_train_step_begin=on_train_step_begin, on_train_step_end=on_train_step_end,
                   on_train_begin=on_train_begin, on_train_end=on_train_end,
                   on_eval_epoch_begin=on_eval_epoch_begin, on_eval_epoch_end=on_eval_epoch_end,
                   on_eval_step_begin=on_eval_step_begin, on_eval_step_end=on_eval_step_end,
                   on_eval_begin=on_eval_begin, on_eval_end=on_eval_end)
        for name, fn in fns.items():
            if fn is not None and not callable(fn):
                raise TypeError(f"For 'LambdaCallback', the '{name}' must be callable or None, but got "
                                f"{type(fn).__name__}.")
            setattr(self, name, fn if fn is not None else _noop)


def _noop(run_context):
    return None

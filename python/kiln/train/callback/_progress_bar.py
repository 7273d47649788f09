"""ProgressBar: a training progress bar (steps, loss, ETA) built on tqdm (Kiln addition; MindSpore has none)."""
import sys
import time

from ._callback import Callback, _handle_loss
from ._checks import check_bool

__all__ = ["ProgressBar"]


class ProgressBar(Callback):
    """Shows the progress of each training epoch: steps done / steps per epoch, elapsed time, ETA, steps per
    second and the last loss, with tqdm.

    On a terminal the bar redraws in place (tqdm). When the output is not a terminal (a log file, CI), it prints
    plain lines instead — one each time another `log_fraction` of the epoch is done and at the epoch end — in
    tqdm's format, e.g.

        Epoch 2/5:  50%|█████     | 16/32 [00:01<00:01, 15.2step/s, loss=0.4132]

    In sink mode the bar advances by sink_size per sink. With Model.fit, the evaluation metrics are written after
    the epoch's bar.

    Args:
        file (file object, optional): where to write (default sys.stderr, looked up at each epoch).
        dynamic (bool, optional): redraw in place (True) or print lines (False); default None: in place exactly
            when `file` is a terminal.
        log_fraction (float in (0, 1]): in line mode, print every this fraction of an epoch (default 0.25).
        leave (bool): keep each finished epoch's bar on screen (default True).
    Raises:
        TypeError: dynamic/leave not bool, log_fraction not a number. ValueError: log_fraction outside (0, 1].
    """

    def __init__(self, file=None, dynamic=None, log_fraction=0.25, leave=True):
        super().__init__()
        if dynamic is not None:
            check_bool(dynamic, "dynamic", "ProgressBar")
        check_bool(leave, "leave", "ProgressBar")
        if isinstance(log_fraction, bool) or not isinstance(log_fraction, (int, float)):
            raise TypeError(f"For 'ProgressBar', the 'log_fraction' must be a float, but got "
                            f"{type(log_fraction).__name__}.")
        if not 0.0 < log_fraction <= 1.0:
            raise ValueError(f"For 'ProgressBar', the 'log_fraction' must be in (0, 1], but got {log_fraction}.")
        self._file = file
        self._dynamic = dynamic
        self._log_fraction = float(log_fraction)
        self._leave = leave
        self._bar = None
        self._first_epoch = None

    def _out(self):
        return self._file if self._file is not None else sys.stderr

    def _is_dynamic(self, out):
        if self._dynamic is not None:
            return self._dynamic
        try:
            return bool(out.isatty())
        except (AttributeError, ValueError):
            return False

    def on_train_begin(self, run_context):
        self._first_epoch = None

    def on_train_epoch_begin(self, run_context):
        from tqdm import tqdm
        cb = run_context.original_args()
        self._close()
        out = self._out()
        total = int(cb.get("batch_num", 0)) or None
        self._total = total
        self._done = 0
        self._start_step = cb.get("cur_step_num", 0)
        self._loss = None
        self._start_time = time.time()
        self._next_log = self._log_fraction
        epoch = cb.get("cur_epoch_num", 1)
        if self._first_epoch is None:
            self._first_epoch = epoch
        epochs = self._first_epoch - 1 + cb.get("epoch_num", epoch)  # initial_epoch + the epochs of this call
        self._desc = f"Epoch {epoch}/{epochs}"
        if self._is_dynamic(out):
            self._bar = tqdm(total=total, desc=self._desc, file=out, leave=self._leave, unit="step",
                             dynamic_ncols=True)

    def on_train_step_end(self, run_context):
        cb = run_context.original_args()
        done = cb.get("cur_step_num", 0) - self._start_step
        if self._total:
            done = min(done, self._total)
        step = done - self._done
        self._done = done
        loss = _handle_loss(cb.get("net_outputs"))
        if loss is not None and not isinstance(loss, float):
            try:
                loss = float(loss.asnumpy().mean())
            except AttributeError:
                loss = None
        self._loss = loss
        if self._bar is not None:
            if loss is not None:
                self._bar.set_postfix(loss=f"{loss:.4f}", refresh=False)
            self._bar.update(step)
        elif self._total and done / self._total + 1e-12 >= self._next_log and done < self._total:
            while self._next_log <= done / self._total + 1e-12:
                self._next_log += self._log_fraction
            self._print_line()

    def _print_line(self):
        from tqdm import tqdm
        postfix = None if self._loss is None else f"loss={self._loss:.4f}"
        line = tqdm.format_meter(self._done, self._total, time.time() - self._start_time, ncols=100,
                                 prefix=self._desc, unit="step", postfix=postfix)
        print(line, file=self._out(), flush=True)

    def on_train_epoch_end(self, run_context):
        cb = run_context.original_args()
        if self._bar is None and self._total is not None:
            self._print_line()
        self._close()
        metrics = cb.get("metrics")
        if metrics:
            print(f"{self._desc}: eval {metrics}", file=self._out(), flush=True)

    def on_train_end(self, run_context):
        self._close()

    def _close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __exit__(self, *err):
        self._close()

"""LossMonitor and TimeMonitor (MindSpore's, same printed text)."""
import time

import numpy as np

from ._callback import Callback, _handle_loss
from ._checks import non_negative_int, positive_int, check_bool

__all__ = ["LossMonitor", "TimeMonitor"]


class LossMonitor(Callback):
    """Prints the loss every `per_print_times` steps, as MindSpore does:

        epoch: 1 step: 32, loss is 0.6931471824645996

    (the step is the step within the epoch; the loss is the mean of the network's output, or the first element of
    a tuple output). With Model.fit it also prints `Eval result: epoch 1, metrics: {...}` after each evaluation.

    Args:
        per_print_times (int): print every this many steps (default 1; 0: never print). In sink mode a print can
            happen only once per sink (the step_end of each sink).
    Raises:
        TypeError / ValueError: per_print_times not an int ≥ 0.
        ValueError (at step_end): the loss is NaN or infinite — "In epoch: E step: S, loss is NAN or INF, training
            process cannot continue, terminating training."
    """

    def __init__(self, per_print_times=1):
        super().__init__()
        self._per_print_times = non_negative_int(per_print_times, "per_print_times", "LossMonitor")
        self._last_print_time = 0

    def step_end(self, run_context):
        """Checks the loss and prints it every per_print_times steps."""
        cb_params = run_context.original_args()
        cur_epoch_num = cb_params.get("cur_epoch_num", 1)
        loss = _handle_loss(cb_params.net_outputs)
        cur_step_in_epoch = (cb_params.cur_step_num - 1) % cb_params.batch_num + 1
        if isinstance(loss, float) and (np.isnan(loss) or np.isinf(loss)):
            raise ValueError(f"In epoch: {cur_epoch_num} step: {cur_step_in_epoch}, loss is NAN or INF, training "
                             "process cannot continue, terminating training.")
        per = self._per_print_times
        # A new train() call restarts cur_step_num: bring the last print point back below it (MindSpore's rule).
        if per != 0 and cb_params.cur_step_num <= self._last_print_time:
            while cb_params.cur_step_num <= self._last_print_time:
                self._last_print_time -= max(per, cb_params.batch_num if cb_params.get("dataset_sink_mode") else 1)
        if per != 0 and cb_params.cur_step_num - self._last_print_time >= per:
            self._last_print_time = cb_params.cur_step_num
            print(f"epoch: {cur_epoch_num} step: {cur_step_in_epoch}, loss is {loss}", flush=True)

    def on_train_epoch_end(self, run_context):
        """Prints the evaluation result of Model.fit, if any."""
        cb_params = run_context.original_args()
        metrics = cb_params.get("metrics")
        if metrics:
            print(f"Eval result: epoch {cb_params.cur_epoch_num}, metrics: {metrics}")


class TimeMonitor(Callback):
    """Prints the time of each epoch and per step, as MindSpore does:

        Train epoch time: 12.345 ms, per step time: 0.386 ms

    ("Eval ..." when it runs in evaluation). Step count: cb_params.batch_num when it is a positive int, else
    data_size.

    Args:
        data_size (int, optional): steps per epoch, used when batch_num is unknown (default None).
        data_time (bool): also print the mean time spent waiting for data per step in non-sink mode, as
            " (data time: 0.123 ms)" (default False).
    Raises:
        TypeError: data_time not a bool.
        ValueError / TypeError (at epoch end): no positive step count (batch_num and data_size both unusable).
    """

    def __init__(self, data_size=None, data_time=False):
        super().__init__()
        self.data_size = data_size
        self.epoch_time = time.time()
        self.data_time = check_bool(data_time, "data_time", "TimeMonitor")
        self.data_time_sum = 0.0
        self.data_time_start = 0.0

    @staticmethod
    def _sink(run_context):
        return bool(run_context.original_args().get("dataset_sink_mode"))

    def on_train_step_begin(self, run_context):
        """Adds the time since the last step ended (data loading) when data_time is set."""
        if self.data_time and not self._sink(run_context):
            self.data_time_sum += time.time() - self.data_time_start

    def on_train_step_end(self, run_context):
        """Starts the data-time clock when data_time is set."""
        if self.data_time and not self._sink(run_context):
            self.data_time_start = time.time()

    def epoch_begin(self, run_context):
        """Starts the epoch clock."""
        self.epoch_time = time.time()
        if self.data_time and not self._sink(run_context):
            self.data_time_sum = 0.0
            self.data_time_start = time.time()

    def epoch_end(self, run_context):
        """Prints the epoch and per-step times in milliseconds."""
        epoch_ms = (time.time() - self.epoch_time) * 1000
        cb_params = run_context.original_args()
        mode = cb_params.get("mode", "")
        step_size = self.data_size
        batch_num = cb_params.get("batch_num")
        if isinstance(batch_num, int) and not isinstance(batch_num, bool) and batch_num > 0:
            step_size = batch_num
        positive_int(step_size, "data_size", "TimeMonitor")
        log = f"{mode.title()} epoch time: {epoch_ms:5.3f} ms, per step time: {epoch_ms / step_size:5.3f} ms"
        if self.data_time and not self._sink(run_context):
            log += f" (data time: {self.data_time_sum * 1000 / step_size:5.3f} ms)"
        print(log, flush=True)

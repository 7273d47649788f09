"""Dataset.sync_wait / sync_update (MindSpore's SyncWaitDataset and BlockReleasePair): a gate in the pipeline that
lets a given number of rows through, then holds the next row until the training loop calls `sync_update`, which
releases more rows and runs a callback (to change augmentation parameters between steps, tutorial
dataset/augment.md)."""
import logging
import threading

from .datasets import Dataset

_log = logging.getLogger("kiln.dataset")
_callback_timeout = {"seconds": 60}  # MindSpore's config.get_callback_timeout() default


def set_callback_timeout(timeout):
    """Seconds a sync_wait gate waits for sync_update before it gives up (logs a warning and stops gating), as
    MindSpore's `config.set_callback_timeout`. Raises TypeError / ValueError for a non-positive int."""
    if not isinstance(timeout, int) or isinstance(timeout, bool):
        raise TypeError(f"timeout must be of type int, but got {type(timeout).__name__}.")
    if timeout <= 0 or timeout > 2**31 - 1:
        raise ValueError(f"Input timeout is not within the required interval of [1, {2**31 - 1}].")
    _callback_timeout["seconds"] = timeout


def get_callback_timeout():
    """The sync_wait timeout in seconds (default 60, as MindSpore)."""
    return _callback_timeout["seconds"]


class BlockReleasePair:
    """The gate's state: `row_count` starts at -rows and counts rows through; a row waits while row_count >= 0;
    `release(n)` lowers it by n and calls the callback (MindSpore's BlockReleasePair)."""

    def __init__(self, init_release_rows, callback=None):
        self.row_count = -init_release_rows
        self.default_rows = init_release_rows
        self.callback = callback
        self.disabled = False
        self.cv = threading.Condition()

    def reset(self):
        with self.cv:
            self.row_count = -self.default_rows
            self.cv.notify_all()

    def scale(self, batch_size):
        """A batch above the gate: counts become rows of batch_size (MindSpore's update_batched_size)."""
        self.row_count *= batch_size
        self.default_rows *= batch_size

    def block(self):
        with self.cv:
            if not self.cv.wait_for(lambda: self.row_count < 0 or self.disabled, timeout=get_callback_timeout()):
                _log.warning("Timeout happened in sync_wait, maybe dataset.sync_update(condition=...) is not added "
                             "after dataset.create_dict_iterator(...), now disabling lock.")
                self.disabled = True
            self.row_count += 1

    def release(self, pass_rows=None, data=None):
        with self.cv:
            self.row_count -= self.default_rows if pass_rows is None else pass_rows
            if self.callback is not None:
                self.callback(data)
            self.cv.notify_all()

    def disable(self):
        with self.cv:
            self.disabled = True
            self.cv.notify_all()


def sync_notifiers(dataset):
    """{condition name: SyncWaitDataset} of the gates in `dataset`'s pipeline."""
    out = {}
    for child in dataset.children:
        out.update(sync_notifiers(child))
    if isinstance(dataset, SyncWaitDataset):
        out[dataset.condition_name] = dataset
    return out


def scale_gates(dataset, batch_size):
    """A batch of int batch_size is built above these gates: each gate's counts become rows."""
    if isinstance(dataset, SyncWaitDataset):
        dataset.pair.scale(batch_size)
    for child in dataset.children:
        scale_gates(child, batch_size)


class SyncWaitDataset(Dataset):
    """The result of `Dataset.sync_wait` (see there)."""

    def __init__(self, child, condition_name, num_batch=1, callback=None):
        super().__init__([child])
        if not isinstance(condition_name, str):
            raise TypeError(f"Argument condition_name with value {condition_name} is not of type [<class 'str'>], "
                            f"but got {type(condition_name)}.")
        if not isinstance(num_batch, int) or isinstance(num_batch, bool):
            raise TypeError(f"Argument num_batch with value {num_batch} is not of type [<class 'int'>], but got "
                            f"{type(num_batch)}.")
        if num_batch <= 0:
            raise ValueError("num_batch need to be greater than 0.")
        if callback is not None and not callable(callback):
            raise TypeError(f"sync_wait: callback must be callable, but got {callback!r}.")
        if condition_name in sync_notifiers(child):
            raise RuntimeError("Condition name is already in use.")
        self.condition_name = condition_name
        self.pair = BlockReleasePair(num_batch, callback)

    def _compute_size(self):
        return self.children[0].get_dataset_size()

    def _make(self, ctx):
        child_epoch = self.children[0]._make(ctx)
        pair = self.pair
        pair.reset()  # a new iterator starts with num_batch free batches (MindSpore's iterator_bootstrap)

        def epoch():
            for row in child_epoch():
                pair.block()
                yield row

        return epoch

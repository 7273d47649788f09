"""kiln.data_sink (MindSpore's mindspore.data_sink): a function that runs `fn` on `sink_size` consecutive batches
of a dataset per call.

This is the plain Python version (a loop over the dataset's iterator); Model's sink mode uses only the function
it returns, so a faster implementation (a prefetching queue) can replace this module without changes to Model."""
from ..common.jit import JitFunction

__all__ = ["data_sink"]


def _batches(dataset):
    """Batches of `dataset` forever, one dataset epoch after another (MindSpore loops a sunk dataset)."""
    while True:
        empty = True
        for batch in dataset.create_tuple_iterator(num_epochs=1, output_numpy=False):
            empty = False
            yield batch
        if empty:
            raise ValueError("For 'data_sink', the dataset yields no data; check the dataset.")


def data_sink(fn, dataset, sink_size=1, jit_config=None, input_signature=None):
    """A function that, at each call, runs `fn(*batch)` on the next `sink_size` batches of `dataset` and returns
    the outputs of the last one, as mindspore.data_sink.

    Args:
        fn (callable): the step, called with the columns of one batch (e.g. a TrainOneStepCell, or a function doing
            forward, gradients and the optimizer update).
        dataset: a kiln.dataset Dataset (anything with create_tuple_iterator(num_epochs, output_numpy) yielding
            lists of Tensors). The dataset is looped: batches continue across dataset epochs.
        sink_size (int > 0): steps per call (default 1).
        jit_config (optional): when not None, `fn` is compiled with kiln.jit (GRAPH semantics; Kiln has no
            JitConfig class yet, so its fields are not read);
            default None: `fn` runs as it is (a Cell still compiles itself in GRAPH_MODE).
        input_signature (Tensor or list of Tensors, optional): with jit_config, the input signature of the
            compiled step (shapes/dtypes checked at each step).
    Returns:
        sink_process(): runs sink_size steps, returns the last step's output.

    Raises:
        TypeError: sink_size not an int, fn not callable. ValueError: sink_size <= 0; (at call time) a dataset that
            yields no batch.
    """
    if isinstance(sink_size, bool) or not isinstance(sink_size, int):
        raise TypeError(f"For 'data_sink', the 'sink_size' must be int, but got {type(sink_size).__name__}.")
    if sink_size <= 0:
        raise ValueError(f"The 'sink_size' must be positive, but got sink_size {sink_size}.")
    if not callable(fn):
        raise TypeError(f"For 'data_sink', the 'fn' must be callable, but got {type(fn).__name__}.")
    step = fn
    if jit_config is not None:
        step = JitFunction(fn, input_signature=input_signature, name=getattr(fn, "__name__", "sink_fn"))
    batches = []

    def sink_process(*args, **kwargs):
        if not batches:
            batches.append(_batches(dataset))
        it = batches[0]
        out = None
        for _ in range(sink_size):
            out = step(*next(it))
        return out

    return sink_process

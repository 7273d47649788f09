"""Gradient accumulation: `mindspore.parallel.nn.GradAccumulation(network, micro_size)` and its older name
`nn.GradAccumulationCell(network, micro_size)` (MindSpore 2.10 semantics, docs/distributed.md "Recompute and
gradient accumulation").

The wrapper splits every input along dimension 0 into `micro_size` equal micro-batches (micro-batch i is rows
[i·b, (i+1)·b), b = batch / micro_size), runs `network` on each and returns the SUM of the outputs (MindSpore's
forward: 4 micro-batches of a mean-reduced loss give 4 times the loss of the whole batch).

Under a grad transform (TrainOneStepCell, value_and_grad, Model.train) the micro-batches are differentiated one
after the other: micro-batch i's forward and backward run (on a closed tape) before micro-batch i+1's forward, and
its gradients (Parameters and differentiated inputs) are added to an accumulator. So only one micro-batch's
activations are alive at a time — the point of gradient accumulation. The accumulated gradient goes back through
one tape node (`_engine.record_custom`) whose bprop multiplies it by the cotangent of the summed output; that is
exact because the output is a sum of scalars (a network that returns a non-scalar keeps each micro-batch's tape
until the backward instead, which is exact but saves no memory). In Graph mode the same happens while tracing: the
graph holds micro-batch 0's forward and backward, then micro-batch 1's, ..., and the executor's liveness plan reuses
the activation buffers across micro-batches.

Gradients are those of the summed output, as MindSpore's TrainOneStepCell gives them. `Model(GradAccumulation(...),
optimizer=...)` scales them by 1/micro_size (MindSpore's _TrainGradAccuStepCell: sens = 1/micro_size), so with a
mean-reduced loss one Model step equals one step on the whole batch.
"""
from ... import _engine
from ... import ops as _ops
from ...ops import _kernels
from ...common.tensor import Tensor
from ...common import dtype as mstype
from ..cell import Cell

_FLOATS = (mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64)


def _check(network, micro_size, api):
    if not isinstance(network, Cell):
        raise TypeError(f"For '{api}', the argument 'network' must cell type, but got the type : {type(network)}.")
    if not isinstance(micro_size, int) or isinstance(micro_size, bool):
        raise TypeError(f"For '{api}', the argument 'micro_size' must be integer, but got the type : "
                        f"{type(micro_size)}.")
    if micro_size <= 0:
        raise ValueError(f"For '{api}', the argument 'micro_size' must be large than 0, but got {micro_size}.")


def _micro_inputs(inputs, i, k, api):
    """Micro-batch i of k of every input (rows along dimension 0)."""
    out = []
    for j, x in enumerate(inputs):
        if not isinstance(x, Tensor):
            raise TypeError(f"For '{api}', every input must be a Tensor (split along dimension 0), but input {j} is "
                            f"{type(x).__name__}.")
        if x.ndim == 0:
            raise ValueError(f"For '{api}', input {j} is a 0-d Tensor: it has no dimension 0 to split into "
                             f"{k} micro-batches.")
        n = x.shape[0]
        if n % k != 0:
            raise ValueError(f"For micro batch initialization, the 0th dimension shape of input({n}) must be divided "
                             f"by micro size({k})")
        b = n // k
        out.append(x[i * b:(i + 1) * b])
    return out


def _add_output(total, out, api):
    """Running sum of the micro-batch outputs. MindSpore adds them with ops.Add, which takes Tensors and numbers
    only (a network returning a tuple raises TypeError there); Kiln's add would stack a tuple of Tensors into one
    Tensor and return a sum of a different shape, so anything but a Tensor or a number is refused here."""
    if isinstance(out, bool) or not isinstance(out, (Tensor, int, float)):
        raise TypeError(f"For '{api}', the network must return a Tensor or a number (the outputs of the micro-batches "
                        f"are summed with Add), but got {type(out).__name__}.")
    return out if total is None else _ops.add(total, out)


def _accumulate(cell, inputs):
    """The forward of GradAccumulation (see the module docstring)."""
    api, net, k = type(cell).__name__, cell.network, cell.micro_size
    _micro_inputs(inputs, 0, k, api)  # types and shapes checked before anything runs
    params = [p for p in net.get_parameters() if p._tracked]
    tensor_pos = [j for j, x in enumerate(inputs) if isinstance(x, Tensor) and x._tracked]
    if _engine.grad_level() != 1 or (not params and not tensor_pos):
        # No transform (inference), or a transform of a transform (grad of grad: differentiate the sum as written).
        total = None
        for i in range(k):
            out = net(*_micro_inputs(inputs, i, k, api))
            total = _add_output(total, out, api)
        return total
    acc = None          # accumulated gradients of the scalar micro-batch outputs
    kept = []           # (output, leaves) of micro-batches whose output is not a scalar: differentiated later
    total = None
    with _engine.IsolatedTape():
        with _engine.GradScope() as scope:
            call = list(inputs)
            leaves = []
            for j in tensor_pos:
                call[j] = scope.watch_input(inputs[j])
                leaves.append(Tensor(call[j]))
            for p in params:
                scope.watch(p)
                leaves.append(p)
            tracing = _engine.tracing()
            for i in range(k):
                micro = _micro_inputs(call, i, k, api)
                if tracing and acc is not None:
                    # Graph mode: every running sum gets a second use (a Depend view ahead of the next micro-batch),
                    # so the elementwise fusion pass cannot merge the k additions into one node at the end, which
                    # would keep every micro-batch's gradients alive until then.
                    for a in acc:
                        micro[0] = _kernels.depend(micro[0], a)
                out = net(*micro)
                if not isinstance(out, Tensor):
                    raise TypeError(f"For '{api}', the network must return a Tensor (summed over the micro-batches), "
                                    f"but got {type(out).__name__}.")
                value = _kernels.detach(out)
                total = value if total is None else _ops.add(total, value)
                if out.size == 1 and out.dtype in _FLOATS:
                    g = _engine.gradient([out], [None], leaves)
                    acc = g if acc is None else [_ops.add(a, b) for a, b in zip(acc, g)]
                else:
                    kept.append(out)
                del out
    n_in = len(tensor_pos)
    targets = [inputs[j] for j in tensor_pos] + params

    def bprop(ins, outs, gouts):
        gout = gouts[0]
        if gout is None:
            return [None] * len(ins)
        grads = None
        if acc is not None:
            grads = [_ops.mul(a, _kernels.cast(gout, a.dtype)) for a in acc]
        if kept:
            with _engine.IsolatedTape():
                with _engine.GradScope() as s2:
                    for p in params:
                        s2.watch(p)
                    g2 = _engine.gradient(kept, [gout] * len(kept), leaves)
            grads = g2 if grads is None else [_ops.add(a, b) for a, b in zip(grads, g2)]
        return grads[:n_in] + grads[n_in:]

    return _engine.record_custom(targets, [total], bprop)[0]


class GradAccumulation(Cell):
    """mindspore.parallel.nn.GradAccumulation(network, micro_size): gradient accumulation over `micro_size`
    micro-batches (see the module docstring of kiln/nn/wrap/grad_accumulation.py).

    Args:
        network (Cell): the network to run on each micro-batch (usually a WithLossCell: it returns a scalar loss).
        micro_size (int): the number of micro-batches; every input's dimension 0 must be divisible by it.
    Inputs: Tensors, each split along dimension 0. Output: the sum of network's outputs over the micro-batches.
    Raises:
        TypeError: network not a Cell; micro_size not an int; an input that is not a Tensor; a network that
            returns anything but a Tensor or a number (a tuple: MindSpore's Add raises TypeError too).
        ValueError: micro_size <= 0; an input whose dimension 0 is not divisible by micro_size (or a 0-d input).
    """

    def __init__(self, network, micro_size):
        super().__init__(auto_prefix=False)
        _check(network, micro_size, type(self).__name__)
        self.network = network
        self.micro_size = micro_size

    def construct(self, *inputs):
        return _accumulate(self, inputs)


class GradAccumulationCell(GradAccumulation):
    """mindspore.nn.GradAccumulationCell(network, micro_size): the older name of GradAccumulation (MindSpore 2.10
    keeps both; the same behaviour and errors, naming 'GradAccumulationCell')."""


def is_grad_accumulation(cell):
    """Whether `cell` is or contains a GradAccumulation (MindSpore's _is_grad_accumulation); returns its
    micro_size, or 0."""
    if isinstance(cell, GradAccumulation):
        return cell.micro_size
    for _, c in cell.cells_and_names():
        if isinstance(c, GradAccumulation):
            return c.micro_size
    return 0


class MicroBatchInterleaved(Cell):
    """mindspore.parallel.nn.MicroBatchInterleaved(network, interleave_num=2) (also nn.MicroBatchInterleaved):
    every input split along dimension 0 into `interleave_num` equal parts, `network` run on each, the outputs summed
    (MindSpore: 0.0 + the outputs in order). MindSpore uses the split to overlap the model-parallel communication of
    one part with the computation of the other; Kiln (stand-alone, data parallel) has no such communication, so this
    is the split and the sum, differentiated as written.

    Raises:
        TypeError: interleave_num not an int; an input that is not a Tensor; a network output that is not a
            Tensor or a number.
        ValueError: interleave_num <= 0; an input whose dimension 0 is not divisible by interleave_num.
    """

    def __init__(self, network, interleave_num=2):
        super().__init__(auto_prefix=False)
        if not isinstance(interleave_num, int) or isinstance(interleave_num, bool):
            raise TypeError("For 'MicroBatchInterleaved', the argument 'interleave_num' must be integer, but got the "
                            f"type : {type(interleave_num)}.")
        if interleave_num <= 0:
            raise ValueError("For 'MicroBatchInterleaved', the argument 'interleave_num' must be large than 0, but "
                             f"got {interleave_num}.")
        self.network = network
        self.interleave_num = interleave_num

    def construct(self, *inputs):
        return _interleave(self, inputs)


def _interleave(cell, inputs):
    k = cell.interleave_num
    _micro_inputs(inputs, 0, k, "MicroBatchInterleaved")
    total = None
    for i in range(k):
        out = cell.network(*_micro_inputs(inputs, i, k, "MicroBatchInterleaved"))
        total = _add_output(total, out, "MicroBatchInterleaved")
    return total

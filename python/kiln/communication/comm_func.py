"""mindspore.communication.comm_func: functional collectives (all_reduce, all_gather_into_tensor,
reduce_scatter_tensor, all_to_all_with_output_shape, all_to_all_single_with_output_shape, broadcast, barrier, send,
recv). They call the same C++ ops as ops.AllReduce & co., so they
work eagerly and inside compiled functions (as side effects, in program order). Ranks are world ranks (MindSpore).

async_op=True returns (output, CommHandle) as MindSpore does; Kiln's collectives complete before returning, so
CommHandle.wait() returns at once."""
from .. import _engine
from ..ops import _kernels
from ..ops import comm_ops as _c
from .management import GlobalComm

__all__ = ["CommHandle", "all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor",
           "all_to_all_with_output_shape", "all_to_all_single_with_output_shape", "broadcast", "barrier", "send",
           "recv"]


class CommHandle:
    """The handle of an async_op=True collective. wait(): returns None (the collective has already completed)."""

    def wait(self):
        return None


def _ret(out, async_op, fn):
    if not isinstance(async_op, bool):
        raise TypeError(f"For '{fn}', the argument 'async_op' must be a bool, but got {type(async_op).__name__}.")
    return (out, CommHandle()) if async_op else out


def all_reduce(tensor, op=_c.ReduceOp.SUM, group=GlobalComm.WORLD_COMM_GROUP, async_op=False):
    """The element-wise reduction ('sum', 'max', 'min', 'prod') of `tensor` over `group`: a new Tensor, same shape
    and dtype. Errors as ops.AllReduce."""
    fn = "all_reduce"
    out = _kernels.all_reduce(_c._tensor(tensor, fn), _c._reduce_op(op, fn), _c._group(group, fn))
    return _ret(out, async_op, fn)


def all_gather_into_tensor(tensor, group=GlobalComm.WORLD_COMM_GROUP, async_op=False):
    """Every process's `tensor` concatenated along axis 0 in rank order: shape [size·d0, ...]."""
    fn = "all_gather_into_tensor"
    return _ret(_kernels.all_gather(_c._tensor(tensor, fn), _c._group(group, fn)), async_op, fn)


def reduce_scatter_tensor(tensor, op=_c.ReduceOp.SUM, group=GlobalComm.WORLD_COMM_GROUP, async_op=False):
    """The reduction of `tensor` over `group`, chunk `rank` of its split along axis 0: shape [d0/size, ...]."""
    fn = "reduce_scatter_tensor"
    out = _kernels.reduce_scatter(_c._tensor(tensor, fn), _c._reduce_op(op, fn), _c._group(group, fn))
    return _ret(out, async_op, fn)


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _shape_of(s, name, fn):
    """A Tensor's shape, or a tuple/list of ints >= 0, as a tuple."""
    if hasattr(s, "asnumpy"):
        return tuple(s.shape)
    if not isinstance(s, (tuple, list)) or any(isinstance(d, bool) or not isinstance(d, int) or d < 0 for d in s):
        raise TypeError(f"For '{fn}', '{name}' must be a Tensor or a tuple/list of ints >= 0, but got {s!r}.")
    return tuple(s)


def _a2a_group(group, fn):
    g = _c._group(GlobalComm.WORLD_COMM_GROUP if group is None else group, fn)
    return g, _engine.comm_group_size(g)


def _pair(out, async_op, fn):
    """(output, CommHandle) with async_op=True, (output, None) without (MindSpore's all_to_all* return pairs)."""
    if not isinstance(async_op, bool):
        raise TypeError(f"For '{fn}', the argument 'async_op' must be a bool, but got {type(async_op).__name__}.")
    return (out, CommHandle() if async_op else None)


def all_to_all_with_output_shape(output_shape_list, input_tensor_list, group=None, async_op=False):
    """Sends input_tensor_list[j] to group rank j and receives from each rank j a tensor of output_shape_list[j]
    (MindSpore 2.10's comm_func, deprecated there since 2.9 for ops.communication.all_to_all). Returns
    (tuple of the received tensors, in rank order, with the shapes of output_shape_list; CommHandle or None).

    output_shape_list: tuple/list of shapes (tuples/lists of ints) or Tensors (their shapes), one per process;
    input_tensor_list: tuple/list of Tensors of one dtype, one per process, any shapes. The shapes must match across
    processes (what rank i sends to j is what j expects from i). Differentiable (the uneven all-to-all's gradient
    sends the cotangents back), eager and compiled.

    Errors: TypeError if a list is not a tuple/list, holds a non-Tensor (input) or a non-shape (output), or the
    input tensors differ in dtype; ValueError if a list's length is not the group's size."""
    fn = "all_to_all_with_output_shape"
    if not isinstance(input_tensor_list, (tuple, list)):
        raise TypeError(f"For '{fn}', 'input_tensor_list' must be a tuple/list of Tensors, but got "
                        f"{type(input_tensor_list).__name__}.")
    if not isinstance(output_shape_list, (tuple, list)):
        raise TypeError(f"For '{fn}', 'output_shape_list' must be a tuple/list of shapes or Tensors, but got "
                        f"{type(output_shape_list).__name__}.")
    ins = [_c._tensor(t, fn) for t in input_tensor_list]
    shapes = [_shape_of(s, "output_shape_list", fn) for s in output_shape_list]
    dtypes = {t.dtype for t in ins}
    if len(dtypes) > 1:
        raise TypeError(f"For '{fn}', the tensors of 'input_tensor_list' must have one dtype, but got "
                        f"{[str(t.dtype) for t in ins]}.")
    g, n = _a2a_group(group, fn)
    if len(ins) != n or len(shapes) != n:
        raise ValueError(f"For '{fn}', 'input_tensor_list' and 'output_shape_list' need one entry per process of the "
                         f"group ({n}), but got {len(ins)} and {len(shapes)}.")
    from .. import ops
    flat = ops.cat([t.reshape(-1) for t in ins]) if len(ins) > 1 else ins[0].reshape(-1)
    recv = [_numel(s) for s in shapes]
    out = _kernels.all_to_all_v(flat, [t.size for t in ins], recv, g)
    result, off = [], 0
    for k, s in zip(recv, shapes):
        result.append(out[off:off + k].reshape(s))
        off += k
    return _pair(tuple(result), async_op, fn)


def _splits(sizes, dim0, n, name, what, fn):
    if sizes is None or (isinstance(sizes, (tuple, list)) and not sizes):
        if dim0 % n != 0:
            raise ValueError(f"For '{fn}', the {what} shape at dim 0 ({dim0}) must be divisible by the group size "
                             f"{n} when '{name}' is not given.")
        return [dim0 // n] * n
    if not isinstance(sizes, (tuple, list)) or any(isinstance(c, bool) or not isinstance(c, int) or c < 0
                                                   for c in sizes):
        raise TypeError(f"For '{fn}', '{name}' must be a tuple/list of ints >= 0, but got {sizes!r}.")
    if len(sizes) != n or sum(sizes) != dim0:
        raise ValueError(f"For '{fn}', '{name}' must have one entry per process of the group ({n}) summing to the "
                         f"{what} shape at dim 0 ({dim0}), but got {list(sizes)}.")
    return list(sizes)


def all_to_all_single_with_output_shape(output_shape, tensor, output_split_sizes=None, input_split_sizes=None,
                                        group=None, async_op=False):
    """Splits `tensor` along dim 0 by input_split_sizes (default: equally into the group's size), sends piece j to
    group rank j, and concatenates along dim 0 what each rank j sends back (output_split_sizes[j] rows, default
    equal) into a tensor of `output_shape` (MindSpore 2.10's comm_func, deprecated there since 2.9 for
    ops.communication.all_to_all_single). Returns (output, CommHandle or None); when nothing is received the output
    is a 0-d tensor whose value has no meaning (MindSpore's doc).

    output_shape: a tuple/list of ints or a Tensor (its shape); tensor: a Tensor with at least 1 dimension; the
    sizes: tuples/lists of ints >= 0, one per process, summing to dim 0 of tensor / output_shape. Piece sizes must
    match across processes. Differentiable, eager and compiled.

    Errors: TypeError for a non-Tensor `tensor`, a bad output_shape or split list; ValueError if a dim 0 is not
    divisible by the group size (no split sizes given), a split list has the wrong length or sum, or tensor is 0-d."""
    fn = "all_to_all_single_with_output_shape"
    t = _c._tensor(tensor, fn)
    oshape = _shape_of(output_shape, "output_shape", fn)
    if len(t.shape) == 0 or len(oshape) == 0:
        raise ValueError(f"For '{fn}', 'tensor' and 'output_shape' need at least 1 dimension, but got shapes "
                         f"{tuple(t.shape)} and {oshape}.")
    g, n = _a2a_group(group, fn)
    ins = _splits(input_split_sizes, t.shape[0], n, "input_split_sizes", "input", fn)
    outs = _splits(output_split_sizes, oshape[0], n, "output_split_sizes", "output", fn)
    row_in, row_out = _numel(t.shape[1:]), _numel(oshape[1:])
    recv = [c * row_out for c in outs]
    out = _kernels.all_to_all_v(t.reshape(-1), [c * row_in for c in ins], recv, g)
    out = out.reshape((-1,) + oshape[1:]) if any(recv) else _c._empty_result(out)
    return _pair(out, async_op, fn)


def broadcast(tensor, src=0, group=GlobalComm.WORLD_COMM_GROUP):
    """Process `src`'s (a world rank) `tensor` on every process of `group`: a new Tensor (same shape and dtype).
    ValueError if src is not a member of the group."""
    fn = "broadcast"
    g = _c._group(group, fn)
    return _kernels.broadcast(_c._tensor(tensor, fn), _c._group_rank(src, g, "src", fn), g)


def barrier(group=GlobalComm.WORLD_COMM_GROUP):
    """Returns (None) once every process of `group` has called it."""
    _kernels.barrier(_c._group(group, "barrier"))


def _tag(tag, fn):
    if isinstance(tag, bool) or not isinstance(tag, int):
        raise TypeError(f"For '{fn}', the argument 'tag' must be an int, but got {type(tag).__name__}.")
    if tag < 0:
        raise ValueError(f"For '{fn}', the argument 'tag' must be >= 0, but got {tag}.")
    return tag


def send(tensor, dst=0, group=GlobalComm.WORLD_COMM_GROUP, tag=0):
    """Sends `tensor` to process `dst` (a world rank), which receives it with recv(…, src=this rank, tag=tag).
    Returns None once the data has left (blocking). ValueError: dst not in the group, or dst is this process."""
    fn = "send"
    g = _c._group(group, fn)
    d = _c._group_rank(dst, g, "dst", fn)
    if d == _engine.comm_group_rank(g):
        raise ValueError(f"For '{fn}', 'dst' must be another process, but got this process's rank {dst}.")
    _kernels.send(_c._tensor(tensor, fn), d, _tag(tag, fn), g)


def recv(tensor, src=0, group=GlobalComm.WORLD_COMM_GROUP, tag=0):
    """Receives from process `src` (a world rank) a tensor of `tensor`'s shape and dtype, sent with the same tag;
    returns it as a new Tensor (`tensor` itself is not written). Blocks until it arrives (at most the timeout)."""
    fn = "recv"
    g = _c._group(group, fn)
    s = _c._group_rank(src, g, "src", fn)
    if s == _engine.comm_group_rank(g):
        raise ValueError(f"For '{fn}', 'src' must be another process, but got this process's rank {src}.")
    t = _c._tensor(tensor, fn)
    return _kernels.recv(tuple(t.shape), t.dtype, s, _tag(tag, fn), g)

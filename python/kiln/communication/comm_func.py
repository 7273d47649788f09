"""mindspore.communication.comm_func: functional collectives (all_reduce, all_gather_into_tensor,
reduce_scatter_tensor, broadcast, barrier, send, recv). They call the same C++ ops as ops.AllReduce & co., so they
work eagerly and inside compiled functions (as side effects, in program order). Ranks are world ranks (MindSpore).

async_op=True returns (output, CommHandle) as MindSpore does; Kiln's collectives complete before returning, so
CommHandle.wait() returns at once."""
from .. import _engine
from ..ops import _kernels
from ..ops import comm_ops as _c
from .management import GlobalComm

__all__ = ["CommHandle", "all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor", "broadcast", "barrier",
           "send", "recv"]


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

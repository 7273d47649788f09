"""MindSpore's collective-communication primitives (mindspore.ops.AllReduce, AllGather, ReduceScatter, AlltoAll,
AlltoAllV, Broadcast, Barrier) and ReduceOp. They run eagerly in PyNative and become side-effecting nodes of compiled graphs (run in
program order on every run); gradients are MindSpore's (see src/ops/collective.cpp). The processes of a group must
call a group's collectives in the same order. Ranks given to these primitives are world ranks, as in MindSpore."""
from .._loader import _core
from .primitives import Primitive

__all__ = ["ReduceOp", "AllReduce", "AllGather", "ReduceScatter", "AlltoAll", "AlltoAllV", "Broadcast", "Barrier"]

_OPS = {"sum": 0, "max": 1, "min": 2, "prod": 3}


class ReduceOp:
    """The reductions of AllReduce / ReduceScatter: SUM, MAX, MIN, PROD (strings, as MindSpore)."""
    SUM = "sum"
    MAX = "max"
    MIN = "min"
    PROD = "prod"


def _default_group():
    from ..communication.management import GlobalComm
    return GlobalComm.WORLD_COMM_GROUP


# kiln.communication.management and kiln.common.tensor import kiln.ops, so they are imported on first use, then kept:
# these helpers run on every eager collective, and a relative import statement per call cost ~4 µs each (docs/
# docs/decisions/allreduce-benchmark.md).
_deferred = {}


def _management():
    m = _deferred.get("management")
    if m is None:
        from ..communication import management as m
        _deferred["management"] = m
    return m


def _group(group, fn):
    m = _management()
    name = m._group(group, fn)
    m._check_init(fn)
    return name


def _reduce_op(op, fn):
    if not isinstance(op, str):
        raise TypeError(f"For '{fn}', the argument 'op' must be a str (ReduceOp.SUM/MAX/MIN/PROD), but got "
                        f"{type(op).__name__}.")
    if op not in _OPS:
        raise ValueError(f"For '{fn}', the argument 'op' must be one of {list(_OPS)}, but got {op!r}.")
    return _OPS[op]


def _group_rank(world_rank, group, name, fn):
    """The group rank of a world rank (identity for the world group). ValueError if not a member."""
    if isinstance(world_rank, bool) or not isinstance(world_rank, int):
        raise TypeError(f"For '{fn}', the argument '{name}' must be an int, but got {type(world_rank).__name__}.")
    if group == "world":
        size = _core.comm_group_size("world")
        if not 0 <= world_rank < size:
            raise ValueError(f"For '{fn}', '{name}' must be a rank in [0, {size}), but got {world_rank}.")
        return world_rank
    ranks = list(_core.comm_group_ranks(group))
    if world_rank not in ranks:
        raise ValueError(f"For '{fn}', '{name}'={world_rank} is not a member of group '{group}' (members: {ranks}).")
    return ranks.index(world_rank)


def _tensor(x, fn):
    Tensor = _deferred.get("Tensor")
    if Tensor is None:
        from ..common.tensor import Tensor
        _deferred["Tensor"] = Tensor
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{fn}', the input must be a Tensor, but got {type(x).__name__}.")
    return x


class AllReduce(Primitive):
    """AllReduce(op=ReduceOp.SUM, group=GlobalComm.WORLD_COMM_GROUP)(x): the element-wise reduction of x over the
    group's processes, on every process. x: any shape; float or Int8/16/32/64/UInt8 (TypeError for Bool). Same shape
    and dtype out. Gradient: SUM → AllReduce SUM of dout; MAX/MIN → of dout where x equals the result; PROD →
    AllReduce SUM of dout·out, divided by x."""

    def __init__(self, op=ReduceOp.SUM, group=None):
        super().__init__("AllReduce")
        self.op = op
        self._op = _reduce_op(op, "AllReduce")
        self.group = _default_group() if group is None else group
        _group(self.group, "AllReduce")

    def __call__(self, x):
        return _core.all_reduce(_tensor(x, "AllReduce"), self._op, _group(self.group, "AllReduce"))


class AllGather(Primitive):
    """AllGather(group=GlobalComm.WORLD_COMM_GROUP)(x): the processes' x concatenated along axis 0 in rank order:
    shape [size·d0, ...]. x needs at least 1 dimension. Gradient: ReduceScatter SUM of dout."""

    def __init__(self, group=None):
        super().__init__("AllGather")
        self.group = _default_group() if group is None else group
        self.rank_size = _core.comm_group_size(_group(self.group, "AllGather"))

    def __call__(self, x):
        return _core.all_gather(_tensor(x, "AllGather"), _group(self.group, "AllGather"))


class ReduceScatter(Primitive):
    """ReduceScatter(op=ReduceOp.SUM, group=GlobalComm.WORLD_COMM_GROUP)(x): the reduction of x over the group,
    split along axis 0 into size equal chunks, chunk i to group rank i: shape [d0/size, ...]. ValueError if d0 is
    not divisible by the group size. Gradient (SUM only, else RuntimeError): AllGather of dout."""

    def __init__(self, op=ReduceOp.SUM, group=None):
        super().__init__("ReduceScatter")
        self.op = op
        self._op = _reduce_op(op, "ReduceScatter")
        self.group = _default_group() if group is None else group
        self.rank_size = _core.comm_group_size(_group(self.group, "ReduceScatter"))

    def __call__(self, x):
        return _core.reduce_scatter(_tensor(x, "ReduceScatter"), self._op, _group(self.group, "ReduceScatter"))


def _int_arg(v, name, fn):
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"For '{fn}', the argument '{name}' must be an int, but got {type(v).__name__}.")
    return v


def _counts(v, name, fn):
    """A tuple/list of ints (or a 1-D integer Tensor) as a list of ints >= 0."""
    if hasattr(v, "asnumpy"):
        v = v.asnumpy().reshape(-1).tolist()
    if not isinstance(v, (tuple, list)):
        raise TypeError(f"For '{fn}', '{name}' must be a tuple/list of ints or a Tensor, but got {type(v).__name__}.")
    out = []
    for c in v:
        if hasattr(c, "item") and not isinstance(c, (int, float)):
            c = c.item()
        if isinstance(c, bool) or not isinstance(c, int):
            raise TypeError(f"For '{fn}', '{name}' must hold ints, but got {v!r}.")
        if c < 0:
            raise ValueError(f"For '{fn}', '{name}' must hold counts >= 0, but got {list(v)!r}.")
        out.append(c)
    return out


class AlltoAll(Primitive):
    """AlltoAll(split_count, split_dim, concat_dim, group=GlobalComm.WORLD_COMM_GROUP)(x) (mindspore.ops.AlltoAll):
    x is split along `split_dim` into `split_count` equal blocks, block i goes to group rank i, and each process
    concatenates the blocks it receives along `concat_dim` in rank order. Shape (x_1, ..., x_R) → y with
    y[split_dim] = x[split_dim] / split_count, y[concat_dim] = x[concat_dim] · split_count, others unchanged
    (split_dim == concat_dim keeps the shape). Dims may be negative. Any dtype (the blocks are moved as bytes).

    Errors: TypeError if split_count/split_dim/concat_dim is not an int or group not a str (MindSpore's checks), or
    x not a Tensor; ValueError (at the call) if split_count differs from the group's size, a dim is outside
    [-R, R), x is 0-d, or x.shape[split_dim] is not divisible by split_count.
    Gradient (MindSpore's bprop): AlltoAll of dout with split_dim and concat_dim swapped."""

    def __init__(self, split_count, split_dim, concat_dim, group=None):
        super().__init__("AlltoAll")
        self.group = _default_group() if group is None else group
        g = _group(self.group, "AlltoAll")
        self.split_count = _int_arg(split_count, "split_count", "AlltoAll")
        self.split_dim = _int_arg(split_dim, "split_dim", "AlltoAll")
        self.concat_dim = _int_arg(concat_dim, "concat_dim", "AlltoAll")
        self.rank_size = _core.comm_group_size(g)

    def __call__(self, x):
        return _core.all_to_all(_tensor(x, "AlltoAll"), self.split_count, self.split_dim, self.concat_dim,
                                _group(self.group, "AlltoAll"))


class AlltoAllV(Primitive):
    """AlltoAllV(group=GlobalComm.WORLD_COMM_GROUP, block_size=1)(input_x, send_numel_list, recv_numel_list)
    (mindspore.ops.AlltoAllV): the uneven all-to-all of a flat tensor. input_x (1-D) holds send_numel_list[j] ·
    block_size elements for group rank j, consecutive in rank order; the result (1-D) holds the recv_numel_list[j] ·
    block_size elements received from each rank j, in rank order (recv_numel_list[j] must equal rank j's
    send_numel_list[this rank]). An empty result is a 0-d tensor whose value has no meaning (MindSpore's doc).
    The lists: tuples/lists of ints >= 0 (or 1-D integer Tensors), one per process of the group.

    Errors: TypeError for a non-int block_size, non-str group, non-Tensor input or non-int counts; ValueError for
    block_size < 1, negative counts, lists not of the group's size, or input_x not 1-D with
    sum(send_numel_list) · block_size elements. Gradient: AlltoAllV of dout with the two lists swapped."""

    def __init__(self, group=None, block_size=1):
        super().__init__("AlltoAllV")
        self.group = _default_group() if group is None else group
        _group(self.group, "AlltoAllV")
        self.block_size = _int_arg(block_size, "block_size", "AlltoAllV")
        if block_size < 1:
            raise ValueError(f"For 'AlltoAllV', 'block_size' must be >= 1, but got {block_size}.")

    def __call__(self, input_x, send_numel_list, recv_numel_list):
        fn = "AlltoAllV"
        b = self.block_size
        send = [c * b for c in _counts(send_numel_list, "send_numel_list", fn)]
        recv = [c * b for c in _counts(recv_numel_list, "recv_numel_list", fn)]
        out = _core.all_to_all_v(_tensor(input_x, fn), send, recv, _group(self.group, fn))
        return _empty_result(out)


def _empty_result(out):
    """MindSpore's AlltoAllV gives a 0-d tensor (value meaningless: here 0) when nothing is received."""
    return _core.full((), 0.0, out.dtype) if out.shape == (0,) else out


class Broadcast(Primitive):
    """Broadcast(root_rank, group=GlobalComm.WORLD_COMM_GROUP)(input_x): the tuple of tensors input_x of process
    `root_rank` (a world rank) on every process of the group; returns a tuple of the same shapes and dtypes.
    Gradient: dout (MindSpore's)."""

    def __init__(self, root_rank, group=None):
        super().__init__("Broadcast")
        self.group = _default_group() if group is None else group
        self.root_rank = root_rank
        self._root = _group_rank(root_rank, _group(self.group, "Broadcast"), "root_rank", "Broadcast")

    def __call__(self, input_x):
        if not isinstance(input_x, (tuple, list)):
            raise TypeError(f"For 'Broadcast', the input must be a tuple of Tensors, but got "
                            f"{type(input_x).__name__}.")
        g = _group(self.group, "Broadcast")
        return tuple(_core.broadcast(_tensor(x, "Broadcast"), self._root, g) for x in input_x)


class Barrier(Primitive):
    """Barrier(group=GlobalComm.WORLD_COMM_GROUP)(): returns once every process of the group has reached it.
    Returns an Int32 0-d tensor (0), which orders later ops after it in compiled code through ops.depend."""

    def __init__(self, group=None):
        super().__init__("Barrier")
        self.group = _default_group() if group is None else group
        _group(self.group, "Barrier")

    def __call__(self):
        return _core.barrier(_group(self.group, "Barrier"))

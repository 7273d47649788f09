"""MindSpore's collective-communication primitives (mindspore.ops.AllReduce, AllGather, ReduceScatter, Broadcast,
Barrier) and ReduceOp. They run eagerly in PyNative and become side-effecting nodes of compiled graphs (run in
program order on every run); gradients are MindSpore's (see src/ops/collective.cpp). The processes of a group must
call a group's collectives in the same order. Ranks given to these primitives are world ranks, as in MindSpore."""
from .._loader import _core
from .primitives import Primitive

__all__ = ["ReduceOp", "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Barrier"]

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

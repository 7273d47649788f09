"""nn.DistributedGradReducer: all-reduces a tuple of gradients over the data-parallel group (MindSpore's), in
buckets: gradients of one dtype are flattened and concatenated up to `bucket_bytes` per all-reduce (as PyTorch's
DDP and MindSpore's fusion do), so a model with many small parameters makes few collectives."""
import bisect

from ... import _engine
from ... import ops as _ops
from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...common import dtype as mstype
from ..._parallel_context import get_auto_parallel_context
from ..cell import Cell

__all__ = ["DistributedGradReducer"]

_BUCKET_BYTES = 32 * 1024 * 1024


def _plan(shapes_dtypes, bucket_bytes, split_indices=()):
    """Buckets: lists of gradient indices, consecutive gradients of one dtype up to bucket_bytes each; with
    split_indices (MindSpore's all_reduce_fusion_config), a bucket starts at each of those indices and where the
    dtype changes, whatever its size."""
    splits = set(split_indices)
    buckets, current, size, dtype = [], [], 0, None
    for i, (shape, dt, nbytes) in enumerate(shapes_dtypes):
        full = i in splits if splits else size + nbytes > bucket_bytes
        if current and (dt != dtype or full):
            buckets.append(current)
            current, size = [], 0
        current.append(i)
        size += nbytes
        dtype = dt
    if current:
        buckets.append(current)
    return buckets


class _SlicedGrads(tuple):
    """The reducer's output under optimizer parallel: a tuple of gradients of which those at the indices `sliced`
    are this process's dim-0 slices. ops.clip_by_global_norm reads the marking to all-reduce the slices' squared
    norm over the processes (DistributedGradReducer._slices_square_sum), so that every process clips by the whole
    gradients' norm, as in plain data parallel. A new tuple made from it (tuple(grads), a comprehension) is not
    marked."""

    def __new__(cls, items, reducer, sliced):
        obj = super().__new__(cls, items)
        obj._kiln_reducer, obj._kiln_sliced = reducer, frozenset(sliced)
        return obj


class DistributedGradReducer(Cell):
    """DistributedGradReducer(parameters, mean=None, degree=None, fusion_type=1, group=GlobalComm.WORLD_COMM_GROUP):
    `construct(grads)` returns the gradients summed over the group's processes (divided by `degree` when `mean`).

    Making one broadcasts `parameters` from the group's first process (world rank of group rank 0) into every
    process, so that all start from identical weights (PyTorch DDP does the same; MindSpore's
    parameter_broadcast); this is a collective: every process of the group makes its reducer at the same point.

    Args:
        parameters (list[Parameter] / ParameterTuple): the parameters the gradients belong to (same order).
        mean (bool, optional): average instead of sum; default get_auto_parallel_context("gradients_mean").
        degree (int, optional): the divisor of the mean; default the group's size.
        fusion_type (int): accepted (MindSpore's fusion id); Kiln buckets by size, or at the gradient indices of
            set_auto_parallel_context(all_reduce_fusion_config=[...]) when those are set.
        group (str): the group (default the world).
        bucket_bytes (int): the largest bucket, in bytes (default 32 MiB; Kiln's extension).
    Input: grads, a tuple of Tensors matching `parameters` (shapes and dtypes). Output: a tuple of the same.

    Works eagerly and inside compiled steps (GRAPH_MODE / jit): the all-reduces are side-effecting nodes.

    Optimizer parallel (set_auto_parallel_context(enable_parallel_optimizer=True), world group): the gradient of a
    parameter that the optimizer slices (kiln/nn/optim/_parallel.py: dim 0 divisible, above
    parallel_optimizer_threshold, parallel_optimizer=True) is reduce-scattered instead: the output holds this
    process's dim-0 slice of the reduced gradient (shape [d0/N, ...]), which the optimizer updates. The output tuple
    is then marked as holding slices: ops.clip_by_global_norm applied to it all-reduces the slices' squared norm, so
    every process clips by the norm of the whole gradients (plain data parallel's).

    Raises:
        RuntimeError: communication not initialized (call mindspore.communication.init() first).
        TypeError: mean not a bool; degree not an int; parameters not a list/tuple of Parameters; grads not a
            tuple of Tensors.
        ValueError: degree < 1; bucket_bytes < 1; grads of another count, shape or dtype than the parameters;
            processes of the group passing Parameters of another count, shapes or dtypes (checked with one small
            all-gather before the broadcast, raised in every process naming each rank's Parameters).
    """

    def __init__(self, parameters, mean=None, degree=None, fusion_type=1, group=None, bucket_bytes=_BUCKET_BYTES):
        super().__init__(auto_prefix=False)
        from ...communication.management import GlobalComm, _check_init, _group
        from ...common.parameter import Parameter
        fn = "DistributedGradReducer"
        group = GlobalComm.WORLD_COMM_GROUP if group is None else group
        g = _group(group, fn)
        _check_init(fn)
        params = list(parameters) if isinstance(parameters, (list, tuple)) else None
        if params is None or not all(isinstance(p, Parameter) for p in params):
            raise TypeError(f"For '{fn}', 'parameters' must be a list or tuple of Parameters, but got "
                            f"{type(parameters).__name__}.")
        if mean is None:
            mean = get_auto_parallel_context("gradients_mean")
        if not isinstance(mean, bool):
            raise TypeError(f"For '{fn}', 'mean' must be a bool, but got {type(mean).__name__}.")
        size = _engine.comm_group_size(g)
        if degree is None:
            degree = size
        if isinstance(degree, bool) or not isinstance(degree, int):
            raise TypeError(f"For '{fn}', 'degree' must be an int, but got {type(degree).__name__}.")
        if degree < 1:
            raise ValueError(f"For '{fn}', 'degree' must be >= 1, but got {degree}.")
        if isinstance(bucket_bytes, bool) or not isinstance(bucket_bytes, int) or bucket_bytes < 1:
            raise ValueError(f"For '{fn}', 'bucket_bytes' must be a positive int, but got {bucket_bytes!r}.")
        self.mean, self.degree, self.group, self.fusion_type = mean, degree, group, fusion_type
        self.__dict__["_g"] = g
        self.__dict__["_metas"] = [(tuple(p.shape), p.dtype) for p in params]
        self.__dict__["_nbytes"] = [int(p.nbytes) for p in params]
        self.__dict__["_bucket_bytes"] = bucket_bytes
        from ..optim import _parallel
        self._set_shards(_parallel.plan(params, fn) if group == GlobalComm.WORLD_COMM_GROUP else None)
        if size > 1:
            # every process must pass Parameters of the same shapes and dtypes, in order: the broadcast below and
            # the all-reduces of the buckets pair up by order (a mismatch would abort in Gloo or wait forever)
            from ...parallel import _op_shard
            _op_shard.agree(fn, "[" + ", ".join(f"{list(p.shape)} {p.dtype}" for p in params) + "]",
                            f"number of Parameters, in order of the same shapes and dtypes (group '{group}'; one "
                            f"model in every process)", g,
                            detail=f"{len(params)} Parameters [" + ", ".join(f"{p.name} {list(p.shape)} {p.dtype}"
                                                                           for p in params) + "]")
            self._broadcast(params)

    def _set_shards(self, shards):
        """Optimizer parallel (kiln/nn/optim/_parallel.py): the gradients of the parameters with a _Shard are
        reduce-scattered (each process gets its slice), the others all-reduced; shards None: all all-reduced.
        Buckets are planned separately for the two kinds."""
        d = self.__dict__
        d["_shards"] = shards
        n = len(self._metas)
        sharded = [i for i in range(n) if shards is not None and shards[i] is not None]
        rest = [i for i in range(n) if shards is None or shards[i] is None]
        # all_reduce_fusion_config's gradient indices, as positions among the all-reduced gradients (a split at a
        # reduce-scattered gradient starts the bucket at the next all-reduced one)
        fusion = sorted({bisect.bisect_left(rest, k) for k in get_auto_parallel_context("all_reduce_fusion_config")})
        d["_buckets"] = [[rest[j] for j in b] for b in
                         _plan([(*self._metas[i], self._nbytes[i]) for i in rest], self._bucket_bytes, fusion)]
        d["_rs_buckets"] = [[sharded[j] for j in b] for b in
                            _plan([(*self._metas[i], self._nbytes[i]) for i in sharded], self._bucket_bytes)]

    def _reduce_scatter(self, grads, bucket, out):
        """Each gradient of `bucket` (sliced parameters) reduced over the world, this process's dim-0 slice only:
        one reduce-scatter of the gradients laid out as [S, -1] side by side (slice r of every gradient is row r);
        with fewer slices S than processes, an all-reduce then the slice."""
        shards = self._shards
        size, world = shards[bucket[0]].size, shards[bucket[0]].world
        if size < world:
            for i in bucket:
                out[i] = shards[i].take(self._finish(_kernels.all_reduce(grads[i], 0, self._g)))
            return
        if len(bucket) == 1:
            i = bucket[0]
            out[i] = self._finish(_kernels.reduce_scatter(grads[i], 0, self._g))
            return
        rows = _kernels.concat([_kernels.reshape(grads[i], [size, -1]) for i in bucket], 1)
        mine = self._finish(_kernels.reduce_scatter(rows, 0, self._g))
        start = 0
        for i in bucket:
            shape = shards[i].local_shape
            n = 1
            for dim in shape:
                n *= dim
            out[i] = _kernels.reshape(mine[:, start:start + n], list(shape))
            start += n

    def _any(self, flag):
        """A 0-d bool that is True when `flag` is True on any process of the group (an all-reduce of max)."""
        as_float = _kernels.cast(flag, mstype.float32)
        return _ops.greater(_kernels.all_reduce(as_float, 1, self._g), _kernels.full([], 0.0, mstype.float32))

    def _broadcast(self, params):
        """Every process takes group rank 0's values of the parameters (eagerly, now). Parameters made under
        nn.no_init_parameters get their values first (every pending one alive, in creation order, as a compiled
        function's first call would draw them): drawn later, they would differ between the processes."""
        from ...common import _deferred_init
        if any(_deferred_init.pending(p) is not None for p in params):
            _deferred_init.materialize_all()
        for p in params:
            _kernels.assign(p, _kernels.broadcast(p, 0, self._g))

    def construct(self, grads):
        fn = "DistributedGradReducer"
        if not isinstance(grads, (tuple, list)):
            raise TypeError(f"For '{fn}', the input must be a tuple of gradients, but got {type(grads).__name__}.")
        if len(grads) != len(self._metas):
            raise ValueError(f"For '{fn}', got {len(grads)} gradients for {len(self._metas)} parameters.")
        for i, (gr, (shape, dtype)) in enumerate(zip(grads, self._metas)):
            if not isinstance(gr, _Tensor):
                raise TypeError(f"For '{fn}', gradient {i} must be a Tensor, but got {type(gr).__name__}.")
            if tuple(gr.shape) != shape or gr.dtype != dtype:
                raise ValueError(f"For '{fn}', gradient {i} has shape {tuple(gr.shape)} and dtype {gr.dtype}, but its "
                                 f"parameter has {shape} and {dtype}.")
        out = list(grads)
        for bucket in self._rs_buckets:
            self._reduce_scatter(grads, bucket, out)
        for bucket in self._buckets:
            if len(bucket) == 1:
                i = bucket[0]
                out[i] = self._finish(_kernels.all_reduce(grads[i], 0, self._g))
                continue
            flat = _kernels.concat([_kernels.reshape(grads[i], [-1]) for i in bucket], 0)
            summed = self._finish(_kernels.all_reduce(flat, 0, self._g))
            start = 0
            for i in bucket:
                shape = self._metas[i][0]
                n = 1
                for d in shape:
                    n *= d
                out[i] = _kernels.reshape(summed[start:start + n], list(shape))
                start += n
        if self._rs_buckets:
            return _SlicedGrads(out, self, [i for b in self._rs_buckets for i in b])
        return tuple(out)

    def _slices_square_sum(self, parts):
        """The sum of squares of the whole gradients whose slices this process holds: `parts` maps a sliced
        gradient's index to the sum of squares of this process's slice (0-d). Each slice's sum is weighted by
        S / world (with S slices over `world` processes, world / S processes hold each slice), added and all-reduced
        over the world."""
        total = None
        for i, sq in parts.items():
            sh = self._shards[i]
            if sh.size != sh.world:
                sq = _ops.mul(sq, _kernels.cast(_kernels.full([], sh.size / sh.world, mstype.float64), sq.dtype))
            total = sq if total is None else _ops.add(total, sq)
        return _kernels.all_reduce(total, 0, self._g)

    def _finish(self, t):
        if not self.mean:
            return t
        return _ops.mul(t, _kernels.cast(_kernels.full([], 1.0 / self.degree, mstype.float64), t.dtype))

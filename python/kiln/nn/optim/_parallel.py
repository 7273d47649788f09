"""Optimizer parallel (MindSpore's `enable_parallel_optimizer`, ZeRO stage 1) for data-parallel training.

With `set_auto_parallel_context(parallel_mode=DATA_PARALLEL, enable_parallel_optimizer=True)` and N processes,
every large parameter is cut along dim 0 into S slices (S = N, or optimizer_weight_shard_size when it divides N);
process r owns slice r % S. For each such parameter:

  * nn.DistributedGradReducer reduce-scatters its gradient (sum, divided by the degree when gradients_mean), so each
    process receives only the reduced gradient of its slice (with S < N: all-reduce, then the process's slice);
  * the optimizer keeps its state (Adam's moments, Momentum's accumulation, ...) for the slice only: the state
    Parameters are made from a slice-shaped working Parameter (`_parameters` of the optimizer), so they hold
    1/S of the elements;
  * each step the working slice is copied out of the whole parameter, updated by the optimizer's usual kernels,
    then all-gathered back into the whole parameter, which every process keeps for the next forward pass.

Which parameters are sliced (MindSpore's rules, parallel/tensor_layout: GenerateOptShardSliceShape and the
threshold check): those with `parallel_optimizer=True` and `requires_grad=True`, at least one dimension, dim 0
divisible by S and at least parallel_optimizer_threshold KB (default 64) in size. The others stay replicated
(all-reduced gradient, whole state), as in MindSpore, which only logs them.

MindSpore applies these rules to semi_auto/auto parallel graphs; in its data_parallel mode (Ascend only) it instead
assigns whole parameters round-robin to processes and broadcasts them. Kiln applies the slicing rules to its
data-parallel mode (docs/decisions/optimizer-parallel.md): the memory saving is the same for every parameter
size, and the result is the same as plain data parallel.

Checkpoints: save_checkpoint all-gathers the sliced state Parameters (a collective: every process must save), so a
file holds whole tensors and loads into a one-process run; load_param_into_net cuts whole values to the slice.
"""
from ... import _engine
from ...ops import _kernels
from ...common.parameter import Parameter

__all__ = []


class _Shard:
    """The slicing of one parameter: `size` slices along dim 0 of `full_shape`; this process owns slice `index`
    (rows lo:hi). `world` is the number of processes."""
    __slots__ = ("full_shape", "size", "index", "world", "lo", "hi")

    def __init__(self, full_shape, size, index, world):
        self.full_shape, self.size, self.index, self.world = tuple(full_shape), size, index, world
        rows = self.full_shape[0] // size
        self.lo, self.hi = index * rows, (index + 1) * rows

    @property
    def local_shape(self):
        """The shape of this process's slice."""
        return (self.hi - self.lo,) + self.full_shape[1:]

    def take(self, t):
        """This process's slice (rows lo:hi) of a whole tensor."""
        return t[self.lo:self.hi]

    def gather(self, t):
        """The whole tensor from every process's slice `t` (an all-gather over the world; with size < world the
        first `size` slices are one copy of the whole)."""
        whole = _kernels.all_gather(t, "world")
        if self.size < self.world:
            whole = whole[:self.full_shape[0]]
        return whole


def _enabled():
    from ..._parallel_context import get_auto_parallel_context
    return get_auto_parallel_context("enable_parallel_optimizer")


def _shard_size(fn):
    """(S, N): the number of slices and of processes; None when optimizer parallel does not apply (off, or one
    process). Raises RuntimeError in stand-alone mode (MindSpore's message), ValueError for a shard size above N."""
    from ..._parallel_context import ParallelMode, get_auto_parallel_context
    from ...communication.management import GlobalComm
    if not _enabled():
        return None
    mode = get_auto_parallel_context("parallel_mode")
    # semi_auto_parallel without full_batch or pipeline stages is data parallel (kiln/parallel/_semi_auto_dp.py)
    semi_auto_dp = (mode == ParallelMode.SEMI_AUTO_PARALLEL and get_auto_parallel_context("pipeline_stages") == 1
                    and not get_auto_parallel_context("full_batch")
                    and get_auto_parallel_context("dataset_strategy") != "full_batch")
    if mode != ParallelMode.DATA_PARALLEL and not semi_auto_dp:
        raise RuntimeError(f"For '{fn}', parallel optimizer is not supported in {mode}, you should set parallel mode "
                           "to 'data_parallel' (set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL)), or to "
                           "'semi_auto_parallel' without full_batch and pipeline stages.")
    if not GlobalComm.INITED:
        return None
    world = _engine.comm_group_size("world")
    if world == 1:
        return None
    size = get_auto_parallel_context("optimizer_weight_shard_size")
    if size > world:
        raise ValueError(f"For '{fn}', optimizer_weight_shard_size must be in (0, device_num] = (0, {world}], but got "
                         f"{size}.")
    if size == -1 or world % size:  # MindSpore: a size that does not divide the group "does not take effect"
        size = world
    return size, world


def plan(params, fn, optimizer=None):
    """The _Shard of each parameter (None: replicated), or None when optimizer parallel is off.

    Args:
        params: the Parameters (whole).
        fn (str): the caller's name, for messages.
        optimizer: the nn.Optimizer being made, if any: RuntimeError unless its class supports slicing
            (`_support_parallel_optimizer`).
    """
    sizes = _shard_size(fn)
    if sizes is None:
        return None
    size, world = sizes
    if optimizer is not None and not getattr(type(optimizer), "_support_parallel_optimizer", False):
        raise RuntimeError(f"For '{fn}', parallel optimizer (enable_parallel_optimizer=True) supports the "
                           "element-wise optimizers SGD, Momentum, Adam, AdamWeightDecay, Adagrad and RMSProp "
                           f"of mindspore.nn, but got {type(optimizer).__name__}; turn it off for this "
                           "optimizer (its update needs whole parameters, e.g. LAMB's norms).")
    from ..._parallel_context import _parallel_optimizer_config
    threshold = _parallel_optimizer_config("parallel_optimizer_threshold") * 1024
    rank = _engine.comm_group_rank("world")
    out = []
    for p in params:
        shape = tuple(p.shape)
        ok = (p.parallel_optimizer and p.requires_grad and len(shape) >= 1 and shape[0] % size == 0
              and int(p.nbytes) >= threshold)
        out.append(_Shard(shape, size, rank % size, world) if ok else None)
    return out if any(s is not None for s in out) else None


def enable_late(opt, shard_size=-1, threshold=64):
    """Turns optimizer parallel on for an optimizer made without it (mindspore.parallel.auto_parallel.AutoParallel's
    hsdp(shard_size, threshold), which applies to the optimizer that steps the network it wraps): the same slicing
    rules as plan() with these settings, then the optimizer's per-parameter state Parameters ('<prefix>.<name>' of a
    parameter's whole shape, e.g. Adam's moment1/moment2, SGD's accum/stat) are cut to the slice. Must run before
    the optimizer's first step; does nothing when the optimizer already slices, in one process, or when no
    parameter qualifies. RuntimeError for an optimizer that cannot slice (as plan()); ValueError for shard_size >
    the number of processes, and for a Parameter it would slice that operator parallel already stores sliced."""
    from ...communication.management import GlobalComm
    from ...common.parameter import ParameterTuple
    from ...common import _deferred_init
    d = opt.__dict__
    if d.get("_opt_shards") is not None or not GlobalComm.INITED:
        return
    world = _engine.comm_group_size("world")
    if world == 1:
        return
    fn = opt.cls_name
    if not getattr(type(opt), "_support_parallel_optimizer", False):
        raise RuntimeError(f"For '{fn}', parallel optimizer (AutoParallel.hsdp) supports the element-wise optimizers "
                           "SGD, Momentum, Adam, AdamWeightDecay, Adagrad and RMSProp of mindspore.nn, but got "
                           f"{type(opt).__name__}.")
    if shard_size > world:
        raise ValueError(f"For '{fn}', the hsdp shard_size must be in (0, device_num] = (0, {world}] or -1, but got "
                         f"{shard_size}.")
    size = world if shard_size == -1 or world % shard_size else shard_size
    _deferred_init.materialize_all()  # nn.no_init_parameters(): the states get their values before being cut
    rank = _engine.comm_group_rank("world")
    shards = []
    for p in opt.parameters:
        shape = tuple(p.shape)
        ok = (p.parallel_optimizer and p.requires_grad and len(shape) >= 1 and shape[0] % size == 0
              and int(p.nbytes) >= threshold * 1024)
        if ok and p.__dict__.get("_kiln_op_layout") is not None:
            lay = p.__dict__["_kiln_op_layout"]
            raise ValueError(f"For '{fn}', AutoParallel.hsdp() (optimizer parallel) would slice the Parameter "
                             f"'{p.name}', which operator parallel already stores sliced (whole shape "
                             f"{list(lay.full_shape)}, cut {lay.slices()} by '{lay.op}'): Kiln does not combine the "
                             f"two on one Parameter. Drop hsdp(), or raise its threshold above that Parameter's size, "
                             f"or remove the shard strategy (docs/distributed.md, 'Operator parallel').")
        shards.append(_Shard(shape, size, rank % size, world) if ok else None)
    if not any(s is not None for s in shards):
        return
    whole = {id(p) for p in opt.parameters}
    by_name = {p.name: s for p, s in zip(opt.parameters, shards) if s is not None}
    for _, state in opt.parameters_and_names():
        if id(state) in whole or "." not in state.name:
            continue
        shard = by_name.get(state.name.split(".", 1)[1])
        if shard is not None and tuple(state.shape) == shard.full_shape:
            state._rebind(_kernels.detach(shard.take(state)) * 1)
    d["_opt_shards"] = shards
    d["_parameters"] = ParameterTuple([p if s is None else local_parameter(p, s)
                                       for p, s in zip(opt.parameters, shards)])
    d["_param_shapes"] = [tuple(p.shape) for p in d["_parameters"]]


def local_parameter(param, shard):
    """The slice-shaped working Parameter of `param` (same name, dtype, flags); marked with `_opt_shard`."""
    local = Parameter(_kernels.full(list(shard.local_shape), 0, param.dtype), name=param.name,
                      requires_grad=param.requires_grad)
    local._opt_shard = shard
    return local


def local_gradients(opt, gradients):
    """The gradients the optimizer's update uses: for a sliced parameter, a slice-shaped gradient (from the
    reduce-scatter of nn.DistributedGradReducer) is used as is and a whole one (already reduced) is cut to this
    process's slice. ValueError naming the parameter and the shapes for any other shape."""
    if not isinstance(gradients, (tuple, list)) or len(gradients) != opt.param_length:
        return gradients  # _check_gradients raises its own message
    out = list(gradients)
    for i, shard in enumerate(opt._opt_shards):
        if shard is None:
            continue
        g = gradients[i]
        gshape = tuple(getattr(g, "shape", ()))
        if gshape == shard.full_shape:
            out[i] = shard.take(g)
        elif gshape != shard.local_shape:
            raise ValueError(f"For '{opt.cls_name}' with parallel optimizer ({shard.size} slices), gradient {i} of "
                             f"parameter '{opt.parameters[i].name}' (shape {shard.full_shape}) has shape {gshape}: "
                             f"expected the whole shape {shard.full_shape} or this process's slice "
                             f"{shard.local_shape}.")
    return tuple(out) if isinstance(gradients, tuple) else out


def pull(opt):
    """Copies this process's slice of every sliced parameter into its working Parameter (the whole parameter may
    have been changed since the last step: load_checkpoint, set_data, rank 0's broadcast)."""
    for p, local, shard in zip(opt.parameters, opt._parameters, opt._opt_shards):
        if shard is not None:
            _kernels.assign(local, shard.take(p))


def _gather_buckets(opt):
    """The all-gather buckets of an optimizer (made once): lists of indices of sliced parameters of one dtype, up to
    32 MiB of slices each (nn.DistributedGradReducer's bucket size)."""
    buckets = opt.__dict__.get("_opt_gather_buckets")
    if buckets is None:
        from ..wrap.grad_reducer import _BUCKET_BYTES, _plan
        idx = [i for i, s in enumerate(opt._opt_shards) if s is not None]
        locals_ = opt._parameters
        plan_ = _plan([(None, locals_[i].dtype, int(locals_[i].nbytes)) for i in idx], _BUCKET_BYTES)
        buckets = opt.__dict__["_opt_gather_buckets"] = [[idx[j] for j in b] for b in plan_]
    return buckets


def push(opt, done):
    """All-gathers the updated slices into the whole parameters (after `done`, the update's result): one
    all-gather per bucket, the slices laid side by side as one row [1, -1] per process, so that row r of the
    gathered [S, -1] tensor holds slice r of every parameter of the bucket."""
    from ...ops.function import depend
    shards, whole_params, locals_ = opt._opt_shards, opt.parameters, opt._parameters
    for bucket in _gather_buckets(opt):
        if len(bucket) == 1:
            i = bucket[0]
            _kernels.assign(whole_params[i], shards[i].gather(depend(locals_[i], done)))
            continue
        row = _kernels.concat([_kernels.reshape(depend(locals_[i], done), [1, -1]) for i in bucket], 1)
        rows = _kernels.all_gather(row, "world")
        first = shards[bucket[0]]
        if first.size < first.world:
            rows = rows[:first.size]
        start = 0
        for i in bucket:
            n = int(locals_[i].size)
            _kernels.assign(whole_params[i], _kernels.reshape(rows[:, start:start + n], list(shards[i].full_shape)))
            start += n


def whole(param):
    """A sliced Parameter (`_opt_shard`) gathered to its whole value (a collective); others as they are."""
    shard = getattr(param, "_opt_shard", None)
    return param if shard is None else shard.gather(param)


def state_bytes(opt):
    """The bytes of an optimizer's state Parameters on this process (every Parameter of the optimizer Cell but
    the parameters it updates, learning rates and global_step excluded)."""
    skip = {id(p) for p in opt.parameters}
    total = 0
    for _, p in opt.parameters_and_names():
        if id(p) not in skip and p.ndim > 0 and p.name != "global_step" and not p.name.startswith("learning_rate"):
            total += int(p.nbytes)
    return total

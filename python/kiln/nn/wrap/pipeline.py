"""Pipeline parallelism: `nn.PipelineCell(network, micro_size, stage_config=None)` and its newer name
`mindspore.parallel.nn.Pipeline` (MindSpore 2.10's user surface; docs/distributed.md, "Pipeline parallel";
docs/decisions/pipeline-parallel.md).

With set_auto_parallel_context(parallel_mode="semi_auto_parallel", pipeline_stages=S) and S processes (kiln.msrun),
process r is stage r. With N = D*S processes, stage s is the D processes s*D .. s*D+D-1 (MindSpore's layout):
replica j of each stage exchanges with replica j of its neighbours ("process r-1 / r+1" below are those), and after
the backward the Parameters' gradients are averaged over the stage's D replicas (data parallel inside a stage; each
replica's loss is its own). Every process builds the whole model (the same seed gives the same initial weights) and calls
the same script; while a PipelineCell runs, every Cell call goes through `_StageRun.call` (the hook of
Cell.__call__), which decides where the Cell runs:

- a Cell with `pipeline_stage == r` runs here. An input that another stage computed is received from process r-1
  (a header with the shape and dtype, then the data: comm send/recv over Gloo);
- a Cell of another stage does not run here: it returns a `_Remote` marker. If one of its inputs was computed
  on this stage, that tensor is sent to process r+1 (activations only flow to the next stage);
- a Cell without pipeline_stage that holds staged Cells (WithLossCell, the backbone) runs its construct, so that its
  children are routed; one without staged Cells (ReLU, Flatten, the loss function) runs where its inputs are: on a
  `_Remote` input it returns a `_Remote` of that stage, otherwise it runs here.

The schedule is GPipe: the forwards of all micro-batches (in order), then their backwards in reverse order. In the
backward of micro-batch i, stage r receives from r+1 the cotangents of the activations it sent, differentiates its
part (one `_engine.gradient` call on the kept tape) with respect to its received activations and the Parameters, and
sends the activations' cotangents to r-1; the Parameter gradients are summed over the micro-batches. The last
stage starts from d(loss_i) = 1. The whole schedule runs inside the PipelineCell's forward; the result goes back
through one tape node (`_engine.record_custom`) whose bprop multiplies the accumulated gradients by the loss's
cotangent (the pipeline is linear in the seed, and every process runs the same training step, so every stage sees
the same cotangent as the last one). So TrainOneStepCell, ops.value_and_grad and ops.grad work unchanged.

Output: the sum of the micro-batch losses (MindSpore's PipelineCell adds them), computed on the last stage and sent
to the other stages, so every process returns it. Parameters of other stages stay in each process (materialized,
initialized as in one process) and get zero gradients; only the owning stage's copy is trained.
"""
from ... import _engine
from ... import ops
from ...ops import _kernels
from ...common.tensor import Tensor
from ...common import dtype as mstype
from ..cell import Cell
from .._cell_extra import _pipeline_hook
from .grad_accumulation import _FLOATS, _accumulate, _check, _micro_inputs

__all__ = ["PipelineCell", "Pipeline", "PipelineGradReducer"]

_DTYPES = (mstype.float32, mstype.float64, mstype.float16, mstype.bfloat16, mstype.int32, mstype.int64,
           mstype.int16, mstype.int8, mstype.uint8, mstype.bool_)
_MAX_DIMS = 8


class _Remote:
    """The value of a Cell that runs on another pipeline stage (this process never holds it)."""
    __slots__ = ("stage", "cell")

    def __init__(self, stage, cell):
        self.stage, self.cell = stage, cell

    def __repr__(self):
        return f"<value of {self.cell} on pipeline stage {self.stage}>"

    def __getattr__(self, name):
        raise TypeError(f"For 'PipelineCell', the output of {self.cell} is computed on pipeline stage {self.stage}, "
                        f"another process: code between the Cells of different stages must be Cells (with or "
                        f"without pipeline_stage), not functional ops, operators or Tensor methods ('{name}').")

    def __iter__(self):
        raise TypeError(f"For 'PipelineCell', the output of {self.cell} (pipeline stage {self.stage}, another process) "
                        f"is used as a sequence: a Cell whose output crosses a stage boundary must return one Tensor.")


def _refuse(name):
    def op(self, *args):
        return self.__getattr__(name)
    op.__name__ = name
    return op


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
              "__matmul__", "__rmatmul__", "__pow__", "__neg__", "__getitem__", "__len__", "__bool__", "__lt__",
              "__le__", "__gt__", "__ge__"):
    setattr(_Remote, _name, _refuse(_name))


def _flat(x, out):
    if isinstance(x, (tuple, list)):
        for v in x:
            _flat(v, out)
    elif isinstance(x, dict):
        for v in x.values():
            _flat(v, out)
    else:
        out.append(x)
    return out


def _replace(x, fn):
    if isinstance(x, tuple):
        return tuple(_replace(v, fn) for v in x)
    if isinstance(x, list):
        return [_replace(v, fn) for v in x]
    if isinstance(x, dict):
        return {k: _replace(v, fn) for k, v in x.items()}
    return fn(x)


def _stage_of(cell):
    return cell.__dict__.get("_pipeline_stage")


def params_of_other_stages(network):
    """The ids of the Parameters of `network` that belong to another pipeline stage than this process's: held by a
    Cell whose pipeline_stage (its own, or the nearest enclosing Cell's) is not this process's stage, and by no Cell of
    this stage or without a stage; and an optimizer's state Parameters of those ('<prefix>.<name>'). Such Parameters
    are materialized in every process but trained only in their stage's, so save_checkpoint leaves them out (as in
    MindSpore, whose per-rank checkpoint of a pipeline holds its stage's Parameters). Empty unless semi_auto_parallel with pipeline_stages > 1 runs over several processes."""
    from ..._parallel_context import ParallelMode, get_auto_parallel_context
    from ...communication.management import GlobalComm, get_group_size, get_rank
    stages = get_auto_parallel_context("pipeline_stages")
    if (stages == 1 or not GlobalComm.INITED
            or get_auto_parallel_context("parallel_mode") != ParallelMode.SEMI_AUTO_PARALLEL):
        return set()
    world = get_group_size()
    if world % stages:
        return set()
    from ..optim.optimizer import Optimizer
    mine = get_rank() // (world // stages)
    other, keep, seen, optimizers, by_id = set(), set(), set(), [], {}

    def walk(cell, stage):
        if isinstance(cell, Optimizer):  # it holds the network's Parameters too, and their states: see below
            optimizers.append(cell)
            return
        st = _stage_of(cell)
        stage = st if st is not None else stage
        if (id(cell), stage) in seen:
            return
        seen.add((id(cell), stage))
        # a Cell without a stage above staged Cells (TrainOneStepCell's `weights`, a container) only refers to
        # Parameters: those of its staged Cells count as theirs, its own others are saved
        if stage is not None or not staged(cell):
            for p in cell.get_parameters(expand=False):
                by_id[id(p)] = p
                (other if stage is not None and stage != mine else keep).add(id(p))
        for child in cell.cells():
            walk(child, stage)

    memo = {}

    def staged(cell):
        if id(cell) not in memo:
            memo[id(cell)] = False
            memo[id(cell)] = any(_stage_of(c) is not None or staged(c) for c in cell.cells())
        return memo[id(cell)]
    walk(network, None)
    out = other - keep
    names = {by_id[i].name for i in out}
    for opt in optimizers:  # an optimizer's state of such a Parameter: '<prefix>.<its name>' (accum.2.weight, ...)
        for p in opt.get_parameters():
            parts = p.name.split(".", 1)
            if id(p) not in keep and (p.name in names or (len(parts) == 2 and parts[1] in names)):
                out.add(id(p))
    return out


class _StageRun:
    """One PipelineCell call on one process: routes the Cell calls (see the module docstring) and exchanges the
    activations and cotangents with the neighbouring stages."""

    def __init__(self, pcell, stage, stages, names, containers, scope, per_stage=1, replica=0):
        self.pcell, self.stage, self.stages = pcell, stage, stages
        self.per_stage, self.replica = per_stage, replica
        self.names, self.containers, self.scope = names, containers, scope
        self.inside = 0            # > 0 while a Cell of this stage runs (its children run as they are)
        self.seq = {}              # peer rank -> number of messages exchanged this call (the tags)
        self.new_micro()

    def new_micro(self):
        self.owned = {}            # id(tensor) -> tensor computed on this stage in this micro-batch
        self.received = {}         # id(_Remote) -> (remote, received tensor)
        self.sent_ids = set()
        self.recv_leaves = []      # the activations received from stage-1 (differentiated)
        self.sent = []             # the activations sent to stage+1 (their cotangents come back)

    # ---- messages
    def rank_of(self, stage):
        """The rank of this process's replica on `stage` (the peer messages go to / come from)."""
        return stage * self.per_stage + self.replica

    def _tag(self, peer):
        n = self.seq.get(peer, 0)
        self.seq[peer] = n + 1
        return n

    def send(self, t, peer, header=True):
        from ...communication import comm_func
        if header:
            if t.dtype not in _DTYPES or t.ndim > _MAX_DIMS:
                raise TypeError(f"For 'PipelineCell', an activation sent between stages must be a Tensor of at most "
                                f"{_MAX_DIMS} dimensions with dtype in {[str(d) for d in _DTYPES]}, but got shape "
                                f"{tuple(t.shape)} and dtype {t.dtype}.")
            h = [t.ndim, _DTYPES.index(t.dtype)] + list(t.shape) + [0] * (_MAX_DIMS - t.ndim)
            comm_func.send(Tensor(h, mstype.int64), peer, tag=self._tag(peer))
        comm_func.send(t, peer, tag=self._tag(peer))

    def recv(self, peer, like=None):
        from ...communication.management import GlobalComm
        from ...ops import comm_ops
        group = comm_ops._group(GlobalComm.WORLD_COMM_GROUP, "PipelineCell")  # world: group rank == rank
        if like is None:
            h = _kernels.recv((_MAX_DIMS + 2,), mstype.int64, peer, self._tag(peer), group).asnumpy()
            shape, dtype = tuple(int(v) for v in h[2:2 + int(h[0])]), _DTYPES[int(h[1])]
        else:
            shape, dtype = tuple(like.shape), like.dtype
        return _kernels.recv(shape, dtype, peer, self._tag(peer), group)

    # ---- routing (the Cell.__call__ hook)
    def call(self, cell, args, kwargs):
        if self.inside:
            return cell._call_plain(args, kwargs)
        st = _stage_of(cell)
        if id(cell) in self.containers:  # holds staged Cells: run its construct, its children are routed
            return cell._call_plain(args, kwargs)
        values = _flat((args, kwargs), [])
        remotes = [v for v in values if isinstance(v, _Remote)]
        mine = [v for v in values if isinstance(v, Tensor) and id(v) in self.owned]
        name = self.names.get(id(cell), type(cell).__name__)
        if st is None:
            if remotes and mine:
                raise ValueError(f"For 'PipelineCell', the Cell '{name}' (no pipeline_stage) takes values of stage "
                                 f"{self.stage} and of stage {max(r.stage for r in remotes)}: set its "
                                 f"pipeline_stage, or compute its inputs on one stage.")
            if remotes:
                return _Remote(max(r.stage for r in remotes), name)
            out = cell._call_plain(args, kwargs)
            if mine:
                self._own(out)
            return out
        if st == self.stage:
            args, kwargs = _replace((args, kwargs), lambda v: self._materialize(v, name))
            self.inside += 1
            try:
                out = cell._call_plain(args, kwargs)
            finally:
                self.inside -= 1
            self._own(out)
            return out
        # a Cell of another stage: what this stage computed for it goes to the next stage
        for t in mine:
            if st != self.stage + 1:
                raise ValueError(f"For 'PipelineCell', the Cell '{name}' of pipeline stage {st} takes an activation "
                                 f"computed on stage {self.stage}: activations can only go to the next stage "
                                 f"({self.stage + 1}).")
            if id(t) not in self.sent_ids:
                self.sent_ids.add(id(t))
                self.send(t, self.rank_of(self.stage + 1))
                if self.scope is not None and t.dtype in _FLOATS:  # its cotangent comes back in the backward
                    self.sent.append(t)
        return _Remote(st, name)

    def _materialize(self, v, name):
        if not isinstance(v, _Remote):
            return v
        if v.stage != self.stage - 1:
            raise ValueError(f"For 'PipelineCell', the Cell '{name}' of pipeline stage {self.stage} takes the output "
                             f"of {v.cell} on stage {v.stage}: a stage can only take activations from the previous "
                             f"stage ({self.stage - 1}).")
        hit = self.received.get(id(v))
        if hit is not None:
            return hit[1]
        t = self.recv(self.rank_of(self.stage - 1))
        if self.scope is not None and t.dtype in _FLOATS:
            t = Tensor(self.scope.watch_input(t))
            self.recv_leaves.append(t)
        self.received[id(v)] = (v, t)
        self.owned[id(t)] = t
        return t

    def _own(self, out):
        for t in _flat(out, []):
            if isinstance(t, Tensor):
                self.owned[id(t)] = t


def _check_stages(pcell, stages):
    """Every pipeline_stage < stages and every stage has a Cell; returns ({id: name}, {ids of containers})."""
    names, staged = {}, {}
    for name, cell in pcell.network.cells_and_names():
        names[id(cell)] = name or type(cell).__name__
        st = _stage_of(cell)
        if st is not None:
            if st >= stages:
                raise ValueError(f"For 'PipelineCell', the Cell '{name or type(cell).__name__}' has pipeline_stage "
                                 f"{st}, but pipeline_stages is {stages}: it must be in [0, {stages - 1}].")
            staged.setdefault(st, []).append(name)
    empty = [s for s in range(stages) if s not in staged]
    if empty:
        raise ValueError(f"For 'PipelineCell', pipeline stage(s) {empty} of {stages} have no Cell: set "
                         f"cell.pipeline_stage (or stage_config) so that every stage in [0, {stages - 1}] runs at least "
                         f"one Cell (stages in use: {sorted(staged)}).")
    containers = set()

    def walk(cell):
        has = False
        for child in cell.cells():
            if child is not None and (walk(child) or _stage_of(child) is not None):
                has = True
        if has:
            containers.add(id(cell))
        return has
    walk(pcell.network)
    return names, containers


def _pipeline_forward(pcell, inputs):
    from ..._parallel_context import ParallelMode, get_auto_parallel_context
    from ...communication.management import GlobalComm, get_group_size, get_rank
    api, net, k = type(pcell).__name__, pcell.network, pcell.micro_size
    stages = get_auto_parallel_context("pipeline_stages")
    mode = get_auto_parallel_context("parallel_mode")
    if stages == 1:
        return _accumulate(pcell, inputs)  # one stage: the sum over the micro-batches (PyNative and Graph mode)
    if mode != ParallelMode.SEMI_AUTO_PARALLEL:
        raise ValueError(f"For '{api}', pipeline_stages={stages} needs parallel_mode='semi_auto_parallel', but it is "
                         f"{mode!r}.")
    if _engine.tracing():  # the compiled function runs in PyNative instead (_graph_builtins.EagerOnly)
        from ..._compiler.graph_builtins import EagerOnly
        raise EagerOnly(f"For '{api}', pipeline parallelism (pipeline_stages={stages}) runs in PyNative mode "
                        f"only: Kiln cannot compile it (GRAPH_MODE, kiln.jit) yet; a compiled step that calls it "
                        f"runs in PyNative (docs/distributed.md, 'Pipeline parallel').")
    names, containers = _check_stages(pcell, stages)
    _micro_inputs(inputs, 0, k, api)  # types and divisibility checked before anything is sent
    if not GlobalComm.INITED:
        raise RuntimeError(f"For '{api}', pipeline_stages={stages} needs the communication initialized: call "
                           f"kiln.communication.init() in a process started by `python -m kiln.msrun`.")
    device_num = get_auto_parallel_context("device_num")
    world = get_group_size()
    if device_num % stages != 0:
        raise ValueError(f"For '{api}', device_num ({device_num}) must be divisible by pipeline_stages ({stages}).")
    if device_num != world or world % stages != 0:
        raise ValueError(f"For '{api}', device_num ({device_num}) must equal the number of processes ({world}), and it "
                         f"must be divisible by pipeline_stages ({stages}).")
    # MindSpore's layout: stage s holds ranks s*D .. s*D+D-1 (D = world / stages processes per stage, data parallel
    # among them); process r is replica r % D of stage r // D and exchanges with the same replica of the neighbours
    per_stage = world // stages
    replica = get_rank() % per_stage
    stage = get_rank() // per_stage
    last = stage == stages - 1
    params = [p for p in net.get_parameters() if p._tracked]
    grad = _engine.grad_level() == 1 and params
    if _engine.grad_level() > 1:
        raise RuntimeError(f"For '{api}', a higher-order gradient through pipeline stages is not supported.")
    total, acc = None, None
    hook_before = _pipeline_hook[0]

    def forward_all(scope):
        nonlocal total
        run = _StageRun(pcell, stage, stages, names, containers, scope, per_stage, replica)
        kept = []
        _pipeline_hook[0] = run.call
        try:
            for i in range(k):
                run.new_micro()
                out = net(*_micro_inputs(inputs, i, k, api))
                if last:
                    if not isinstance(out, Tensor):
                        raise ValueError(f"For '{api}', the network's output must be computed on the last pipeline "
                                         f"stage ({stages - 1}), but it comes from {out!r}.")
                    value = _kernels.detach(out)
                    total = value if total is None else ops.add(total, value)
                elif not isinstance(out, _Remote):
                    raise ValueError(f"For '{api}', the network's output is computed on stage {stage}, not on the "
                                     f"last pipeline stage ({stages - 1}): set the pipeline_stage of the Cells that "
                                     f"compute it.")
                kept.append((run.recv_leaves, run.sent, out if last else None))
        finally:
            _pipeline_hook[0] = hook_before
        return run, kept

    if not grad:
        run, _ = forward_all(None)
    else:
        with _engine.IsolatedTape():
            with _engine.GradScope() as scope:
                for p in params:
                    scope.watch(p)
                run, kept = forward_all(scope)
                # GPipe backward: micro-batches in reverse order
                for leaves, sent, out in reversed(kept):
                    if last:
                        outs, cots = [out], [None]
                    else:
                        outs = sent
                        cots = [run.recv(run.rank_of(stage + 1), like=t) for t in sent]
                    g = _engine.gradient(outs, cots, list(leaves) + params)
                    for leaf, gl in zip(leaves, g[:len(leaves)]):
                        run.send(gl if gl is not None else _kernels.zeros_like(leaf), run.rank_of(stage - 1),
                                 header=False)
                    gp = g[len(leaves):]
                    acc = gp if acc is None else [ops.add(a, b) for a, b in zip(acc, gp)]
                del kept
    # the loss, from the last stage to every stage
    if last:
        for r in range(stages - 1):
            run.send(total, run.rank_of(r))
    else:
        total = run.recv(run.rank_of(stages - 1))
    if grad and per_stage > 1:  # data parallel inside the stage: the gradients averaged over its D replicas
        from ...parallel._op_shard import _group
        group = _group(range(stage * per_stage, (stage + 1) * per_stage))
        scale = 1.0 / per_stage
        acc = [ops.mul(_kernels.all_reduce(a, 0, group), _kernels.cast(_kernels.full([], scale, mstype.float64), a.dtype))
               for a in acc]
    if not grad:
        return total

    def bprop(ins, outs, gouts):
        gout = gouts[0]
        if gout is None:
            return [None] * len(ins)
        return [ops.mul(a, _kernels.cast(gout, a.dtype)) for a in acc]

    return _engine.record_custom(params, [total], bprop)[0]


class PipelineCell(Cell):
    """mindspore.nn.PipelineCell(network, micro_size, stage_config=None, segment_config=None): pipeline-parallel
    training over `micro_size` micro-batches (kiln/nn/wrap/pipeline.py, docs/distributed.md "Pipeline parallel").

    Every input is split along dimension 0 into micro_size equal micro-batches; the output is the sum of network's
    outputs (usually a WithLossCell's loss) over them, as MindSpore's. With pipeline_stages == 1 this is
    GradAccumulation (any mode). With parallel_mode='semi_auto_parallel' and pipeline_stages=S > 1 (S processes),
    process r runs the Cells whose pipeline_stage is r; activations go forward and cotangents backward between
    neighbouring stages (GPipe schedule, PyNative only); every process returns the summed loss, and its Parameter
    gradients are those of its own stage (zero for the other stages' Parameters).

    Args:
        network (Cell): the network (its Cells with trainable Parameters should carry pipeline_stage).
        micro_size (int): the number of micro-batches (> 0).
        stage_config (dict, optional): {cell name in network.cells_and_names(): stage}: sets those Cells'
            pipeline_stage (MindSpore's; KeyError for a name not found).
        segment_config (dict, optional): accepted only as None (the zero_bubble_v scheduler's segments).
    Raises:
        TypeError: network not a Cell; micro_size not an int; an input that is not a Tensor.
        ValueError: micro_size <= 0; an input whose dimension 0 is not divisible by micro_size; segment_config set;
            at call time: a pipeline_stage >= pipeline_stages, a stage with no Cell, device_num not divisible by
            pipeline_stages or different from the number of processes, the loss not computed on the last stage,
            an activation that skips a stage or goes backwards.
        KeyError: a stage_config name that is not a Cell of network.
        RuntimeError: pipeline_stages > 1 before communication.init(). (Under GRAPH_MODE / kiln.jit the compiled
            step runs in PyNative, with a RuntimeWarning.)
    """

    def __init__(self, network, micro_size, stage_config=None, segment_config=None):
        super().__init__(auto_prefix=False)
        api = type(self).__name__
        _check(network, micro_size, api)
        if segment_config is not None:
            raise ValueError(f"For '{api}', segment_config (pipeline segments of the zero_bubble_v scheduler) is not "
                             f"supported by Kiln; leave it None.")
        self.network = network
        self.micro_size = micro_size
        if stage_config is not None:
            if not isinstance(stage_config, dict):
                raise TypeError(f"For '{api}', 'stage_config' must be a dict, but got {type(stage_config).__name__}.")
            found = {}
            for name, cell in network.cells_and_names():
                if name and name in stage_config:
                    found[name] = cell
            missing = {k: v for k, v in stage_config.items() if k not in found}
            if missing:
                raise KeyError(f"For '{api}', the argument 'stage_config' : {missing} is not found in 'network' "
                               f"(cells: {[n for n, _ in network.cells_and_names() if n]}).")
            for name, cell in found.items():
                cell.pipeline_stage = stage_config[name]

    def shard(self, in_strategy, out_strategy=None, parameter_plan=None):
        raise ValueError(f"For '{type(self).__name__}', no 'shard' on 'PipelineCell' is allowed.")

    def construct(self, *inputs):
        return _pipeline_forward(self, inputs)


class Pipeline(PipelineCell):
    """mindspore.parallel.nn.Pipeline(network, micro_size, stage_config=None, segment_config=None): the newer name of
    nn.PipelineCell (the same behaviour and errors, naming 'Pipeline')."""


class PipelineGradReducer(Cell):
    """mindspore.nn.PipelineGradReducer(parameters, scale_sense=1.0, opt_shard=None) (also
    mindspore.parallel.nn.PipelineGradReducer): the gradient step of MindSpore's functional pipeline training
    (`grads = pp_grad_reducer(grads)` between `value_and_grad` through a PipelineCell and the optimizer).

    MindSpore's graph pass accumulates the micro-batches' gradients into `accu_grads` buffers, and the reducer returns
    them divided by scale_sense (then zeroes the buffers). In Kiln, value_and_grad through a PipelineCell already
    returns the gradients summed over the micro-batches, so the reducer returns each gradient divided by
    scale_sense (a Parameter named 'scale_sense', as MindSpore's); it keeps no accu_grads buffers. opt_shard (the
    optimizer-parallel variant) changes nothing: optimizer parallel with pipeline stages is not supported.

    Args:
        parameters (ParameterTuple, list or tuple of Parameter): the optimizer's parameters (optimizer.parameters).
        scale_sense (float or int): the loss scale the gradients are divided by. Default 1.0.
        opt_shard (bool, optional): accepted (None or bool).
    Inputs:
        grads (tuple of Tensor): one gradient per parameter.
    Outputs:
        tuple of Tensor: grads[i] / scale_sense.
    Raises:
        TypeError: parameters not Parameters; scale_sense not a number; opt_shard not None or a bool; grads not a
            tuple/list of Tensors.
        ValueError: len(grads) != len(parameters).
    """

    def __init__(self, parameters, scale_sense=1.0, opt_shard=None):
        super().__init__(auto_prefix=False)
        from ...common.parameter import Parameter
        api = "PipelineGradReducer"
        if not isinstance(parameters, (list, tuple)) or not all(isinstance(p, Parameter) for p in parameters):
            raise TypeError(f"For '{api}', 'parameters' must be a ParameterTuple or a list/tuple of Parameters "
                            f"(optimizer.parameters), but got {type(parameters).__name__}.")
        if isinstance(scale_sense, bool) or not isinstance(scale_sense, (int, float)):
            raise TypeError(f"For '{api}', 'scale_sense' must be a float or int, but got {type(scale_sense).__name__}.")
        if opt_shard is not None and not isinstance(opt_shard, bool):
            raise TypeError(f"For '{api}', 'opt_shard' must be None or a bool, but got {type(opt_shard).__name__}.")
        self.__dict__["_n"] = len(parameters)
        self.opt_shard = opt_shard
        self.scale_sense = Parameter(_kernels.full([], float(scale_sense), mstype.float32), name="scale_sense")

    def construct(self, grads):
        api = "PipelineGradReducer"
        if not isinstance(grads, (tuple, list)) or not all(isinstance(g, _engine.Tensor) for g in grads):
            raise TypeError(f"For '{api}', 'grads' must be a tuple of Tensors (one per parameter), but got "
                            f"{type(grads).__name__}.")
        if len(grads) != self._n:
            raise ValueError(f"For '{api}', got {len(grads)} gradients for {self._n} parameters.")
        return tuple(_kernels.div(g, _kernels.cast(self.scale_sense, g.dtype)) for g in grads)

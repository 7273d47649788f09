"""mindspore.parallel.auto_parallel.AutoParallel: runs a network or a training-step function in semi-auto parallel
mode (operator sharding by Primitive.shard strategies; kiln/parallel/_op_shard.py, docs/distributed.md "Operator
parallel")."""
from .. import _engine
from ..ops import _kernels
from ..common.tensor import Tensor
from ..nn.cell import Cell
from . import _op_shard

__all__ = ["AutoParallel"]

_MODES = ("semi_auto", "sharding_propagation", "recursive_programming")


class AutoParallel(Cell):
    """AutoParallel(network, parallel_mode="semi_auto"): calls `network` (a Cell or a function, e.g. MindSpore's
    `train_step(inputs, targets)` that computes the gradients and runs the optimizer) with operator parallel on:
    primitives with a `shard` strategy run sharded over the processes of the job (each holds its slice of their
    Parameters), the others run whole on every process.

    The Tensor arguments of a call are this process's part of the batch: with the dataset strategy "data_parallel"
    (the default) each is this process's slice along dimension 0 and the call gathers the global batch (the
    processes' slices concatenated in rank order) first, and an output Tensor whose dimension 0 is the global
    batch comes back as this process's rows (MindSpore's default data-parallel layout of a network's last op;
    a scalar loss comes back whole); with "full_batch" every process passes and gets the whole batch.

    In GRAPH_MODE the first call runs `network` eagerly (it slices the Parameters, which a trace cannot do) and the
    later calls run it compiled (the collectives and their gradients are graph nodes); a compiled function (kiln.jit,
    a GRAPH_MODE Cell such as Model's training step) that calls it runs in PyNative instead, with a RuntimeWarning.

    Args:
        network (Cell or function): what to run.
        parallel_mode (str): "semi_auto" (strategies from shard). "sharding_propagation" and
            "recursive_programming" (strategy search) raise ValueError: not supported by Kiln.
    Raises:
        TypeError: network not a Cell or callable; parallel_mode not a str.
        ValueError: an unknown or unsupported parallel_mode; at a call with the dataset strategy 'data_parallel',
            processes passing Tensor arguments of different shapes or dtypes (each process's rows must be as many:
            checked over the processes before the inputs are gathered, so every process raises it).
    """

    def __init__(self, network, parallel_mode="semi_auto"):
        super().__init__(auto_prefix=False)
        if not callable(network):
            raise TypeError(f"For 'AutoParallel', the 'network' must be a Cell or a function, but got "
                            f"{type(network).__name__}.")
        if not isinstance(parallel_mode, str):
            raise TypeError(f"For 'AutoParallel', the 'parallel_mode' must be str, but got "
                            f"{type(parallel_mode).__name__}.")
        if parallel_mode not in _MODES:
            raise ValueError(f"For 'AutoParallel', the 'parallel_mode' must be one of {list(_MODES)}, but got "
                             f"{parallel_mode!r}.")
        if parallel_mode != "semi_auto":
            raise ValueError(f"For 'AutoParallel', parallel_mode={parallel_mode!r} (strategy search) is not supported "
                             f"by Kiln; use 'semi_auto' with Primitive.shard strategies.")
        if isinstance(network, Cell):
            self.network = network
        else:
            self.__dict__["_fn"] = network
        self.__dict__["_dataset_strategy"] = "data_parallel"
        self.__dict__["_parallel_mode"] = parallel_mode

    def dataset_strategy(self, config):
        """How each process's inputs relate to the global batch: "data_parallel" (each a slice along dimension 0,
        the default) or "full_batch" (each the whole batch). Tuple strategies raise ValueError (not supported)."""
        if not isinstance(config, str):
            raise ValueError(f"For 'AutoParallel.dataset_strategy', Kiln takes 'data_parallel' or 'full_batch', but "
                             f"got {config!r}.")
        if config not in ("data_parallel", "full_batch"):
            raise ValueError(f"For 'AutoParallel.dataset_strategy', the config must be 'data_parallel' or "
                             f"'full_batch', but got {config!r}.")
        self.__dict__["_dataset_strategy"] = config

    def hsdp(self, shard_size=-1, threshold=64, optimizer_level="level1"):
        """Optimizer parallel (ZeRO-1) for the optimizer that steps this network (MindSpore's AutoParallel.hsdp):
        with N processes each keeps and updates 1/S of every large parameter's optimizer state and slice (S = N,
        or shard_size when it divides N), then all-gathers the weights (kiln/nn/optim/_parallel.py). It applies to
        the optimizer of a TrainOneStepCell / Model made over this AutoParallel, and to an optimizer that steps
        inside this AutoParallel's call (a wrapped train_step function), before its first step.

        Args:
            shard_size (int): the slice count, in (0, device_num] or -1 (all processes). Default -1.
            threshold (int): parameters smaller than this many KB stay whole (>= 0). Default 64.
            optimizer_level (str): "level1" (weights and optimizer state: what Kiln does); "level2" (also the
                gradients) is kept and runs as level1; "level3" raises ValueError (not supported).
        Raises:
            ValueError: shard_size not a positive int or -1; threshold not an int >= 0; optimizer_level not one of
                level1/level2/level3, or level3.
        """
        if isinstance(shard_size, bool) or not isinstance(shard_size, int) or (shard_size <= 0 and shard_size != -1):
            raise ValueError(f"shard_size must be a positive integer or -1, but got {shard_size}.")
        if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 0:
            raise ValueError(f"threshold must be a positive integer or 0, but got {threshold}.")
        if optimizer_level not in ("level1", "level2", "level3"):
            raise ValueError(f"Optimizer level should in ['level1', 'level2', 'level3'], but got {optimizer_level}")
        if optimizer_level == "level3":
            raise ValueError("For 'AutoParallel.hsdp', optimizer_level='level3' (weights also sliced during the "
                             "forward pass) is not supported by Kiln; use 'level1' or 'level2'.")
        self.__dict__["_hsdp"] = (shard_size, threshold)

    def save_param_strategy_file(self, file_path):
        """Where the layouts of the Parameters this AutoParallel's calls slice are written (MindSpore's strategy
        file: protobuf, JSON for a name ending in '.json'; kiln/parallel/_strategy_file.py), from its next call on.
        strategy_ckpt_config's save_file, when set, takes precedence. load_distributed_checkpoint(this AutoParallel,
        ...) reads it when train_strategy_filename is None.

        Raises:
            TypeError: file_path not a str.
        """
        if not isinstance(file_path, str):
            raise TypeError(f"the argument 'file_path' must be str, but got the type : {type(file_path)} .")
        self.__dict__["_save_strategy_file_path"] = file_path

    def disable_strategy_file_only_for_trainable_params(self):
        """The strategy file (save_param_strategy_file) also lists Parameters with requires_grad=False."""
        self.__dict__["_only_trainable_params"] = False

    def _gather_inputs(self, args):
        world, _ = _op_shard._world()
        if world == 1:
            return args
        if self._dataset_strategy == "full_batch":  # the sharded ops cut the same whole tensors on every process
            desc = ", ".join(f"arg {i}: {list(a.shape)} {a.dtype}" for i, a in enumerate(args)
                             if isinstance(a, Tensor))
            _op_shard.agree("AutoParallel", f"({desc})", "shapes and dtypes of its Tensor arguments (dataset "
                            "strategy 'full_batch': every process passes the whole batch)")
            return args
        # every process's Tensor arguments must have the same shapes and dtypes (its rows of the global batch):
        # otherwise the gathers below would pair collectives of different sizes (Gloo aborts the process)
        desc = ", ".join(f"arg {i}: {list(a.shape)} {a.dtype}" for i, a in enumerate(args) if isinstance(a, Tensor))
        _op_shard.agree("AutoParallel", f"({desc})", "shapes and dtypes of its Tensor arguments (dataset strategy "
                        "'data_parallel': each process its rows of the global batch, gathered along dimension 0; a "
                        "dataset's short last batch: batch(..., drop_remainder=True))")
        out = []
        for a in args:
            if isinstance(a, Tensor) and a.ndim > 0:
                out.append(_batch_gather(a))
            else:
                out.append(a)
        return tuple(out)

    def _run_construct(self, args, kwargs):
        from ..context import _graph as graph_flag
        if _engine.tracing():  # the compiled function runs in PyNative instead (_graph_builtins.EagerOnly)
            from .._compiler.graph_builtins import EagerOnly
            raise EagerOnly("For 'AutoParallel', Kiln does not compile a call of it inside another compiled "
                            "function (kiln.jit / ms.jit, a GRAPH_MODE Cell): that function runs in PyNative, and "
                            "the AutoParallel call compiles its own network from its second call on "
                            "(docs/distributed.md, 'Operator parallel').")
        graph = graph_flag[0]
        compiled = graph and self.__dict__.get("_ran_eagerly", False)
        if self.__dict__.get("_save_strategy_file_path"):
            from . import _strategy_file
            _strategy_file.set_target(self._save_strategy_file_path, self.__dict__.get("_only_trainable_params", True))
        with _op_shard.auto_scope(self.__dict__.get("_hsdp")):
            gathered = self._gather_inputs(args)
            if compiled:  # GRAPH_MODE after the first step: the Parameters are sliced, the step compiles
                out = self._compiled_construct()(*gathered, **kwargs)
            else:  # PyNative, or GRAPH_MODE's first step: eagerly (it slices the Parameters)
                graph_flag[0] = False
                try:
                    out = self.construct(*gathered, **kwargs)
                finally:
                    graph_flag[0] = graph
                self.__dict__["_ran_eagerly"] = True
            if gathered is args:
                return out
            rows = {a.shape[0] for a in gathered if isinstance(a, Tensor) and a.ndim > 0}
            return _own_rows(out, rows)

    def construct(self, *args, **kwargs):
        fn = self.__dict__.get("_fn")
        if fn is not None:
            return fn(*args, **kwargs)
        return self.network(*args, **kwargs)


def _own_rows(out, rows):
    """This process's rows of every output Tensor whose dimension 0 is a gathered global batch (the layout of
    MindSpore's default data-parallel strategy for a network's last op); other outputs (a loss) as they are. The
    backward gathers the rows' cotangents, so that every process holds the whole cotangent."""
    if isinstance(out, (tuple, list)):
        return type(out)(_own_rows(o, rows) for o in out)
    if not isinstance(out, Tensor) or out.ndim == 0 or out.shape[0] not in rows:
        return out
    world, rank = _op_shard._world()
    plan = _op_shard._Plan((world,), 1, [], [], [])
    return _op_shard._to_block(out, plan, [0] + [None] * (out.ndim - 1), rank)


def _batch_gather(t):
    """The global batch from every process's slice along dimension 0 (an AllGather over the world, rank order);
    backward: this process's rows of the cotangent."""
    _, rank = _op_shard._world()
    rows = t.shape[0]
    whole = _kernels.all_gather(_kernels.detach(t), "world")

    def bprop(ins, outs, gouts):
        g = gouts[0]
        return [None if g is None else g[rank * rows:(rank + 1) * rows]]

    return _op_shard._record([t], [whole], bprop)[0]

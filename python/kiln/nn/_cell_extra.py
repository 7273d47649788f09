"""Cell.compile and Cell.shard (MindSpore 2.10), attached to nn.Cell by kiln/nn/cell.py."""


def compile(self, *args, **kwargs):  # MindSpore's method name
    """MindSpore's Cell.compile(*args, **kwargs): compiles `construct` for these inputs as a Graph-mode call would,
    WITHOUT running it (no output, no Parameter written), into the cell's graph cache: a later GRAPH_MODE call with
    inputs of the same shapes and dtypes runs that graph without compiling again. Works in either mode (MindSpore
    also compiles in PyNative mode). Returns None.

    Raises the errors of compiling: TypeError when the inputs do not match construct's signature (too many/few),
    ValueError/TypeError from the ops for inputs of the wrong shape or dtype."""
    if kwargs:
        args, kwargs = self._bind_kwargs(args, kwargs)
    self._check_construct()
    self.init_parameters_data()
    self._compiled_construct().compile(*args, **kwargs)


def _group_size():
    from ..communication import management
    return management.get_group_size() if management.GlobalComm.INITED else 1


def shard(self, in_strategy, out_strategy=None, parameter_plan=None):
    """MindSpore's Cell.shard(in_strategy, out_strategy=None, parameter_plan=None): the input/output layouts of this
    cell for the model-splitting modes (semi_auto_parallel / auto_parallel). MindSpore ignores them in every other
    mode, and in a single process (group size 1) returns at once without looking at the arguments; Kiln shards
    primitives, not Cells, so:
      - in semi_auto_parallel / auto_parallel: ValueError (use Primitive.shard);
      - one process (communication not initialized, or a world of 1): returns None, nothing recorded (MindSpore's
        `if get_group_size() == 1: return`);
      - several processes (data parallel): checks the arguments as MindSpore's Shard does (TypeError when
        in_strategy is not a tuple, out_strategy not None/tuple, parameter_plan not None/dict), records them as
        `cell._in_strategy` / `cell._out_strategy` and returns None; the whole model runs in every process (the
        strategies are ignored, as MindSpore does outside the splitting modes)."""
    from .._parallel_context import ParallelMode, get_auto_parallel_context
    if get_auto_parallel_context("parallel_mode") in (ParallelMode.SEMI_AUTO_PARALLEL, ParallelMode.AUTO_PARALLEL):
        raise ValueError(f"For 'Cell.shard' ({type(self).__name__}), sharding a Cell (in_strategy={in_strategy!r}) "
                         f"is not supported by Kiln: its semi_auto_parallel mode shards primitives (Primitive.shard, "
                         f"mindspore.parallel.shard over functions; docs/distributed.md, 'Operator parallel') and "
                         f"runs pipeline stages (cell.pipeline_stage, nn.PipelineCell).")
    if _group_size() == 1:
        return None
    if not isinstance(in_strategy, tuple):
        raise TypeError(f"For 'Shard', the 'in_strategy' should be a tuple, but got {type(in_strategy).__name__}.")
    if not isinstance(out_strategy, (type(None), tuple)):
        raise TypeError(f"For 'Shard', the 'out_strategy' should be None or tuple, but got "
                        f"{type(out_strategy).__name__}.")
    if not isinstance(parameter_plan, (type(None), dict)):
        raise TypeError(f"For 'Shard', the 'parameter_plan' should be a dict or None, but got "
                        f"{type(parameter_plan).__name__}.")
    d = self.__dict__
    d["_in_strategy"] = in_strategy
    d["_out_strategy"] = out_strategy
    return None


# The hook Cell.__call__ consults first: None, or the function that routes every Cell call of a running
# pipeline-parallel step (kiln/nn/wrap/pipeline.py) to its stage.
_pipeline_hook = [None]


def _get_pipeline_stage(self):
    d = self.__dict__
    if "_pipeline_stage" not in d:  # MindSpore 2.10: reading it before it is set raises AttributeError
        raise AttributeError(f"The '{type(self).__name__}' object has no attribute 'pipeline_stage'.")
    return d["_pipeline_stage"]


def _set_pipeline_stage(self, value):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"For 'Cell', the property 'pipeline_stage' must be int type, but got type : {type(value)}")
    if value < 0:
        raise ValueError(f"For 'Cell', the property 'pipeline_stage' can not be less than 0, but got {value}")
    self.__dict__["_pipeline_stage"] = value


pipeline_stage = property(_get_pipeline_stage, _set_pipeline_stage, doc=(
    "MindSpore's Cell.pipeline_stage: the pipeline stage (an int >= 0, < pipeline_stages) whose process runs this "
    "Cell and holds its trained Parameters, when the network is wrapped in nn.PipelineCell with "
    "set_auto_parallel_context(parallel_mode='semi_auto_parallel', pipeline_stages=N). Reading it before it is set "
    "raises AttributeError (as MindSpore). TypeError for a non-int (bool included), ValueError for < 0."))

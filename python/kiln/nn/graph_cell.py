"""`nn.GraphCell`: runs a graph loaded from a MindIR file (mindspore.nn.GraphCell)."""
from ..common.parameter import Parameter
from ..common.tensor import Tensor
from .cell import Cell

__all__ = ["GraphCell"]


class GraphCell(Cell):
    """Runs a graph loaded by `kiln.load` from a MindIR file.

    Args:
        graph (MindIRGraph): what `kiln.load(file_name)` returned.
        params_init (dict, optional): parameter name (str) -> Tensor or Parameter: the values these parameters
            start from instead of the file's; names the graph does not have are ignored (MindSpore's rule).
            Default None.
        obf_random_seed (None): dynamic obfuscation is not supported (NotImplementedError when not None, as in
            MindSpore).

    Inputs: the graph's inputs, Tensors of exactly the shapes and dtypes they had when the graph was exported.
    Outputs: a Tensor, or a tuple of Tensors when the graph returns several.

    The graph's parameters are Parameters of this cell (named as in the file, e.g. "conv.weight"; requires_grad
    True, as MindSpore's GraphCell makes them), so `trainable_params()`, `save_checkpoint` and gradients
    (value_and_grad, GRAPH_MODE, Model.train) work: the graph is run with Kiln ops, in PyNative or traced under
    jit / GRAPH_MODE like any construct. Its operators are the exported ones (BatchNorm stays in inference form).

    Raises:
        TypeError: `graph` is not a loaded MindIR graph, `params_init` not a dict, a key not a str or a value not a
            Tensor/Parameter; an input that is not a Tensor.
        ValueError: a `params_init` value whose shape/dtype differs from the graph's parameter; the wrong number of
            inputs, or an input whose shape/dtype differs from the exported one.
    """

    def __init__(self, graph, params_init=None, obf_random_seed=None):
        super().__init__(auto_prefix=False)
        from ..train._mindir_load import MindIRGraph
        if not isinstance(graph, MindIRGraph):
            raise TypeError(f"For 'GraphCell', the argument 'graph' must be a graph loaded by load() from a MindIR "
                            f"file, but got {type(graph).__name__}.")
        if obf_random_seed is not None:
            raise NotImplementedError("Dynamic structure obfuscation is not supported now.")
        if params_init is None:
            params_init = {}
        if not isinstance(params_init, dict):
            raise TypeError(f"For 'GraphCell', the argument 'params_init' must be a dict, but got "
                            f"{type(params_init).__name__}.")
        for k, v in params_init.items():
            if not isinstance(k, str):
                raise TypeError(f"For 'GraphCell', the key of the 'params_init' must be str, but got {type(k)}.")
            if not isinstance(v, Tensor):
                raise TypeError(f"For 'GraphCell', the value of the 'params_init' must be Tensor or Parameter, but "
                                f"got {type(v)}.")
        object.__setattr__(self, "_graph", graph)
        params = {}
        for name, value in graph.parameters.items():
            init = params_init.get(name)
            if init is not None:
                if tuple(init.shape) != tuple(value.shape) or init.dtype != value.dtype:
                    raise ValueError(f"For 'GraphCell', 'params_init' gives '{name}' as {init.dtype}"
                                     f"{list(init.shape)}, but the graph's parameter is {value.dtype}"
                                     f"{list(value.shape)}.")
                value = init
            p = Parameter(value.copy(), name=name, requires_grad=True)
            self.insert_param_to_cell(name, p, check_name_contain_dot=False)
            params[name] = p
        object.__setattr__(self, "_graph_params", params)

    @property
    def graph(self):
        """The loaded MindIRGraph this cell runs."""
        return self._graph

    def construct(self, *inputs):
        g = self._graph
        if len(inputs) != len(g.inputs):
            raise ValueError(f"For 'GraphCell', the graph of '{g.file_name}' takes {len(g.inputs)} input(s), but "
                             f"got {len(inputs)}.")
        for i, (x, (name, shape, dtype)) in enumerate(zip(inputs, g.inputs)):
            if not isinstance(x, Tensor):
                raise TypeError(f"For 'GraphCell', input {i} must be a Tensor, but got {type(x).__name__}.")
            if tuple(x.shape) != tuple(shape) or x.dtype != dtype:
                raise ValueError(f"For 'GraphCell', input {i} ('{name.split(':')[-1]}') must be {dtype}{list(shape)} "
                                 f"as when the graph was exported, but got {x.dtype}{list(x.shape)}.")
        return g.run(inputs, self._graph_params)

    def __repr__(self):
        return f"GraphCell<{self._graph!r}>"

"""`kiln.export` and `kiln.load`: MindSpore's model export (mindspore.export) and MindIR loading (mindspore.load).

    ms.export(net, Tensor(np.ones([1, 1, 28, 28], np.float32)), file_name="model", file_format="MINDIR")
    graph = ms.load("model.mindir")
    out = nn.GraphCell(graph)(x)

The file is MindSpore's MindIR protobuf (kiln/train/_mindir_proto.py): written by Kiln it loads in MindSpore, and
MindIR files written by MindSpore load in Kiln (docs/export.md lists the operators either way).
"""
import os

from .. import _engine
from .. import _atomic_write
from ..common.tensor import Tensor
from . import _kiln_export, _mindir_export, _onnx_export
from ._mindir_load import MindIRGraph, MindIRError, read

__all__ = ["export", "load"]

_FORMATS = ("AIR", "ONNX", "MINDIR")
# Writers of the formats Kiln writes: file_format -> fn(net, inputs, file_name, kwargs).
_WRITERS = {}

# 2 GiB: the largest message protobuf serializes.
_PROTO_LIMIT = 2 ** 31 - 1


def _trace_inputs(inputs):
    if not inputs:
        raise ValueError("For 'export', at least one input of the network must be given (its shape and dtype fix "
                         "the exported graph).")
    for i, x in enumerate(inputs):
        if not isinstance(x, (Tensor, bool, int, float)):
            raise TypeError(f"For 'export', the inputs must be Tensors (or Python bool/int/float, fixed in the "
                            f"graph), but input {i} is {type(x).__name__}.")


def _flat(out):
    """Tensors of a (nested) tuple/list output, in order (ONNX outputs are a flat list)."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _trace(net, inputs, shapes=None, flatten=False):
    """Traces `net(*inputs)` in inference mode: (Graph, names of the tensor inputs). `shapes`: the shapes to trace
    the tensor inputs with (default: theirs); `flatten`: nested tuple outputs become one flat list."""
    from ..nn.cell import Cell
    was_training = net.training if isinstance(net, Cell) else None
    if isinstance(net, Cell):
        net.set_train(False)
    try:
        with _engine.Trace(getattr(net, "__name__", type(net).__name__)) as tr:
            shapes = iter(shapes) if shapes is not None else None
            args = [tr.input(x.shape if shapes is None else next(shapes), x.dtype) if isinstance(x, Tensor) else x
                    for x in inputs]
            out = net(*args)
            outs = _flat(out) if flatten else list(out) if isinstance(out, (tuple, list)) else [out]
            if not outs or not all(isinstance(o, Tensor) for o in outs):
                raise TypeError("For 'export', the network must return a Tensor or a tuple/list of Tensors, but it "
                                f"returned {type(out).__name__}.")
            graph = tr.finish(outs)
    finally:
        if was_training is not None:
            net.set_train(was_training)
    names = _arg_names(net, sum(isinstance(x, Tensor) for x in inputs))
    return graph, names


def _arg_names(net, n):
    """Names of the graph inputs: construct's (or the function's) positional parameter names, else x0, x1, ..."""
    import inspect
    from ..nn.cell import Cell
    fn = type(net).construct if isinstance(net, Cell) else getattr(net, "fn", net)
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if isinstance(net, Cell):  # construct's first parameter is the cell, whatever its name
            params = params[1:]
    except (TypeError, ValueError):
        params = []
    names = params[:n] if len(params) >= n and len(set(params[:n])) == n else [f"x{i}" for i in range(n)]
    return names


def _param_names(net):
    """tensor id -> Parameter name, for the Parameters of `net` (a Cell) or the Parameters a function names."""
    from ..nn.cell import Cell
    out = {}
    if isinstance(net, Cell):
        for p in net.get_parameters():
            out.setdefault(p._id, p.name)
    return out


def _write_mindir(net, inputs, file_name, kwargs):
    graph, names = _trace(net, inputs)
    gname = f"kiln_{type(net).__name__ if not hasattr(net, '__name__') else net.__name__}"
    gname = "".join(c if c.isalnum() or c == "_" else "_" for c in gname)
    model = _mindir_export.build_model(graph, _param_names(net), gname, names)
    custom_func = kwargs.get("custom_func")
    if custom_func is not None:
        if not callable(custom_func):
            raise TypeError(f"For 'export', 'custom_func' must be callable, but got {type(custom_func).__name__}.")
        custom_func(model)
    if model.ByteSize() > _PROTO_LIMIT:
        raise RuntimeError(f"For 'export', the model is {model.ByteSize()} bytes: more than protobuf's 2 GiB "
                           "limit of one MindIR file.")
    if not file_name.endswith(".mindir"):
        file_name += ".mindir"
    d = os.path.dirname(os.path.realpath(file_name))
    os.makedirs(d, exist_ok=True)
    _atomic_write.write_file(file_name, model.SerializeToString())
    return file_name


_WRITERS["MINDIR"] = _write_mindir
_WRITERS["ONNX"] = _onnx_export.write

# Kiln's own deployable format (a Kiln extension, not a MindSpore format): read by the C++ library
# (kiln/deploy.h, examples/cpp/kiln_run_model), written by _kiln_export.
_FORMATS += ("KILN",)
_WRITERS["KILN"] = _kiln_export.write


def export(net, *inputs, file_name, file_format, **kwargs):
    """Exports the network `net` (a Cell or a function) traced on `inputs` as a model file (mindspore.export).

    Args:
        net (Union[Cell, function]): the network; a Cell is traced in inference mode (set_train(False); its
            training flag is restored after).
        inputs (Tensor): the network's inputs; their shapes and dtypes are fixed in the graph (Python bool/int/
            float arguments are fixed as constants). For ONNX, an input made as `Tensor(shape=[None, ...],
            dtype=...)` has a dynamic dimension at each None (dim_param "batch" on axis 0, "dim<k>" on axis k).
        file_name (str): the file to write; ".mindir" / ".onnx" / ".kiln" is appended when missing (MindSpore's rule).
        file_format (str): "MINDIR" (MindSpore's protobuf graph format, loadable by mindspore.load and kiln.load),
            "ONNX" (opset 20, checked with onnx.checker; needs the `onnx` package) or "KILN" (a Kiln extension, not
            in MindSpore: the optimized inference graph and its weights in one file, for the C++ library with no
            Python: kiln::deploy::Model, include/kiln/deploy.h).
        kwargs: `custom_func` (MINDIR only: function of the ModelProto, called before writing: MindSpore's hook to
            edit the model, e.g. `user_info`).

    The graph holds every Parameter of `net` it reads (under the Parameter's name) with its current values; other
    tensors it reads are stored as constants. Operators that can be written are listed in docs/export.md.

    Raises:
        ValueError: `file_format` not one of "AIR", "ONNX", "MINDIR", "KILN", a format Kiln does not write, no
            inputs, an operator with no MindIR / ONNX mapping (named, with the line of the user's code that issued
            it), for "KILN" an operator a deployable model cannot hold (state updates, random ops, prints: named,
            with the user's line), or dynamic (None) input dimensions with MINDIR / KILN or in a network whose graph
            depends on their size.
        TypeError: `net` not a Cell or function, an input that is not a Tensor/bool/int/float, a network that
            does not return Tensors, or `file_name` not a str.
        NotImplementedError: `obf_func` (dynamic obfuscation: MindSpore no longer supports it either).
    """
    if "obf_func" in kwargs:
        raise NotImplementedError("Dynamic model structure obfuscation is no longer supported.")
    if not isinstance(file_name, str):
        raise TypeError(f"For 'export', 'file_name' must be str, but got {type(file_name).__name__}.")
    if not file_name:
        raise ValueError("For 'export', 'file_name' must not be empty.")
    if file_format not in _FORMATS:
        raise ValueError(f"For 'export', 'file_format' must be one of {list(_FORMATS)}, but got {file_format!r}.")
    writer = _WRITERS.get(file_format)
    if writer is None:
        raise ValueError(f"For 'export', Kiln writes the formats {sorted(_WRITERS)}, but got {file_format!r}.")
    for k in ("enc_key", "enc_mode", "dataset", "incremental"):
        if kwargs.get(k):
            raise ValueError(f"For 'export', the option '{k}' is not supported by Kiln.")
    unknown = set(kwargs) - {"custom_func", "enc_key", "enc_mode", "dataset", "incremental"}
    if unknown:
        raise TypeError(f"For 'export', unexpected keyword arguments {sorted(unknown)}.")
    from ..nn.cell import Cell
    if not isinstance(net, Cell) and not callable(net):
        raise TypeError(f"For 'export', 'net' must be a Cell or a function, but got {type(net).__name__}.")
    _trace_inputs(inputs)
    if file_format != "ONNX":
        from .._convert import dynamic_shape
        if any(isinstance(x, Tensor) and dynamic_shape(x) is not None for x in inputs):
            raise ValueError(f"For 'export', inputs with dynamic (None) dimensions are supported for "
                             f"file_format='ONNX' only, but got {file_format!r}.")
    writer(net, inputs, os.path.realpath(file_name), kwargs)


def load(file_name, **kwargs):
    """Loads a MindIR file (mindspore.load): a MindIRGraph to run with `kiln.nn.GraphCell`.

    Files written by `kiln.export` and by MindSpore's `mindspore.export(..., file_format="MINDIR")` (single-graph
    networks whose operators are in docs/export.md) are read.

    Raises:
        ValueError: `file_name` not a str, not ending with ".mindir", or not an existing file (MindSpore's checks).
        RuntimeError (kiln.train.MindIRError): the file is truncated, damaged or not a MindIR model, or uses a
            primitive Kiln cannot run (named, with the node), sub-graphs, or external/compressed parameters.
        NotImplementedError: `obf_func`. ValueError: `dec_key` (encrypted files are not supported).
    """
    if "obf_func" in kwargs:
        raise NotImplementedError("Dynamic model structure obfuscation is no longer supported.")
    if not isinstance(file_name, str):
        raise ValueError(f"For 'load', the argument 'file_name' must be string, but got {type(file_name)}.")
    if not file_name.endswith(".mindir"):
        raise ValueError("For 'load', the argument 'file_name'(MindIR file) should end with '.mindir', please input "
                         f"the correct 'file_name', but got {file_name!r}.")
    if not os.path.isfile(file_name):
        raise ValueError(f"For 'load', the argument 'file_name'(MindIR file) '{file_name}' does not exist, please "
                         "check whether the 'file_name' is correct.")
    if kwargs.get("dec_key") is not None:
        raise ValueError("For 'load', encrypted MindIR files (dec_key) are not supported by Kiln.")
    unknown = set(kwargs) - {"dec_key", "dec_mode"}
    if unknown:
        raise TypeError(f"For 'load', unexpected keyword arguments {sorted(unknown)}.")
    return read(os.path.realpath(file_name))


__all__ += ["MindIRGraph", "MindIRError"]

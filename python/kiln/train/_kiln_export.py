"""`kiln.export(net, *inputs, file_name, file_format="KILN")`: Kiln's own deployable model file (".kiln").

Not a MindSpore format: a Kiln extension, read by the C++ library with no Python (`kiln::deploy::Model::load`,
include/kiln/deploy.h; the example program examples/cpp/kiln_run_model). The file holds the network traced in
inference mode and optimized by Graph mode's passes (the graph a `@jit` call would run), with its weights by name.
See docs/export.md, "C++ deployment".
"""
import os

from .. import _engine
from .. import _atomic_write

EXTENSION = ".kiln"


def _weight_names(graph, param_names):
    """A distinct name per capture of `graph`: the Parameter's name, else `_tensor<k>` (a tensor the network reads
    that is not one of its Parameters); a name given twice (two Parameters with one name) gets a `#<n>` suffix."""
    names, used = [], set()
    for k, t in enumerate(graph.capture_tensors()):
        base = param_names.get(t._id) or f"_tensor{k}"
        name, n = base, 1
        while name in used:
            name, n = f"{base}#{n}", n + 1
        used.add(name)
        names.append(name)
    return names


def write(net, inputs, file_name, kwargs):
    """Traces, optimizes and writes `net`; returns the path written (".kiln" appended when missing).

    ValueError (from the C++ writer) names the node and the user's line for an op a deployable model cannot hold:
    state updates (Assign, optimizer steps), random ops, prints."""
    from ._export_load import _trace, _param_names
    if kwargs.get("custom_func") is not None:
        raise ValueError("For 'export', 'custom_func' edits a MindIR ModelProto and is not supported with "
                         "file_format 'KILN'.")
    graph, input_names = _trace(net, inputs)
    graph.optimize()
    weight_names = _weight_names(graph, _param_names(net))
    output_names = [f"output{i}" for i in range(graph.num_outputs)]
    if not file_name.endswith(EXTENSION):
        file_name += EXTENSION
    os.makedirs(os.path.dirname(os.path.realpath(file_name)), exist_ok=True)
    try:
        data = _engine.deploy_to_bytes(graph, weight_names, list(input_names), output_names)
    except ValueError as e:
        raise ValueError(f"For 'export', the network cannot be written as a Kiln model: {e}") from None
    _atomic_write.write_file(file_name, data)
    return file_name

"""Strategy files (MindSpore's `strategy_ckpt_config={"save_file": ...}` / `strategy_ckpt_save_file`): the layout of
every Parameter of the networks that operator parallel (kiln/parallel/_op_shard.py) ran, in MindSpore's format, so
that per-rank checkpoints (save_checkpoint(..., integrated_save=False)) can be merged or re-sliced offline
(kiln/parallel/checkpoint_transform.py). Decision record: docs/decisions/strategy-files.md.

The format is MindSpore's node_strategy.proto (package mindspore.straspb, proto2), built here from a descriptor
(no generated file), or JSON with the same fields when the file name ends in ".json" (MindSpore 2.10 reads both:
`_build_searched_strategy`):

    ParallelStrategyMap { current_stage; repeated ParallelStrategyItem parallel_strategy_item;   // op strategies
                          repeated ParallelLayoutItem parallel_layout_item; }                     // one per Parameter
    ParallelLayoutItem { param_name; ParallelLayouts parallel_layouts; }
    ParallelLayouts { repeated DevMatrix dev_matrix; repeated TensorMap tensor_map; repeated ParamSplitShape
                      param_split_shape; repeated IndicesOffset indices_offset; field; opt_weight_shard_step;
                      opt_weight_shard_size; }

A layout in MindSpore's convention: dev_matrix is the device matrix whose product is the number of processes (the
repeated copies, when the op uses fewer devices, as its leading dimension: MindSpore's default); tensor_map[d] is -1
(dimension d not cut) or the index of the device-matrix axis that cuts it counted from the right; process r has the
row-major coordinates of r in dev_matrix. Kiln's _Plan keeps the same order (copies leading, row-major), so only the
axis numbering is turned around. A Parameter that no sharded op cuts is written replicated (dev_matrix [n],
tensor_map all -1), as MindSpore writes a Parameter of an op with the default (replicated) strategy.
param_split_shape and indices_offset are empty (even slices only), field 0, opt_weight_shard_step/size 0 (Kiln's
optimizer parallel keeps whole weights, so a weight's layout never holds the optimizer's cut).

When: Kiln plans an op's layout at its first sharded call (PyNative), not at graph compilation, so the file is
written (whole, atomically, by every process, as MindSpore's processes each write theirs) whenever layouts were
added since the last write, at the next optimizer step or merge (_op_shard.release_history), at save_checkpoint of
a Cell, and at exit. The file describes the networks run sharded since the last reset_auto_parallel_context()
(a Parameter name seen twice: the layout recorded last)."""
import atexit
import json
import os
import sys
import weakref

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = []


def _build_messages():
    """The message classes of MindSpore's node_strategy.proto (proto2), in a private descriptor pool."""
    F = descriptor_pb2.FieldDescriptorProto
    fd = descriptor_pb2.FileDescriptorProto(name="kiln_node_strategy.proto", package="mindspore.straspb",
                                            syntax="proto2")
    req, rep = F.LABEL_REQUIRED, F.LABEL_REPEATED

    def msg(name, *fields):
        m = fd.message_type.add(name=name)
        for i, (fname, ftype, label, tname) in enumerate(fields, 1):
            f = m.field.add(name=fname, number=i, type=ftype, label=label)
            if tname:
                f.type_name = ".mindspore.straspb." + tname

    msg("ParallelStrategy", ("dim", F.TYPE_UINT32, rep, None))
    msg("ParallelStrategys", ("stage", F.TYPE_UINT32, req, None),
        ("parallel_strategy", F.TYPE_MESSAGE, rep, "ParallelStrategy"))
    msg("ParallelStrategyItem", ("node_name", F.TYPE_STRING, req, None),
        ("parallel_strategys", F.TYPE_MESSAGE, req, "ParallelStrategys"))
    msg("DevMatrix", ("dim", F.TYPE_UINT32, rep, None))
    msg("TensorMap", ("dim", F.TYPE_INT32, rep, None))
    msg("ParamSplitShape", ("dim", F.TYPE_INT64, rep, None))
    msg("IndicesOffset", ("dim", F.TYPE_INT64, rep, None))
    msg("ParallelLayouts", ("dev_matrix", F.TYPE_MESSAGE, rep, "DevMatrix"),
        ("tensor_map", F.TYPE_MESSAGE, rep, "TensorMap"), ("param_split_shape", F.TYPE_MESSAGE, rep, "ParamSplitShape"),
        ("indices_offset", F.TYPE_MESSAGE, rep, "IndicesOffset"), ("field", F.TYPE_INT32, req, None),
        ("opt_weight_shard_step", F.TYPE_INT32, req, None), ("opt_weight_shard_size", F.TYPE_INT32, req, None))
    msg("ParallelLayoutItem", ("param_name", F.TYPE_STRING, req, None),
        ("parallel_layouts", F.TYPE_MESSAGE, req, "ParallelLayouts"))
    msg("ParallelStrategyMap", ("current_stage", F.TYPE_UINT32, req, None),
        ("parallel_strategy_item", F.TYPE_MESSAGE, rep, "ParallelStrategyItem"),
        ("parallel_layout_item", F.TYPE_MESSAGE, rep, "ParallelLayoutItem"))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName("mindspore.straspb." + name))
            for name in ("ParallelStrategyMap", "ParallelLayouts")}


_MSG = _build_messages()
ParallelStrategyMap, ParallelLayouts = _MSG["ParallelStrategyMap"], _MSG["ParallelLayouts"]

_roots = weakref.WeakValueDictionary()   # id -> Cell whose construct ran a first sharded call (its Parameters)
_extra = weakref.WeakValueDictionary()   # id -> sliced Parameter not reached from a root (optimizer states, ...)
_ops = {}                                # id(prim) -> (ref, node name, strategies), in order of first sharded call
_dirty = [False]
_written = [None]                        # (path, only_trainable) of the last write: a new target is written too


# ------------------------------------------------------------------------------------------------ recording
def reset():
    """Forgets the recorded layouts (reset_auto_parallel_context: a strategy file describes the networks run since
    the last reset)."""
    _roots.clear()
    _extra.clear()
    _ops.clear()
    _dirty[0] = False
    _written[0] = None
    _target[0] = None


def note_op(prim, name, strategies):
    """Records a sharded primitive's strategy (the file's parallel_strategy_item) the first time it runs sharded."""
    held = _ops.get(id(prim))
    if held is None or held[0]() is not prim:  # new, or another object at a freed primitive's address
        try:
            ref = weakref.ref(prim)
        except TypeError:  # not weak-referenceable: hold it (until reset_auto_parallel_context)
            ref = (lambda obj: lambda: obj)(prim)
        _ops[id(prim)] = (ref, f"{name}-op{len(_ops)}", tuple(tuple(int(v) for v in s) for s in strategies))
        _dirty[0] = True


def note_sliced(p):
    """Records a Parameter just sliced (or an optimizer state just cut like its Parameter) and the Cells whose
    construct runs now (their other Parameters are written replicated)."""
    from ._attribute_reads import _run_construct_code
    if not _run_construct_code:
        from ..nn.cell import Cell
        _run_construct_code.append(Cell._run_construct.__code__)
    code, f, found = _run_construct_code[0], sys._getframe(1), False
    while f is not None:
        if f.f_code is code:
            cell = f.f_locals.get("self")
            if cell is not None:
                _roots.pop(id(cell), None)  # re-inserted: the Cells recorded last come first in collect()
                _roots[id(cell)] = cell
                found = True
        f = f.f_back
    if not found or p.requires_grad is False:
        _extra.pop(id(p), None)
        _extra[id(p)] = p
    _dirty[0] = True


def layout_of_parameter(p, world):
    """(dev_matrix, tensor_map) of Parameter p in MindSpore's convention (module docstring)."""
    lay = p.__dict__.get("_kiln_op_layout")
    if lay is None:
        return [world], [-1] * len(p.shape)
    dev = list(lay.plan.dev)
    full = ([lay.plan.rep] if lay.plan.rep > 1 else []) + dev
    return full, [len(dev) - 1 - a if a is not None else -1 for a in lay.tmap]


def collect(only_trainable=True):
    """[(name, dev_matrix, tensor_map)] of every Parameter of the recorded Cells and every recorded sliced
    Parameter (requires_grad ones only when `only_trainable`), each name once: the Cells recorded last first (a
    second network with the same Parameter names, run after the first, gives the layouts)."""
    from ._op_shard import _world
    world = _world()[0]
    out, seen = [], set()
    params = []
    for cell in reversed(list(_roots.values())):
        params.extend(p for _, p in cell.parameters_and_names())
    params.extend(reversed(list(_extra.values())))
    for p in params:
        if p.name in seen or (only_trainable and not p.requires_grad):
            continue
        seen.add(p.name)
        dev, tmap = layout_of_parameter(p, world)
        out.append((p.name, dev, tmap))
    return out


# ------------------------------------------------------------------------------------------------ writing
_target = [None]  # (path, only_trainable) of AutoParallel.save_param_strategy_file, set at its calls


def set_target(path, only_trainable):
    """The file of the AutoParallel being called (used when strategy_ckpt_config names none)."""
    if _target[0] != (path, only_trainable):
        _target[0] = (path, only_trainable)
        _dirty[0] = True


def _options():
    from .._parallel_context import get_auto_parallel_context
    cfg = get_auto_parallel_context("strategy_ckpt_config")
    if not cfg["save_file"] and _target[0] is not None:
        return _target[0]
    return cfg["save_file"], cfg["only_trainable_params"]


def encode(items, ops, json_format):
    """The bytes of a strategy file: `items` [(name, dev_matrix, tensor_map)], `ops` [(node name, strategies)]."""
    if json_format:
        doc = {"current_stage": 0,
               "parallel_strategy_item": {n: {"stage": 0, "parallel_strategy": [list(s) for s in st]}
                                          for n, st in ops},
               "parallel_layout_item": {n: {"dev_matrix": list(d), "tensor_map": list(t), "param_split_shape": [],
                                            "indices_offset": [], "field": 0, "opt_weight_shard_step": 0,
                                            "opt_weight_shard_size": 0} for n, d, t in items}}
        return json.dumps(doc, indent=1).encode()
    m = ParallelStrategyMap(current_stage=0)
    for n, st in ops:
        it = m.parallel_strategy_item.add(node_name=n)
        it.parallel_strategys.stage = 0
        for s in st:
            it.parallel_strategys.parallel_strategy.add().dim.extend(s)
    for n, d, t in items:
        it = m.parallel_layout_item.add(param_name=n)
        lay = it.parallel_layouts
        lay.dev_matrix.add().dim.extend(d)
        lay.tensor_map.add().dim.extend(t)
        lay.param_split_shape.add()
        lay.indices_offset.add()
        lay.field, lay.opt_weight_shard_step, lay.opt_weight_shard_size = 0, 0, 0
    return m.SerializeToString()


def write(path, only_trainable=True):
    """Writes the layouts recorded so far to `path` (MindSpore's protobuf, or JSON for a name ending in '.json')."""
    from .. import _atomic_write
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    ops = [(n, st) for ref, n, st in _ops.values() if ref() is not None]
    data = encode(collect(only_trainable), ops, path.endswith(".json"))
    _atomic_write.write_file(path, data)


def flush():
    """Writes the strategy file when set_auto_parallel_context names one and layouts were added since the last
    write, or the file (or only_trainable_params) changed since then (a no-op otherwise)."""
    if not _dirty[0] and _written[0] is None:
        return
    path, only_trainable = _options()
    if not path or (not _dirty[0] and _written[0] == (path, only_trainable)):
        return
    _dirty[0] = False
    _written[0] = (path, only_trainable)
    write(path, only_trainable)


def _flush_at_exit():
    try:
        flush()
    except Exception as e:  # noqa: BLE001 (at exit: report, never raise)
        print(f"kiln: could not write the strategy file at exit: {e}", file=sys.stderr)


atexit.register(_flush_at_exit)

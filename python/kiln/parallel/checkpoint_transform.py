"""MindSpore's distributed-checkpoint helpers (`mindspore/parallel/checkpoint_transform.py`, 2.10): merging and
re-slicing the per-rank checkpoints that operator parallel writes (save_checkpoint(net, f, integrated_save=False):
each process's slices) by the strategy files it writes (kiln/parallel/_strategy_file.py).

    build_searched_strategy(strategy_filename)                 -> {name: ParallelLayouts}
    merge_sliced_parameter(sliced_parameters, strategy=None)   -> the whole Parameter
    rank_list_for_transform(rank_id, src_strategy_file=None, dst_strategy_file=None)
    transform_checkpoint_by_rank(rank_id, checkpoint_files_map, save_checkpoint_file_name, src_strategy_file=None,
                                 dst_strategy_file=None)
    transform_checkpoints(src_checkpoints_dir, dst_checkpoints_dir, ckpt_prefix, src_strategy_file=None,
                          dst_strategy_file=None, process_num=1, output_format="ckpt")
    load_distributed_checkpoint(network, checkpoint_filenames, predict_strategy=None, train_strategy_filename=None,
                                strict_load=False, dec_key=None, dec_mode="AES-GCM", format="ckpt", ...)

A strategy file None means "not sliced" (whole weights in one file, rank 0's). Re-slicing is done in NumPy, one
Parameter at a time: the destination block of a rank is assembled from the source blocks that overlap it (each
read from the destination rank itself, or from a rank of its copy of the device matrix: MindSpore's choice), so any
even layout goes to any other, whatever the device matrices (MindSpore builds the same result from a stack of
redistribution operators). Layouts follow MindSpore's convention (dev_matrix, tensor_map counted from the right, -1
not cut; _strategy_file.py).

Not provided (ValueError naming the Parameter or the argument): uneven slices (param_split_shape), embedding
fields (field > 0), optimizer-sharded weights (opt_weight_shard_size > 0), layouts with several axes per dimension,
pipeline-merged strategy files (merge_pipeline_strategys), safetensors directories.
"""
import glob
import itertools
import os
import warnings

import numpy as np

from . import _strategy_file

__all__ = ["build_searched_strategy", "merge_sliced_parameter", "rank_list_for_transform",
           "transform_checkpoint_by_rank", "transform_checkpoints", "load_distributed_checkpoint"]


# ------------------------------------------------------------------------------------------------ strategy files
def build_searched_strategy(strategy_filename):
    """The layout of each Parameter in a strategy file (MindSpore's protobuf ParallelStrategyMap, or JSON when the
    name ends in '.json'), as written by set_auto_parallel_context(strategy_ckpt_config={"save_file": ...}).

    Returns:
        dict: parameter name -> ParallelLayouts message (fields dev_matrix[0].dim, tensor_map[0].dim,
        param_split_shape[0].dim, field, opt_weight_shard_step, opt_weight_shard_size); {} for a file without
        layouts.

    Raises:
        TypeError: `strategy_filename` not a str; a file that is neither protobuf nor JSON.
        ValueError: no such file; an empty file.
    """
    if strategy_filename is None:
        return None
    if not isinstance(strategy_filename, str):
        raise TypeError(f"For 'build_searched_strategy', the argument 'strategy_filename' should be string, but got "
                        f"{type(strategy_filename)}.")
    if not os.path.isfile(strategy_filename):
        raise ValueError(f"For 'build_searched_strategy', no such strategy file: {strategy_filename}. Please check "
                         f"whether the 'strategy_filename' exists.")
    if os.path.getsize(strategy_filename) == 0:
        raise ValueError(f"For 'build_searched_strategy', the strategy file {strategy_filename} should not be empty. "
                         f"Please check whether the 'strategy_filename' is correct.")
    if strategy_filename.endswith(".json"):
        import json
        try:
            with open(strategy_filename, encoding="utf-8") as f:
                doc = json.load(f)
        except ValueError as e:
            raise TypeError(f"For 'build_searched_strategy', the strategy file {strategy_filename} (a name ending in "
                            f"'.json') is not JSON: {e}") from e
        out = {}
        for name, item in (doc.get("parallel_layout_item") or {}).items():
            lay = _strategy_file.ParallelLayouts(field=item.get("field", 0),
                                                 opt_weight_shard_step=item.get("opt_weight_shard_step", 0),
                                                 opt_weight_shard_size=item.get("opt_weight_shard_size", 0))
            lay.dev_matrix.add().dim.extend(item.get("dev_matrix", []))
            lay.tensor_map.add().dim.extend(item.get("tensor_map", []))
            lay.param_split_shape.add().dim.extend(item.get("param_split_shape", []))
            lay.indices_offset.add().dim.extend(item.get("indices_offset", []))
            out[name] = lay
        return out
    from google.protobuf.message import DecodeError
    m = _strategy_file.ParallelStrategyMap()
    with open(strategy_filename, "rb") as f:
        data = f.read()
    try:
        m.ParseFromString(data)
    except DecodeError as e:
        raise TypeError("The strategy file type should be one of json or protobuf. When the file name extension is "
                        f"not '.json', the file is considered as a protobuf file ({strategy_filename}: {e}).") from e
    return {it.param_name: it.parallel_layouts for it in m.parallel_layout_item}


class _Layout:
    """A Parameter's layout: dev (device matrix, product = the processes), tmap (MindSpore's tensor map)."""
    __slots__ = ("dev", "tmap")

    def __init__(self, dev, tmap):
        self.dev, self.tmap = [int(d) for d in dev], [int(t) for t in tmap]

    @property
    def devices(self):
        return int(np.prod(self.dev)) if self.dev else 1

    def counts(self):
        """Per dimension, the number of slices."""
        return [1 if t == -1 else self.dev[len(self.dev) - 1 - t] for t in self.tmap]

    def coords(self, rank):
        """Row-major coordinates of rank in dev."""
        c, q = [0] * len(self.dev), rank % self.devices
        for i in range(len(self.dev) - 1, -1, -1):
            c[i], q = q % self.dev[i], q // self.dev[i]
        return c

    def block(self, rank):
        """Per dimension, the index of rank's slice."""
        c = self.coords(rank)
        return tuple(0 if t == -1 else c[len(self.dev) - 1 - t] for t in self.tmap)


_WHOLE = None  # a missing strategy: one device, nothing cut


def _layout_from_message(name, lay, what):
    """_Layout of one ParallelLayouts message (or a MindSpore predict-strategy list); ValueError for what Kiln does
    not re-slice."""
    if isinstance(lay, (list, tuple)):
        dev, tmap, split = list(lay[0]), list(lay[1]), list(lay[2]) if len(lay) > 2 else []
        field, opt_size = (int(lay[3]) if len(lay) > 3 else 0), 0
    else:
        if len(lay.dev_matrix) < 1 or len(lay.tensor_map) < 1:
            raise ValueError(f"For '{what}', the layout of parameter '{name}' has no dev_matrix / tensor_map.")
        if len([t for t in lay.tensor_map if list(t.dim)]) > 1:
            raise ValueError(f"For '{what}', the layout of parameter '{name}' cuts a dimension along several device "
                             f"axes (a Layout strategy), which Kiln does not re-slice.")
        dev, tmap = list(lay.dev_matrix[0].dim), list(lay.tensor_map[0].dim)
        split = list(lay.param_split_shape[0].dim) if len(lay.param_split_shape) else []
        field, opt_size = int(lay.field), int(lay.opt_weight_shard_size)
    if split:
        raise ValueError(f"For '{what}', parameter '{name}' is sliced unevenly (param_split_shape {split}), which "
                         f"Kiln does not support.")
    if field > 0:
        raise ValueError(f"For '{what}', parameter '{name}' has an embedding field layout (field {field}), which "
                         f"Kiln does not support.")
    if opt_size > 0:
        raise ValueError(f"For '{what}', parameter '{name}' is sliced by optimizer parallel (opt_weight_shard_size "
                         f"{opt_size}), which Kiln does not re-slice.")
    if any(t < -1 or t >= len(dev) for t in tmap) or any(d < 1 for d in dev):
        raise ValueError(f"For '{what}', parameter '{name}' has an invalid layout: dev_matrix {dev}, tensor_map "
                         f"{tmap}.")
    return _Layout(dev, tmap)


def _layouts(strategy_file, what):
    """{name: _Layout} of a strategy file (a path, or a dict name -> ParallelLayouts), or None for None."""
    if strategy_file is None:
        return _WHOLE
    if not isinstance(strategy_file, (str, dict)):
        raise TypeError(f"For '{what}', a strategy file must be a str (or None), but got "
                        f"{type(strategy_file).__name__}.")
    strategy = build_searched_strategy(strategy_file) if isinstance(strategy_file, str) else strategy_file
    out = {}
    for name, lay in strategy.items():
        out[name] = _layout_from_message(name, lay, what)
    if out:
        devices = {n: lay.devices for n, lay in out.items()}
        if len(set(devices.values())) > 1:
            raise ValueError(f"For '{what}', the strategy file {strategy_file} mixes device counts {devices} (a "
                             f"pipeline-merged file, which Kiln does not re-slice).")
    return out


def _device_num(layouts):
    if not layouts:
        return 1
    return next(iter(layouts.values())).devices


# ------------------------------------------------------------------------------------------------ slices
def _as_numpy(t):
    """(float32/other NumPy array, Kiln dtype) of a Tensor (bfloat16 read as float32)."""
    from ..common import dtype as mstype
    from ..ops import _kernels
    if t.dtype == mstype.bfloat16:
        return _kernels.cast(t, mstype.float32).asnumpy(), t.dtype
    return t.asnumpy(), t.dtype


def _to_tensor(arr, dtype):
    from ..common.tensor import Tensor
    from ..ops import _kernels
    t = Tensor(np.ascontiguousarray(arr))
    return t if t.dtype == dtype else _kernels.cast(t, dtype)


def _source_ranks(src, full_shape, dst, dst_rank, src_devices):
    """{src rank: [(src slice ranges, dst slice ranges)]}: the source blocks that overlap dst_rank's block. Each is
    read from the rank that holds it at dst_rank's own coordinates along the device axes that do not cut the
    Parameter (its coordinates in the source device matrix being those of dst_rank % the source device count), as
    MindSpore picks them: dst_rank itself when it holds the block, else a rank of its copy."""
    src_counts = src.counts()
    dst_counts = dst.counts() if dst is not None else [1] * len(full_shape)
    dst_blk = dst.block(dst_rank) if dst is not None else (0,) * len(full_shape)
    lo = [b * (n // c) for b, n, c in zip(dst_blk, full_shape, dst_counts)]
    hi = [(b + 1) * (n // c) for b, n, c in zip(dst_blk, full_shape, dst_counts)]
    size = [n // c for n, c in zip(full_shape, src_counts)]
    home = src.coords(dst_rank % src_devices)
    out = {}
    for blk in itertools.product(*[range(a // s, (b - 1) // s + 1) for a, b, s in zip(lo, hi, size)]):
        c = list(home)
        for d, t in enumerate(src.tmap):
            if t != -1:
                c[len(src.dev) - 1 - t] = blk[d]
        r = 0
        for i, v in enumerate(c):
            r = r * src.dev[i] + v
        s_lo = [b * s for b, s in zip(blk, size)]
        a = [max(x, y) for x, y in zip(s_lo, lo)]
        b = [min(x + s, y) for x, s, y in zip(s_lo, size, hi)]
        out.setdefault(r, []).append((tuple(slice(x - o, y - o) for x, y, o in zip(a, b, s_lo)),
                                      tuple(slice(x - o, y - o) for x, y, o in zip(a, b, lo))))
    return out, [y - x for x, y in zip(lo, hi)]


def _full_shape(name, src, slice_shape, origin, what):
    if src is None:
        return list(slice_shape)
    if len(src.tmap) != len(slice_shape):
        raise ValueError(f"For '{what}', the strategy gives parameter '{name}' a tensor map of {len(src.tmap)} "
                         f"dimensions ({src.tmap}), but its slice in {origin} has shape {list(slice_shape)}: the "
                         f"strategy file and the checkpoints are of different models.")
    return [s * c for s, c in zip(slice_shape, src.counts())]


def _check_dst(name, dst, full_shape, what):
    if dst is None:
        return
    if len(dst.tmap) != len(full_shape):
        raise ValueError(f"For '{what}', the destination strategy gives parameter '{name}' a tensor map of "
                         f"{len(dst.tmap)} dimensions ({dst.tmap}), but its whole shape is {full_shape}: the "
                         f"strategy files are of different models.")
    for n, c in zip(full_shape, dst.counts()):
        if n % c:
            raise ValueError(f"For '{what}', parameter '{name}' (whole shape {full_shape}) can not be cut "
                             f"{dst.counts()} by the destination strategy (dev_matrix {dst.dev}, tensor_map "
                             f"{dst.tmap}).")


def _reslice(name, read, src, dst, dst_rank, src_devices, what, probe=0):
    """dst_rank's block (NumPy) of parameter `name`; read(src_rank) -> (array, origin) of that rank's slice; the
    slice of rank `probe` gives the slice shape."""
    first, origin = read(probe)
    full = _full_shape(name, src, first.shape, origin, what)
    _check_dst(name, dst, full, what)
    if src is None:
        src = _Layout([1], [-1] * len(full))
        src_devices = 1
    pieces, shape = _source_ranks(src, full, dst, dst_rank, src_devices)
    want = [n // c for n, c in zip(full, src.counts())]
    out = np.empty(shape, first.dtype)
    for r, parts in pieces.items():
        arr, origin = read(r)
        if list(arr.shape) != want:
            raise ValueError(f"For '{what}', the slice of parameter '{name}' in {origin} has shape "
                             f"{list(arr.shape)}, but the strategy (dev_matrix {src.dev}, tensor_map {src.tmap}, "
                             f"whole shape {full}) gives rank {r} a slice of shape {want}.")
        for s_idx, d_idx in parts:
            out[d_idx] = arr[s_idx]
    return out


# ------------------------------------------------------------------------------------------------ merge
def merge_sliced_parameter(sliced_parameters, strategy=None):
    """Merges the slices of one Parameter (MindSpore 2.10's merge_sliced_parameter).

    Args:
        sliced_parameters (list[Parameter]): the slices in order of rank id (one per process of the training job).
        strategy (dict, optional): parameter name -> layout (build_searched_strategy's result). None: the slices
            are concatenated along axis 0.

    Returns:
        Parameter: the whole value, with the slices' name, requires_grad and layerwise_parallel (bfloat16 slices give
        a float32 Parameter, as in MindSpore).

    Raises:
        TypeError: `sliced_parameters` not a list or an element not a Parameter; `strategy` not a dict.
        ValueError: an empty list; slices of different names, ranks or shapes (beyond axis 0); a number of slices
            other than the strategy's device count; a layout Kiln does not support (module docstring).
        KeyError: the parameter's name is not in `strategy`.
    """
    from ..common.parameter import Parameter
    from ..common import dtype as mstype
    if not isinstance(sliced_parameters, list):
        raise TypeError("For 'merge_sliced_parameter', the argument 'sliced_parameters' should be list, but got "
                        f"{type(sliced_parameters)}.")
    if not sliced_parameters:
        raise ValueError("For 'merge_sliced_parameter', the argument 'sliced_parameters' should not be empty.")
    if strategy and not isinstance(strategy, dict):
        raise TypeError(f"For 'merge_sliced_parameter', the argument 'strategy' should be dict, but got "
                        f"{type(strategy)}.")
    for i, p in enumerate(sliced_parameters):
        if not isinstance(p, Parameter):
            raise TypeError("For 'merge_sliced_parameter', the element in 'sliced_parameters' should be "
                            f"'Parameter', but got {type(p)} at index {i}.")
    name, shape = sliced_parameters[0].name, tuple(sliced_parameters[0].shape)
    even = True
    for i, p in enumerate(sliced_parameters):
        s = tuple(p.shape)
        if p.name != name or len(s) != len(shape) or s[1:] != shape[1:]:
            raise ValueError("For 'merge_sliced_parameter', please make sure that the elements in 'slice_parameters' "
                             "have the same name, dimension length and shape except 0 axis. The name, dimension "
                             f"length, shape except 0 axis should be {name}, {len(shape)}, {shape[1:]}, but got name: "
                             f"{p.name}, dimension length: {len(s)}, shape except 0 axis: {s[1:]} at index {i}.")
        even = even and s == shape
    data = [_as_numpy(p)[0] for p in sliced_parameters]
    if not strategy:
        merged = np.concatenate(data)
    else:
        if name not in strategy:
            raise KeyError(f"For 'merge_sliced_parameter', the parameter name {name} should be a key in the "
                           "'strategy'. Please check 'sliced_parameter' and 'strategy'.")
        layout = _layout_from_message(name, strategy[name], "merge_sliced_parameter")
        if len(data) != layout.devices:
            raise ValueError("For 'merge_sliced_parameter', the length of 'sliced_parameters' should be equal to "
                             f"device_count. The length of 'sliced_parameters' is {len(data)}, but device_count is "
                             f"{layout.devices}.")
        if not even:
            raise ValueError("For 'merge_sliced_parameter', the shape of every parameter in 'sliced_parameters' "
                             "should be the same when slice manner is even.")
        merged = _reslice(name, lambda r: (data[r], f"'sliced_parameters'[{r}]"), layout, None, 0, layout.devices,
                          "merge_sliced_parameter")
    p0 = sliced_parameters[0]
    dtype = mstype.float32 if p0.dtype == mstype.bfloat16 else p0.dtype
    return Parameter(_to_tensor(merged, dtype), name, p0.requires_grad, p0.layerwise_parallel)


# ------------------------------------------------------------------------------------------------ transforms
def _src_dst(src_strategy_file, dst_strategy_file, what):
    src, dst = _layouts(src_strategy_file, what), _layouts(dst_strategy_file, what)
    if src is not None and not src:
        raise ValueError(f"For '{what}', the src_strategy_file {src_strategy_file} holds no parameter layouts.")
    return src, dst


def _needed(rank_id, src, dst, what):
    """The source ranks whose slices make rank_id's destination checkpoint."""
    if src is None:
        return {0}
    src_devices, need = _device_num(src), set()
    for name, lay in src.items():
        if dst is not None and name not in dst:
            continue
        d = dst.get(name) if dst is not None else None
        full = [c * 2 ** 20 for c in lay.counts()]  # any shape the slices divide: only which blocks overlap counts
        if d is not None:
            if len(d.tmap) != len(lay.tmap):
                raise ValueError(f"For '{what}', parameter '{name}' has {len(lay.tmap)} dimensions in the source "
                                 f"strategy and {len(d.tmap)} in the destination one: the strategy files are of "
                                 f"different models.")
            full = [n * c for n, c in zip(full, d.counts())]
        need.update(_source_ranks(lay, full, d, rank_id, src_devices)[0])
    return need


def rank_list_for_transform(rank_id, src_strategy_file=None, dst_strategy_file=None):
    """The source ranks whose checkpoints transform_checkpoint_by_rank needs to build rank `rank_id`'s checkpoint
    under the destination strategy (MindSpore 2.10's rank_list_for_transform).

    Args:
        rank_id (int): the destination rank.
        src_strategy_file (str): the training strategy file; None: the source is not sliced ([0] is returned).
        dst_strategy_file (str): the destination strategy file; None: whole weights.

    Returns:
        list[int]: the source ranks, in descending order (as MindSpore 2.10 returns them).

    Raises:
        TypeError: rank_id not an int; a strategy file not a str.
        ValueError: a strategy file that is missing, empty, without layouts, or of another model.
    """
    what = "rank_list_for_transform"
    if isinstance(rank_id, bool) or not isinstance(rank_id, int):
        raise TypeError("The rank_id should be a int.")
    if src_strategy_file is None:
        return [0]
    src, dst = _src_dst(src_strategy_file, dst_strategy_file, what)
    return sorted(_needed(rank_id, src, dst, what), reverse=True)


class _Files:
    """The per-rank checkpoint files, each read once (name -> (NumPy array, dtype, requires_grad))."""

    def __init__(self, files, what):
        self.files, self.what, self.cache = files, what, {}

    def get(self, rank):
        if rank not in self.files:
            raise ValueError(f"For '{self.what}', the checkpoint file of rank {rank} is needed but missing (given: "
                             f"ranks {sorted(self.files)}).")
        if rank not in self.cache:
            from ..train.serialization import load_checkpoint
            ck = load_checkpoint(self.files[rank])
            self.cache[rank] = {n: _as_numpy(p) + (p.requires_grad,) for n, p in ck.items()
                                if not isinstance(p, str)}
        return self.cache[rank]

    def slice(self, rank, name):
        d = self.get(rank)
        if name not in d:
            raise ValueError(f"For '{self.what}', parameter '{name}' is not in the checkpoint file "
                             f"{self.files[rank]} of rank {rank}.")
        return d[name][0], f"the checkpoint file {self.files[rank]} (rank {rank})"


def _transform_rank(rank_id, files, src, dst, what, src_name):
    """[{'name', 'data'}] of rank_id's destination checkpoint."""
    from ..common.parameter import Parameter
    src_devices = _device_num(src) if src is not None else 1
    home = rank_id % src_devices if (rank_id % src_devices) in files.files else min(files.files)
    names = list(files.get(home))
    if src is not None and not any(n in src for n in names):
        raise ValueError(f"For '{what}', none of the parameters of the checkpoint file {files.files[home]} "
                         f"({names[:5]}{'...' if len(names) > 5 else ''}) is in the source strategy {src_name} "
                         f"({sorted(src)[:5]}{'...' if len(src) > 5 else ''}): the strategy file is of another "
                         f"model.")
    out = []
    for name in names:
        arr, dtype, grad = files.get(home)[name]
        in_src = src is not None and name in src
        if in_src or (src is None and dst is not None and name in dst):  # src None: whole in rank 0's file
            if in_src and dst is not None and name not in dst:
                raise ValueError(f"For '{what}', parameter '{name}' is in the source strategy but not in the "
                                 f"destination strategy: the strategy files are of different models.")
            lay = src[name] if in_src else None
            d = dst.get(name) if dst is not None else None
            arr = _reslice(name, lambda r, n=name: files.slice(r, n), lay, d, rank_id, src_devices, what, home)
        elif src is not None and len(files.files) > 1:  # not in the strategy: whole on every rank (same shape)
            for r in files.files:
                if r in files.cache and name in files.cache[r] and files.cache[r][name][0].shape != arr.shape:
                    raise ValueError(f"For '{what}', parameter '{name}' is not in the source strategy, but its "
                                     f"shape differs between rank {home} ({list(arr.shape)}) and rank {r} "
                                     f"({list(files.cache[r][name][0].shape)}): the strategy file is of another "
                                     f"model.")
        out.append({"name": name, "data": Parameter(_to_tensor(arr, dtype), name, grad)})
    return out


def _check_strategy_path(path, what, arg):
    if path is not None and not isinstance(path, str):
        raise TypeError(f"For '{what}', '{arg}' must be a str or None, but got {type(path).__name__}.")
    if path and os.path.dirname(path) and not os.path.exists(os.path.dirname(path)):
        raise ValueError(f"The director of {arg}: {path} is not exists.")


def transform_checkpoint_by_rank(rank_id, checkpoint_files_map, save_checkpoint_file_name, src_strategy_file=None,
                                 dst_strategy_file=None):
    """Writes rank `rank_id`'s checkpoint under the destination strategy from the source ranks' checkpoints
    (MindSpore 2.10's transform_checkpoint_by_rank). Parameters not in the source strategy are copied from the file
    of rank rank_id % (source device count) (the lowest given rank when that one is not given).

    Args:
        rank_id (int): the destination rank.
        checkpoint_files_map (dict): source rank -> its checkpoint file (at least rank_list_for_transform's ranks).
        save_checkpoint_file_name (str): the file to write (ends with '.ckpt').
        src_strategy_file, dst_strategy_file (str): the strategy files; None: not sliced (whole weights).

    Raises:
        TypeError: rank_id not an int; checkpoint_files_map not a dict; save_checkpoint_file_name or a strategy
            file not a str.
        ValueError: save_checkpoint_file_name not ending with '.ckpt'; a missing file; a needed rank missing from
            the map; a strategy file of another model or shapes that disagree with it (naming the parameter and the
            file).
    """
    what = "transform_checkpoint_by_rank"
    if not isinstance(checkpoint_files_map, dict):
        raise TypeError("The checkpoint_files_map should be a dict.")
    if isinstance(rank_id, bool) or not isinstance(rank_id, int):
        raise TypeError("The rank_id should be a int.")
    if not isinstance(save_checkpoint_file_name, str):
        raise TypeError("The save_checkpoint_file_name should be a str.")
    if not save_checkpoint_file_name.endswith(".ckpt"):
        raise ValueError(f"The save_checkpoint_file_name {save_checkpoint_file_name} should end with .ckpt")
    _check_strategy_path(src_strategy_file, what, "src_strategy_file")
    _check_strategy_path(dst_strategy_file, what, "dst_strategy_file")
    for rank, local_file in checkpoint_files_map.items():
        if not isinstance(local_file, str) or not os.path.exists(local_file):
            raise ValueError(f"Checkpoint file {local_file} in rank {rank} not exits: ")
    if not checkpoint_files_map:
        raise ValueError(f"For '{what}', 'checkpoint_files_map' is empty.")
    src, dst = _src_dst(src_strategy_file, dst_strategy_file, what)
    files = _Files(dict(checkpoint_files_map), what)
    for r in _needed(rank_id, src, dst, what):
        files.get(r)
    params = _transform_rank(rank_id, files, src, dst, what, src_strategy_file)
    from ..train.serialization import save_checkpoint
    d = os.path.dirname(save_checkpoint_file_name)
    if d:
        os.makedirs(d, exist_ok=True)
    save_checkpoint(params, save_checkpoint_file_name)


def _rank_files(src_checkpoints_dir, what):
    """{rank: the last .ckpt file (lexicographic) of src_checkpoints_dir/rank_<rank>/}."""
    out, safetensors = {}, False
    for d in glob.glob(os.path.join(src_checkpoints_dir, "rank_[0-9]*")):
        tail = d.rsplit("rank_", 1)[-1]
        if not os.path.isdir(d) or not tail.isdigit():
            continue
        files = sorted(f for f in glob.glob(os.path.join(d, "*.ckpt")) if os.path.isfile(f))
        if files:
            out[int(tail)] = files[-1]
        safetensors = safetensors or bool(glob.glob(os.path.join(d, "*.safetensors")))
    if safetensors:
        raise ValueError(f"For '{what}', the 'src_checkpoints_dir' {src_checkpoints_dir} holds .safetensors files: "
                         f"Kiln transforms .ckpt checkpoints only.")
    if not out:
        raise ValueError(f"For '{what}', the 'src_checkpoints_dir' can not be empty (no rank_<i>/*.ckpt in "
                         f"{src_checkpoints_dir}).")
    return out


def transform_checkpoints(src_checkpoints_dir, dst_checkpoints_dir, ckpt_prefix, src_strategy_file=None,
                          dst_strategy_file=None, process_num=1, output_format="ckpt"):
    """Re-slices a training job's per-rank checkpoints for another layout (MindSpore 2.10's transform_checkpoints):
    src_checkpoints_dir/rank_<i>/*.ckpt (the last file in lexicographic order of each rank's directory) become
    dst_checkpoints_dir/rank_<j>/<ckpt_prefix><j>.ckpt for every rank j of the destination strategy (one file,
    rank_0, when dst_strategy_file is None: whole weights).

    Args:
        src_checkpoints_dir (str): the source directory.
        dst_checkpoints_dir (str): the destination directory (made if missing).
        ckpt_prefix (str): the destination file name prefix.
        src_strategy_file, dst_strategy_file (str): the strategy files; None: not sliced.
        process_num (int): accepted (>= 1); Kiln converts in this process.
        output_format (str): 'ckpt' (a .ckpt source can only give .ckpt, as in MindSpore).

    Raises:
        NotADirectoryError: src_checkpoints_dir not a directory, or dst_checkpoints_dir a file.
        TypeError: ckpt_prefix or dst_checkpoints_dir not a str; a strategy file not a str.
        ValueError: no rank_<i>/*.ckpt files; a blank dst_checkpoints_dir; process_num not an int >= 1; a rank whose checkpoint is needed but missing ("The checkpoint file
            of rank{i} is needed for converting rank{j}'s checkpoint, but it is missing."); output_format other
            than 'ckpt'; a strategy file of another model or checkpoints whose shapes disagree with it (naming the
            parameter and the file).
    """
    what = "transform_checkpoints"
    if not isinstance(src_checkpoints_dir, str) or not os.path.isdir(src_checkpoints_dir):
        raise NotADirectoryError(f"src_checkpoints_dir {src_checkpoints_dir} is not a directory.")
    if not isinstance(ckpt_prefix, str):
        raise TypeError("The ckpt_prefix should be a str.")
    if output_format not in ("ckpt", "safetensors"):
        raise ValueError(f"For '{what}', 'output_format' must be 'ckpt' or 'safetensors', but got {output_format!r}.")
    if isinstance(process_num, bool) or not isinstance(process_num, int) or process_num < 1:
        raise ValueError(f"For '{what}', 'process_num' must be an int >= 1, but got {process_num!r}.")
    files_map = _rank_files(src_checkpoints_dir, what)
    if output_format == "safetensors":
        raise ValueError(f"For '{what}', 'output_format' can not be 'safetensors' when 'src_checkpoints_dir' only "
                         f"contains ckpt file.")
    if not isinstance(dst_checkpoints_dir, str):
        raise TypeError("The path is invalid, the type should be string.")
    if not dst_checkpoints_dir.strip():
        raise ValueError("The path is invalid, it should be non-blank.")
    if os.path.exists(dst_checkpoints_dir) and not os.path.isdir(dst_checkpoints_dir):
        raise NotADirectoryError(f"The path({dst_checkpoints_dir}) is a file path, it should be a directory path.")
    _check_strategy_path(src_strategy_file, what, "src_strategy_file")
    _check_strategy_path(dst_strategy_file, what, "dst_strategy_file")
    src, dst = _src_dst(src_strategy_file, dst_strategy_file, what)
    if src is not None and len(files_map) > _device_num(src):
        warnings.warn(f"For '{what}', {src_checkpoints_dir} has {len(files_map)} rank directories but the source "
                      f"strategy has {_device_num(src)} devices; ranks beyond are ignored.", RuntimeWarning,
                      stacklevel=2)
    files = _Files(files_map, what)
    from ..train.serialization import save_checkpoint
    for rank in range(_device_num(dst) if dst is not None else 1):
        for r in sorted(_needed(rank, src, dst, what)):
            if r not in files_map:
                raise ValueError(f"The checkpoint file of rank{r} is needed for converting rank{rank}'s checkpoint, "
                                 f"but it is missing (no {os.path.join(src_checkpoints_dir, f'rank_{r}', '*.ckpt')}).")
        params = _transform_rank(rank, files, src, dst, what, src_strategy_file)
        out_dir = os.path.join(dst_checkpoints_dir, f"rank_{rank}")
        os.makedirs(out_dir, exist_ok=True)
        save_checkpoint(params, os.path.join(out_dir, f"{ckpt_prefix}{rank}.ckpt"))


# ------------------------------------------------------------------------------------------------ loading
def load_distributed_checkpoint(network, checkpoint_filenames=None, predict_strategy=None,
                                train_strategy_filename=None, strict_load=False, dec_key=None, dec_mode="AES-GCM",
                                format="ckpt", unified_safetensors_dir=None, dst_safetensors_dir=None, rank_id=None,
                                output_format="safetensors", name_map=None, max_process_num=64,
                                return_param_dict=False):
    """Loads a training job's per-rank checkpoints into `network` (MindSpore 2.10's load_distributed_checkpoint,
    .ckpt files): each Parameter of the network that the training strategy names is merged whole from the files
    and loaded with load_param_into_net, which keeps this process's slice of a Parameter already sliced by
    operator parallel (a network not yet run keeps whole values: its first sharded call cuts them).

    Args:
        network (Cell): the network.
        checkpoint_filenames (list[str]): the .ckpt files in order of rank id (as many as the training strategy's
            devices).
        predict_strategy (dict, optional): name -> [dev_matrix, tensor_map, param_split_shape, field_size, ...] of
            the predicting network (MindSpore's infer_predict_layout form); checked, and a Parameter sliced here
            must be cut as it says. None: whole values.
        train_strategy_filename (str): the training strategy file; None: the save_param_strategy_file of
            `network` when it is an AutoParallel, else strategy_ckpt_load_file of set_auto_parallel_context.
        strict_load (bool): passed to load_param_into_net.
        dec_key, dec_mode: None / 'AES-GCM' only (Kiln does not decrypt).
        format (str): 'ckpt' ('safetensors' with unified_safetensors_dir is not provided by Kiln).
        unified_safetensors_dir, dst_safetensors_dir, rank_id, output_format, name_map, max_process_num,
        return_param_dict: safetensors mode only; must keep their defaults.

    Returns:
        True.

    Raises:
        TypeError: network not a Cell; dec_key not None/bytes.
        ValueError: a checkpoint file that is missing, empty or not '.ckpt'; a number of files other than the
            training strategy's device count; a predict_strategy of the wrong form or that disagrees with how a
            Parameter is sliced here; format 'safetensors'; a strategy file of another model or checkpoints whose
            shapes disagree with it (naming the parameter and the file).
    """
    from ..nn.cell import Cell
    from ..train.serialization import load_param_into_net
    from ..common.parameter import Parameter
    what = "load_distributed_checkpoint"
    if format not in ("safetensors", "ckpt") or output_format not in ("safetensors", "ckpt"):
        raise ValueError(f"For 'load_distributed_checkpoint', 'format' and 'output_format' must be 'ckpt' or "
                         f"'safetensors', but got {format}.")
    if format == "safetensors" or unified_safetensors_dir is not None or dst_safetensors_dir is not None:
        raise ValueError("For 'load_distributed_checkpoint', format='safetensors' (unified safetensors directories) "
                         "is not provided by Kiln: use .ckpt files.")
    if not isinstance(network, Cell):
        raise TypeError(f"For 'load_distributed_checkpoint', the 'network' must be a Cell, but got "
                        f"{type(network).__name__}.")
    if not isinstance(checkpoint_filenames, (list, tuple)):
        raise TypeError(f"For 'load_distributed_checkpoint', 'checkpoint_filenames' must be a list of str, but got "
                        f"{type(checkpoint_filenames).__name__}.")
    for i, f in enumerate(checkpoint_filenames):
        if not isinstance(f, str) or not os.path.exists(f) or not f.endswith(".ckpt") or os.path.getsize(f) == 0:
            raise ValueError(f"For 'load_distributed_checkpoint', please check 'checkpoint_filenames', and make sure "
                             f"the {f} at index {i} is a valid checkpoint file, it must be a string ending with "
                             f"'.ckpt', and the checkpoint file it represents must be exist and not empty.")
    predict = _check_predict_strategy(predict_strategy)
    if dec_key is not None:
        if not isinstance(dec_key, bytes):
            raise TypeError(f"For 'load_distributed_checkpoint', 'dec_key' must be None or bytes, but got "
                            f"{type(dec_key).__name__}.")
        raise ValueError("For 'load_distributed_checkpoint', encrypted checkpoints (dec_key) are not supported by "
                         "Kiln.")
    if train_strategy_filename is None:
        from .auto_parallel import AutoParallel
        if isinstance(network, AutoParallel):
            train_strategy_filename = network.__dict__.get("_save_strategy_file_path")
        else:
            from .._parallel_context import get_auto_parallel_context
            train_strategy_filename = get_auto_parallel_context("strategy_ckpt_load_file") or None
    if train_strategy_filename is None:
        raise ValueError("For 'load_distributed_checkpoint', 'train_strategy_filename' is None and no "
                         "strategy_ckpt_load_file is set: the training strategy file is needed.")
    train = _layouts(train_strategy_filename, what)
    if not train:
        return True
    devices = _device_num(train)
    if devices != len(checkpoint_filenames):
        raise ValueError("For 'Load_distributed_checkpoint', the length of 'checkpoint_filenames' should be equal to "
                         "the device count of training process. But got the length of 'checkpoint_filenames' is "
                         f"{len(checkpoint_filenames)} and the device count is {devices}.")
    files = _Files({r: os.path.abspath(f) for r, f in enumerate(checkpoint_filenames)}, what)
    param_dict, not_in_strategy, not_in_ckpt, seen = {}, [], [], set()
    for _, p in network.parameters_and_names():
        if p.name in seen:
            continue
        seen.add(p.name)
        if p.name not in train:
            not_in_strategy.append(p.name)
            continue
        if p.name not in files.get(0):
            not_in_ckpt.append(p.name)
            continue
        arr = _reslice(p.name, lambda r, n=p.name: files.slice(r, n), train[p.name], None, 0, devices, what)
        if predict is not None and p.name in predict:
            _check_predict_layout(p, predict[p.name], arr.shape)
        _, dtype, grad = files.get(0)[p.name]
        param_dict[p.name] = Parameter(_to_tensor(arr, dtype), p.name, grad)
    if not_in_strategy:
        warnings.warn(f"For 'load_distributed_checkpoint', {not_in_strategy} parameters in network are not in the "
                      f"slice strategy, you can check whether 'predict_strategy' or 'train_strategy_filename' is "
                      f"correct.", RuntimeWarning, stacklevel=2)
    if not_in_ckpt:
        warnings.warn(f"For 'load_distributed_checkpoint', {not_in_ckpt} parameters in network and slice strategy but "
                      f"not in the checkpoint file, please check whether 'checkpoint_filenames' is correct.",
                      RuntimeWarning, stacklevel=2)
    load_param_into_net(network, param_dict, strict_load=strict_load)
    return True


def _check_predict_strategy(predict_strategy):
    """{name: _Layout} of a MindSpore predict strategy (dict name -> [dev_matrix, tensor_map, param_split_shape,
    field_size, ...]), or None."""
    if predict_strategy is None:
        return None
    msg = ("For 'load_distributed_checkpoint', the argument 'predict_strategy' is dict, the key of it must be "
           "string, and the value of it must be list or tuple that the first four elements must be dev_matrix "
           "(list[int]), tensor_map (list[int]), param_split_shape (list[int]) and field_size (int, which value is "
           "0).Please check whether 'predict_strategy' is correct.")
    if not isinstance(predict_strategy, dict):
        raise TypeError(f"For 'load_distributed_checkpoint', 'predict_strategy' must be a dict, but got "
                        f"{type(predict_strategy).__name__}.")

    def ints(v):
        return isinstance(v, (list, tuple)) and all(isinstance(x, int) and not isinstance(x, bool) for x in v)

    out = {}
    for k, v in predict_strategy.items():
        if not isinstance(k, str) or not isinstance(v, (list, tuple)) or len(v) < 4 or not ints(v[0]) or \
                not ints(v[1]) or not (ints(v[2]) or not v[2]) or not (isinstance(v[3], int) and v[3] == 0):
            raise ValueError(msg)
        out[k] = _layout_from_message(k, v, "load_distributed_checkpoint")
    return out


def _check_predict_layout(p, lay, full_shape):
    """A Parameter already sliced here by operator parallel must be cut as predict_strategy says."""
    from ._op_shard import _world
    world = _world()[0]
    dev, tmap = _strategy_file.layout_of_parameter(p, world)
    if p.__dict__.get("_kiln_op_layout") is None:
        return  # whole here: its first sharded call cuts it
    mine = _Layout(dev, tmap)
    if mine.counts() != lay.counts() or len(lay.tmap) != len(full_shape):
        raise ValueError(f"For 'load_distributed_checkpoint', parameter '{p.name}' is sliced here {mine.counts()} "
                         f"(dev_matrix {dev}, tensor_map {tmap}), but 'predict_strategy' cuts it {lay.counts()} "
                         f"(dev_matrix {lay.dev}, tensor_map {lay.tmap}).")

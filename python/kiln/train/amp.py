"""Automatic mixed precision on Cells (MindSpore's mindspore.train.amp, re-exported by kiln.amp):
auto_mixed_precision, custom_mixed_precision, get_white_list / get_black_list and build_train_network.

How the levels place casts (MindSpore 2.10's rules; what is cast where is visible in a compiled graph's dump as
Cast nodes, `jit_fn.graphs[0].graph.to_text()`):

* O1 — the white list (get_white_list()): each white-listed Cell runs in the low-precision dtype (its float
  inputs and its Parameters are cast on entry, Cell.to_float) and its float outputs are cast back to float32;
  each white-listed Primitive held as a Cell attribute (`self.matmul = ops.MatMul()`) gets the same cast pair
  around its call. Everything else stays float32. MindSpore inserts these casts by rewriting the network's
  source (mindspore.rewrite); Kiln wraps the Cells and Primitives instead: the same casts, the same numbers. Like
  MindSpore's rewrite, functional calls (`ops.matmul(x, w)`) in a construct are not cast.
* O2 — everything runs in the low-precision dtype except the black list (get_black_list(): BatchNorm and
  LayerNorm), which runs in float32 (inputs cast up on entry, outputs cast back down) — MindSpore's
  `_auto_black_list`; the network's float outputs are cast to float32.
* O3 — the whole network runs in the low-precision dtype; its float outputs are cast to float32.

Parameters stay float32 at every level (the master weights): a layer casts them on use, the gradient of the cast
brings the gradients back in float32, and the optimizer updates float32 values.

What is left out: amp_level "auto" (MindSpore's per-primitive strategy, experimental there) raises ValueError;
Kiln's op dispatch has no per-primitive cast hook.
"""
import logging

from .. import nn
from ..common.tensor import Tensor as _Tensor
from ..ops import _kernels
from ..common import dtype as mstype
from ..nn.cell import Cell
from ..ops.primitives import Primitive
from ..ops import operations as P
from .loss_scale_manager import LossScaleManager, DynamicLossScaleManager

__all__ = ["auto_mixed_precision", "custom_mixed_precision", "get_white_list", "get_black_list",
           "build_train_network"]

_logger = logging.getLogger("kiln.amp")
_LEVELS = ("O0", "O1", "O2", "O3", "auto")


def _present(module, names):
    return [getattr(module, n) for n in names if hasattr(module, n)]


# MindSpore 2.10's lists (mindspore/train/amp.py), restricted to the classes Kiln has (_present: today the Conv3D /
# transposed-convolution primitives are not in Kiln).
AMP_WHITE_LIST = _present(nn, ["Conv1d", "Conv2d", "Conv3d", "Conv1dTranspose", "Conv2dTranspose",
                               "Conv3dTranspose", "Dense", "LSTMCell", "RNNCell", "GRUCell"]) + \
    _present(P, ["Conv2D", "Conv3D", "Conv2DTranspose", "Conv3DTranspose", "Conv2DBackpropInput", "MatMul",
                 "BatchMatMul", "PReLU", "ReLU", "Ger"])
AMP_BLACK_LIST = _present(nn, ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm"])


def _cast_floats(value, dtype):
    """`value` with every float Tensor (recursively in tuples/lists) cast to `dtype` (MindSpore's amp_cast /
    mixed_precision_cast); other values unchanged."""
    if isinstance(value, _Tensor):
        if mstype.is_float(value.dtype) and value.dtype != dtype:
            return _kernels.cast(value, dtype)
        return value
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        return type(value)(_cast_floats(v, dtype) for v in value)
    return value


class _AmpWrapper(Cell):
    """Base of the cast wrappers: keeps the wrapped cell's Parameter names (auto_prefix=False) and forwards
    attribute reads it does not have to it (MindSpore's `_get_attr_from_cell`)."""

    def __init__(self, backbone):
        super().__init__(auto_prefix=False)
        self._backbone = backbone

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            backbone = self.__dict__.get("_backbone")
            if backbone is None or name.startswith("__"):
                raise
            return getattr(backbone, name)


class _OutputTo16(_AmpWrapper):
    """Runs `backbone` and casts its float outputs to `dtype` (float16 or bfloat16): wraps a black-listed cell
    that runs in float32 inside a low-precision network."""

    def __init__(self, backbone, dtype=mstype.float16):
        super().__init__(backbone)
        self.__dict__["dtype"] = dtype

    def construct(self, *args, **kwargs):
        return _cast_floats(self._backbone(*args, **kwargs), self.dtype)


class _OutputTo32(_AmpWrapper):
    """Runs `backbone` and casts its float outputs to float32 (the network returned by O2/O3, and the O1
    wrapper of a white-listed cell)."""

    def construct(self, *args, **kwargs):
        return _cast_floats(self._backbone(*args, **kwargs), mstype.float32)


class _AmpPrimitive(Primitive):
    """A white-listed Primitive under O1: float inputs cast to `dtype`, float outputs cast back to float32."""

    def __init__(self, prim, dtype):
        super().__init__(prim.name)
        self.prim = prim
        self.dtype = dtype

    def __call__(self, *args):
        return _cast_floats(self.prim(*_cast_floats(args, self.dtype)), mstype.float32)

    def __getattr__(self, name):
        if name.startswith("__") or name == "prim":
            raise AttributeError(name)
        return getattr(self.prim, name)

    def __repr__(self):
        return repr(self.prim)


def _precision_set_by_user(cell):
    flags = cell.__dict__.get("_flags") or {}
    return any(flags.get(k) for k in ("fp16", "bf16", "fp32"))


def _replace_child(parent, name, new):
    """Puts `new` in place of the child cell `name` of `parent` (no renaming of Parameters)."""
    parent._register_cell(name, new)
    sync = getattr(parent, "_sync", None)  # SequentialCell/CellList keep a list of their cells
    if sync is not None:
        sync()


def _is_instance(obj, classes):
    return bool(classes) and isinstance(obj, tuple(classes))


def _white_list_cast(cell, dtype, white_list, seen):
    """O1 / custom white list: wrap white-listed child cells (low precision inside, float32 out) and white-listed
    Primitive attributes; recurse into the rest (but not into cells whose precision the user set)."""
    if id(cell) in seen:
        return
    seen.add(id(cell))
    prims = cell.__dict__.get("_primitives") or {}
    for name, prim in list(prims.items()):
        if cell.__dict__.get(name) is prim and not isinstance(prim, _AmpPrimitive) and _is_instance(prim, white_list):
            wrapped = _AmpPrimitive(prim, dtype)
            prims[name] = wrapped
            cell.__dict__[name] = wrapped
    for name, child in list(cell.__dict__["_cells"].items()):
        if child is None or isinstance(child, _AmpWrapper) or _precision_set_by_user(child):
            continue
        if _is_instance(child, white_list):
            _replace_child(cell, name, _OutputTo32(child.to_float(dtype)))
        else:
            _white_list_cast(child, dtype, white_list, seen)


def _black_list_cast(network, black_list, dtype):
    """O2 / custom black list (MindSpore's _auto_black_list): the network runs in `dtype`; each black-listed
    sub-cell runs in float32 and its outputs are cast back to `dtype`."""
    network.to_float(dtype)
    _wrap_black_listed(network, black_list, dtype)
    return network


def _wrap_black_listed(network, black_list, dtype):
    """Each black-listed sub-cell of `network` to float32 inside an _OutputTo16 wrapper that casts its outputs to
    `dtype`; a wrapper from an earlier conversion is kept (one wrapper, the new dtype)."""
    def walk(cell, seen):
        if id(cell) in seen:
            return
        seen.add(id(cell))
        for name, child in list(cell.__dict__["_cells"].items()):
            if child is None:
                continue
            if isinstance(child, _OutputTo16):  # converted before: keep the one wrapper, with the new dtype
                child.__dict__["dtype"] = dtype
                child._backbone.to_float(mstype.float32)
            elif _is_instance(child, black_list):
                _replace_child(cell, name, _OutputTo16(child.to_float(mstype.float32), dtype))
            else:
                walk(child, seen)

    walk(network, set())


def _check_dtype(dtype, api):
    if dtype not in (mstype.float16, mstype.bfloat16):
        raise ValueError(f"For '{api}', the dtype should be one of (mstype.float16, mstype.bfloat16), but got "
                         f"{dtype}.")


def auto_mixed_precision(network, amp_level="O0", dtype=mstype.float16):
    """Returns `network` converted to mixed precision (MindSpore's mindspore.amp.auto_mixed_precision).

    Args:
        network (Cell): the network. It is converted in place (flags, wrapped sub-cells); the returned Cell is
            the one to use (O2/O3 wrap it so that its float outputs come back in float32).
        amp_level (str): "O0" (unchanged, returns `network`), "O1" (white list in low precision), "O2" (all but
            the black list in low precision), "O3" (all in low precision). See the module docstring for where
            the casts go. Default "O0".
        dtype (kiln dtype): the low-precision type, mstype.float16 (default) or mstype.bfloat16.
    Returns:
        Cell: the converted network; its `_amp_level` attribute is the level.

    Raises:
        TypeError: network not a Cell. ValueError: dtype not float16/bfloat16; amp_level not one of
            "O0"-"O3" ("auto" is not available in Kiln).
    """
    if not isinstance(network, Cell):
        raise TypeError(f"For amp_level '{amp_level}', the network type should be Cell, but got "
                        f"{type(network).__name__}.")
    _check_dtype(dtype, "auto_mixed_precision")
    if amp_level == "auto":
        raise ValueError("For 'auto_mixed_precision', amp_level 'auto' (per-primitive casting) is not available in "
                         "Kiln; use 'O1', 'O2' or 'O3'.")
    if amp_level not in _LEVELS:
        raise ValueError(f"For 'auto_mixed_precision', the amp level {amp_level!r} is not supported: expected one "
                         f"of 'O0', 'O1', 'O2', 'O3'.")
    if amp_level == "O0":
        return network
    previous = network.__dict__.get("_amp_level")
    if previous in ("O1", "O2", "O3"):
        _logger.warning("The network's auto mixed-precision level is adjusted from %s to %s, and repeated calls to "
                        "mixed-precision interfaces can cause performance degradation.", previous, amp_level)
    if amp_level == "O1":
        _white_list_cast(network, dtype, AMP_WHITE_LIST, set())
        if _is_instance(network, AMP_WHITE_LIST) and not isinstance(network, _AmpWrapper):
            network = _OutputTo32(network.to_float(dtype))
    elif amp_level == "O2":
        network = _OutputTo32(_black_list_cast(network, AMP_BLACK_LIST, dtype))
    else:
        network.to_float(dtype)
        network = _OutputTo32(network)
    network.__dict__["_amp_level"] = amp_level
    network.__dict__["_amp_dtype"] = dtype
    return network


def get_white_list():
    """A copy (list of classes) of the O1 white list: nn.Conv1d, Conv2d, Conv3d, Conv1dTranspose, Conv2dTranspose,
    Conv3dTranspose, Dense, LSTMCell, RNNCell, GRUCell and ops.Conv2D, MatMul, BatchMatMul, PReLU, ReLU, Ger
    (MindSpore's list, less the classes Kiln does not have)."""
    return list(AMP_WHITE_LIST)


def get_black_list():
    """A copy (list of classes) of the O2 black list: nn.BatchNorm1d, BatchNorm2d, LayerNorm (MindSpore's list,
    less BatchNorm3d which Kiln does not have)."""
    return list(AMP_BLACK_LIST)


def _list_check(custom_list, list_name):
    if not isinstance(custom_list, list):
        raise TypeError(f"For 'custom_mixed_precision', the type of {list_name} should be list, but got "
                        f"{type(custom_list).__name__}.")
    for elem in custom_list:
        if not isinstance(elem, type):
            raise TypeError(f"For 'custom_mixed_precision', the element in {list_name} should be a class, but got "
                            f"{elem!r}.")
        if list_name == "white_list" and not issubclass(elem, (Cell, Primitive)):
            raise TypeError(f"For 'custom_mixed_precision', the subclass of element in {list_name} should be one of "
                            f"'Cell' and 'Primitive', but got {elem}.")
        if list_name == "black_list" and not issubclass(elem, Cell):
            raise TypeError(f"For 'custom_mixed_precision', the subclass of element in {list_name} should be "
                            f"'Cell', but got {elem}.")


def custom_mixed_precision(network, *, white_list=None, black_list=None, dtype=mstype.float16):
    """Mixed precision from a custom white list or black list (MindSpore's mindspore.amp.custom_mixed_precision).

    Args:
        network (Cell): the network (converted in place; use the returned Cell).
        white_list (list of Cell/Primitive classes): these run in `dtype`, as O1 does with get_white_list().
        black_list (list of Cell classes): everything else runs in `dtype`, these in float32, as O2 does with
            get_black_list(); the network's float outputs are cast to float32.
        dtype: mstype.float16 (default) or mstype.bfloat16.
        Exactly one of white_list and black_list is given.

    Raises:
        TypeError: network not a Cell; a list that is not a list, or holds a non-class or a class of the wrong
            kind. ValueError: both or neither list given; dtype not float16/bfloat16.
    """
    if not isinstance(network, Cell):
        raise TypeError(f"For 'custom_mixed_precision', the network type should be Cell, but got "
                        f"{type(network).__name__}.")
    if white_list is None and black_list is None:
        raise ValueError("For custom_mixed_precision, one of white_list and black_list must be provided.")
    if white_list is not None and black_list is not None:
        raise ValueError("For custom_mixed_precision, the white_list or black_list cannot be provided at the same "
                         "time, please provide one or the other.")
    _check_dtype(dtype, "custom_mixed_precision")
    if white_list is not None:
        _list_check(white_list, "white_list")
        _white_list_cast(network, dtype, white_list, set())
        if _is_instance(network, white_list) and not isinstance(network, _AmpWrapper):
            network = _OutputTo32(network.to_float(dtype))
        return network
    _list_check(black_list, "black_list")
    return _OutputTo32(_black_list_cast(network, black_list, dtype))


# build_train_network's per-level defaults (MindSpore's _config_level).
def _config_level(level):
    low = level in ("O2", "O3")
    return {"keep_batchnorm_fp32": level == "O2",
            "cast_model_type": mstype.float16 if low else mstype.float32,
            "loss_scale_manager": DynamicLossScaleManager() if level == "O2" else None}


class _WithLossCell32(Cell):
    """The loss cell of a low-precision network: the network's output and the label are cast to float32 before
    the loss (MindSpore's amp WithLossCell)."""

    def __init__(self, backbone, loss_fn):
        super().__init__(auto_prefix=False)
        self._backbone = backbone
        self._loss_fn = loss_fn

    def construct(self, data, label):
        out = self._backbone(data)
        return self._loss_fn(_cast_floats(out, mstype.float32), _cast_floats(label, mstype.float32))

    @property
    def backbone_network(self):
        """The backbone (the network without the loss)."""
        return self._backbone


def _keep_batchnorm_fp32(network, dtype):
    """Black-listed sub-cells back to float32, outputs cast to `dtype` (MindSpore's _do_keep_batchnorm_fp32)."""
    _wrap_black_listed(network, AMP_BLACK_LIST, dtype)


def _check_build_kwargs(kwargs):
    for arg in kwargs:
        if arg not in ("cast_model_type", "keep_batchnorm_fp32", "loss_scale_manager"):
            raise ValueError(f"For 'build_train_network', unsupported arg '{arg}': expected 'cast_model_type', "
                             f"'keep_batchnorm_fp32' or 'loss_scale_manager'.")
    if "cast_model_type" in kwargs and kwargs["cast_model_type"] not in (mstype.float16, mstype.bfloat16,
                                                                        mstype.float32):
        raise TypeError(f"For 'build_train_network', the 'cast_model_type' must be mstype.float16, mstype.bfloat16 "
                        f"or mstype.float32, but got {kwargs['cast_model_type']}.")
    if "keep_batchnorm_fp32" in kwargs and not isinstance(kwargs["keep_batchnorm_fp32"], bool):
        raise TypeError(f"For 'build_train_network', the 'keep_batchnorm_fp32' must be bool, but got "
                        f"{type(kwargs['keep_batchnorm_fp32']).__name__}.")
    lsm = kwargs.get("loss_scale_manager")
    if lsm is not None and not isinstance(lsm, LossScaleManager):
        raise TypeError(f"For 'build_train_network', the 'loss_scale_manager' must be a LossScaleManager or None, "
                        f"but got {type(lsm).__name__}.")


def _check_level(level, boost_level, api):
    if not isinstance(level, str):
        raise TypeError(f"For '{api}', the argument `level` must be a string in ['O0', 'O1', 'O2', 'O3'], but got "
                        f"type {type(level).__name__}.")
    if level not in ("O0", "O1", "O2", "O3"):
        raise ValueError(f"For '{api}', the argument `level` must be one of ['O0', 'O1', 'O2', 'O3'], but got "
                         f"{level!r}.")
    if boost_level != "O0":
        raise ValueError(f"For '{api}', Kiln supports boost_level 'O0' only (MindSpore's boost is "
                         f"Ascend-specific), but got {boost_level!r}.")


def _amp_process(network, config, level):
    """Converts `network` in place for `level` and the (possibly overridden) config; returns it."""
    cast = config["cast_model_type"]
    if cast in (mstype.float16, mstype.bfloat16):
        network.to_float(cast)
        if config["keep_batchnorm_fp32"]:
            _keep_batchnorm_fp32(network, cast)
    elif not config["keep_batchnorm_fp32"] and level == "O2":
        network.to_float(mstype.float16)
    elif cast == mstype.float32 and level in ("O2", "O3"):
        pass
    else:
        network = auto_mixed_precision(network, level)
    return network


def build_train_network(network, optimizer, loss_fn=None, level="O0", boost_level="O0", **kwargs):
    """A training cell with mixed precision and loss scaling (MindSpore's mindspore.amp.build_train_network).

    Args:
        network (Cell): the network (converted in place).
        optimizer (nn.Optimizer): updates the (float32) Parameters.
        loss_fn (Cell, optional): the loss; without it `network` returns the loss. With a low-precision network
            the output and label are cast to float32 before the loss.
        level (str): "O0" (default), "O1", "O2", "O3". Defaults per level (MindSpore's): O2 casts the network to
            float16, keeps BatchNorm/LayerNorm in float32 and uses DynamicLossScaleManager(); O3 casts everything
            to float16, no loss scale; O1 = auto_mixed_precision(network, "O1").
        boost_level (str): "O0" only.
        **kwargs: cast_model_type (mstype.float16, mstype.bfloat16 — a Kiln extension — or mstype.float32),
            keep_batchnorm_fp32 (bool), loss_scale_manager (LossScaleManager or None): override the level's.
    Returns:
        Cell: nn.TrainOneStepWithLossScaleCell when the loss scale manager has an update cell (overflowing steps
        are skipped), else nn.TrainOneStepCell(sens=loss scale or None); in training mode. Unlike MindSpore on
        CPU, Kiln runs the loss-scale cell on CPU.

    Raises:
        TypeError: optimizer not an nn.Optimizer; level not a str; a kwarg of the wrong type. ValueError: an
            unknown level, boost_level other than "O0", an unknown kwarg.
    """
    if not isinstance(optimizer, nn.Optimizer):
        raise TypeError(f"For 'build_train_network', the 'optimizer' must be an nn.Optimizer, but got "
                        f"{type(optimizer).__name__}.")
    if not isinstance(network, Cell):
        raise TypeError(f"For 'build_train_network', the 'network' must be a Cell, but got "
                        f"{type(network).__name__}.")
    _check_level(level, boost_level, "build_train_network")
    _check_build_kwargs(kwargs)
    config = dict(_config_level(level), **kwargs)
    network = _amp_process(network, config, level)
    if loss_fn is not None:
        if not isinstance(loss_fn, Cell):
            raise TypeError(f"For 'build_train_network', the 'loss_fn' must be a Cell, but got "
                            f"{type(loss_fn).__name__}.")
        if config["cast_model_type"] in (mstype.float16, mstype.bfloat16) or \
                network.__dict__.get("_amp_level") in ("O2", "O3"):
            network = _WithLossCell32(network, loss_fn)
        else:
            network = nn.WithLossCell(network, loss_fn)
    lsm = config["loss_scale_manager"]
    loss_scale = None
    if lsm is not None:
        loss_scale = lsm.get_loss_scale()
        update_cell = lsm.get_update_cell()
        if update_cell is not None:
            return nn.TrainOneStepWithLossScaleCell(network, optimizer, scale_sense=update_cell).set_train()
    return nn.TrainOneStepCell(network, optimizer, loss_scale).set_train()

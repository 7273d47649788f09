"""Registry entries of the hand-written Tensor methods (kiln/common/tensor.py, _tensor_methods.py): the methods that
do not simply forward to a kiln.ops function (those derived from @defop or `_same_op` are covered by the function's
entry; test_op_registry.py's test_every_tensor_method_is_in_the_registry checks both). In-place methods run on a
copy and return (the method's result, the copy afterwards): both must equal the reference, so an in-place method
that returned a new tensor or left its tensor unchanged fails."""
import numpy as np
import scipy.special

import kiln
from kiln import ops

from .base import BOOL, F16, F32, F64, FLOATS, I32, I64, NC, OpInfo, Sample, arr, np_value, register, unary_samples
from .elementwise import _same_dtype


def _inplace(method):
    def op(x, *args, **kwargs):
        t = x.copy()
        out = getattr(t, method)(*args, **kwargs)
        return out, t
    op.__name__ = method
    return op


def _twice(ref):
    def both(*args, **kwargs):
        v = ref(*args, **kwargs)
        return v, v
    return both


def _pair_samples(low=-2.0, high=2.0, away=0.0):
    def gen(dtype, rng):
        a = lambda s: arr(rng, s, dtype, low, high, away)
        yield Sample((a((2, 3)), a((2, 3))))
        yield Sample((a((3, 4)), a((4,))), desc="broadcast other")
        yield Sample((NC(a((3, 4)), "T"), a((3, 4))), desc="a view")
    return gen


# ---------------------------------------------------------------------------------------------- in place, binary

for _name, _ref, _dtypes, _kw in (
        ("add_", np.add, FLOATS + (I32,), {}),
        ("sub_", np.subtract, FLOATS + (I32,), {}),
        ("mul_", np.multiply, FLOATS + (I32,), {}),
        ("div_", np.divide, FLOATS, dict(away=0.5)),
        ("floor_divide_", np.floor_divide, (F32, F64, I32), dict(away=0.5)),
        ("remainder_", np.remainder, (F32, F64, I32), dict(away=0.5))):
    register(OpInfo(f"Tensor.{_name}", (), _inplace(_name), _twice(lambda x, y, _f=_ref: _f(x, y).astype(x.dtype)),
                    _pair_samples(away=_kw.get("away", 0.0)), _dtypes, ref_upcast=False,
                    tol={F16: (2e-3, 2e-3)}, out_dtype=_same_dtype,
                    special_skip="the function's entry checks NaN/inf; this one checks the in-place contract"))


# ---------------------------------------------------------------------------------------------- in place, unary

for _name, _ref, _low in (("exp_", np.exp, -2.0), ("floor_", np.floor, -2.0), ("log_", np.log, 0.1),
                          ("sigmoid_", scipy.special.expit, -4.0), ("sign_", np.sign, -2.0),
                          ("tanh_", np.tanh, -2.0)):
    register(OpInfo(f"Tensor.{_name}", (), _inplace(_name), _twice(_ref), unary_samples(_low, 2.0), FLOATS,
                    tol={F16: (2e-3, 2e-3)}, out_dtype=_same_dtype,
                    special_skip="the function's entry checks NaN/inf; this one checks the in-place contract"))

register(OpInfo("Tensor.zero_", (), _inplace("zero_"), _twice(np.zeros_like), unary_samples(), FLOATS + (I32, BOOL),
                ref_upcast=False, special_skip="writes zeros"))
register(OpInfo("Tensor.fill_", (), _inplace("fill_"), _twice(lambda x, v: np.full_like(x, v)),
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype), 2)),
                                         Sample((NC(arr(rng, (3, 4), dtype), "T"), -1), desc="a view")]),
                FLOATS + (I32,), ref_upcast=False, special_skip="writes a constant"))
register(OpInfo("Tensor.clamp_", (), _inplace("clamp_"), _twice(lambda x, lo, hi: np.clip(x, lo, hi)),
                lambda dtype, rng: iter([Sample((arr(rng, (3, 4), dtype), -1, 1)),
                                         Sample((NC(arr(rng, (3, 4), dtype), "T"), None, 0), desc="max only")]),
                (F32, F64, I32), ref_upcast=False, special_skip="as clamp"))
register(OpInfo("Tensor.masked_fill_", (), _inplace("masked_fill_"),
                _twice(lambda x, mask, v: np.where(mask, np.asarray(v, x.dtype), x)),
                lambda dtype, rng: iter([Sample((arr(rng, (3, 4), dtype), rng.random((3, 4)) < 0.5, 5)),
                                         Sample((arr(rng, (3, 4), dtype), rng.random((4,)) < 0.5, -1),
                                                desc="broadcast mask")]),
                FLOATS + (I32,), ref_upcast=False, special_skip="as masked_fill"))
for _name in ("copy_", "assign_value"):
    register(OpInfo(f"Tensor.{_name}", (), _inplace(_name), _twice(lambda x, src: np.broadcast_to(src, x.shape)),
                    lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype), arr(rng, (2, 3), dtype))),
                                             Sample((arr(rng, (3, 4), dtype), arr(rng, (4,), dtype)),
                                                    desc="broadcast source")]),
                    FLOATS + (I32,), ref_upcast=False, special_skip="copies values"))


# ---------------------------------------------------------------------------------------------- in place, random

def _check_uniform(lo, hi):
    def check(x, dtype):
        v = x.astype(np.float64)
        assert v.min() >= lo and v.max() <= hi
        assert abs(v.mean() - (lo + hi) / 2) < 6 * (hi - lo) / np.sqrt(12 * v.size)
    return check


def _check_normal(mean, std):
    def check(x, dtype):
        v = x.astype(np.float64)
        assert abs(v.mean() - mean) < 6 * std / np.sqrt(v.size)
        assert abs(v.std() - std) < 0.05 * std
    return check


register(OpInfo("Tensor.uniform_", ("UniformReal",), kind="random", dtypes=(F32, F64),
                draw=lambda shape, dtype, seed=None: ops.zeros(tuple(shape), dtype).uniform_(-1.0, 3.0),
                check=_check_uniform(-1.0, 3.0), notes="takes no seed (MindSpore 2.10: a generator)"))
register(OpInfo("Tensor.normal_", ("StandardNormal",), kind="random", dtypes=(F32, F64),
                draw=lambda shape, dtype, seed=None: ops.zeros(tuple(shape), dtype).normal_(1.0, 2.0),
                check=_check_normal(1.0, 2.0), notes="takes no seed (MindSpore 2.10: a generator)"))


# ---------------------------------------------------------------------------------------------- not in place

register(OpInfo("Tensor.clone", ("TensorCopy",), lambda x: x.clone(), lambda x: x.copy(), unary_samples(),
                FLOATS + (I32, BOOL), differentiable=True, ref_upcast=False))
register(OpInfo("Tensor.contiguous", (), lambda x: x.contiguous(), lambda x: x.copy(), unary_samples(),
                FLOATS + (I32, BOOL), ref_upcast=False, graph=False,
                graph_reason="a layout request on a concrete tensor (graphs have no strides)"))
for _name, _call, _to in (("half", lambda x: x.half(), F16), ("long", lambda x: x.long(), I64),
                          ("to", lambda x: x.to(kiln.float64), F64)):
    _int = np.dtype(_to).kind == "i"  # (a cast to an integer dtype has no gradient to check: claimed by no kernel)
    register(OpInfo(f"Tensor.{_name}", () if _int else ("Cast",), _call, lambda x, _d=_to: x.astype(_d),
                    lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype, -100, 100),)),
                                             Sample((NC(arr(rng, (3, 4), dtype), "T"),), desc="a view")]),
                    (F32, I32), ref_upcast=False, out_dtype=lambda s, _d=_to: _d, differentiable=not _int,
                    special_skip="casts: the Cast entry checks NaN/inf"))
register(OpInfo("Tensor.rsqrt", ("Rsqrt",), lambda x: x.rsqrt(), lambda x: 1 / np.sqrt(x),
                unary_samples(0.1, 4.0), FLOATS, differentiable=True, out_dtype=_same_dtype,
                tol={F16: (2e-3, 2e-3)}, special_skip="the Rsqrt kernel's entry checks NaN/inf"))
register(OpInfo("Tensor.subtract", ("Sub", "Mul"), lambda x, y, alpha=1: x.subtract(y, alpha=alpha),
                lambda x, y, alpha=1: x - alpha * y,
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype), arr(rng, (2, 3), dtype))),
                                         Sample((arr(rng, (3, 4), dtype), arr(rng, (4,), dtype)), dict(alpha=2),
                                                desc="alpha 2, broadcast")]),
                (F32, F64, I32), differentiable=True, ref_upcast=False, out_dtype=_same_dtype))
register(OpInfo("Tensor.where", ("Select",), lambda x, cond, y: x.where(cond, y),
                lambda x, cond, y: np.where(cond, x, y),
                lambda dtype, rng: iter([Sample((arr(rng, (3, 4), dtype), rng.random((3, 4)) < 0.5,
                                                 arr(rng, (3, 4), dtype))),
                                         Sample((arr(rng, (3, 4), dtype), rng.random((4,)) < 0.5,
                                                 arr(rng, (1, 4), dtype)), desc="broadcast")]),
                FLOATS + (I32,), differentiable=True, grad_args=(0, 2), ref_upcast=False, out_dtype=_same_dtype))
register(OpInfo("Tensor.view_reshape_as_ravel", ("Reshape",),
                lambda x, y: (x.view(3, 4), x.reshape_as(y), x.ravel()),
                lambda x, y: (x.reshape(3, 4), x.reshape(y.shape), x.ravel()),
                lambda dtype, rng: iter([Sample((arr(rng, (2, 6), dtype), arr(rng, (4, 3), dtype))),
                                         Sample((arr(rng, (12,), dtype), arr(rng, (2, 2, 3), dtype)), desc="1-D")]),
                FLOATS + (I32,), differentiable=True, grad_args=(0,), ref_upcast=False))
register(OpInfo("Tensor.repeat", ("BroadcastTo", "Reshape"), lambda x, *reps: x.repeat(*reps), lambda x, *reps: np.tile(x, reps),
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype), 2, 1)),
                                         Sample((arr(rng, (3,), dtype), 2, 2), desc="a new leading dim")]),
                FLOATS + (I32,), differentiable=True, grad_args=(0,), ref_upcast=False))
register(OpInfo("Tensor.resize", (), lambda x, *shape: x.resize(*shape),
                lambda x, *shape: np.resize(x, shape) if x.size >= int(np.prod(shape)) else
                np.concatenate([x.ravel(), np.zeros(int(np.prod(shape)) - x.size, x.dtype)]).reshape(shape),
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype), 3, 2)),
                                         Sample((arr(rng, (2, 3), dtype), 2, 2), desc="fewer elements"),
                                         Sample((arr(rng, (2, 2), dtype), 2, 3), desc="more: zero padded")]),
                FLOATS + (I32,), ref_upcast=False, graph=False, graph_reason="returns a new tensor built in NumPy",
                notes="MindSpore 2.10 pads with zeros (NumPy's resize repeats the data)"))


# ---------------------------------------------------------------------------------------------- Python values

def _query(fn):
    return lambda x: np.asarray(fn(x))


for _name, _ref in (("dim", lambda x: x.ndim), ("numel", lambda x: x.size), ("nelement", lambda x: x.size),
                    ("is_contiguous", lambda x: True), ("is_floating_point", lambda x: x.dtype.kind == "f")):
    # the entry returns the method's Python value (the registry test makes it a Tensor), so that the benchmark times
    # the method alone
    register(OpInfo(f"Tensor.{_name}", (), (lambda _n: lambda x: getattr(x, _n)())(_name),
                    lambda x, _r=_ref: np.asarray(_r(x)),
                    lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype),)), Sample((arr(rng, (), dtype),),
                                                                                        desc="0-d")]),
                    FLOATS + (I32, BOOL, I64), ref_upcast=False, graph=False,
                    graph_reason="returns a Python value", special_skip="returns a Python value"))


def _numpy_tolist(x):
    return kiln.Tensor(x.numpy()), kiln.Tensor(np.array(x.tolist(), x.numpy().dtype).reshape(x.shape))


register(OpInfo("Tensor.numpy_tolist", (), _numpy_tolist, lambda x: (x, x), unary_samples(), FLOATS + (I32, BOOL), ref_upcast=False, graph=False,
                graph_reason="reads the values into Python", special_skip="copies values out"))


# ---------------------------------------------------------------------------------------------- methods and functions
# that only reached the registry through the bodies of other ops before (test_op_registry.py counts a library
# function by identity, never by the names its own code uses).

def _unary_method(name, ref, dtypes=FLOATS, low=-2.0, high=2.0, **kw):
    register(OpInfo(f"Tensor.{name}", kw.pop("kernels", ()), lambda x, *a, _n=name, **k: getattr(x, _n)(*a, **k),
                    ref, kw.pop("samples", unary_samples(low, high)), dtypes, ref_upcast=False,
                    special_skip=kw.pop("special_skip", "the function's entry checks NaN/inf"), **kw))


_unary_method("sign", np.sign, FLOATS + (I32,), kernels=("Sign",), out_dtype=_same_dtype)
_unary_method("square", np.square, FLOATS + (I32,), kernels=("Square",), out_dtype=_same_dtype, differentiable=True,
              tol={F16: (2e-3, 2e-3)})
_unary_method("float", lambda x: x.astype(np.float32), (F64, I32, BOOL), kernels=("Cast",), out_dtype=lambda s: F32,
              differentiable=True, grad_eps=1e-2, grad_tol=(1e-5, 1e-5))  # linear: a large FD step is exact
_unary_method("softmax", lambda x, axis=-1: scipy.special.softmax(x, axis=axis) if x.size else x.copy(), FLOATS,
              kernels=("Softmax",), out_dtype=_same_dtype, tol={F16: (2e-3, 2e-3)}, differentiable=True,
              samples=lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype),)),
                                               Sample((arr(rng, (3, 4), dtype), 0), desc="axis 0")]))
_unary_method("any", lambda x, axis=None: np.any(x, axis=axis), (BOOL, F32, I32), kernels=(),
              samples=lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype),)),
                                               Sample((arr(rng, (3, 4), dtype), 1), desc="axis 1"),
                                               Sample((np.zeros((2, 2), dtype),), desc="none true")]))
_unary_method("clip", lambda x, lo, hi: np.clip(x, lo, hi), (F32, F64, I32), kernels=("Maximum", "Minimum"),
              out_dtype=_same_dtype, samples=lambda dtype, rng: iter([Sample((arr(rng, (3, 4), dtype), -1, 1))]))
_unary_method("cumprod", lambda x, dim: np.cumprod(x, dim), (F32, F64, I32), kernels=(),
              out_dtype=lambda s: I64 if np_value(s.args[0]).dtype.kind == "i" else np_value(s.args[0]).dtype,
              notes="integer inputs give Int64 (MindSpore 2.10)",
              samples=lambda dtype, rng: iter([Sample((arr(rng, (2, 4), dtype), 1)),
                                               Sample((arr(rng, (3, 2), dtype), 0), desc="dim 0")]))
_unary_method("transpose", lambda x, *axes: np.transpose(x, axes or None), FLOATS + (I32,), kernels=("Transpose",),
              differentiable=True,
              samples=lambda dtype, rng: iter([Sample((arr(rng, (2, 3, 4), dtype), 2, 0, 1)),
                                               Sample((arr(rng, (2, 3), dtype), 1, 0), desc="2-D")]))
register(OpInfo("Tensor.item", (), lambda x: x.item(),
                lambda x: x.reshape(()), lambda dtype, rng: iter([Sample((arr(rng, (1,), dtype),)),
                                                                  Sample((arr(rng, (1, 1), dtype),), desc="(1, 1)")]),
                FLOATS + (I32,), ref_upcast=False, graph=False, graph_reason="returns a Python number",
                out_dtype=lambda s: I64 if np_value(s.args[0]).dtype.kind == "i" else F64,  # a Python int / float
                special_skip="returns a Python number"))
for _name, _ref in (("maximum", np.maximum), ("minimum", np.minimum)):
    register(OpInfo(f"Tensor.{_name}", (_name.capitalize(),), lambda x, y, _n=_name: getattr(x, _n)(y), _ref,
                    _pair_samples(), FLOATS + (I32,), ref_upcast=False, out_dtype=_same_dtype, differentiable=True,
                    special_skip="the function's entry checks NaN"))
register(OpInfo("Tensor.nonzero_ops.nonzero", (), lambda x: (x.nonzero(), ops.nonzero(x)),
                lambda x: (np.argwhere(x), np.argwhere(x)),
                lambda dtype, rng: iter([Sample(((rng.random((3, 4)) < 0.5).astype(dtype),)),
                                         Sample((np.zeros((2, 2), dtype),), desc="no nonzero")]),
                (F32, I32, BOOL), ref_upcast=False, out_dtype=lambda s: I64, graph=False,
                graph_reason="the output shape depends on the values (PyNative only)", special_skip="indices"))
register(OpInfo("ops.identity", ("Identity",), lambda x: ops.identity(x), lambda x: x.copy(), unary_samples(),
                FLOATS + (I32, BOOL), differentiable=True, ref_upcast=False))
register(OpInfo("ops.select", ("Select",), lambda c, x, y: ops.select(c, x, y), np.where,
                lambda dtype, rng: iter([Sample((rng.random((3, 4)) < 0.5, arr(rng, (3, 4), dtype),
                                                 arr(rng, (3, 4), dtype))),
                                         Sample((rng.random((4,)) < 0.5, arr(rng, (3, 4), dtype),
                                                 arr(rng, (1, 4), dtype)), desc="broadcast")]),
                FLOATS + (I32,), differentiable=True, grad_args=(1, 2), ref_upcast=False))
register(OpInfo("ops.cumprod", (), lambda x, dim: ops.cumprod(x, dim), lambda x, dim: np.cumprod(x, dim),
                lambda dtype, rng: iter([Sample((arr(rng, (2, 4), dtype), 1)),
                                         Sample((NC(arr(rng, (3, 4), dtype), "T"), 0), desc="a view")]),
                (F32, F64), differentiable=True, ref_upcast=False, out_dtype=_same_dtype,
                special_skip="a running product: NaN/inf fill the rest of the row"))
register(OpInfo("ops.eye", ("Fill",), lambda n, m=None, dtype=None: ops.eye(n, m, dtype),
                lambda n, m=None, dtype=None: np.eye(n, m, dtype=np.float32 if dtype is None else np.int32),
                lambda dtype, rng: iter([Sample((3,)), Sample((2, 4), desc="2×4"),
                                         Sample((3, 2), dict(dtype=kiln.int32), desc="Int32")]),
                (F32,), ref_upcast=False, graph=False, graph_reason="a constant of Python arguments",
                out_dtype=lambda s: I32 if s.kwargs.get("dtype") is not None else F32,
                special_skip="takes Python ints"))
register(OpInfo("ops.range", (), lambda a, b, c: ops.range(a, b, c), lambda a, b, c: np.arange(a, b, c),
                lambda dtype, rng: iter([Sample((np.asarray(0, dtype), np.asarray(5, dtype), np.asarray(2, dtype))),
                                         Sample((np.asarray(4, dtype), np.asarray(-3, dtype),
                                                 np.asarray(-2, dtype)), desc="negative step")]),
                (I32, F32), ref_upcast=False, graph=False, graph_reason="the length depends on the values",
                out_dtype=lambda s: I64 if np_value(s.args[0]).dtype.kind == "i" else F32,
                special_skip="0-d bounds", notes="MindSpore 2.10: Int64 for int bounds"))

"""MindSpore's module layout (issue 24): `mindspore.ops.operations.<sub>`, `mindspore.ops.function.<sub>`,
`mindspore.common.api.jit` / `_pynative_executor`, `mindspore._checkparam`, `set_context(jit_level=...)`.

Every layout module re-exports Kiln's one definition: the identity checks below fail if any submodule ever holds an
object of its own. Where a name sits is MindSpore 2.10's (tools/gen_ms_layout.py wrote the table from MindSpore
2.10.0; the expectations here were read from MindSpore 2.10.0, e.g. `mindspore.ops.operations.math_ops.MatMul`).
"""
import importlib
import os
import re
import subprocess
import sys
import types

import numpy as np
import pytest

import kiln
import kiln.ops as ops
from kiln import Tensor
from kiln.ops import _ms_layout

P = ops.operations
OPS_SUBS = _ms_layout.OPERATIONS_MODULES
FUNC_SUBS = _ms_layout.FUNCTION_MODULES


def _layout_modules():
    for sub in OPS_SUBS:
        yield "operations", sub, importlib.import_module(f"kiln.ops.operations.{sub}")
    for sub in FUNC_SUBS:
        yield "function", sub, importlib.import_module(f"kiln.ops.function.{sub}")


def test_the_submodules_are_mindspores():
    # The submodules MindSpore 2.10 has and real code imports (the ones the issue names, plus spectral_ops and
    # manually_defined, where MindSpore keeps classes Kiln has).
    assert set(OPS_SUBS) == {"array_ops", "math_ops", "nn_ops", "_grad_ops", "random_ops", "sparse_ops", "image_ops",
                             "comm_ops", "other_ops", "control_ops", "debug_ops", "_inner_ops", "linalg_ops",
                             "_quant_ops", "spectral_ops", "manually_defined"}
    assert set(FUNC_SUBS) == {"math_func", "array_func", "random_func", "nn_func", "grad", "clip_func", "sparse_func",
                              "linalg_func", "vmap_func", "debug_func", "parameter_func", "image_func",
                              "spectral_func", "other_func"}
    assert isinstance(P, types.ModuleType) and hasattr(P, "__path__")
    assert isinstance(ops.function, types.ModuleType) and hasattr(ops.function, "__path__")


def test_every_name_is_the_one_kiln_object():
    """No second implementation: every name a layout module holds is the very object of kiln.ops."""
    total = 0
    for package, sub, module in _layout_modules():
        source = P if package == "operations" else ops
        assert module.__all__ == sorted(module.__all__)
        for name in module.__all__:
            assert getattr(module, name) is getattr(source, name), (sub, name)
            total += 1
        # nothing else of its own: only the re-exported names and the import of the helper
        own = {n for n in vars(module) if not n.startswith("__")} - set(module.__all__)
        assert own <= {"reexport"}, (sub, own)
    assert total > 700


def test_every_primitive_class_is_somewhere_mindspore_keeps_it():
    placed = set()
    for package, _, module in _layout_modules():
        if package == "operations":
            placed.update(module.__all__)
    classes = {n for n in dir(P) if isinstance(getattr(P, n), type)}
    # MindSpore 2.10 keeps BatchToSpaceND and InplaceUpdate in mindspore.ops.deprecated (P.BatchToSpaceND only)
    assert classes - placed == {"Primitive", "BatchToSpaceND", "InplaceUpdate"}


@pytest.mark.parametrize("sub,names", [
    ("math_ops", ["MatMul", "Add", "ReduceSum", "Sqrt", "BatchMatMul", "_Reduce"]),
    ("nn_ops", ["Conv2D", "ReLU", "Softmax", "MaxPool", "BiasAdd", "Dropout"]),
    ("array_ops", ["Reshape", "Transpose", "Concat", "Gather", "Cast", "Shape", "StridedSlice"]),
    ("comm_ops", ["AllReduce", "AllGather", "ReduceOp", "Broadcast"]),
    ("random_ops", ["StandardNormal", "UniformReal", "Multinomial"]),
    ("debug_ops", ["Print", "HookBackward", "InsertGradientOf"]),
    ("other_ops", ["Depend", "StopGradient", "Assign", "IOU"]),
    ("image_ops", ["ResizeBilinearV2"]),
    ("spectral_ops", ["BartlettWindow", "BlackmanWindow"]),
    ("manually_defined", ["WhileLoop", "ForiLoop", "Scan", "Tile", "Cast"]),
    ("_inner_ops", ["Cast"]),
])
def test_operations_placement(sub, names):
    module = importlib.import_module(f"kiln.ops.operations.{sub}")
    for name in names:
        assert name in module.__all__ and getattr(module, name) is getattr(P, name), (sub, name)


@pytest.mark.parametrize("sub,names", [
    ("math_func", ["matmul", "add", "sqrt", "addmm", "cumsum", "logsumexp"]),
    ("array_func", ["reshape", "concat", "gather", "one_hot", "flip", "narrow"]),
    ("nn_func", ["conv2d", "relu", "softmax", "max_pool2d", "cross_entropy", "dropout"]),
    ("random_func", ["standard_normal", "uniform", "randn", "multinomial"]),
    ("grad", ["grad", "value_and_grad", "jvp", "vjp", "stop_gradient"]),
    ("clip_func", ["clip_by_value", "clip_by_global_norm", "clamp"]),
    ("vmap_func", ["vmap"]),
    ("debug_func", ["print_"]),
    ("parameter_func", ["assign", "assign_add", "assign_sub", "index_add"]),
    ("image_func", ["bounding_box_decode", "bounding_box_encode", "check_valid"]),
    ("spectral_func", ["bartlett_window", "blackman_window"]),
    ("other_func", ["depend", "partial"]),
])
def test_function_placement(sub, names):
    module = importlib.import_module(f"kiln.ops.function.{sub}")
    for name in names:
        assert name in module.__all__ and getattr(module, name) is getattr(ops, name), (sub, name)


def test_missing_names_say_so():
    from kiln.ops.operations import _grad_ops as G
    with pytest.raises(AttributeError, match=r"MindSpore 2\.10\.0 has mindspore\.ops\.operations\._grad_ops\."
                                             r"ReluGrad; Kiln does not implement it"):
        G.ReluGrad  # noqa: B018 (the attribute access is the test)
    with pytest.raises(AttributeError, match=r"^module 'kiln.ops.operations._grad_ops' has no attribute 'NoSuch'$"):
        G.NoSuch  # noqa: B018 (the attribute access is the test)
    with pytest.raises(ImportError):
        exec("from kiln.ops.function.linalg_func import svd", {})
    assert not hasattr(G, "__path__")


def test_old_paths_keep_working():
    from kiln.ops.operations import Add, Conv2D, ReduceOp  # noqa: F401 (the import is the test)
    from kiln.ops import operations as P2
    from kiln.ops import function as F2
    from kiln.ops.function import _tensor_arg, assign, depend  # noqa: F401 (helpers kiln's modules import)
    assert P2 is P and P2.Add is ops.Add and P2.ReduceOp.SUM == ops.ReduceOp.SUM
    assert F2.add is ops.add
    # kiln.ops.function holds its submodules' functions too, as MindSpore's package does
    assert F2.conv2d is ops.conv2d and F2.matmul is ops.matmul
    # never over a Python built-in that kiln/ops/function/__init__.py's own code calls (range(), slice(), ...)
    import builtins
    for name in ("range", "slice", "round", "all", "any"):
        assert getattr(F2, name, getattr(builtins, name)) is getattr(builtins, name), name
    assert sys.modules["kiln.ops.function.array_func"].range is ops.range
    # function.grad is the function (not the submodule of that name), as in MindSpore
    assert F2.grad is ops.grad and callable(F2.grad)
    assert sys.modules["kiln.ops.function.grad"].value_and_grad is ops.value_and_grad


def test_reexported_objects_run():
    """Each layout module's objects work through its path, with NumPy references."""
    from kiln.ops.operations import array_ops, math_ops, nn_ops, other_ops, random_ops, spectral_ops
    from kiln.ops.function import array_func, clip_func, math_func, nn_func, other_func, parameter_func
    from kiln.ops.function import random_func, spectral_func, vmap_func
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    np.testing.assert_allclose(math_ops.MatMul()(Tensor(a), Tensor(b)).asnumpy(), a @ b, rtol=1e-6)
    np.testing.assert_allclose(math_func.matmul(Tensor(a), Tensor(b)).asnumpy(), a @ b, rtol=1e-6)
    np.testing.assert_array_equal(array_ops.Reshape()(Tensor(a), (3, 2)).asnumpy(), a.reshape(3, 2))
    np.testing.assert_array_equal(array_func.reshape(Tensor(a), (6,)).asnumpy(), a.reshape(6))
    np.testing.assert_allclose(nn_ops.ReLU()(Tensor(a - 2)).asnumpy(), np.maximum(a - 2, 0))
    np.testing.assert_allclose(nn_func.relu(Tensor(a - 2)).asnumpy(), np.maximum(a - 2, 0))
    assert other_ops.StopGradient()(Tensor(a)).shape == (2, 3)
    assert random_ops.StandardNormal(seed=1, seed2=2)((3, 4)).shape == (3, 4)
    assert random_func.standard_normal((2, 2)).shape == (2, 2)
    # MindSpore 2.10: ops.bartlett_window(5, periodic=False) = [0, 0.5, 1, 0.5, 0]
    np.testing.assert_allclose(spectral_func.bartlett_window(5, periodic=False).asnumpy(), [0, 0.5, 1, 0.5, 0])
    np.testing.assert_allclose(spectral_ops.BartlettWindow(periodic=False)(Tensor(5, kiln.int32)).asnumpy(),
                               [0, 0.5, 1, 0.5, 0])
    np.testing.assert_allclose(clip_func.clip_by_value(Tensor(a), 1.0, 4.0).asnumpy(), np.clip(a, 1, 4))
    grad_module = sys.modules["kiln.ops.function.grad"]  # `from ...function import grad` is the function, as in MS
    g = grad_module.grad(lambda x: (x * x).sum())(Tensor(a))
    np.testing.assert_allclose(g.asnumpy(), 2 * a)
    np.testing.assert_allclose(vmap_func.vmap(lambda x: x.sum())(Tensor(a)).asnumpy(), a.sum(1))
    w = kiln.Parameter(Tensor(np.zeros(3, np.float32)), name="w")
    parameter_func.assign(w, Tensor(np.ones(3, np.float32)))
    np.testing.assert_array_equal(w.asnumpy(), np.ones(3))
    np.testing.assert_array_equal(other_func.depend(Tensor(a), Tensor(b)).asnumpy(), a)


def _run_compat(code):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(kiln.__file__)), env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-m", "kiln.compat", "-c", code], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_paths_through_compat():
    out = _run_compat(
        "import mindspore\n"
        "from mindspore.ops.operations import math_ops, _grad_ops as G\n"
        "from mindspore.ops.operations.nn_ops import Conv2D\n"
        "from mindspore.ops.operations.comm_ops import ReduceOp\n"
        "from mindspore.ops import operations as P\n"
        "from mindspore.ops.function.math_func import matmul\n"
        "from mindspore.ops.function import grad\n"
        "import mindspore.ops.function.nn_func as nf\n"
        "from mindspore.common.api import jit, _pynative_executor\n"
        "from mindspore import _checkparam as Validator\n"
        "from mindspore._checkparam import Validator as validator, Rel\n"
        "from mindspore.boost.grad_accumulation import GradientAccumulation, gradient_accumulation_op\n"
        "from mindspore import boost\n"
        "import kiln\n"
        "print(math_ops.MatMul is P.MatMul is kiln.ops.MatMul, Conv2D is P.Conv2D, matmul is mindspore.ops.matmul,\n"
        "      grad is mindspore.ops.grad, nf.conv2d is mindspore.ops.conv2d, jit is mindspore.jit,\n"
        "      _pynative_executor.sync() is None, validator is Validator, Rel.GE == Validator.GE,\n"
        "      mindspore.ops.operations.math_ops is kiln.ops.operations.math_ops,\n"
        "      boost.GradientAccumulation is GradientAccumulation is kiln.boost.GradientAccumulation)\n")
    assert out.split() == ["True"] * 11


# ---- mindspore.common.api ----
def test_common_api_jit_and_sync():
    from kiln.common.api import _pynative_executor, jit, jit_class, mutable
    assert jit is kiln.jit and jit_class is kiln.jit_class and mutable is kiln.mutable

    @jit
    def f(x):
        return x * 2 + 1

    y = f(Tensor(np.array([1.0, 2.0], np.float32)))
    assert _pynative_executor.sync() is None
    np.testing.assert_array_equal(y.asnumpy(), [3.0, 5.0])


# ---- set_context(jit_level=...) ----
def test_set_context_jit_level():
    before = kiln.get_context("jit_level")
    assert before == ""  # MindSpore 2.10's default
    try:
        for level in ("O0", "O1", "O2"):
            kiln.set_context(jit_level=level)
            assert kiln.get_context("jit_level") == level
        # MindSpore 2.10's message for a value jit_config refuses
        with pytest.raises(ValueError, match=r"For 'jit_config', the value of argument jit_level must be one of "
                                             r"\['O0', 'O1', 'O2'\], but got O3\."):
            kiln.set_context(jit_level="O3")
        with pytest.raises(TypeError, match="'jit_level' must be str, but got int"):
            kiln.set_context(jit_level=1)
        kiln.set_context(jit_config={"jit_level": "O1"})
        assert kiln.get_context("jit_level") == "O1" and kiln.get_context("jit_config") == {"jit_level": "O1"}
        with pytest.raises(ValueError, match=r"the key of argument 'jit_config' must be one of .*but got foo\."):
            kiln.set_context(jit_config={"foo": 1})
        # a graph compiled at each level gives the same result
        net = kiln.nn.Dense(3, 2)
        x = Tensor(np.ones((1, 3), np.float32))
        ref = net(x).asnumpy()
        kiln.set_context(mode=kiln.GRAPH_MODE, jit_level="O2")
        np.testing.assert_allclose(net(x).asnumpy(), ref, rtol=1e-6)
    finally:
        kiln.set_context(mode=kiln.PYNATIVE_MODE, jit_level=before or "O0")
        kiln.context._context["jit_level"] = before
        kiln.context._context["jit_config"] = None


# ---- mindspore._checkparam: values and messages are MindSpore 2.10.0's (its _checkparam.py run on these calls) ----
from kiln import _checkparam as V  # noqa: E402 (the section's module)

_CHECK_ERRORS = [
    (lambda: V.check_value_type("n", True, [int], "P"), TypeError,
     "For 'P', the type of 'n' should be 'int', but got type 'bool'."),
    (lambda: V.check_value_type("n", "a", [int, float], "P"), TypeError,
     "For 'P', the type of 'n' should be one of '['int', 'float']', but got type 'str'."),
    (lambda: V.check_value_type("n", "a", int, None), TypeError, "The type of 'n' should be 'int', but got type 'str'."),
    (lambda: V.check_int(1, 2, V.GE, "k", "P"), ValueError,
     "For 'P', the 'k' must be int and must >= 2, but got '1' with type 'int'."),
    (lambda: V.check_int(1.0, 2, V.GE, "k", "P"), TypeError, "For 'P', the 'k' must be int, but got 'float'"),
    (lambda: V.check_int(True, 0, V.GE, "k", "P"), TypeError,
     "For 'P', the 'k' must be int and must >= 0, but got 'True' with type 'bool'."),
    (lambda: V.check_positive_int(0, "k", "P"), ValueError,
     "For 'P', the 'k' must be int and must > 0, but got '0' with type 'int'."),
    (lambda: V.check_positive_int(0), ValueError, "The input value must be int and must > 0, but got '0' with type 'int'."),
    (lambda: V.check_bool(1, "has_bias", "Dense"), TypeError, "For 'Dense', the 'has_bias' must be a bool, but got int."),
    (lambda: V.check_equal_int(3, 4, "n", "P"), ValueError,
     "For 'P', the 'n' must be int and must = 4, but got '3' with type 'int'."),
    (lambda: V.check_int_range(5, 0, 5, V.INC_LEFT, "axis", "P"), ValueError,
     "For 'P', the 'axis' must be in range of [0, 5), but got 5 with type 'int'."),
    (lambda: V.check_int_range(1.5, 0, 5, V.INC_BOTH, "axis", "P"), TypeError,
     "For 'P', the 'axis' must be 'int',  but got 'float'."),
    (lambda: V.check_float_range(1.5, 0.0, 1.0, V.INC_NEITHER, "p", "Dropout"), ValueError,
     "For 'Dropout', the 'p' must be in range of (0.0, 1.0), but got 1.5 with type 'float'."),
    (lambda: V.check_number_range(3, 0, 2, V.INC_BOTH, int, "x", "P"), ValueError,
     "For 'P', the 'x' must be in range of [0, 2], but got 3 with type 'int'."),
    (lambda: V.check_is_int(1.5, "n", "P"), TypeError, "For 'P', the type of 'n' must be 'int', but got 'float'."),
    (lambda: V.check_is_float(float("inf"), "n", "P"), ValueError, "For 'P', the 'n' must be a legal float, but got 'inf'."),
    (lambda: V.check_non_negative_int(-1, "n", "P"), ValueError,
     "For 'P', the 'n' must be int and must >= 0, but got '-1' with type 'int'."),
    (lambda: V.check_negative_int(0, "x"), ValueError, "The 'x' must be int and must < 0, but got '0' with type 'int'."),
    (lambda: V.check_non_positive_int(1, "x"), ValueError, "The 'x' must be int and must <= 0, but got '1' with type 'int'."),
    (lambda: V.check_positive_float(0.0, "lr", "P"), ValueError,
     "For 'P', the 'lr' must be float and must > 0, but got '0.0' with type 'float'."),
    (lambda: V.check_positive_float(1, "lr", "P"), TypeError, "For 'P', the 'lr' must be float, but got 'int'"),
    (lambda: V.check_positive_float(float("nan"), "lr", "P"), ValueError,
     "For 'P', the 'lr' must be a legal value, but got 'nan'."),
    (lambda: V.check_non_negative_float(-0.5, "wd"), ValueError,
     "The 'wd' must be float and must >= 0, but got '-0.5' with type 'float'."),
    (lambda: V.check_float(0.5, 1.0, V.GT, "x", "P"), ValueError,
     "For 'P', the 'x' must be float and must > 1.0, but got '0.5' with type 'float'."),
    (lambda: V.check_string("max", ["mean", "sum"], "reduction", "Loss"), ValueError,
     "For 'Loss', the 'reduction' must be str and must be in '['mean', 'sum']', but got 'max'."),
    (lambda: V.check("x_shape", (2, 3), "y_shape", (2, 4), V.EQ, "Add"), ValueError,
     "For 'Add', the 'x_shape' should be = y_shape: (2, 4), but got (2, 3)."),
    (lambda: V.check("x rank", 2, "y rank", 3, V.EQ, "Add"), ValueError,
     "For 'Add', the x rank should be = y rank: 3, but got 2."),
    (lambda: V.check("x", 1, "y", 2, V.GT, "Add", TypeError), TypeError, "For 'Add', the 'x' should be > y: 2, but got 1."),
    (lambda: V.check_number("x", 1, 2, V.GE, "P"), ValueError, "For 'P', the argument 'x' must >= 2, but got 1."),
    (lambda: V.check_isinstance("x", 1, (str,)), ValueError,
     "The parameter 'x' must be isinstance of (<class 'str'>,), but got 1."),
    (lambda: V.check_positive_int_sequence((1, 0, 2), "dims", "P"), ValueError,
     "For 'P', the 'dims[1]' must be int and must > 0, but got '0' with type 'int'."),
    (lambda: V.check_non_negative_int_sequence([1, -1], "pad"), ValueError,
     "The 'pad[1]' must be int and must >= 0, but got '-1' with type 'int'."),
    (lambda: V.check_valid_input("x", None, "P"), ValueError, "For 'P', the argument 'x'can not be None, but got None."),
    (lambda: V.check_pad_value_by_mode("same", 1, "Conv2D"), ValueError,
     "For 'Conv2D', padding must be zero when pad_mode is 'same', but got 1."),
    (lambda: V.check_str_by_regular("a b"), ValueError,
     r"The 'a b' is illegal, it must be match regular'^\w+[0-9a-zA-Z\_\.]*$' by flags're.ASCII.'"),
    (lambda: V.check_element_type_of_iterable("x", [1, "a"], [int], "P"), TypeError,
     "For 'P', the type of 'x' should be int, but got 'a' with type 'str'."),
    (lambda: V.check_element_type_of_dict("x", {1: "a"}, [str], [str], "P"), TypeError,
     "For 'P', the type of 'x' should be str, but got '1' with type 'int'."),
    (lambda: V.check_size_and_element_type_of_tuple("x", (1, 2), 3, int, "P"), ValueError,
     "For 'P', the 'x size' must be int and must = 3, but got '2' with type 'int'."),
    (lambda: V.check_axis_in_range(3, 2), ValueError, "The 'axis' must be in the range of [-2, 2), but got 3."),
    (lambda: V.twice((1, 2, 3)), TypeError,
     "When expanding an int number to tuple, input tuple dimension must be 2, but got (1, 2, 3)"),
    # dtypes: MindSpore's texts for tensor dtypes (Kiln passes x.dtype; MindSpore passes Tensor[...] types)
    (lambda: V.check_tensor_dtype_valid("x", kiln.int32, [kiln.float32, kiln.float16], "P"), TypeError,
     "For 'P', the element of 'x' must be one of Tensor[Float32], Tensor[Float16], but got Tensor[Int32].The "
     "supported data types depend on the hardware that executes the operator, for more details, please refer to the "
     "MindSpore official website to get more information about the data type."),
    (lambda: V.check_tensor_dtype_valid("x", kiln.int32, kiln.float32, "P"), TypeError,
     "For 'P', the element of 'x' must be Tensor[Float32], but got Tensor[Int32].The supported"),
    (lambda: V.check_tensors_dtypes_same_and_valid({"x": kiln.float32, "y": kiln.float16},
                                                   [kiln.float32, kiln.float16], "P"), TypeError,
     "For 'P', the type of 'y' should be same as 'x', but got 'x' with type Tensor[Float32] and 'y' with type "
     "Tensor[Float16]."),
    (lambda: V.check_subclass("x", kiln.int32, [kiln.float32, kiln.float16], "P"), TypeError,
     "For 'P', the element of 'x' must be one of Float32, Float16, but got Int32.The supported"),
    (lambda: V.check_types_same_and_valid({"x": kiln.float32, "y": kiln.int32}, kiln.dtype.number_type, "P"),
     TypeError, "For 'P', the type of 'y' should be same as 'x', but got 'x' with type Float32 and 'y' with type Int32."),
    (lambda: V.check_type_name("dtype", kiln.int32, kiln.float32, "Cast"), TypeError,
     "For 'Cast', the 'dtype' should be Float32, but got 'Int32'."),
]


@pytest.mark.parametrize("call,exc,text", _CHECK_ERRORS)
def test_checkparam_errors(call, exc, text):
    with pytest.raises(exc) as info:
        call()
    assert type(info.value) is exc
    assert str(info.value).startswith(text), str(info.value)


def test_checkparam_values():
    # MindSpore 2.10.0's return values for the same calls
    assert V.check_value_type("lr", 0.1, [float], "SGD") == 0.1
    assert V.check_value_type("n", (1,), (tuple, list), "P") == (1,)
    assert V.check_value_type("x", True, [bool, int]) is True
    assert V.check_int(3, 2, V.GE, "k", "P") == 3
    assert V.check_positive_int(5) == 5
    assert V.check_bool(False, "has_bias") is False
    assert V.check_int_range(5, 0, 5, V.INC_BOTH, "axis", "P") == 5
    assert V.check_int_range(np.int64(3), 0, 5, V.INC_BOTH, "axis", "P") == 3
    assert V.check_non_negative_int(0, "n", "P") == 0
    assert V.check_string("sum", ["mean", "sum"], "reduction", "Loss") == "sum"
    assert V.check("x_shape", (2, 3), "y_shape", (2, 3), V.EQ, "Add") == (2, 3)
    assert V.check_is_number(1, int, "x", "P") == 1
    assert V.check_axis_in_range(-2, 2) == 0
    assert (V.once(3), V.twice(3), V.triple((1, 2, 3)), V.twice((1, 2))) == ((3,), (3, 3), (1, 2, 3), (1, 2))
    assert V.check_element_type_of_iterable("x", [1, 2], [int], "P") is None
    assert V.check_tensor_dtype_valid("x", Tensor([1.0]).dtype, [kiln.float32, kiln.float16], "P") is None
    assert V.check_subclass("x", kiln.float32, kiln.dtype.number_type, "P") is None
    assert V.check_type_name("dtype", kiln.float32, [kiln.float32, kiln.float16], "Cast") == kiln.float32
    assert V.check_file_name_by_regular("net.ckpt") is True
    assert V.check_int(5, [1, 5], V.IN, "k", "P") == 5
    # the relation constants are MindSpore's numbers; Rel (MindSpore 1.x's name) holds the same ones
    assert (V.EQ, V.NE, V.LT, V.LE, V.GT, V.GE, V.INC_NEITHER, V.INC_LEFT, V.INC_RIGHT, V.INC_BOTH, V.IN,
            V.NOT_IN) == tuple(range(1, 13))
    assert V.Rel.GE == V.GE and V.Rel.INC_BOTH == V.INC_BOTH
    assert V.Validator is V and V.Validator.check_positive_int(2) == 2


def test_checkparam_in_a_user_cell():
    """Model-zoo style: a Cell validating its arguments with `from mindspore._checkparam import Validator, Rel`."""
    from kiln._checkparam import Rel, Validator as validator

    class Scale(kiln.nn.Cell):
        def __init__(self, factor, axis):
            super().__init__()
            self.factor = validator.check_positive_float(factor, "factor", self.cls_name)
            self.axis = validator.check_int_range(axis, 0, 2, Rel.INC_LEFT, "axis", self.cls_name)

        def construct(self, x):
            return x.sum(self.axis) * self.factor

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(Scale(0.5, 1)(Tensor(x)).asnumpy(), x.sum(1) * 0.5)
    with pytest.raises(ValueError, match=r"For 'Scale', the 'axis' must be in range of \[0, 2\), but got 2"):
        Scale(0.5, 2)
    with pytest.raises(TypeError, match="For 'Scale', the 'factor' must be float, but got 'int'"):
        Scale(1, 0)


# ---- MultitypeFuncGraph.register(..., "RowTensor") and "Int64" ----
def test_multitype_funcgraph_rowtensor_and_int64():
    from kiln import RowTensor
    grad_scale = ops.MultitypeFuncGraph("grad_scale")  # as mindcv's train_step.py writes it

    @grad_scale.register("Tensor", "Tensor")
    def _dense(scale, grad):
        return grad * ops.cast(ops.reciprocal(scale), grad.dtype)

    @grad_scale.register("Tensor", "RowTensor")
    def _rows(scale, grad):
        return RowTensor(grad.indices, grad.values * ops.cast(ops.reciprocal(scale), grad.values.dtype),
                         grad.dense_shape)

    scale = Tensor(np.float32(4.0))
    dense = np.arange(4, dtype=np.float32).reshape(2, 2)
    rows = RowTensor(Tensor(np.array([0, 2], np.int32)), Tensor(np.full((2, 3), 8.0, np.float32)), (4, 3))
    out = ops.HyperMap()(ops.partial(grad_scale, scale), (Tensor(dense), rows))
    np.testing.assert_allclose(out[0].asnumpy(), dense / 4)
    assert isinstance(out[1], RowTensor)
    expect = np.zeros((4, 3), np.float32)
    expect[[0, 2]] = 2.0
    np.testing.assert_array_equal(out[1].to_dense().asnumpy(), expect)

    @kiln.jit
    def compiled(scale, values, indices):
        return grad_scale(scale, RowTensor(indices, values, (4, 3))).to_dense()

    np.testing.assert_array_equal(compiled(scale, Tensor(np.full((2, 3), 8.0, np.float32)),
                                           Tensor(np.array([0, 2], np.int32))).asnumpy(), expect)

    steps = ops.MultitypeFuncGraph("steps")

    @steps.register("Int64", "Tensor")
    def _int(n, x):
        return x / n

    np.testing.assert_allclose(steps(4, Tensor(dense)).asnumpy(), dense / 4)
    with pytest.raises(ValueError, match="no registered signature matches"):
        steps(4.0, Tensor(dense))
    with pytest.raises(ValueError, match="unknown type name 'Sparse'"):
        steps.register("Sparse")


# ---- mindspore.boost.grad_accumulation ----
def _accumulation_run(mode, subclass=False):
    from kiln import boost, nn
    from kiln.boost.grad_accumulation import gradient_accumulation_op, gradient_clear_op
    from kiln.ops import functional as F

    class MindcvAccumulation(boost.GradientAccumulation):  # mindcv/utils/train_step.py's subclass
        def __init__(self, max_accumulation_step, optimizer, grad_reducer):
            super().__init__(max_accumulation_step, optimizer)
            self.grad_reducer = grad_reducer

        def construct(self, loss, grads):
            loss = F.depend(loss, self.hyper_map(F.partial(gradient_accumulation_op, self._max_accumulation_step),
                                                 self._grad_accumulation, grads))
            self._accumulation_step += 1
            if self._accumulation_step >= self._max_accumulation_step:
                reduced = self.grad_reducer(self._grad_accumulation)
                loss = F.depend(loss, self.optimizer(reduced))
                loss = F.depend(loss, self.hyper_map(F.partial(gradient_clear_op), self._grad_accumulation))
                self._accumulation_step = 0
            else:
                loss = F.depend(loss, self.optimizer.get_lr())
            return loss

    def same(g):
        return g

    rng = np.random.default_rng(0)
    x = rng.standard_normal((12, 3)).astype(np.float32)
    y = rng.standard_normal((12, 1)).astype(np.float32)
    net = nn.Dense(3, 1, weight_init="ones", bias_init="zeros")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
    with_loss = nn.WithLossCell(net, nn.MSELoss())

    class Step(nn.Cell):
        def __init__(self):
            super().__init__()
            self.wl = with_loss
            self.weights = opt.parameters
            self.acc = MindcvAccumulation(2, opt, same) if subclass else boost.GradientAccumulation(2, opt)
            self.grad = ops.GradOperation(get_by_list=True)

        def construct(self, xb, yb):
            loss = self.wl(xb, yb)
            return self.acc(loss, self.grad(self.wl, self.weights)(xb, yb))

    kiln.set_context(mode=mode)
    try:
        step = Step()
        rows = []
        for i in range(3):
            loss = step(Tensor(x[4 * i:4 * i + 4]), Tensor(y[4 * i:4 * i + 4]))
            rows.append((float(loss.asnumpy()), net.weight.asnumpy().copy(), int(step.acc._accumulation_step.asnumpy()),
                         step.acc._grad_accumulation[0].asnumpy().copy(), opt.moments[0].asnumpy().copy()))
        return step, rows
    finally:
        kiln.set_context(mode=kiln.PYNATIVE_MODE)


@pytest.mark.parametrize("mode,subclass", [(kiln.PYNATIVE_MODE, False), (kiln.GRAPH_MODE, False),
                                           (kiln.GRAPH_MODE, True)])
def test_gradient_accumulation_matches_mindspore(mode, subclass):
    step, rows = _accumulation_run(mode, subclass)
    # MindSpore 2.10.0, the same script (PyNative and Graph; mindcv's subclass in Graph mode): losses, weight,
    # step counter, weight's accumulator and Momentum's moment after each of 3 steps (accumulation over 2)
    expect = [
        (3.3514915, [[1.0, 1.0, 1.0]], 1, [[1.3478054, 0.6506748, 0.04284187]], [[0.0, 0.0, 0.0]]),
        (4.032571, [[0.65218294, 0.883861, 0.8898738]], 0, [[0.0, 0.0, 0.0]], [[3.4781709, 1.1613897, 1.1012622]]),
        (1.5452989, [[0.65218294, 0.883861, 0.8898738]], 1, [[0.5044963, 0.10460475, 0.00572745]],
         [[3.4781709, 1.1613897, 1.1012622]]),
    ]
    for got, want in zip(rows, expect):
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-5)
        assert got[2] == want[2]
        np.testing.assert_allclose(got[3], want[3], rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(got[4], want[4], rtol=1e-5)
    # MindSpore's accumulator names
    assert [p.name for p in step.acc._grad_accumulation] == ["acc.grad_accumulation.optimizer.weight",
                                                             "acc.grad_accumulation.optimizer.bias"]


def test_gradient_accumulation_is_the_mean_gradient():
    """Two accumulated half-batches update SGD's weights as one step on the whole batch (NumPy reference)."""
    from kiln import nn
    from kiln.boost import GradientAccumulation
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 3)).astype(np.float32)
    y = rng.standard_normal((8, 1)).astype(np.float32)
    net = nn.Dense(3, 1, weight_init="ones", bias_init="zeros")
    opt = nn.SGD(net.trainable_params(), learning_rate=0.1)
    acc = GradientAccumulation(2, opt)
    grad_fn = ops.value_and_grad(lambda xb, yb: nn.MSELoss()(net(xb), yb), None, opt.parameters)
    w0 = net.weight.asnumpy().copy()
    for half in (slice(0, 4), slice(4, 8)):
        loss, grads = grad_fn(Tensor(x[half]), Tensor(y[half]))
        acc(loss, grads)
        if half.start == 0:
            np.testing.assert_array_equal(net.weight.asnumpy(), w0)  # no update before the cycle ends
    g = 2 * ((x @ w0.T) - y).T @ x / 8
    np.testing.assert_allclose(net.weight.asnumpy(), w0 - 0.1 * g, rtol=1e-5)
    with pytest.raises(ValueError, match="'max_accumulation_step' must be >= 1, but got 0"):
        GradientAccumulation(0, opt)
    with pytest.raises(TypeError, match="'max_accumulation_step' must be int, but got float"):
        GradientAccumulation(2.0, opt)


# ---- Cell.register_buffer / buffers / named_buffers / get_buffer; common.parameter._Buffer ----
def _buffer_net():
    from kiln import nn
    from kiln.common.parameter import _Buffer

    class Inner(nn.Cell):
        def __init__(self):
            super().__init__()
            self.register_buffer("buffer_c", Tensor(np.array([0, 0, 0], np.float32)))

        def construct(self, x):
            return x + self.buffer_c

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(3, 3, weight_init="ones", bias_init="zeros")
            self.register_buffer("running", Tensor(np.ones(3, np.float32)))
            self.register_buffer("tmp", Tensor(np.zeros(3, np.float32)), persistent=False)
            self.inner = Inner()
            self.extra = _Buffer(Tensor(np.full(3, 2.0, np.float32)))

        def construct(self, x):
            return self.inner(self.dense(x)) * self.extra + self.running

    return Net


def test_buffers_are_state_not_parameters(tmp_path):
    # every expectation below is MindSpore 2.10.0's output for the same script
    net = _buffer_net()()
    assert list(net.parameters_dict()) == ["dense.weight", "dense.bias"]
    assert [p.name for p in net.trainable_params()] == ["dense.weight", "dense.bias"]
    assert [k for k, _ in net.named_buffers()] == ["running", "tmp", "extra", "inner.buffer_c"]
    assert [k for k, _ in net.named_buffers(recurse=False)] == ["running", "tmp", "extra"]
    assert [k for k, _ in net.named_buffers(prefix="net")] == ["net.running", "net.tmp", "net.extra",
                                                               "net.inner.buffer_c"]
    assert len(list(net.buffers())) == 4 and net.buffers().__next__() is net.running
    assert list(net.state_dict()) == ["running", "extra", "dense.weight", "dense.bias", "inner.buffer_c"]
    assert net.get_buffer("inner.buffer_c") is net.inner.buffer_c
    for target, text in [("inner.nope", "Inner has no attribute `nope`"), ("dense", "`dense` is not a buffer"),
                         ("nope.buffer_c", "Net has no attribute `nope`")]:
        with pytest.raises(AttributeError, match=text):
            net.get_buffer(target)
    path = str(tmp_path / "net.ckpt")
    kiln.save_checkpoint(net, path)
    assert list(kiln.load_checkpoint(path)) == ["dense.weight", "dense.bias"]  # buffers are not written
    x = Tensor(np.ones((1, 3), np.float32))
    np.testing.assert_array_equal(net(x).asnumpy(), [[7.0, 7.0, 7.0]])
    state = {k: Tensor(np.full(v.shape, 5.0, np.float32)) for k, v in net.state_dict().items()}
    assert str(net.load_state_dict(state, strict=True)) == "<All keys matched successfully>"
    np.testing.assert_array_equal(net.running.asnumpy(), [5, 5, 5])
    np.testing.assert_array_equal(net.inner.buffer_c.asnumpy(), [5, 5, 5])
    np.testing.assert_array_equal(net(x).asnumpy(), [[130.0, 130.0, 130.0]])
    # gradients do not reach buffers; the Parameters' gradients are those of the formula
    grads = ops.grad(net, grad_position=None, weights=net.trainable_params())(x)
    assert len(grads) == 2
    np.testing.assert_allclose(grads[1].asnumpy(), [5.0, 5.0, 5.0])  # d/d bias of (dense + 5) * 5 + 5


def test_buffer_assignment_rules():
    from kiln import nn
    from kiln.common.parameter import _Buffer
    net = _buffer_net()()
    net.tmp = None
    assert [k for k, _ in net.named_buffers()] == ["running", "extra", "inner.buffer_c"] and net.tmp is None
    net.running = _Buffer(Tensor(np.full(3, 7.0, np.float32)), persistent=False)
    # MindSpore 2.10 registers an assigned _Buffer as persistent (its persistent flag is not passed on)
    assert list(net.state_dict()) == ["running", "extra", "dense.weight", "dense.bias", "inner.buffer_c"]
    np.testing.assert_array_equal(net.running.asnumpy(), [7, 7, 7])
    del net.running
    assert [k for k, _ in net.named_buffers()] == ["extra", "inner.buffer_c"] and not hasattr(net, "running")
    with pytest.raises(TypeError, match=r"Buffer 'extra' already exists in network, can not assign this type: "
                                        r"'<class '.*Tensor'>' as a buffer\."):
        net.extra = Tensor([1.0])
    cases = [((1, Tensor([1.0])), TypeError, "buffer name should be a string.But got this type: <class 'int'>"),
             (("a.b", Tensor([1.0])), KeyError, 'buffer name can\'t contain "\\."'),
             (("", Tensor([1.0])), KeyError, 'buffer name can\'t be empty string ""'),
             (("x", 3), TypeError, r"cannot assign '<class 'int'>' object to buffer 'x' \(mindspore Tensor or None "
                                   r"required\)"),
             (("dense", Tensor([1.0])), KeyError, "attribute 'dense' already exists")]
    for args, exc, text in cases:
        with pytest.raises(exc) as info:
            _buffer_net()().register_buffer(*args)
        assert re.fullmatch(text, info.value.args[0]), info.value.args[0]
    with pytest.raises(ValueError, match="For create Buffer, input data should not be None"):
        _Buffer(None)
    with pytest.raises(TypeError, match="For create Buffer, type of input data should be Tensor"):
        _Buffer(3)

    class Early(nn.Cell):
        def __init__(self):
            self.register_buffer("a", Tensor([1.0]))
            super().__init__()

    with pytest.raises(AttributeError, match=r"cannot assign buffer before Cell.__init__\(\) call"):
        Early()
    other = _buffer_net()()
    other.register_buffer("none", None)
    assert "none" not in dict(other.named_buffers()) and "none" not in other.state_dict() and other.none is None


def test_buffers_in_graph_mode():
    net = _buffer_net()()
    x = Tensor(np.ones((1, 3), np.float32))
    ref = net(x).asnumpy()
    kiln.set_context(mode=kiln.GRAPH_MODE)
    try:
        np.testing.assert_array_equal(net(x).asnumpy(), ref)  # [[7, 7, 7]] in MindSpore 2.10 Graph mode too
        # an in-place write into a buffer (load_state_dict) is read by the compiled graph (MindSpore 2.10's CPU graph
        # keeps the compiled value: 7; Kiln reads the buffer by reference: (3 + 0) * 2 + 4 = 10)
        net.load_state_dict({"running": Tensor(np.full(3, 4.0, np.float32))}, strict=False)
        np.testing.assert_array_equal(net(x).asnumpy(), [[10.0, 10.0, 10.0]])
    finally:
        kiln.set_context(mode=kiln.PYNATIVE_MODE)
    np.testing.assert_array_equal(net(x).asnumpy(), [[10.0, 10.0, 10.0]])


# ---- mindspore.nn.optim.optimizer.opt_init_args_register (mindcv's AdamW imports it) ----
def test_opt_init_args_register():
    from kiln import nn
    from kiln.nn.optim.optimizer import Optimizer, opt_init_args_register

    class MyOpt(Optimizer):
        @opt_init_args_register
        def __init__(self, params, learning_rate=0.1, beta=0.9, eps=1e-8, weight_decay=0.0):
            super().__init__(learning_rate, params, weight_decay)
            self.beta = beta

        def construct(self, grads):
            return grads

    net = nn.Dense(2, 1)
    # MindSpore 2.10.0's values for the same two optimizers
    o1 = MyOpt(net.trainable_params(), learning_rate=Tensor(np.float32(0.5)), beta=0.8)
    assert o1.init_args == {"beta": 0.8, "eps": 1e-08, "weight_decay": 0.0}
    assert o1.init_learning_rate == 0.5 and o1.beta == 0.8
    assert [p.name for p in o1.init_params["params"]] == ["weight", "bias"]
    o2 = MyOpt(net.trainable_params(), learning_rate=nn.ExponentialDecayLR(0.1, 0.9, 4))
    assert o2.init_args == {"beta": 0.9, "eps": 1e-08, "weight_decay": 0.0} and o2.init_learning_rate is None
    grads = (Tensor(np.ones((1, 2), np.float32)), Tensor(np.ones(1, np.float32)))
    out = o2(grads)
    np.testing.assert_array_equal(out[0].asnumpy(), [[1.0, 1.0]])
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        MyOpt(net.trainable_params(), nope=1)


def test_cell_to_casts_floating_buffers():
    from kiln import nn

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.d = nn.Dense(2, 2)
            self.register_buffer("f", Tensor(np.ones(2, np.float32)))
            self.register_buffer("i", Tensor(np.ones(2, np.int32)))
            self.register_buffer("tmp", Tensor(np.ones(2, np.float32)), persistent=False)

    net = Net()
    old = net.f
    net.to(kiln.float16)
    # MindSpore 2.10.0: Float16 Int32 Float16, a new tensor object for the cast buffer
    assert (net.f.dtype, net.i.dtype, net.d.weight.dtype) == (kiln.float16, kiln.int32, kiln.float16)
    assert net.f is not old and dict(net.named_buffers())["f"] is net.f
    assert list(net.state_dict()) == ["f", "i", "d.weight", "d.bias"]  # tmp stays non-persistent


def test_import_kiln_brings_boost_and_checkparam():
    # `import mindspore` makes mindspore.boost and mindspore._checkparam attributes (MindSpore 2.10)
    out = _run_compat("import mindspore\nprint(mindspore.boost.GradientAccumulation.__name__, mindspore._checkparam.GE)")
    assert out.split() == ["GradientAccumulation", "6"]


def test_more_reexported_objects_run(capfd):
    """The remaining layout modules' objects through their paths (MindSpore 2.10.0's values)."""
    from kiln.ops.function import debug_func, image_func
    from kiln.ops.operations import _inner_ops, comm_ops, debug_ops, image_ops, manually_defined
    x = Tensor(np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2))
    np.testing.assert_allclose(image_ops.ResizeBilinearV2()(x, (4, 4)).asnumpy()[0, 0],
                               [[0, 0.5, 1, 1], [1, 1.5, 2, 2], [2, 2.5, 3, 3], [2, 2.5, 3, 3]])
    np.testing.assert_array_equal(manually_defined.Tile()(Tensor(np.array([1, 2], np.float32)), (2,)).asnumpy(),
                                  [1, 2, 1, 2])
    cast = _inner_ops.Cast()(Tensor(np.array([1.7], np.float32)), kiln.int32)
    assert cast.dtype == kiln.int32 and cast.asnumpy().tolist() == [1]
    valid = image_func.check_valid(Tensor(np.array([[0, 0, 10, 10], [0, 0, 100, 5]], np.float32)),
                                   Tensor(np.array([20, 20, 1], np.float32)))
    assert valid.asnumpy().tolist() == [True, False]
    assert comm_ops.ReduceOp.SUM == ops.ReduceOp.SUM
    debug_func.print_("hello", Tensor(np.array([1.0], np.float32)))
    debug_ops.Print()("p", Tensor(np.array([2.0], np.float32)))
    out = capfd.readouterr().out
    assert "hello" in out and "p Tensor" in out

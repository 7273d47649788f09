"""The registry covers every public surface (issue 23): each public function of kiln.ops and each Tensor method is
called by some entry of tests/python/op_registry (so it is checked against NumPy, under jit and for gradients), or is
listed here with the test that checks it. Primitive classes: tests/python/test_primitive_parity.py, which uses
`reached_by_registry` from here."""
import functools
import inspect
import os
import types

from kiln import Tensor, ops

import op_registry as R


# Public functions of kiln.ops that are not functions of tensors (transforms, decorators, Python-value helpers,
# control flow): no registry entry can check them against a NumPy reference; each is tested where named. {name: why}
NOT_TENSOR_FUNCTIONS = {
    "value_and_grad": "autodiff transform: tests/python/test_autodiff*.py, test_grad*.py",
    "get_grad": "reads a gradient out of value_and_grad(..., return_ids=True)'s result: test_autodiff_transforms.py",
    "vjp": "autodiff transform: tests/python/test_autodiff_transforms.py",
    "jvp": "autodiff transform: tests/python/test_autodiff_transforms.py",
    "jacfwd": "autodiff transform: tests/python/test_autodiff_transforms.py",
    "jacrev": "autodiff transform: tests/python/test_autodiff_transforms.py",
    "vmap": "vectorizing transform: tests/python/test_autodiff_transforms.py",
    "partial": "functools-style partial application (MindSpore's ops.partial): tests/python/test_composite.py",
    "constexpr": "decorator (MindSpore's constexpr): tests/python/test_composite.py, test_compat_paths.py",
    "add_flags": "sets attributes on a function (MindSpore's ops.add_flags): tests/python/test_names_api.py",
    "switch": "control flow (If): tests/python/test_control_flow.py",
    "make_range": "returns a Python tuple of ints: tests/python/test_ops_composite_api.py",
    "tuple_len": "returns a Python int: tests/python/test_ops_composite_api.py",
    "scalar_cast": "casts a Python number: tests/python/test_bbox_ops.py",
}


_TESTS_DIR = os.path.dirname(os.path.abspath(__file__))


def _names_reached(fn, names, ids, depth=0):
    """Adds to `names` the global names that `fn` (a registry callable) refers to, following nested code objects,
    default arguments (`_f=getattr(ops, name)`), closures and functools.partial; to `ids` the callables met."""
    if fn is None or depth > 4 or id(fn) in ids:
        return
    ids.add(id(fn))
    if isinstance(fn, functools.partial):
        _names_reached(fn.func, names, ids, depth + 1)
        return

    def walk_code(code):
        names.update(code.co_names)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                walk_code(const)

    code = getattr(fn, "__code__", None)
    if code is None or not code.co_filename.startswith(_TESTS_DIR):
        return  # a library function counts by identity (ids), not by the names its own body uses
    walk_code(code)
    bound = list(fn.__defaults__ or ()) + list((fn.__kwdefaults__ or {}).values())
    for cell in fn.__closure__ or ():
        try:
            bound.append(cell.cell_contents)
        except ValueError:  # an empty cell
            pass
    for v in bound:
        if callable(v):
            _names_reached(v, names, ids, depth + 1)


def reached_by_registry():
    """(names, ids): the global names the registry's callables refer to and the callables they reach."""
    names, ids = set(), set()
    for e in R.REGISTRY:
        for attr in ("op", "draw", "run", "check"):
            _names_reached(getattr(e, attr, None), names, ids)
    return names, ids


def test_every_public_function_is_in_the_registry():
    """Every public function of kiln.ops is called by some registry entry (so it is checked against NumPy, in Graph
    mode and for gradients where it is differentiable), or is listed in NOT_TENSOR_FUNCTIONS with where it is
    tested."""
    names, ids = reached_by_registry()
    public = [n for n in dir(ops) if not n.startswith("_")
              and (inspect.isfunction(getattr(ops, n, None)) or inspect.isbuiltin(getattr(ops, n, None)))]
    missing = sorted(n for n in public if n not in names and id(getattr(ops, n)) not in ids
                     and n not in NOT_TENSOR_FUNCTIONS)
    assert not missing, f"public kiln.ops functions that no registry entry calls: {missing}"
    stale = sorted(set(NOT_TENSOR_FUNCTIONS) - set(public))
    assert not stale, f"NOT_TENSOR_FUNCTIONS names what kiln.ops no longer has: {stale}"


# Tensor methods that are not functions of tensors a registry entry can check, each with the test that covers it.
NOT_TENSOR_METHOD_ENTRIES = {
    "from_numpy": "a constructor sharing a NumPy array's memory: tests/python/test_state_and_api_checks.py",
    "init_data": "draws a deferred initialization: tests/python/test_names_api.py",
    "register_hook": "a gradient hook: tests/python/test_hooks_bprop.py",
    "value": "returns the tensor itself: tests/python/test_tensor_methods_inplace.py",
    "index": "advanced indexing by a tuple of index Tensors: tests/python/test_names_api.py",
    "set_dtype": "changes the dtype in place and returns it: tests/python/test_tensor_methods_inplace.py",
}


def _forwarded_function(method):
    """The kiln.ops function a derived Tensor method calls (@defop's `tensor=` methods and _same_op aliases), or
    None for a hand-written method."""
    code = getattr(method, "__code__", None)
    if code is None or not method.__closure__:
        return None
    bound = dict(zip(code.co_freevars, (c.cell_contents for c in method.__closure__)))
    qual = getattr(method, "__qualname__", "")
    if qual.startswith("_tensor_method.") and callable(bound.get("fn")):
        return bound["fn"]
    if qual.startswith("_same_op.") and isinstance(bound.get("op"), str):
        return getattr(ops, bound["op"], None)
    return None


def test_every_tensor_method_is_in_the_registry():
    """Every public Tensor method is called by a registry entry (by name, or as an entry named 'Tensor.<method>'),
    or forwards to a kiln.ops function that an entry calls (the methods derived from @defop and the aliases), or is
    listed in NOT_TENSOR_METHOD_ENTRIES with where it is tested."""
    names, ids = reached_by_registry()
    names |= {e.name[len("Tensor."):] for e in R.REGISTRY if e.name.startswith("Tensor.")}
    missing = []
    for n in dir(Tensor):
        if n.startswith("_") or n in names or n in NOT_TENSOR_METHOD_ENTRIES:
            continue
        m = getattr(Tensor, n)
        if not callable(m) or isinstance(m, type):
            continue
        fn = _forwarded_function(m)
        if fn is not None and (fn.__name__ in names or id(fn) in ids):
            continue
        missing.append(n)
    assert not missing, f"Tensor methods that no registry entry calls: {sorted(missing)}"

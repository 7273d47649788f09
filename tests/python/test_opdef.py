"""Every op declared with @defop (kiln/ops/_opdef.py) reaches each surface it declares — ops.<name> and its
aliases, the Primitive class in ops and ops.operations, the Tensor method, its `mint` paths in kiln.mint — has a
docstring, and has an entry in the op registry (tests/python/op_registry), which tests its values, dtypes and
gradients; a mint-only adapter ("mint.<path>") has its check in tests/python/test_mint.py instead. Also the
derivation itself: Primitive attributes map to the function's keywords, a surface defined twice is refused, and a
provisional Tensor method gives way to a declared one."""
import importlib

import numpy as np
import pytest

import kiln.mint  # noqa: F401  (declares the mint-only adapters)
from kiln import Tensor, ops
from kiln.ops import _opdef
from kiln.ops.primitives import Primitive

import op_registry as R

ALL_SPECS = _opdef.specs()
SPECS = [s for s in ALL_SPECS if not _opdef.is_mint_only(s)]  # the ops (mint-only adapters have no ops name)
IDS = [s.name for s in SPECS]
MINT_SPECS = [s for s in ALL_SPECS if s.mint]


def test_there_are_declared_ops():
    assert len(SPECS) >= 7


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_functional_names_and_docstring(spec):
    for name in (spec.name,) + spec.aliases:
        assert getattr(ops, name) is spec.fn, name
    assert len(spec.fn.__doc__.strip()) > 20


@pytest.mark.parametrize("spec", [s for s in SPECS if s.primitive], ids=[s.name for s in SPECS if s.primitive])
def test_primitive_class(spec):
    cls = getattr(ops, spec.primitive)
    assert cls is getattr(ops.operations, spec.primitive)
    assert issubclass(cls, Primitive) and cls._opdef is spec
    prim = cls()
    assert prim.name == spec.primitive
    for attr, (_, default) in spec.prim_attrs.items():
        assert getattr(prim, attr) == default
    assert spec.name in cls.__doc__


@pytest.mark.parametrize("spec", [s for s in SPECS if s.tensor], ids=[s.name for s in SPECS if s.tensor])
def test_tensor_method(spec):
    method = getattr(Tensor, spec.tensor)
    assert method._opdef is spec
    assert method.__doc__ == spec.fn.__doc__


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_registry_entry(spec):
    names = {info.name for info in R.REGISTRY}
    assert spec.name in names or spec.primitive in names, \
        f"ops.{spec.name} has no entry in tests/python/op_registry (add one row to its family file)"


@pytest.mark.parametrize("spec", MINT_SPECS, ids=[s.name for s in MINT_SPECS])
def test_mint_paths_resolve(spec):
    for path in spec.mint:
        head, _, leaf = path.rpartition(".")
        module = importlib.import_module("kiln.mint" + ("." + head if head else ""))
        assert getattr(module, leaf) is spec.fn, f"mint.{path}"


def test_mint_only_adapters_are_tested():
    import test_mint
    adapters = [s for s in ALL_SPECS if _opdef.is_mint_only(s)]
    assert adapters
    for spec in adapters:
        assert not hasattr(ops, spec.name.rpartition(".")[2]) or getattr(ops, spec.name.rpartition(".")[2]) \
            is not spec.fn, f"{spec.name} leaked into kiln.ops"
        assert len(spec.fn.__doc__.strip()) > 20
        assert spec.name[len("mint."):] in test_mint.CASES, \
            f"{spec.name} has no check in tests/python/test_mint.py's CASES (add one)"


def test_surfaces_compute_the_same_values():
    x = Tensor(np.array([0.25, -0.75, 1.5], np.float32))
    want = np.tan(np.array([0.25, -0.75, 1.5], np.float32))
    for got in (ops.tan(x), ops.Tan()(x), x.tan(), ops.operations.Tan()(x)):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


@pytest.fixture
def scratch_specs(monkeypatch):
    """A private spec table, so the derivation tests leave kiln.ops untouched."""
    monkeypatch.setattr(_opdef, "_SPECS", {})
    return _opdef


def test_primitive_attributes_become_keywords(scratch_specs):
    @scratch_specs.defop(primitive="ScaleBy", prim_attrs={"factor": ("scale", 2.0)}, tensor="scale_by",
                         mint=("scale_by", "nn.functional.scale_by"), aliases=("times",))
    def scale_by(x, scale=1.0):
        """x times `scale` (a test op)."""
        return x * scale

    namespace = {}

    class Operations:
        pass

    class FakeTensor:
        pass

    scratch_specs.install(namespace, Operations, Primitive, FakeTensor)
    assert namespace["scale_by"] is scale_by and namespace["times"] is scale_by
    assert namespace["ScaleBy"]()(3.0) == 6.0
    assert namespace["ScaleBy"](factor=5.0)(3.0) == 15.0
    assert Operations.ScaleBy is namespace["ScaleBy"]
    assert FakeTensor.scale_by(4.0, 0.5) == 2.0
    assert scratch_specs.mint_names("") == {"scale_by": scale_by}
    assert scratch_specs.mint_names("nn.functional") == {"scale_by": scale_by}
    with pytest.raises(TypeError, match="ScaleBy.*unknown attribute.*'scale'"):
        namespace["ScaleBy"](scale=3.0)


def test_bad_declarations_are_refused(scratch_specs):
    with pytest.raises(ValueError, match="docstring"):
        @scratch_specs.defop()
        def undocumented(x):
            return x

    @scratch_specs.defop()
    def once(x):
        """A test op."""
        return x

    with pytest.raises(ValueError, match="declared twice"):
        @scratch_specs.defop(name="once")
        def again(x):
            """A test op."""
            return x

    with pytest.raises(TypeError, match="prim_attrs given without a primitive"):
        @scratch_specs.defop(prim_attrs={"a": ("a", 1)})
        def no_prim(x):
            """A test op."""
            return x


def test_a_surface_defined_twice_is_an_error(scratch_specs):
    @scratch_specs.defop(primitive="Twice")
    def twice(x):
        """A test op."""
        return x

    namespace = {"twice": lambda x: x}

    class Operations:
        pass

    with pytest.raises(RuntimeError, match="ops.twice is defined twice"):
        scratch_specs.install(namespace, Operations, Primitive, type("T", (), {}))


def test_mint_only_declarations(scratch_specs):
    @scratch_specs.defop(name="mint.nn.functional.scaled")
    def scaled(input, scale=2.0):
        """input times `scale` (a test mint-only adapter)."""
        return input * scale

    namespace = {}
    scratch_specs.install(namespace, type("Operations", (), {}), Primitive, type("T", (), {}))
    assert namespace == {}  # no ops name, Primitive or Tensor method
    assert scratch_specs.mint_names("nn.functional") == {"scaled": scaled}
    assert scratch_specs.is_mint_only(scratch_specs.specs()[0])
    with pytest.raises(TypeError, match="mint-only"):
        @scratch_specs.defop(name="mint.other", tensor="other")
        def other(x):
            """A test op."""
            return x
    with pytest.raises(TypeError, match="no '.'"):
        @scratch_specs.defop(name="nn.dotted")
        def dotted(x):
            """A test op."""
            return x


def test_a_provisional_tensor_method_gives_way(scratch_specs):
    @scratch_specs.defop(tensor="halve")
    def halve(x):
        """x / 2 (a test op)."""
        return x / 2

    def provisional(self):
        return "provisional"
    provisional._provisional = True
    FakeTensor = type("FakeTensor", (), {"halve": provisional})
    scratch_specs.install({}, type("Operations", (), {}), Primitive, FakeTensor)
    assert FakeTensor.halve._opdef.fn is halve
    # the real Tensor's stand-ins (kiln/common/_tensor_methods.py) are marked provisional, or have given way to a
    # @defop op's method
    for name in ("std", "var", "swapaxes", "t", "repeat"):
        method = getattr(Tensor, name)
        assert getattr(method, "_provisional", False) or getattr(method, "_opdef", None) is not None, name
    assert Tensor.std._provisional  # MindSpore's two overloads, which ops.std's signature does not have

"""Every op declared with @defop (kiln/ops/_opdef.py) reaches each surface it declares — ops.<name> and its
aliases, the Primitive class in ops and ops.operations, the Tensor method — has a docstring, and has an entry in the
op registry (tests/python/op_registry), which tests its values, dtypes and gradients. Also the derivation itself:
Primitive attributes map to the function's keywords, and a surface defined twice is refused."""
import numpy as np
import pytest

from kiln import Tensor, ops
from kiln.ops import _opdef
from kiln.ops.primitives import Primitive

import op_registry as R

SPECS = _opdef.specs()
IDS = [s.name for s in SPECS]


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

"""One definition per Python-level op, from which every MindSpore surface of it is derived.

An op is written once, as its functional form, and declares the other names MindSpore gives it:

    @defop(primitive="Tan", tensor="tan", mint="tan", aliases=("arctan_like",))
    def tan(input):
        '''MindSpore's ops.tan(input): ...'''

`defop` records an `OpSpec`; `install` (run once at the end of kiln/ops/__init__.py) then derives
  - `ops.<name>` and `ops.<alias>` (the function itself),
  - the Primitive class `ops.<primitive>` (and `ops.operations.<primitive>`): its constructor takes the attributes
    listed in `prim_attrs` (MindSpore's primitive attribute name -> (the function's keyword, default); by keyword
    or positionally in that order, as MindSpore's constructors take them), its call passes its inputs positionally
    and the attributes as those keywords, so `ops.CumSum(reverse=True)(x, 0)` is `ops.cumsum(x, 0, reverse=True)`;
  - the Tensor method `Tensor.<tensor>` (the tensor is the function's first argument);
  - the `mint` names: "tan" is `mint.tan`, "nn.functional.relu" is `mint.nn.functional.relu`.
A mint-only adapter — a function that exists only under `mint` because MindSpore's mint signature differs from the
ops function's (mint.max(input, dim, keepdim) returning (values, indices)) — is declared with a name "mint.<path>"
(`@defop(name="mint.max")` in a kiln/mint module): it gets no `ops` name, Primitive or Tensor method, only its mint
path (the name without "mint.", unless `mint=` names others). kiln.mint picks both kinds up through `mint_names`.

A derived name that something else already defines is an error at import (two definitions of one surface name
would silently shadow each other). tests/python/test_opdef.py checks, for every spec, that each declared surface
reaches the function, that it has a docstring and that the op registry (tests/python/op_registry) has an entry for
it: adding a plain op is its definition here plus one registry row.

Ops that are C++ kernels are rows of the op schema (src/ops/schema/ops.yaml: traits, export, the public function
its `python` field names; docs/adding_an_op.md) and are defined in their family file; their Python functional form
is the `defop` function that calls `_core`.
"""
import inspect

__all__ = ["OpSpec", "defop", "specs", "install", "mint_names", "is_mint_only"]

_SPECS = {}  # functional name -> OpSpec, in definition order (filled at import time only, under the import lock)


class OpSpec:
    """What one op declares: its functional `name` and function `fn`, the other `ops` names (`aliases`), the
    Primitive class name (`primitive`, None for none) and its attributes (`prim_attrs`: MindSpore attribute name ->
    (keyword of `fn`, default)), the Tensor method name (`tensor`, None for none) and the `mint` paths (`mint`)."""

    __slots__ = ("name", "fn", "aliases", "primitive", "prim_attrs", "tensor", "mint", "module")

    def __init__(self, name, fn, aliases, primitive, prim_attrs, tensor, mint, module):
        self.name, self.fn, self.aliases = name, fn, aliases
        self.primitive, self.prim_attrs, self.tensor, self.mint, self.module = primitive, prim_attrs, tensor, \
            mint, module

    def __repr__(self):
        return f"OpSpec({self.name!r}, primitive={self.primitive!r}, tensor={self.tensor!r}, mint={self.mint!r})"


def _names(value, what, op):
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (tuple, list)) and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise TypeError(f"defop({op!r}): {what} must be a name or a tuple of names, got {value!r}")


def defop(name=None, *, primitive=None, prim_attrs=None, tensor=None, mint=None, aliases=()):
    """Decorator declaring a function as the functional form of an op, with its other surfaces (module docstring).

    Args:
        name (str): the `ops` name; default the function's own name.
        primitive (str): the Primitive class name, or None.
        prim_attrs (dict): for the Primitive: attribute name -> (keyword of the function, default value).
        tensor (str): the Tensor method name, or None.
        mint (str | tuple[str]): `mint` paths ("tan", "nn.functional.relu"), or None.
        aliases (tuple[str]): further `ops` names for the same function (e.g. "arcsinh" for "asinh").

    Raises:
        TypeError: a malformed declaration; ValueError: an op name declared twice, or a function without a docstring.
    """
    def deco(fn):
        op = name or fn.__name__
        mint_paths = _names(mint, "mint", op)
        if op.startswith("mint."):
            if primitive is not None or tensor is not None or aliases or prim_attrs:
                raise TypeError(f"defop({op!r}): a mint-only adapter declares no primitive, Tensor method or aliases")
            mint_paths = mint_paths or (op[len("mint."):],)
        elif "." in op:
            raise TypeError(f"defop({op!r}): an op name has no '.' (mint-only adapters are named 'mint.<path>')")
        if op in _SPECS:
            raise ValueError(f"defop: op {op!r} is declared twice ({_SPECS[op].module} and {fn.__module__})")
        if not (fn.__doc__ or "").strip():
            raise ValueError(f"defop({op!r}): the function needs a docstring (shapes, dtypes, errors, formula)")
        attrs = dict(prim_attrs or {})
        for attr, value in attrs.items():
            if not (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str)):
                raise TypeError(f"defop({op!r}): prim_attrs[{attr!r}] must be (keyword, default), got {value!r}")
        if attrs and primitive is None:
            raise TypeError(f"defop({op!r}): prim_attrs given without a primitive name")
        if tensor is not None and not isinstance(tensor, str):
            raise TypeError(f"defop({op!r}): tensor must be a method name, got {tensor!r}")
        if primitive is not None and not isinstance(primitive, str):
            raise TypeError(f"defop({op!r}): primitive must be a class name, got {primitive!r}")
        _SPECS[op] = OpSpec(op, fn, _names(aliases, "aliases", op), primitive, attrs, tensor, mint_paths,
                            fn.__module__)
        return fn
    return deco


def is_mint_only(spec):
    """True for a mint-only adapter (declared as "mint.<path>": no ops name, Primitive or Tensor method)."""
    return spec.name.startswith("mint.")


def specs():
    """Every declared op, in definition order (a list of OpSpec)."""
    return list(_SPECS.values())


def _make_primitive(spec, base):
    attrs = spec.prim_attrs
    fn = spec.fn

    def __init__(self, *args, **kwargs):
        base.__init__(self)
        if len(args) > len(attrs):
            raise TypeError(f"For '{spec.primitive}', at most {len(attrs)} attribute(s) "
                            f"{list(attrs)} can be given, but got {len(args)} positional arguments")
        for attr, value in zip(attrs, args):  # positional attributes, in prim_attrs' order (MindSpore's)
            if attr in kwargs:
                raise TypeError(f"For '{spec.primitive}', attribute {attr!r} given twice")
            kwargs[attr] = value
        unknown = sorted(set(kwargs) - set(attrs))
        if unknown:
            raise TypeError(f"For '{spec.primitive}', unknown attribute(s) {unknown}; it takes "
                            f"{sorted(attrs) or 'none'}")
        for attr, (_, default) in attrs.items():
            setattr(self, attr, kwargs.get(attr, default))

    def __call__(self, *inputs):
        return fn(*inputs, **{kw: getattr(self, attr) for attr, (kw, _) in attrs.items()})

    params = [inspect.Parameter(a, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=d) for a, (_, d) in attrs.items()]
    __init__.__signature__ = inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)]
                                               + params)
    doc = (f"MindSpore's primitive {spec.primitive}: `ops.{spec.primitive}("
           + ", ".join(f"{a}={d!r}" for a, (_, d) in attrs.items())
           + f")(*inputs)` is `ops.{spec.name}(*inputs"
           + "".join(f", {kw}={a}" for a, (kw, _) in attrs.items()) + ")`.\n\n" + (fn.__doc__ or ""))
    return type(spec.primitive, (base,), {"__init__": __init__, "__call__": __call__, "__doc__": doc,
                                          "__module__": "kiln.ops"})


def _tensor_method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


def install(ops_namespace, operations_module, primitive_base, tensor_cls):
    """Adds every declared surface: functions and aliases to `ops_namespace` (a dict: kiln.ops's globals), Primitive
    classes there and to `operations_module`, Tensor methods to `tensor_cls`. Raises RuntimeError where a derived
    name is already taken by another definition."""
    for spec in _SPECS.values():
        if is_mint_only(spec):
            continue
        for op in (spec.name,) + spec.aliases:
            have = ops_namespace.get(op)
            if have is not None and have is not spec.fn:
                raise RuntimeError(f"ops.{op} is defined twice: by defop in {spec.module} and by {have!r}")
            ops_namespace[op] = spec.fn
        if spec.primitive is not None:
            have = ops_namespace.get(spec.primitive)
            if have is not None and getattr(have, "_opdef", None) is not spec:
                raise RuntimeError(f"ops.{spec.primitive} is defined twice: by defop({spec.name!r}) and {have!r}")
            if have is None:
                cls = _make_primitive(spec, primitive_base)
                cls._opdef = spec
                ops_namespace[spec.primitive] = cls
            setattr(operations_module, spec.primitive, ops_namespace[spec.primitive])
        if spec.tensor is not None:
            have = tensor_cls.__dict__.get(spec.tensor)
            if getattr(have, "_provisional", False):  # a stand-in until the op existed (kiln/common/_tensor_methods.py)
                have = None
            if have is not None and getattr(have, "_opdef", None) is not spec:
                raise RuntimeError(f"Tensor.{spec.tensor} is defined twice: by defop({spec.name!r}) and "
                                   f"kiln/common/tensor.py")
            if have is None:
                method = _tensor_method(spec.fn)
                method._opdef = spec
                setattr(tensor_cls, spec.tensor, method)


def mint_names(prefix):
    """The functions declared for `mint.<prefix>` ("" for `mint` itself, "nn.functional" for
    `mint.nn.functional`): a dict name -> function."""
    out = {}
    for spec in _SPECS.values():
        for path in spec.mint:
            head, _, leaf = path.rpartition(".")
            if head == prefix:
                if leaf in out and out[leaf] is not spec.fn:
                    raise RuntimeError(f"mint{'.' + prefix if prefix else ''}.{leaf} is declared twice")
                out[leaf] = spec.fn
    return out

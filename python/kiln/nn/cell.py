"""nn.Cell: the base class of every network, layer, loss and optimizer (MindSpore's programming model;
../shared/reference/mindspore_api.md §3).

A Cell registers the Parameters and child Cells assigned to its attributes, in insertion order, and names the
Parameters by where they sit: assigning a child Cell to `self.fc1` (with `auto_prefix=True`, the default) at once
renames every Parameter inside it to `fc1.<path>` (`fc1.weight`), recursively, so names are fixed when the network
is built. Calling a Cell runs its `construct`.

Note [attribute storage]: registered Parameters and Cells live in `_params` / `_cells` (ordered dicts, the source of
truth for iteration, naming and repr) and are mirrored into the instance `__dict__`, so that `self.fc1` inside
`construct` is an ordinary attribute read (no `__getattr__` fallback on the hot path). Every change to `_params` /
`_cells` goes through `_register_param` / `_register_cell` / `_unregister`, which keep the two in step.
"""
import inspect
import weakref
from collections import OrderedDict

from .. import _engine
from ..common.tensor import Tensor as _Tensor
from ..ops import _kernels
from ..common import dtype as mstype
from ..common.parameter import Parameter, ParameterTuple, _Buffer
from ..ops.primitives import Primitive
from .._compiler import graph_builtins as _graph_builtins
from .._compiler.jit import JitFunction
from .._compiler.guards import _bump_train_state, _recording, _record_cell
from .._compiler import ast_rewrite as _ast_rewrite
from .._autodiff import custom_grad as _custom_grad
from ._cell_hooks import _CellHooks
from ..context import _graph as _graph_flag
from . import _mixed_precision
from . import _state_dict
from . import _cell_extra
from ._cell_extra import _pipeline_hook
from . import _cell_buffers

_PLACEHOLDER = "Parameter"
# construct function -> inspect.Signature (computed once per class, only for keyword calls; weak, so that classes
# made at run time are freed)
_SIGNATURES = weakref.WeakKeyDictionary()


def _inputs_of(ref):
    """The signature source of a Cell's compiled construct: the dynamic Spec of its set_inputs (None when there is
    none, or once the cell is gone)."""
    def source():
        cell = ref()
        return None if cell is None else cell.__dict__.get("_dynamic_spec")
    return source


def _cast_inputs(args, dtype):
    """Casts float Tensors in args (recursively in tuples/lists) to `dtype`; other values unchanged."""
    out = []
    for a in args:
        if isinstance(a, _Tensor):
            if a.dtype != dtype and mstype.is_float(a.dtype):
                a = _kernels.cast(a, dtype)
        elif isinstance(a, (tuple, list)):
            a = type(a)(_cast_inputs(a, dtype))
        out.append(a)
    return out


class Cell(_CellHooks):
    """Base class for all neural network cells (MindSpore's `nn.Cell`).

    Args:
        auto_prefix (bool): prefix the names of a child cell's Parameters with the attribute name it is assigned to
            (default True). Wrappers that must keep the network's names (optimizers, TrainOneStepCell, ...) pass
            False.
        flags (dict): attributes set on the cell with `add_flags`.

    Subclasses call `super().__init__()` first, assign layers and Parameters as attributes, and define
    `construct(self, *inputs)`. `cell(*inputs)` runs `construct` (keyword arguments are bound to its signature
    first). `training` is False until `set_train()` is called.

    Raises (on attribute assignment):
        AttributeError: a Parameter or Cell assigned before `Cell.__init__()`.
        TypeError: a non-Tensor assigned to a Parameter's name, a Parameter to a child cell's name, and so on.
    """

    def __init__(self, auto_prefix=True, flags=None):
        d = self.__dict__
        d["_params"] = OrderedDict()
        d["_cells"] = OrderedDict()
        d["_primitives"] = OrderedDict()
        d["_auto_prefix"] = bool(auto_prefix)
        d["training"] = False
        d["_made_in_trace"] = _engine.tracing()  # made by the traced code itself: not a guard of the graph
        d["requires_grad"] = False
        d["_phase"] = "predict"
        d["_mp_dtype"] = None
        d["_checked"] = False
        d["_id"] = 1
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_hook_kwargs"] = set()      # keys of the forward (pre-)hooks registered with_kwargs=True
        d["_hook_always"] = set()      # keys of the forward hooks registered always_call=True
        d["_custom_bprop"] = _custom_grad.has_custom_bprop(type(self))
        d["_has_hooks"] = d["_custom_bprop"]
        d["_fast"] = False
        d["_dynamic_shape_inputs"] = None
        d["_jit_config"] = None
        d["_flags"] = {}
        if flags:
            self.add_flags(**flags)

    # ------------------------------------------------------------------------------------------------ naming
    @property
    def cls_name(self):
        """The class name (used in error messages: "For 'Dense', ...")."""
        return type(self).__name__

    @property
    def param_prefix(self):
        return ""

    @property
    def phase(self):
        """'train' after set_train(True), else 'predict'."""
        return self.__dict__.get("_phase", "predict")

    @phase.setter
    def phase(self, value):
        self.__dict__["_phase"] = value

    # ------------------------------------------------------------------------------- attribute registration
    def _register_param(self, name, param):
        d = self.__dict__
        d["_params"][name] = param
        if param is None or "_kiln_op_layout" not in param.__dict__:  # sliced by operator parallel: reads go
            d[name] = param                                             # through __getattr__ (whole_for_read)
        if param is not None and getattr(param, "has_init", False):  # deferred values: the next call draws them
            d["_checked"] = False
            d["_fast"] = False

    def _register_cell(self, name, cell):
        self.__dict__["_cells"][name] = cell
        self.__dict__[name] = cell

    def _unregister(self, name):
        d = self.__dict__
        d["_params"].pop(name, None)
        d["_cells"].pop(name, None)
        d.pop(name, None)

    def _replace_cells(self, new_cells):
        """Replaces the whole ordered dict of children (containers renumber their keys this way)."""
        d = self.__dict__
        for k in list(d["_cells"]):
            if d.get(k) is d["_cells"][k]:
                d.pop(k, None)
        d["_cells"] = OrderedDict()
        for k, c in new_cells.items():
            self._register_cell(k, c)

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_params")
        cells = d.get("_cells")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("For 'Cell', can not assign params before Cell.__init__() is called.")
            if cells and name in cells:
                raise TypeError(f"For 'Cell', the {name} must be Cell, but got Parameter.")
            if name in d and name not in params:
                if d[name] is not None:
                    raise TypeError(f"For 'Cell', the {name} should not be Parameter.")
                del d[name]
            self.insert_param_to_cell(name, value)
        elif isinstance(value, ParameterTuple) or (isinstance(value, (list, tuple)) and value and
                                                   all(isinstance(v, Parameter) for v in value)):
            if params is None:
                raise AttributeError("For 'Cell', can not assign params before Cell.__init__() is called.")
            self._set_attr_for_param_sequence(name, value)
        elif isinstance(value, Cell):
            if cells is None:
                raise AttributeError("For 'Cell', can not assign cells before Cell.__init__() is called.")
            if params and name in params:
                raise TypeError(f"For 'Cell', the {name} must be Parameter, but got Cell.")
            if name in d and name not in cells:
                del d[name]
            if d["_auto_prefix"]:
                value.update_parameters_name(name + ".")
            self._register_cell(name, value)
        elif name in d.get("_buffers", ()) or isinstance(value, _Buffer):  # buffers: nn/_cell_buffers.py
            _cell_buffers.assign(self, name, value)
        elif params and name in params:
            if isinstance(value, _Tensor) and params[name] is not None:
                params[name].set_data(value)
            elif (_engine.tracing() and isinstance(value, (int, float)) and not isinstance(value, bool)
                  and params[name] is not None):  # graph mode: `self.w = 1` assigns the number (MindSpore)
                params[name].set_data(_Tensor(value, params[name].dtype))
            elif value is None:
                self._register_param(name, None)
            else:
                raise TypeError(f"For 'Cell', the type of {name} should be Parameter or ParameterTuple, but got "
                                f"{type(value).__name__}.")
        elif cells and name in cells:
            if value is not None:
                raise TypeError(f"For 'Cell', the type of {name} should be cell, but got {type(value).__name__}.")
            self._register_cell(name, None)
        else:
            if cells is not None and isinstance(value, Primitive):
                d["_primitives"][name] = value
            object.__setattr__(self, name, value)
            if name == "training":  # compiled graphs are keyed by the training flags
                _bump_train_state()

    def _set_attr_for_param_sequence(self, name, value):
        """A ParameterTuple or a list/tuple of Parameters: each one is registered under its own name (unnamed ones
        become `Parameter$1`, `Parameter$2`, ...); the sequence itself stays readable as the attribute."""
        seen_objs, seen_names = set(), set()
        for p in value:
            if id(p) in seen_objs:
                continue
            seen_objs.add(id(p))
            if p.name == _PLACEHOLDER:
                p.name = f"{_PLACEHOLDER}${self.__dict__['_id']}"
                self.__dict__["_id"] += 1
            if p.name in seen_names:
                raise ValueError(f"The value {value} , its name '{p.name}' already exists. Please set a unique name "
                                 "for the parameter.")
            seen_names.add(p.name)
            self.insert_param_to_cell(p.name, p, check_name_contain_dot=False)
        d = self.__dict__
        if name in d["_params"]:
            del d["_params"][name]
        object.__setattr__(self, name, value)

    def __getattr__(self, name):
        # Only reached when normal lookup fails (registered members are mirrored in __dict__, see the module note).
        d = self.__dict__
        for store in ("_params", "_cells"):
            s = d.get(store)
            if s is not None and name in s:
                v = s[name]
                if store == "_params" and v is not None and "_kiln_op_layout" in v.__dict__:
                    # a Parameter stored sliced by operator parallel: whole for the ops of a construct
                    from ..parallel import _attribute_reads
                    return _attribute_reads.whole_for_read(v, self, name)
                return v
        raise AttributeError(f"The '{type(self).__name__}' object has no attribute '{name}'.")

    def __delattr__(self, name):
        d = self.__dict__
        if name in d.get("_params", ()) or name in d.get("_cells", ()):
            self._unregister(name)
        elif not _cell_buffers.delete(self, name):
            object.__delattr__(self, name)

    def insert_param_to_cell(self, param_name, param, check_name_contain_dot=True):
        """Registers `param` (a Parameter or None) under `param_name`; a placeholder-named Parameter takes that name.

        Raises:
            KeyError: empty name, a name containing '.', or a name used by another attribute.
            TypeError: param is neither a Parameter nor None.
            AttributeError: Cell.__init__() was not called.
        """
        if not isinstance(param_name, str):
            raise TypeError(f"For 'insert_param_to_cell', the type of parameter 'param_name' must be str, but got "
                            f"{type(param_name).__name__}.")
        if not param_name:
            raise KeyError("For 'insert_param_to_cell', the argument 'param_name' should not be None.")
        if check_name_contain_dot and "." in param_name:
            raise KeyError(f"For 'insert_param_to_cell', the argument 'param_name' should not contain '.', but got "
                           f"{param_name}.")
        d = self.__dict__
        if "_params" not in d:
            raise AttributeError("For 'insert_param_to_cell', please call Cell.__init__() firstly.")
        if param_name not in d["_params"] and (param_name in d or hasattr(type(self), param_name)):
            raise KeyError(f"For 'insert_param_to_cell', the {param_name} parameter already exists in the network. "
                           "Cannot insert another parameter with the same name.")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"For 'insert_param_to_cell', the argument 'param' must be 'Parameter' if not None, but "
                            f"got {type(param).__name__}.")
        if param is not None and param.name == _PLACEHOLDER:
            param.name = param_name
        self._register_param(param_name, param)

    def insert_child_to_cell(self, child_name, child_cell):
        """Registers `child_cell` (a Cell or None) under `child_name` WITHOUT renaming its Parameters.

        Raises:
            TypeError: child_name is not a str, or child_cell is neither a Cell nor None.
            KeyError: empty name, a name containing '.', or a name used by a non-cell attribute.
        """
        if not isinstance(child_name, str):
            raise TypeError(f"For 'insert_child_to_cell', the type of parameter 'child_name' must be str, but got "
                            f"{type(child_name).__name__}.")
        if not child_name or "." in child_name:
            raise KeyError("For 'insert_child_to_cell', the parameter 'child_name' can not be None and can not "
                           f"contain '.', but got {child_name!r}.")
        d = self.__dict__
        if "_cells" not in d:
            raise AttributeError("For 'insert_child_to_cell', please call Cell.__init__() firstly.")
        if child_name not in d["_cells"] and (child_name in d or hasattr(type(self), child_name)):
            raise KeyError(f"For 'insert_child_to_cell', the {child_name} child cell already exists in the network. "
                           "Cannot insert another child cell with the same name.")
        if child_cell is not None and not isinstance(child_cell, Cell):
            raise TypeError(f"For 'insert_child_to_cell', the argument 'child_cell' must be 'Cell' if not None, but "
                            f"got type {type(child_cell)}.")
        self._register_cell(child_name, child_cell)

    def update_parameters_name(self, prefix="", recurse=True):
        """Sets every Parameter's name to `prefix + <its path in this cell>` (e.g. 'fc1.' + 'weight')."""
        if not isinstance(prefix, str):
            raise TypeError(f"For 'update_parameters_name', the type of 'prefix' must be str, but got "
                            f"{type(prefix).__name__}.")
        for path, p in self.parameters_and_names(expand=recurse):
            p.name = prefix + path

    # ---------------------------------------------------------------------------------------------- calling
    def construct(self, *args, **kwargs):
        """The computation of the cell; subclasses define it."""
        raise AttributeError("For 'Cell', the method 'construct' is not defined.")

    def __call__(self, *args, **kwargs):
        # Hot path: one flag says "checked, no mixed precision, no hooks"; everything else is in _call_slow.
        if _pipeline_hook[0] is not None:  # a pipeline-parallel step is running (nn/wrap/pipeline.py)
            return _pipeline_hook[0](self, args, kwargs)
        if self._fast and not kwargs:
            return self._run_construct(args, kwargs)
        return self._call_slow(args, kwargs)

    def _call_plain(self, args, kwargs):
        """__call__ without the pipeline-parallel hook (used by that hook to run a Cell of its own stage)."""
        if self._fast and not kwargs:
            return self._run_construct(args, kwargs)
        return self._call_slow(args, kwargs)

    def _call_slow(self, args, kwargs):
        d = self.__dict__
        if kwargs and not (d["_has_hooks"] and d["_mp_dtype"] is None):  # with hooks: bound after the pre-hooks
            args, kwargs = self._bind_kwargs(args, kwargs)
        if not d["_checked"]:
            self._check_construct()
            if not _engine.tracing():  # values deferred by nn.no_init_parameters(): drawn before the first run
                self.init_parameters_data()  # (a compile draws them all before tracing: kiln/_compiler/jit.py)
            self._init_check()
        if d["_mp_dtype"] is not None:
            args = _cast_inputs(args, d["_mp_dtype"])
            if getattr(type(self), "_mp_cast_subclass", False):  # its own Parameters too (nn/_mixed_precision.py)
                run = self._call_with_hooks if d["_has_hooks"] else self._run_construct
                return _mixed_precision.run(self, run, args, kwargs)
        if d["_has_hooks"]:
            return self._call_with_hooks(args, kwargs)
        return self._run_construct(args, kwargs)

    def _update_fast_flag(self):
        d = self.__dict__
        d["_fast"] = d["_checked"] and d["_mp_dtype"] is None and not d["_has_hooks"]

    def _run_construct(self, args, kwargs):
        """Runs construct on (already bound) args. This is the one place where a Cell's computation is executed:
        PyNative runs it eagerly; in GRAPH_MODE the call compiles construct (once per signature, see kiln.jit)
        and runs the graph; inside a function being compiled it is traced inline."""
        if _graph_flag[0] and not _engine.tracing():
            from ..parallel import _op_shard
            if _op_shard._strategies_made[0]:  # operator parallel with full_batch: equal shapes on every process
                _op_shard.check_full_batch_inputs(type(self).__name__, args, self.get_parameters())
            return self._compiled_construct()(*args, **kwargs)
        if _recording[0] and not self.__dict__.get("_made_in_trace"):
            # some thread is compiling: this cell's training flag keys that graph. A Cell made while tracing (a
            # functional op that builds its layer, ops.kl_div) is part of the traced code: guarding on it would
            # make every call trace again.
            _record_cell(self)
        if _engine.tracing():  # inside a compiled function: graph built-ins, and tensor control flow compiles too
            return _graph_builtins.call(_ast_rewrite.converted(self.construct), args, kwargs)
        return self.construct(*args, **kwargs)

    def _compiled_construct(self):
        """The JitFunction that compiles this cell's construct (one per instance, bound to it weakly so that the
        cell and its graphs are freed together; see kiln._compiler.jit)."""
        d = self.__dict__
        jf = d.get("_jit_construct")
        if jf is None or d["_jit_owner"]() is not self:  # first call, or a copied cell
            construct = type(self).construct
            if isinstance(construct, JitFunction):  # `@jit def construct`: already compiled per instance
                jf = self.construct
            elif "construct" in d:  # construct replaced on the instance
                jf = JitFunction(d["construct"], name=f"{type(self).__name__}.construct")
            else:
                jf = JitFunction(construct, name=f"{type(self).__name__}.construct", bound_to=self)
            jf._signature_source = _inputs_of(weakref.ref(self))  # set_inputs: dynamic shapes (kiln/_compiler/dynamic.py)
            d["_jit_construct"] = jf
            d["_jit_owner"] = weakref.ref(self)
        return jf

    def _bind_kwargs(self, args, kwargs):
        """Binds keyword arguments to construct's signature (defaults applied), as MindSpore does before running."""
        fn = type(self).construct
        sig = _SIGNATURES.get(fn)
        if sig is None:
            sig = inspect.signature(fn)
            _SIGNATURES[fn] = sig
        try:
            bound = sig.bind(self, *args, **kwargs)
        except TypeError as e:
            raise TypeError(f"For '{type(self).__name__}', the arguments of construct can not be bound: {e}") from None
        bound.apply_defaults()
        return bound.args[1:], bound.kwargs

    def _check_construct(self):
        if type(self).construct is Cell.construct:
            raise AttributeError("For 'Cell', the method 'construct' is not defined.")

    def _init_check(self):
        """Before the first call: if Parameters in the tree share a name, reset every name to its path in this
        cell and check again (ValueError if a clash remains)."""
        names = [p.name for _, p in self.parameters_and_names()]
        if len(set(names)) < len(names):
            self.update_parameters_name()
            self.check_names()
        self.__dict__["_checked"] = True
        self._update_fast_flag()

    def check_names(self):
        """ValueError if two different Parameters in the tree share a name."""
        seen = {}
        for _, p in self.parameters_and_names():
            other = seen.get(p.name)
            if other is not None and other is not p:
                raise ValueError(f"The value {p} , its name '{p.name}' already exists. Please set a unique name for "
                                 "the parameter.")
            seen[p.name] = p

    # --------------------------------------------------------------------------------------------- iteration
    def cells_and_names(self, cells=None, name_prefix=""):
        """Yields (path, cell) depth-first: ('', self) — or (name_prefix, self) — first, then children as
        'fc1', 'block.conv', ... Each cell object is yielded once."""
        seen = cells if cells is not None else set()
        if id(self) in seen:
            return
        seen.add(id(self))
        yield name_prefix, self
        for name, cell in self.__dict__["_cells"].items():
            if cell is not None:
                yield from cell.cells_and_names(seen, name_prefix + "." + name if name_prefix else name)

    def parameters_and_names(self, name_prefix="", expand=True):
        """Yields (path, Parameter): this cell's own Parameters in insertion order, then each child's (depth
        first). Paths join attribute names with '.'; each Parameter object is yielded once."""
        cells = self.cells_and_names(name_prefix=name_prefix) if expand else [(name_prefix, self)]
        seen = set()
        for cell_name, cell in cells:
            for pname, p in cell.__dict__["_params"].items():
                if p is not None and id(p) not in seen:
                    seen.add(id(p))
                    yield (cell_name + "." + pname if cell_name else pname), p

    def get_parameters(self, expand=True):
        """Generator of the Parameters in parameters_and_names order."""
        for _, p in self.parameters_and_names(expand=expand):
            yield p

    def trainable_params(self, recurse=True):
        """List of the Parameters with requires_grad=True."""
        return [p for p in self.get_parameters(expand=recurse) if p.requires_grad]

    def set_comm_fusion(self, fusion_type, recurse=True):
        """Sets `comm_fusion` (an int >= 0) of this Cell's trainable Parameters (with `recurse`, its sub-Cells'
        too) and returns the Cell (MindSpore's Cell.set_comm_fusion). Kiln keeps the value; its gradient reducer
        fuses by bucket size (Parameter.comm_fusion). Raises TypeError / ValueError as Parameter.comm_fusion."""
        for p in self.trainable_params(recurse):
            p.comm_fusion = fusion_type
        return self

    def untrainable_params(self, recurse=True):
        """List of the Parameters with requires_grad=False."""
        return [p for p in self.get_parameters(expand=recurse) if not p.requires_grad]

    def parameters_dict(self, recurse=True):
        """OrderedDict {param.name: Parameter}."""
        out = OrderedDict()
        for p in self.get_parameters(expand=recurse):
            out[p.name] = p
        return out

    def name_cells(self):
        """OrderedDict of the direct children {attribute name: cell} (each cell object once)."""
        out = OrderedDict()
        seen = set()
        for name, cell in self.__dict__["_cells"].items():
            if cell is not None and id(cell) not in seen:
                seen.add(id(cell))
                out[name] = cell
        return out

    def cells(self):
        """The direct children (values of name_cells())."""
        return self.name_cells().values()

    def apply(self, fn):
        """Calls fn(cell) on every sub-cell (children first) and then on self. Returns self."""
        for cell in self.cells():
            cell.apply(fn)
        fn(self)
        return self

    def init_parameters_data(self, auto_parallel_mode=False):
        """Draws the values of every Parameter of this cell and its sub-cells whose initialization was deferred by
        `nn.no_init_parameters()` (in place; others are untouched). Returns {Parameter: Parameter}."""
        out = {}
        for p in self.get_parameters():
            out[p] = p.init_data()
        return out

    # ------------------------------------------------------------------------------------------------- modes
    def add_flags(self, **flags):
        """Sets each flag as an attribute of this cell (and records it in get_flags()). Returns self."""
        d = self.__dict__
        d.setdefault("_flags", {}).update(flags)
        for k, v in flags.items():
            object.__setattr__(self, k, v)
        if "training" in flags:
            _bump_train_state()
        return self

    def add_flags_recursive(self, **flags):
        """add_flags on this cell and every sub-cell. Returns self."""
        for _, cell in self.cells_and_names():
            cell.add_flags(**flags)
        return self

    def get_flags(self):
        return dict(self.__dict__.get("_flags", {}))

    def set_train(self, mode=True):
        """Sets `training` to `mode` on this cell and every sub-cell (Dropout/BatchNorm behave accordingly) and the
        phase to 'train'/'predict'. Returns self."""
        mode = bool(mode)
        phase = "train" if mode else "predict"
        changed = False
        for _, cell in self.cells_and_names():
            cd = cell.__dict__
            changed |= cd.get("training") != mode
            cd["training"] = mode
            cd["_phase"] = phase
        if changed:  # after the change: compiled functions re-read the flags that key their graphs
            _bump_train_state()
        return self

    def set_grad(self, requires_grad=True):
        """Marks the cell as one whose gradients are taken (PyNative records a tape only under a grad transform,
        so this is bookkeeping). Returns self."""
        if not isinstance(requires_grad, bool):
            raise TypeError(f"For 'set_grad', the argument 'requires_grad' must be bool, but got "
                            f"{type(requires_grad).__name__}.")
        self.__dict__["requires_grad"] = requires_grad
        return self

    def to_float(self, dst_type):
        """Runs this cell and its sub-cells in `dst_type` (float16, bfloat16 or float32): float Tensor inputs of
        each sub-cell are cast to it on entry, and so are the trainable Parameters a cell reads in its construct
        (nn/_mixed_precision.py); the Parameters themselves stay float32. Returns self.

        Raises ValueError for another dtype."""
        if dst_type not in (mstype.float16, mstype.float32, mstype.bfloat16):
            raise ValueError(f"For 'to_float', the argument 'dst_type' should be mstype.float32, mstype.float16 or "
                             f"mstype.bfloat16, but got {dst_type}.")
        flags = {"fp16": dst_type == mstype.float16, "fp32": dst_type == mstype.float32,
                 "bf16": dst_type == mstype.bfloat16}
        for _, cell in self.cells_and_names():
            cell.add_flags(**flags)
            cell.__dict__["_mp_dtype"] = dst_type
            _mixed_precision.enable(cell, dst_type)
            cell._update_fast_flag()
        _bump_train_state()  # compiled graphs are keyed by the cells' precision too (kiln.jit's _flag_of)
        return self

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """{attribute path: Parameter} of this cell and its sub-cells (an OrderedDict of references; see
        nn/_state_dict.py). `prefix` is put before every key; `destination` (a dict) is filled instead of a new one."""
        return _state_dict.state_dict(self, *args, destination=destination, prefix=prefix, keep_vars=keep_vars)

    def load_state_dict(self, state_dict, strict=True):
        """Copies `state_dict` ({path: Tensor/Parameter/array}) into the Parameters of the same paths; returns
        (missing_keys, unexpected_keys). RuntimeError for a shape mismatch, and with strict=True for missing or
        unexpected keys (nothing is copied then). See nn/_state_dict.py."""
        return _state_dict.load_state_dict(self, state_dict, strict)

    def to(self, *args, **kwargs):
        """to(dtype) / to(device=None, dtype=None, non_blocking=False) / to(tensor): casts the floating-point
        Parameters in place to the dtype (TypeError for a non-float dtype); the device must be 'CPU' (RuntimeError
        otherwise). Returns self. See nn/_state_dict.py."""
        return _state_dict.to(self, *args, **kwargs)

    def set_inputs(self, *inputs):
        """Records the input signature of `construct` for Graph mode: one Tensor per tensor argument, in order.
        `Tensor(shape=[None, 10], dtype=ms.float32)` marks dimension 0 dynamic: construct then compiles ONE graph
        for every size of it (a training loop whose last batch is smaller reuses it; docs/graph_mode.md, "Dynamic
        shapes"); a call that does not match the signature raises ValueError naming the argument. Without None the
        signature changes nothing (one graph per shape, as before). Model.train passes the network's set_inputs on
        to its training network (MindSpore's rule). Returns None, as MindSpore."""
        from .._compiler import dynamic as _dynamic
        self.__dict__["_dynamic_shape_inputs"] = inputs
        self.__dict__["_dynamic_spec"] = _dynamic.spec_of(inputs)  # computed now: the placeholder registry is bounded

    def get_inputs(self):
        return self.__dict__.get("_dynamic_shape_inputs")

    def set_jit_config(self, jit_config):
        self.__dict__["_jit_config"] = jit_config
        return self

    compile = _cell_extra.compile  # compile construct for given inputs without running it
    register_buffer = _cell_buffers.register_buffer  # buffers: state that is not a Parameter (nn/_cell_buffers.py)
    named_buffers = _cell_buffers.named_buffers
    buffers = _cell_buffers.buffers
    get_buffer = _cell_buffers.get_buffer
    shard = _cell_extra.shard  # layouts for the model-splitting parallel modes (ignored stand-alone, as MindSpore)
    pipeline_stage = _cell_extra.pipeline_stage  # the pipeline stage that runs this Cell (nn/wrap/pipeline.py)

    def recompute(self, *, use_reentrant=True, output_recompute=False, early_stop=True, context_fn=None, **kwargs):
        """MindSpore 2.10's Cell.recompute: from now on a call of this Cell inside a grad transform keeps only its
        inputs and outputs for the backward pass; everything inside it (sub-Cells included) is computed again when
        the reverse pass reaches it (kiln/_autodiff/recompute.py). Losses and gradients are unchanged; random draws
        (dropout) are reused in the recomputation, so the masks match. PyNative and Graph mode (kiln.jit,
        GRAPH_MODE), where the backward graph gets copies of the forward nodes placed just before their use.

        Keyword Arguments:
            use_reentrant, output_recompute, early_stop: accepted (MindSpore's implementation choices; Kiln has one
                mechanism, which keeps the Cell's outputs and recomputes the rest).
            context_fn: None, or a callable returning two context managers: the first is entered around the
                forward, the second around the recomputation. Needs use_reentrant=False (or output_recompute=True).
            mp_comm_recompute, parallel_optimizer_comm_recompute (bool), recompute_slice_activation: accepted for the
                parallel modes (no effect stand-alone or in data parallel).
        Returns None (as MindSpore).
        Raises:
            ValueError: a keyword other than those above; context_fn with use_reentrant=True.
            TypeError: mp_comm_recompute or parallel_optimizer_comm_recompute not a bool.
        """
        for key in ("mp_comm_recompute", "parallel_optimizer_comm_recompute"):
            if key in kwargs and not isinstance(kwargs[key], bool):
                raise TypeError(f"The parameter '{key}' must be <class 'bool'>, but got {type(kwargs[key])}")
        for key in kwargs:
            if key not in ("mp_comm_recompute", "parallel_optimizer_comm_recompute", "recompute_slice_activation"):
                raise ValueError(f"For 'recompute', keyword '{key}' is not recognized! the key kwargs must be "
                                 "'mp_comm_recompute', 'parallel_optimizer_comm_recompute', "
                                 "'recompute_slice_activation'")
        if output_recompute:
            use_reentrant = False
        if context_fn is not None and use_reentrant:
            raise ValueError("context_fn is only supported when use_reentrant=False.")
        if context_fn is not None and not callable(context_fn):
            raise TypeError(f"For 'recompute', the 'context_fn' must be callable, but got {type(context_fn).__name__}.")
        self.__dict__["_recompute"] = {"context_fn": context_fn}
        self._update_hook_flag()
        _bump_train_state()  # compiled graphs that call this cell must be traced again

    # ------------------------------------------------------------------------------------------------- repr
    def extend_repr(self):
        """Extra information shown inside `Name<...>` (layers override it)."""
        return ""

    def __repr__(self):
        """MindSpore 2.10's layout: `Name(extra)` for a leaf whose extend_repr is one line, else one indented line
        per extend_repr line and per child cell `(name): repr(child)`, closed by `)` on its own line."""
        extra = self.extend_repr()
        extra_lines = extra.split("\n") if extra else []
        cells = self.__dict__.get("_cells") or {}
        child_lines = [f"({key}): " + repr(cell).replace("\n", "\n  ") for key, cell in cells.items()]
        lines = extra_lines + child_lines
        if len(extra_lines) == 1 and not child_lines:
            return f"{type(self).__name__}({extra_lines[0]})"
        if not lines:
            return f"{type(self).__name__}()"
        return type(self).__name__ + "(\n  " + "\n  ".join(lines) + "\n)"

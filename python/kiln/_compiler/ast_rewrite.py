"""Source transformation for Graph mode: the compiled function's AST, with its control flow made functional.

`converted(fn)` returns a function that does what `fn` does, but whose `if`/`elif`/`else`, `while`, `for`,
conditional expressions and `and`/`or`/`not` call kiln._compiler.control_flow, which decides at run time (the value of
the condition) whether to run them as Python or to build an If/While node (see Note [run-time choice] there, and
docs/decisions/control-flow-ast-rewrite.md). Done once per code object (cached, bounded), used only while tracing.

The rewrite, statement by statement (TensorFlow's AutoGraph and MindSpore's parser do the same in spirit):
* `if test: A else: B` → two nested functions of the variables A and B assign (their values before the statement),
  each returning their new values, and `(v, ...) = if_stmt(test, true_fn, false_fn, (v, ...), names)`.
* `while test: S` → `(v, ...) = while_stmt(cond_fn, body_fn, (v, ...), names)` over the variables S assigns.
* `for t in it: S` → `(v, ...) = for_stmt(it, body_fn, (v, ...), names)`; `range(...)` in the header becomes
  range_(...) (a compiled loop when a bound is a symbolic tensor).
* `return`/`break`/`continue` inside branches: the statements after an `if` whose branch ends in one of them move
  into the other branch ("rest folding"), so that each such statement ends its path; then `return x` becomes an
  assignment of a result variable returned at the end, `break` sets a flag that the loop condition tests (a tensor
  flag when set under a tensor condition), and `continue` disappears.
* `a if c else b` → if_exp(c, lambda: a, lambda: b); `a and b` → and_(a, lambda: b); `not a` → not_(a).
What stays Python (and so unrolls, or raises the clear bool() error for a tensor condition): a loop with an `else`
clause, a `return`/`break`/`continue` that rest folding cannot reach (inside `try`/`with`, or a `return` inside a
loop), functions using `global`/`nonlocal`/`yield`, and functions whose source is unavailable.
Calls: every call in rewritten code goes through callee(f), which rewrites f too when it is a function of the user's
program (not Kiln's, not the standard library's or an installed package's), so helpers' control flow compiles.
A returned value holding an undefined variable raises its NameError (check_defined).
"""
import ast
import collections
import dis
import inspect
import os
import textwrap
import threading
import sys
import sysconfig
import types

from .. import _engine
from . import call_depth as _call_depth
from . import control_flow as _control_flow
from . import graph_builtins as _graph_builtins
from .ast_analysis import (_RET, _assigned, _written_in_place, _at_path_ends_only, _fold, _has, _has_not, _read_first,
                            _walk_local, _walk_loop_local)

_CF = "_kiln_cf"
_lock = threading.Lock()
_cache = collections.OrderedDict()  # code object -> converted code object, or None (left as it is)
_CACHE_SIZE = 512
# Calls left as they are (builtins that never hold user control flow; super is rewritten to its explicit form).
_NO_WRAP = frozenset({"super", "range", "len", "isinstance", "print", "int", "float", "bool", "str", "tuple", "list",
                      "dict", "zip", "enumerate", "map", "filter", "min", "max", "sum", "abs", "getattr", "hasattr",
                      "setattr", "type", "id", "iter", "next", "sorted", "reversed", "any", "all", "round"})
# d.keys()/values()/items()/has_key(k) of a dict, "...".format(...) of a str: graph forms (_control_flow.method)
_DICT_METHODS = frozenset({"keys", "values", "items", "has_key", "format"})
_KILN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_STDLIB = sysconfig.get_paths()["stdlib"] + os.sep


def converted(fn):
    """`fn` with its control flow rewritten (see the module doc), or `fn` itself when there is nothing to rewrite or
    its source is unavailable. Bound methods stay bound."""
    if isinstance(fn, types.MethodType):
        f = converted(fn.__func__)
        return fn if f is fn.__func__ else types.MethodType(f, fn.__self__)
    if not isinstance(fn, types.FunctionType):
        return fn
    code = fn.__code__
    if code.co_filename.startswith(_KILN_DIR):
        return fn  # Kiln's own code: its control flow is on Python values
    with _lock:
        hit = code in _cache
        if hit:
            _cache.move_to_end(code)
            new_code = _cache[code]
    if not hit:
        # The compile cache's source recorder (a profile hook) must not see the parser's own helpers run.
        prof = sys.getprofile()
        sys.setprofile(None)
        try:
            new_code = _convert_code(fn)
        finally:
            sys.setprofile(prof)
        with _lock:
            _cache[code] = new_code
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
    if new_code is None:
        return fn
    cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
    cells[_CF] = types.CellType(_control_flow)
    if "__class__" in new_code.co_freevars and "__class__" not in cells:
        return fn
    for n in new_code.co_freevars:  # a recursive function names itself: a global of the original, a free variable
        if n not in cells and n in fn.__globals__:  # of the rewritten code (defined inside its factory)
            cells[n] = types.CellType(fn.__globals__[n])
    if any(n not in cells for n in new_code.co_freevars):
        return fn
    closure = tuple(cells[n] for n in new_code.co_freevars)
    new = types.FunctionType(new_code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__dict__.update(fn.__dict__)
    new.__wrapped__ = fn
    return new


def _user_code(code):
    """True for a function of the user's program (not Kiln's, not the standard library's or an installed package's)."""
    f = code.co_filename
    return not (f.startswith(_KILN_DIR) or f.startswith("<") or f.startswith(_STDLIB) or "site-packages" in f)


def callee(f):
    """The function a call in rewritten code calls: a user function is rewritten too (so tensor-dependent control flow
    in helpers compiles) and gets the graph built-ins (print, max, ...: kiln/_compiler/graph_builtins.py), anything else
    is called as it is. Rewritten code that runs eagerly (jit_syntax_level=LAX's PyNative run of a function that
    reads tensor values, a function defined while tracing and called later) calls everything as it is."""
    if not _engine.tracing():
        if getattr(type(f), "__ms_class__", False) and not isinstance(f, type) and \
                not any("__call__" in c.__dict__ for c in type(f).__mro__):
            raise ValueError(f"MsClassObject: '{type(f).__name__}' has no __call__ function, please check the code.")
        return f
    if isinstance(f, types.FunctionType):
        if _user_code(f.__code__):
            return _call_depth.counted(_graph_builtins.graph_function(converted(f)))
    elif isinstance(f, types.MethodType) and isinstance(f.__func__, types.FunctionType):
        if _user_code(f.__func__.__code__):
            return _call_depth.counted(_graph_builtins.graph_function(converted(f)))
    elif getattr(type(f), "__ms_class__", False) and not isinstance(f, type) and \
            not any("__call__" in c.__dict__ for c in type(f).__mro__):
        # MindSpore's error for calling a jit_class object whose class has no __call__ (Python's would be TypeError)
        raise ValueError(f"MsClassObject: '{type(f).__name__}' has no __call__ function, please check the code.")
    return f


def _convert_code(fn):
    """The converted code object of fn, or None."""
    if "__wrapped__" in getattr(fn, "__dict__", {}):
        return None  # a decorator's wrapper (or a function already rewritten): its source is not this code's
    try:
        lines, first = inspect.getsourcelines(fn)
        if first != fn.__code__.co_firstlineno:
            return None
        src = textwrap.dedent("".join(lines))
        tree = ast.parse(src)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    if fn.__name__ == "<lambda>":
        fdef = _lambda_def(tree, fn.__code__, len(lines[0]) - len(src.splitlines(True)[0]) if src else 0)
        if fdef is None:
            return None
    else:
        fdef = tree.body[0] if tree.body else None
        if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)) or fdef.name != fn.__name__:
            return None  # source that does not start with this function
    if isinstance(fdef, ast.AsyncFunctionDef) or _has(fdef, (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal)):
        return None
    if not _has(fdef, (ast.If, ast.While, ast.For, ast.IfExp, ast.BoolOp, ast.Call, ast.Assert, ast.In,
                       ast.NotIn)) and not _has_not(fdef):
        return None
    fdef.decorator_list = []
    rw = _Rewriter(fdef)
    fdef = rw.function(fdef)
    freevars = list(fn.__code__.co_freevars)
    if _CF not in freevars:
        freevars.append(_CF)
    factory = ast.FunctionDef(
        name="_kiln_factory",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in freevars], vararg=None, kwonlyargs=[],
                           kw_defaults=[], kwarg=None, defaults=[]),
        body=[fdef, ast.Return(value=ast.Name(id=fdef.name, ctx=ast.Load()))], decorator_list=[], returns=None)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    ast.increment_lineno(module, fn.__code__.co_firstlineno - 1)
    try:
        code = compile(module, fn.__code__.co_filename, "exec")
    except SyntaxError:
        return None
    fcode = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    inner = next(c for c in fcode.co_consts if isinstance(c, types.CodeType) and c.co_name == fdef.name)
    if fdef.name == _LAMBDA:
        inner = inner.replace(co_name="<lambda>", co_qualname=fn.__code__.co_qualname)
    return inner


_LAMBDA = "_kiln_lambda"


def _lambda_def(tree, code, indent):
    """The lambda of `tree` (its source statement) that compiled to `code`, as `def _kiln_lambda(args): return body`
    (so that the calls it makes are rewritten too), or None when it cannot be told apart from the other lambdas there.
    A candidate has the same parameters; among several, the one whose body starts where the code's first instruction
    does (line and column, `indent`: the columns dedent removed)."""
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    cands = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Lambda):
            a = n.args
            names = tuple(x.arg for x in a.posonlyargs + a.args + a.kwonlyargs)
            if names == params and (a.vararg is not None) == bool(code.co_flags & inspect.CO_VARARGS) and \
                    (a.kwarg is not None) == bool(code.co_flags & inspect.CO_VARKEYWORDS):
                cands.append(n)
    if len(cands) > 1:
        pos = [(i.positions.lineno, i.positions.col_offset) for i in dis.get_instructions(code)
               if i.positions is not None and i.positions.lineno is not None and i.positions.col_offset]
        # (a lambda's body never starts at column 0: the entries at 0 are RESUME / RETURN_VALUE)
        if not pos:
            return None
        start = min(pos)
        cands = [n for n in cands if (n.body.lineno + code.co_firstlineno - 1, n.body.col_offset + indent) == start]
    if len(cands) != 1:
        return None
    lam = cands[0]
    # The source found must hold the whole lambda: inspect gives a lambda's first lines only, and a lambda that goes
    # on past them (a keyword argument continued on the next line) parses to a shorter, wrong body. Its code's
    # instructions must all end within the body found.
    ends = [(i.positions.end_lineno, i.positions.end_col_offset) for i in dis.get_instructions(code)
            if i.positions is not None and i.positions.end_lineno is not None and i.positions.end_col_offset]
    body_end = (lam.body.end_lineno + code.co_firstlineno - 1, lam.body.end_col_offset + indent)
    if not ends or max(ends) > body_end:
        return None
    fdef = ast.FunctionDef(name=_LAMBDA, args=lam.args, body=[ast.Return(value=lam.body)], decorator_list=[],
                           returns=None)
    return ast.copy_location(fdef, lam)


class _Replace(ast.NodeTransformer):
    """Replaces statements of one kind (outside nested loops/scopes) by `make(node)`'s statements."""

    def __init__(self, kind, make, into_loops=False):
        self.kind, self.make, self.into_loops = kind, make, into_loops

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef

    def visit_For(self, node):
        return self.generic_visit(node) if self.into_loops else node

    visit_While = visit_For

    def generic_visit(self, node):
        if isinstance(node, self.kind):
            return self.make(node)
        return super().generic_visit(node)


def _name(id_, store=False):
    return ast.Name(id=id_, ctx=ast.Store() if store else ast.Load())


def _cf(attr):
    return ast.Attribute(value=_name(_CF), attr=attr, ctx=ast.Load())


def _call(fn, args):
    return ast.Call(func=fn, args=args, keywords=[])


def _lambda(body):
    return ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                                         kwarg=None, defaults=[]), body=body)


def _tuple(elts, store=False):
    return ast.Tuple(elts=elts, ctx=ast.Store() if store else ast.Load())


def _value_or_undef(name, global_ok=False):
    args = [_lambda(_name(name)), ast.Constant(value=name)] + ([ast.Constant(value=True)] if global_ok else [])
    return _call(_cf("value_or_undef"), args)


class _Rewriter:
    def __init__(self, fdef):
        self.n = 0
        args = fdef.args
        self.first_arg = (args.posonlyargs + args.args)[0].arg if (args.posonlyargs + args.args) else None
        # the function's local names: a tensor written in place in a branch/loop body is one of its variables
        self.locals = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs} | \
            {a.arg for a in (args.vararg, args.kwarg) if a is not None} | set(_assigned(fdef.body))

    def _with_written(self, names, stmts):
        """names, plus the local variables that `stmts` write in place (x.add_(y), ops.assign(x, v), ...): their new
        values flow out of a compiled if/loop (and reach the tensor object, _control_flow._write_through)."""
        for n in _written_in_place(stmts):
            if n in self.locals and n not in names:
                names.append(n)
        return names

    def _fresh(self, kind):
        self.n += 1
        return f"_kiln_{kind}_{self.n}"

    # ------------------------------------------------------------------------------------------------ function
    def function(self, fdef):
        body = fdef.body
        if self.first_arg:
            body = [_SuperFix(self.first_arg).visit(s) for s in body]
        # `return` inside branches: fold, then make each return an assignment of the result variable.
        nested_return = any(isinstance(n, ast.Return) for s in body if not isinstance(s, ast.Return)
                            for n in _walk_local([s]))
        if nested_return:
            body = _fold(body, (ast.Return, ast.Raise))
            if not self._return_in_loop(body):
                def make(node):
                    return ast.Assign(targets=[_name(_RET, True)],
                                      value=node.value if node.value is not None else ast.Constant(value=None))
                body = [_Replace(ast.Return, make).visit(s) for s in body]
                body = body + [ast.Return(value=_name(_RET))]
        # A result holding an undefined variable (assigned on one path of a tensor `if` only) raises its NameError.
        body = [_Replace(ast.Return, lambda n: ast.Return(value=_call(_cf("check_defined"), [n.value]))
                         if n.value is not None else n, into_loops=True).visit(s) for s in body]
        fdef.body = self.block(body)
        return fdef

    def _return_in_loop(self, body):
        for n in _walk_local(body):
            if isinstance(n, (ast.For, ast.While, ast.AsyncFor, ast.With, ast.Try)):
                if any(isinstance(m, ast.Return) for m in _walk_local(n.body + getattr(n, "orelse", []) +
                                                                      getattr(n, "finalbody", []) +
                                                                      [h for x in getattr(n, "handlers", [])
                                                                       for h in x.body])):
                    return True
        return False

    # --------------------------------------------------------------------------------------------------- blocks
    def block(self, stmts):
        out = []
        for s in stmts:
            r = self.stmt(s)
            out.extend(r if isinstance(r, list) else [r])
        return out

    def stmt(self, s):
        if isinstance(s, ast.If):
            return self.if_(s)
        if isinstance(s, ast.While):
            return self.while_(s)
        if isinstance(s, ast.For):
            return self.for_(s)
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return s  # nested definitions keep Python semantics
        if isinstance(s, (ast.With, ast.Try)):
            for field in ("body", "orelse", "finalbody"):
                if hasattr(s, field):
                    setattr(s, field, self.block(getattr(s, field)))
            for h in getattr(s, "handlers", []):
                h.body = self.block(h.body)
            return _Expr().visit(s)
        return _Expr().visit(s)

    @staticmethod
    def _escapes(stmts):
        """A return/break/continue (outside nested loops and scopes) that would leave a branch function."""
        return any(isinstance(n, (ast.Return, ast.Break, ast.Continue)) for n in _walk_loop_local(stmts)) or \
            any(isinstance(n, ast.Return) for n in _walk_local(stmts))

    def _branch_fn(self, name, params, body, extra_first=None):
        args = ([ast.arg(arg=extra_first)] if extra_first else []) + [ast.arg(arg=p) for p in params]
        ret = ast.Return(value=_tuple([_name(p) for p in params]))
        return ast.FunctionDef(name=name, args=ast.arguments(posonlyargs=[], args=args, vararg=None, kwonlyargs=[],
                                                             kw_defaults=[], kwarg=None, defaults=[]),
                               body=(body or [ast.Pass()]) + [ret], decorator_list=[], returns=None)

    def _assign_result(self, names, call, node):
        if names:
            target = _tuple([_name(n, True) for n in names], store=True)
            st = ast.Assign(targets=[target], value=call)
        else:
            st = ast.Expr(value=call)
        return ast.copy_location(st, node)

    def _vals(self, names, read_first=()):
        return _tuple([_value_or_undef(n, n in read_first) for n in names])

    def _names(self, names):
        return _tuple([ast.Constant(value=n) for n in names])

    @staticmethod
    def _python_only(test, why):
        return _call(_cf("python_cond"), [test, ast.Constant(value=why)])

    def if_(self, s):
        if self._escapes(s.body) or self._escapes(s.orelse):
            s.test = self._python_only(_Expr().visit(s.test), "`if` whose branch holds a return/break/continue that "
                                       "cannot be rewritten (a return inside a loop, or a jump inside try/with)")
            s.body = self.block(s.body)
            s.orelse = self.block(s.orelse)
            return s
        body = self.block(s.body)
        orelse = self.block(s.orelse)
        names = self._with_written(_assigned(body + orelse), body + orelse)
        tn, fn = self._fresh("if_true"), self._fresh("if_false")
        out = [ast.copy_location(self._branch_fn(tn, names, body), s),
               ast.copy_location(self._branch_fn(fn, names, orelse), s)]
        call = _call(_cf("if_stmt"), [_Expr().visit(s.test), _name(tn), _name(fn), self._vals(names),
                                      self._names(names)])
        out.append(self._assign_result(names, call, s))
        return out

    def _loop_body(self, body, flag):
        """Folds and removes break/continue of a loop body (`break` sets the variable `flag`); returns (new body,
        uses_break) or None if it cannot."""
        kinds = (ast.Break, ast.Continue, ast.Return, ast.Raise)
        has_bc = any(isinstance(n, (ast.Break, ast.Continue)) for n in _walk_loop_local(body))
        if any(isinstance(n, ast.Return) for n in _walk_local(body)):
            return None
        if not has_bc:
            return body, False
        body = _fold(body, kinds)
        if not (_at_path_ends_only(body, ast.Break) and _at_path_ends_only(body, ast.Continue)):
            return None
        uses_break = any(isinstance(n, ast.Break) for n in _walk_loop_local(body))
        body = [_Replace(ast.Continue, lambda n: ast.Pass()).visit(x) for x in body]
        body = [_Replace(ast.Break, lambda n: ast.Assign(targets=[_name(flag, True)],
                                                         value=ast.Constant(value=True))).visit(x) for x in body]
        return body, uses_break

    def while_(self, s):
        flag = self._fresh("brk")
        lb = None if s.orelse else self._loop_body(s.body, flag)
        if lb is None:
            s.test = self._python_only(_Expr().visit(s.test), "`while` loop with an else clause, a return inside it, "
                                       "or a break/continue inside try/with")
            s.body = self.block(s.body)
            s.orelse = self.block(s.orelse)
            return s
        body, brk = lb
        read_first = _read_first(body)[0]
        body = self.block(body)
        names = self._with_written(_assigned(body), body)
        test = _Expr().visit(s.test)
        pre = []
        if brk:
            if flag not in names:
                names.append(flag)
            pre.append(ast.copy_location(ast.Assign(targets=[_name(flag, True)], value=ast.Constant(value=False)), s))
            test = _call(_cf("and_"), [_call(_cf("not_"), [_name(flag)]), _lambda(test)])
        cn, bn = self._fresh("while_cond"), self._fresh("while_body")
        cond = ast.FunctionDef(name=cn, args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in names],
                                                           vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                                                           defaults=[]),
                               body=[ast.Return(value=test)], decorator_list=[], returns=None)
        out = pre + [ast.copy_location(cond, s), ast.copy_location(self._branch_fn(bn, names, body), s)]
        call = _call(_cf("while_stmt"), [_name(cn), _name(bn), self._vals(names, read_first),
                                         self._names(names)])
        out.append(self._assign_result(names, call, s))
        return out

    def for_(self, s):
        flag = self._fresh("brk")
        lb = None if s.orelse else self._loop_body(s.body, flag)
        if lb is None:
            s.iter = _Expr().visit(s.iter)
            s.body = self.block(s.body)
            s.orelse = self.block(s.orelse)
            return s
        body, brk = lb
        item = self._fresh("item")
        pre = []
        if brk:
            pre.append(ast.copy_location(ast.Assign(targets=[_name(flag, True)], value=ast.Constant(value=False)), s))
            # the whole body runs only while the flag is not set (a tensor `if` once the flag is a tensor)
            body = [ast.copy_location(ast.If(test=_call(_cf("not_"), [_name(flag)]), body=body, orelse=[]), s)]
        read_first = _read_first([ast.Assign(targets=[s.target], value=ast.Constant(value=0))] + body)[0]
        body = [ast.copy_location(ast.Assign(targets=[s.target], value=_name(item)), s)] + self.block(body)
        names = self._with_written(_assigned(body), body)
        if brk and flag not in names:
            names.append(flag)
        it = _Expr().visit(s.iter)
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" and not it.keywords:
            it = _call(_cf("range_"), it.args)
        elif isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in ("enumerate", "zip") \
                and not it.keywords and it.args and not any(isinstance(a, ast.Starred) for a in it.args):
            # enumerate(x) / zip(x, y) over dynamic batches: a compiled loop (_control_flow.rows_of)
            it = _call(_cf("rows_of"), [ast.Constant(value=it.func.id), it.func] + it.args)
        bn = self._fresh("for_body")
        out = pre + [ast.copy_location(self._branch_fn(bn, names, body, extra_first=item), s)]
        brk_index = ast.Constant(value=names.index(flag) if brk else -1)
        call = ast.Call(func=_cf("for_stmt"), args=[it, _name(bn), self._vals(names, read_first),
                                                    self._names(names)],
                        keywords=[ast.keyword(arg="brk", value=brk_index)])
        out.append(self._assign_result(names, call, s))
        return out


class _Expr(ast.NodeTransformer):
    """Conditional expressions and and/or/not (outside nested definitions)."""

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return ast.copy_location(_call(_cf("if_exp"), [node.test, _lambda(node.body), _lambda(node.orelse)]), node)

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        fn = "and_" if isinstance(node.op, ast.And) else "or_"
        acc = node.values[-1]
        for v in reversed(node.values[:-1]):
            acc = _call(_cf(fn), [v, _lambda(acc)])
        return ast.copy_location(acc, node)

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id in ("tuple", "list") and len(node.args) == 1 and not node.keywords \
                and not isinstance(node.args[0], ast.Starred):
            return ast.copy_location(_call(_cf("sequence"), [f, node.args[0]]), node)
        if isinstance(f, ast.Name) and f.id in ("float", "int", "bool") and len(node.args) == 1 and not node.keywords \
                and not isinstance(node.args[0], ast.Starred):
            return ast.copy_location(_call(_cf("scalar"), [f, node.args[0]]), node)
        if isinstance(f, ast.Name) and f.id in _NO_WRAP:
            return node
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == _CF:
            return node
        if isinstance(f, ast.Attribute) and f.attr in _DICT_METHODS:
            node.func = _call(_cf("method"), [f.value, ast.Constant(value=f.attr)])
            return node
        node.func = _call(_cf("callee"), [f])
        return node

    def visit_JoinedStr(self, node):
        """f"...{x}..." → joined((piece, ...)): a tensor of the graph prints its run-time value (print of the text)."""
        self.generic_visit(node)
        if not any(isinstance(v, ast.FormattedValue) for v in node.values):
            return node
        parts = []
        for v in node.values:
            if isinstance(v, ast.FormattedValue):
                spec = v.format_spec if v.format_spec is not None else ast.Constant(value="")
                parts.append(_tuple([v.value, ast.Constant(value=v.conversion), spec]))
            else:
                parts.append(v)
        return ast.copy_location(_call(_cf("joined"), [_tuple(parts)]), node)

    def visit_Assert(self, node):
        """`assert c, m` → assert_(c, lambda: m): a run-time check for a graph tensor c (graph_assert.py)."""
        self.generic_visit(node)
        args = [node.test] + ([_lambda(node.msg)] if node.msg is not None else [])
        return ast.copy_location(ast.Expr(value=_call(_cf("assert_"), args)), node)

    def visit_Compare(self, node):
        """`a in b` / `a not in b` (alone) → contains_(a, b) / not_(contains_(a, b)): a graph tensor in a list."""
        self.generic_visit(node)
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            call = _call(_cf("contains_"), [node.left, node.comparators[0]])
            if isinstance(node.ops[0], ast.NotIn):
                call = _call(_cf("not_"), [call])
            return ast.copy_location(call, node)
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_call(_cf("not_"), [node.operand]), node)
        return node


class _SuperFix(ast.NodeTransformer):
    """Zero-argument super() → super(__class__, self): the rewritten function is no longer defined in a class body."""

    def __init__(self, first):
        self.first = first

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "super" and not node.args and not node.keywords:
            node.args = [_name("__class__"), _name(self.first)]
        return node


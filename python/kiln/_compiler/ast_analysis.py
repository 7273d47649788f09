"""Analyses of a function's AST for the control-flow rewrite (ast_rewrite.py): which names a block assigns, which it
reads before assigning, whether every path ends in a return/break, and rest folding. Pure functions of the AST."""
import ast

_RET = "_kiln_ret"  # the result variable of a function whose returns are inside branches
_BRK = "_kiln_brk"  # prefix of the flag a loop's `break` sets (one per loop)


def _has(node, kinds):
    return any(isinstance(n, kinds) for n in ast.walk(node))


def _has_not(node):
    return any(isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not) for n in ast.walk(node))


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_LOOPS = (ast.For, ast.While, ast.AsyncFor)


def _walk_local(stmts):
    """Nodes of `stmts`, not descending into nested function/class definitions or lambdas (a definition itself is
    yielded, its body is not walked)."""
    stack = list(stmts)
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, _SCOPES):
            stack.extend(ast.iter_child_nodes(n))


def _assigned(stmts):
    """Names the statements assign (in order of first assignment; nested scopes and comprehensions excluded)."""
    out = []
    for n in _walk_local(stmts):
        name = None
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            name = n.id
        elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name):
            name = n.value.id  # `y[i] = v` makes y a new tensor (Tensor.__setitem__ rebinds it)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = n.name
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                nm = (a.asname or a.name).split(".")[0]
                if nm not in out:
                    out.append(nm)
        if name and name not in out:
            out.append(name)
    # comprehension targets live in their own scope
    comp = set()
    for n in _walk_local(stmts):
        if isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            for g in n.generators:
                for t in ast.walk(g.target):
                    if isinstance(t, ast.Name):
                        comp.add(t.id)
    return [n for n in out if (n not in comp or _stored_outside_comprehension(stmts, n))
            and (not n.startswith("_kiln_") or n == _RET or n.startswith(_BRK))]


_ASSIGN_FUNCS = {"assign", "assign_add", "assign_sub"}


def _written_in_place(stmts):
    """Names the statements write in place with a call: `x.add_(...)` (a public method whose name ends in one
    underscore), `x.assign_value(...)`, `ops.assign(x, ...)` / assign_add / assign_sub (nested scopes excluded)."""
    out = []
    for n in _walk_local(stmts):
        if not isinstance(n, ast.Call):
            continue
        f, name = n.func, None
        if isinstance(f, ast.Call) and isinstance(f.func, ast.Attribute) and f.func.attr == "callee" and \
                len(f.args) == 1:  # already rewritten: _kiln_cf.callee(x.add_)(y)
            f = f.args[0]
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                ((f.attr.endswith("_") and not f.attr.startswith("_")) or f.attr == "assign_value"):
            name = f.value.id
        fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if fname in _ASSIGN_FUNCS and n.args and isinstance(n.args[0], ast.Name):
            name = n.args[0].id
        if name and name not in out:
            out.append(name)
    return out


def _stored_outside_comprehension(stmts, name):
    inside = set()
    for n in _walk_local(stmts):
        if isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            for c in ast.walk(n):
                inside.add(id(c))
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) and id(n) not in inside
               for n in _walk_local(stmts))


def _terminates(stmts, kinds):
    """True when every path through the block ends in one of `kinds` (Return / Break / Continue / Raise)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, kinds):
        return True
    if isinstance(last, ast.If):
        return _terminates(last.body, kinds) and _terminates(last.orelse, kinds)
    return False


def _fold(stmts, kinds):
    """Rest folding: after an `if` with a branch that ends in one of `kinds`, the following statements move into the
    other branch (recursively), so that those statements only ever end a path."""
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, ast.If):
            t, e = _terminates(s.body, kinds), _terminates(s.orelse, kinds)
            rest = stmts[i + 1:]
            if (t or e) and rest:
                if t and not e:
                    s.orelse = s.orelse + rest
                elif e and not t:
                    s.body = s.body + rest
                s.body = _fold(s.body, kinds)
                s.orelse = _fold(s.orelse, kinds)
                out.append(s)
                return out
            s.body = _fold(s.body, kinds)
            s.orelse = _fold(s.orelse, kinds)
        out.append(s)
        if isinstance(s, kinds):
            return out  # the rest is dead code
    return out


def _at_path_ends_only(stmts, kind):
    """True when every `kind` statement in the block (outside nested loops and scopes) ends a path (the last statement
    of the block or of an `if` branch that ends the block)."""
    ok_ids = set()

    def mark(block):
        if not block:
            return
        last = block[-1]
        if isinstance(last, kind):
            ok_ids.add(id(last))
        elif isinstance(last, ast.If):
            mark(last.body)
            mark(last.orelse)

    def ifs(block):
        for s in block:
            if isinstance(s, ast.If):
                mark(s.body)
                mark(s.orelse)
                ifs(s.body)
                ifs(s.orelse)
    mark(stmts)
    ifs(stmts)
    for n in _walk_loop_local(stmts):
        if isinstance(n, kind) and id(n) not in ok_ids:
            return False
    return True


def _walk_loop_local(stmts):
    """Like _walk_local, also not descending into nested loops (their break/continue are theirs; a nested loop itself
    is yielded, its body and else clause are not walked)."""
    stack = list(stmts)
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, _SCOPES + _LOOPS):
            stack.extend(ast.iter_child_nodes(n))


def _loads(node):
    """Names a statement's own expressions read (not nested scopes'; an augmented assignment reads its target)."""
    out = set()
    for n in _walk_local([node]):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            out.add(n.id)
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            out.add(n.target.id)
    return out


def _read_first(stmts, stored=frozenset()):
    """(names some path through `stmts` reads before assigning them, names every path assigns). A loop body's names
    of the first kind take a global's value when they are unbound (value_or_undef)."""
    rf, stored = set(), set(stored)
    for st in stmts:
        if isinstance(st, ast.If):
            rf |= _loads(st.test) - stored
            b_rf, b_st = _read_first(st.body, stored)
            e_rf, e_st = _read_first(st.orelse, stored)
            rf |= b_rf | e_rf
            stored |= b_st & e_st
        elif isinstance(st, (ast.For, ast.While)):
            rf |= _loads(st.iter if isinstance(st, ast.For) else st.test) - stored
            inner = stored | (set(_assigned([ast.Assign(targets=[st.target], value=ast.Constant(value=0))]))
                              if isinstance(st, ast.For) else set())
            rf |= _read_first(st.body, inner)[0]
        else:
            rf |= _loads(st) - stored
            stored |= set(_assigned([st]))
    return rf, stored

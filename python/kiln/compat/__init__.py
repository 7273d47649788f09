"""Run MindSpore programs on Kiln: `import mindspore` (and every `mindspore.<sub>` module) resolves to Kiln.

Command line (the usual way)::

    python -m kiln.compat script.py [args...]     # like `python script.py [args...]`
    python -m kiln.compat -m module [args...]     # like `python -m module [args...]`
    python -m kiln.compat -c "code" [args...]     # like `python -c "code" [args...]`

The program runs exactly as `python` would run it (sys.argv, `__name__ == "__main__"`, sys.path[0], exceptions
and exit status), except that, in this process only, `mindspore` is an alias of `kiln` and `mindspore.X.Y` is an
alias of `kiln.X.Y`: the *same* module objects (`mindspore.nn is kiln.nn`). A `mindspore.X` for which Kiln has no
`kiln.X` raises ModuleNotFoundError naming both modules.

Programmatic use: `install()` adds the alias to the current interpreter, `uninstall()` removes it again. Importing
`kiln` (or `kiln.compat`) never installs it, so a real MindSpore installation is never shadowed by accident.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types

__all__ = ["install", "uninstall", "is_installed", "ALIAS", "TARGET", "main"]

ALIAS = "mindspore"  #: the package name that is redirected
TARGET = "kiln"  #: the package it is redirected to

_USAGE = """\
usage: python -m kiln.compat script.py [args ...]
       python -m kiln.compat -m module [args ...]
       python -m kiln.compat -c command [args ...]

Runs a MindSpore program on Kiln: like `python`, but `import mindspore` and every
`mindspore.<submodule>` resolve to the corresponding `kiln` module in this process.
"""


def _target_name(fullname):
    """'mindspore.common.initializer' -> 'kiln.common.initializer'; None for names outside the alias."""
    if fullname == ALIAS:
        return TARGET
    if fullname.startswith(ALIAS + "."):
        return TARGET + fullname[len(ALIAS):]
    return None


class _AliasLoader(importlib.abc.Loader):
    """Loads `mindspore.X` by importing `kiln.X` and putting that very module object into sys.modules.

    The import system creates a placeholder module for the spec; exec_module replaces the sys.modules entry with
    the Kiln module, and the import machinery returns whatever sys.modules holds after exec_module (the same
    mechanism a module uses to replace itself in sys.modules). The Kiln module's own __spec__/__name__ stay intact.
    """

    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return None  # default placeholder module

    def exec_module(self, module):
        name = module.__spec__.name
        __import__(self.target)  # (no importlib frames in the traceback of an error inside the Kiln module)
        sys.modules[name] = sys.modules[self.target]
        _aliased.add(name)


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Meta-path finder for `mindspore` and `mindspore.*` (installed first in sys.meta_path by install())."""

    def find_spec(self, fullname, path=None, target=None):
        tname = _target_name(fullname)
        if tname is None:
            return None
        if tname not in sys.modules:
            try:
                found = importlib.util.find_spec(tname)
            except ModuleNotFoundError as e:
                if e.name and (tname == e.name or tname.startswith(e.name + ".")):
                    found = None
                else:
                    raise
            if found is None:
                raise ModuleNotFoundError(
                    f"No module named '{fullname}': Kiln has no module '{tname}' to stand in for it "
                    f"(under `python -m kiln.compat`, '{ALIAS}.*' is resolved to '{TARGET}.*')",
                    name=fullname)
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(tname), is_package=True)


_finder = _AliasFinder()
_aliased = set()  # sys.modules keys this module has set


def is_installed():
    """True while the `mindspore` -> `kiln` alias is active in this interpreter."""
    return _finder in sys.meta_path


def install():
    """Makes `import mindspore[.X]` resolve to `kiln[.X]` in this interpreter (idempotent).

    Raises RuntimeError if a module named `mindspore` that is not Kiln was imported before (a real MindSpore):
    mixing the two would give a program half of each.
    """
    existing = sys.modules.get(ALIAS)
    if existing is not None and existing is not sys.modules.get(TARGET):
        raise RuntimeError(
            f"kiln.compat.install(): a different '{ALIAS}' module is already imported "
            f"(from {getattr(existing, '__file__', '?')}); install the alias before anything imports '{ALIAS}'")
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    _rename_classes(ALIAS)


# Classes whose module path in MindSpore 2.10 is Kiln's with `mindspore` for `kiln`, and whose instances pickle
# through a function of their own (Tensor: kiln.common.tensor._rebuild_tensor, Parameter: _rebuild_parameter), so a
# pickle of a tensor never names the class. While the alias is installed their __module__ reads `mindspore...`:
# `type(x)` prints `<class 'mindspore.common.tensor.Tensor'>` as in MindSpore, and that path is importable and is
# this very class (`mindspore.common.tensor` is the module object kiln.common.tensor). uninstall() restores `kiln`.
_RENAMED = (("common.tensor", "Tensor"), ("common.parameter", "Parameter"))


def _rename_classes(package):
    for sub, name in _RENAMED:
        mod = importlib.import_module(f"{TARGET}.{sub}")
        cls = getattr(mod, name)
        if cls.__module__ in (f"{TARGET}.{sub}", f"{ALIAS}.{sub}"):
            cls.__module__ = f"{package}.{sub}"


def uninstall():
    """Removes the alias: drops the finder and the `mindspore[.X]` entries it put into sys.modules (idempotent).

    Names already bound by earlier imports (e.g. `ms` in a running script) keep referring to the Kiln modules.
    """
    while _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in list(_aliased):
        mod = sys.modules.get(name)
        tname = _target_name(name)
        if mod is not None and tname is not None and mod is sys.modules.get(tname):
            del sys.modules[name]
        _aliased.discard(name)
    _rename_classes(TARGET)


# ---------------------------------------------------------------------------------------------------------------
# The runner: behaves like the `python` command line for scripts, -m and -c.

def _fresh_main(file=None, loader=None):
    """A new, empty `__main__` module registered in sys.modules (as the interpreter provides one)."""
    import builtins
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    main.__dict__["__annotations__"] = {}
    main.__spec__ = None
    main.__package__ = None
    if file is not None:
        main.__file__ = file
        main.__cached__ = None
    if loader is not None:
        main.__loader__ = loader
    sys.modules["__main__"] = main
    return main


def _set_path0(entry):
    """sys.path[0] as `python` sets it (nothing under -P / PYTHONSAFEPATH). `python -m kiln.compat` left the
    current directory there; it is replaced."""
    if getattr(sys.flags, "safe_path", False):
        return
    if sys.path and sys.path[0] in ("", os.getcwd()):
        sys.path[0] = entry
    else:
        sys.path.insert(0, entry)


def _run_script(path, args):
    sys.argv = [path] + list(args)
    if not os.path.exists(path):
        sys.stderr.write(f"{sys.executable}: can't open file {os.path.abspath(path)!r}: "
                         f"[Errno 2] No such file or directory\n")
        return 2
    if os.path.isdir(path) or path.endswith((".zip", ".pyz")):
        # A directory or zip file with __main__.py: runpy does what python does; it puts `path` itself at
        # sys.path[0], where python has it instead of the current directory.
        import runpy
        if sys.path and sys.path[0] in ("", os.getcwd()):
            del sys.path[0]
        runpy.run_path(path, run_name="__main__")
        return 0
    real = os.path.realpath(path)
    _set_path0(os.path.dirname(real))
    abspath = os.path.abspath(path)
    with open(path, "rb") as f:
        source = f.read()
    code = compile(source, abspath, "exec", dont_inherit=True)
    loader = importlib.machinery.SourceFileLoader("__main__", abspath)
    main = _fresh_main(file=abspath, loader=loader)
    exec(code, main.__dict__)
    return 0


def _run_module(modname, args):
    import runpy
    sys.argv = ["-m"] + list(args)  # python shows "-m" until the module is found, then its file path
    _fresh_main()
    # The interpreter's own implementation of `python -m`: finds the module (a package runs its __main__),
    # sets sys.argv[0] to its file, runs it in the fresh __main__, prints "No module named ..." and exits 1
    # when it does not exist.
    if hasattr(runpy, "_run_module_as_main"):
        runpy._run_module_as_main(modname, alter_argv=True)
    else:  # pragma: no cover - every CPython 3.x has it
        runpy.run_module(modname, run_name="__main__", alter_sys=True)
    return 0


def _run_source(source, args, argv0, filename):
    """`python -c command` (argv0 "-c", filename "<string>") and `python -` (argv0 "-", filename "<stdin>")."""
    sys.argv = [argv0] + list(args)
    _set_path0("")
    main = _fresh_main(loader=importlib.machinery.BuiltinImporter)
    exec(compile(source, filename, "exec", dont_inherit=True), main.__dict__)
    return 0


def _trim_traceback(tb):
    """Drops the runner's own leading frames, so that a traceback reads as if `python` ran the program."""
    runner_files = {__file__, _run_script.__code__.co_filename}
    try:
        import runpy
        runner_files.add(runpy._run_code.__code__.co_filename)
    except (ImportError, AttributeError):
        pass
    main_mod = sys.modules.get("kiln.compat.__main__")
    if main_mod is not None and getattr(main_mod, "__file__", None):
        runner_files.add(main_mod.__file__)
    runner_files.add(os.path.join(os.path.dirname(__file__), "__main__.py"))
    while tb is not None and tb.tb_frame.f_code.co_filename in runner_files:
        tb = tb.tb_next
    return tb


def main(argv=None):
    """Entry point of `python -m kiln.compat`. argv: the arguments after `-m kiln.compat` (default sys.argv[1:]).

    Returns the exit status (0 when the program ended normally); SystemExit raised by the program propagates
    (as it does under `python`), and an uncaught exception is reported through sys.excepthook with exit status 1.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        sys.stderr.write(_USAGE)
        return 2
    first = argv[0]
    if first in ("-h", "--help"):
        sys.stdout.write(_USAGE)
        return 0
    if first in ("-m", "-c"):
        if len(argv) < 2:
            sys.stderr.write(f"Argument expected for the {first} option\n" + _USAGE)
            return 2
        if first == "-m":
            run = lambda: _run_module(argv[1], argv[2:])
        else:
            run = lambda: _run_source(argv[1], argv[2:], "-c", "<string>")
    elif first == "-":
        run = lambda: _run_source(sys.stdin.read(), argv[1:], "-", "<stdin>")
    elif first.startswith("-"):
        sys.stderr.write(f"unknown option {first}\n" + _USAGE)
        return 2
    else:
        run = lambda: _run_script(first, argv[1:])
    install()
    try:
        return run()
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as e:  # noqa: BLE001 — reported like the interpreter does for an uncaught exception
        e.__traceback__ = _trim_traceback(e.__traceback__)
        sys.excepthook(type(e), e, e.__traceback__)
        return 1

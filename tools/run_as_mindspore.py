"""Runs a Kiln program on a real MindSpore: `import kiln[.X]` resolves to `mindspore[.X]` (the reverse of kiln.compat).

Used to check that a Kiln example (written `import kiln as ms`) is a valid MindSpore program, i.e. that it uses the
MindSpore API as MindSpore defines it:

    /work/msvenv/bin/python tools/run_as_mindspore.py examples/train_mnist_model.py [args ...]

The script runs as `python script.py args` would run it (sys.argv, `__name__ == "__main__"`, sys.path[0] is the
script's directory, exit status), except that in this process `kiln` is the `mindspore` module object and
`kiln.X.Y` is `mindspore.X.Y` (the same objects). A `kiln.X` that MindSpore lacks raises ModuleNotFoundError.
This interpreter must have MindSpore and must not have imported Kiln.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import runpy
import sys

ALIAS, TARGET = "kiln", "mindspore"


def _target(fullname):
    if fullname == ALIAS:
        return TARGET
    if fullname.startswith(ALIAS + "."):
        return TARGET + fullname[len(ALIAS):]
    return None


class _Loader(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__spec__.name
        importlib.import_module(self.target)
        sys.modules[name] = sys.modules[self.target]


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        tname = _target(fullname)
        if tname is None:
            return None
        if tname not in sys.modules and importlib.util.find_spec(tname) is None:
            raise ModuleNotFoundError(f"No module named '{fullname}': MindSpore has no '{tname}'", name=fullname)
        return importlib.machinery.ModuleSpec(fullname, _Loader(tname), is_package=True)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    if ALIAS in sys.modules:
        print(f"run_as_mindspore: '{ALIAS}' is already imported in this interpreter", file=sys.stderr)
        return 2
    script = argv[0]
    if not os.path.isfile(script):
        print(f"run_as_mindspore: no such script: {script!r}", file=sys.stderr)
        return 2
    sys.meta_path.insert(0, _Finder())
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())

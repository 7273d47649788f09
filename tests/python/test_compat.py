"""`python -m kiln.compat`: MindSpore programs run on Kiln, exactly as `python` would run them.

Every check runs small temporary programs in a subprocess (the alias must never leak into this test process).
"""
import importlib.util
import os
import subprocess
import sys
import textwrap


import kiln

from helpers import subprocess_env as _env


def run_py(args, cwd, extra_path=(), stdin=None):
    """Runs `python <args>` in cwd; returns CompletedProcess (text)."""
    return subprocess.run([sys.executable, *args], cwd=cwd, env=_env(extra_path), input=stdin,
                          capture_output=True, text=True, timeout=120)


def compat(args, cwd, **kw):
    return run_py(["-m", "kiln.compat", *args], cwd, **kw)


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def _has_kiln_module(name):
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


# Submodules a MindSpore program imports; those that Kiln has are aliased, the others must fail clearly.
_SUBMODULES = ["nn", "ops", "common", "common.initializer", "common.dtype", "context", "train", "dataset", "amp"]


def test_mindspore_is_kiln_and_submodules_are_the_same_objects(tmp_path):
    write(tmp_path / "prog.py", f"""
        import importlib, sys
        import mindspore as ms
        import kiln
        assert ms is kiln, ms
        assert sys.modules["mindspore"] is kiln
        for sub in {_SUBMODULES!r}:
            try:
                m = importlib.import_module("mindspore." + sub)
            except ModuleNotFoundError as e:
                print("missing", sub, "|", e)
                continue
            assert m is importlib.import_module("kiln." + sub), sub
            assert sys.modules["mindspore." + sub] is m
            assert m.__name__ == "kiln." + sub          # the Kiln module itself, not a copy
            print("aliased", sub)
        """)
    r = compat(["prog.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    for sub in _SUBMODULES:
        if _has_kiln_module("kiln." + sub):
            assert f"aliased {sub}" in lines, r.stdout
        else:
            missing = [ln for ln in lines if ln.startswith(f"missing {sub} |")]
            assert missing and f"'mindspore.{sub}'" in missing[0] and f"'kiln.{sub}'" in missing[0], r.stdout


def test_import_forms(tmp_path):
    # `import a.b as c`, `from a import b`, `from a.b import c` all go through the alias.
    present = [s for s in ("nn", "ops", "common", "context") if _has_kiln_module("kiln." + s)]
    lines = ["import kiln", "import mindspore"]
    for s in present:
        alias = s.replace(".", "_")
        lines += [f"import mindspore.{s} as m_{alias}", f"assert m_{alias} is kiln.{s}",
                  f"from mindspore import {s} as f_{alias}", f"assert f_{alias} is kiln.{s}"]
    if _has_kiln_module("kiln.context"):
        lines += ["from mindspore.context import *"]
    lines += ["from mindspore import Tensor" if hasattr(kiln, "Tensor") else "pass",
              "print('ok')"]
    write(tmp_path / "forms.py", "\n".join(lines) + "\n")
    r = compat(["forms.py"], tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_missing_submodule_names_both_modules(tmp_path):
    write(tmp_path / "miss.py", """
        import mindspore
        try:
            import mindspore.no_such_submodule
        except ModuleNotFoundError as e:
            print("name=" + e.name)
            print("msg=" + str(e))
        from mindspore.no_such_submodule import thing
        """)
    r = compat(["miss.py"], tmp_path)
    assert "name=mindspore.no_such_submodule" in r.stdout
    msg = [ln for ln in r.stdout.splitlines() if ln.startswith("msg=")][0]
    assert "'mindspore.no_such_submodule'" in msg and "'kiln.no_such_submodule'" in msg
    # Uncaught, it ends the program like under `python`: traceback on stderr, status 1.
    assert r.returncode == 1
    assert "ModuleNotFoundError" in r.stderr and "kiln.no_such_submodule" in r.stderr
    # `from mindspore import <not a name>` is Python's usual ImportError.
    r = compat(["-c", "from mindspore import no_such_name"], tmp_path)
    assert r.returncode == 1 and "ImportError: cannot import name 'no_such_name'" in r.stderr


def test_argv_name_file_and_sys_path0_like_python(tmp_path):
    write(tmp_path / "sub" / "helper_mod.py", "VALUE = 42\n")
    write(tmp_path / "sub" / "script.py", """
        import os, sys
        import helper_mod                  # importable: sys.path[0] is the script's directory
        print("argv=" + repr(sys.argv))
        print("name=" + __name__)
        print("file=" + __file__)
        print("path0=" + sys.path[0])
        print("main=" + str(sys.modules["__main__"].__dict__ is globals()))
        print("helper=" + str(helper_mod.VALUE))
        """)
    r = compat([os.path.join("sub", "script.py"), "a", "--flag", "b c"], tmp_path)
    assert r.returncode == 0, r.stderr
    want = run_py([os.path.join("sub", "script.py"), "a", "--flag", "b c"], tmp_path)
    assert want.returncode == 0, want.stderr
    assert r.stdout == want.stdout
    assert "argv=['sub/script.py', 'a', '--flag', 'b c']" in r.stdout
    assert "name=__main__" in r.stdout and "main=True" in r.stdout
    assert f"path0={os.path.realpath(tmp_path / 'sub')}" in r.stdout


def test_exit_status_and_exceptions_propagate(tmp_path):
    write(tmp_path / "ok.py", "import mindspore\nprint('done')\n")
    write(tmp_path / "code.py", "import sys\nsys.exit(7)\n")
    write(tmp_path / "msg.py", "import sys\nsys.exit('fatal: bad input')\n")
    write(tmp_path / "boom.py", """
        def inner():
            raise ValueError("broken on purpose")
        inner()
        """)
    assert compat(["ok.py"], tmp_path).returncode == 0
    assert compat(["code.py"], tmp_path).returncode == 7
    r = compat(["msg.py"], tmp_path)
    assert r.returncode == 1 and "fatal: bad input" in r.stderr
    r = compat(["boom.py"], tmp_path)
    assert r.returncode == 1
    assert "ValueError: broken on purpose" in r.stderr
    # The traceback reads as under `python`: it starts at the program, not in the runner.
    tb = r.stderr.splitlines()
    assert tb[0] == "Traceback (most recent call last):" and "boom.py" in tb[1], r.stderr
    assert os.path.join("kiln", "compat") not in r.stderr
    r = compat(["no_such_file.py"], tmp_path)
    assert r.returncode == 2 and "can't open file" in r.stderr


def test_dash_m_module_and_package(tmp_path):
    write(tmp_path / "mods" / "tool.py", """
        import sys
        import mindspore, kiln
        assert mindspore is kiln
        print("name=" + __name__, "argv=" + repr(sys.argv[1:]), "argv0=" + sys.argv[0])
        sys.exit(3)
        """)
    write(tmp_path / "mods" / "pkg" / "__init__.py", "")
    write(tmp_path / "mods" / "pkg" / "__main__.py", "import mindspore\nprint('pkg main', __name__)\n")
    r = compat(["-m", "tool", "x", "-y"], tmp_path / "mods")
    assert r.returncode == 3, r.stderr
    assert "name=__main__ argv=['x', '-y'] argv0=" + str(tmp_path / "mods" / "tool.py") in r.stdout
    r = compat(["-m", "pkg"], tmp_path / "mods")
    assert r.returncode == 0 and r.stdout.strip() == "pkg main __main__", r.stderr
    r = compat(["-m", "no_such_module_xyz"], tmp_path)
    assert r.returncode == 1 and "No module named no_such_module_xyz" in r.stderr


def test_dash_m_pytest_runs_tests_that_import_mindspore(tmp_path):
    write(tmp_path / "test_tiny.py", """
        import mindspore as ms
        import kiln

        def test_alias():
            assert ms is kiln

        def test_fails_on_purpose():
            assert ms is None
        """)
    r = compat(["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_tiny.py"], tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr  # pytest's status for "a test failed"
    assert "1 failed, 1 passed" in r.stdout, r.stdout
    r = compat(["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_tiny.py", "-k", "alias"], tmp_path)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr


def test_dash_c_and_stdin(tmp_path):
    r = compat(["-c", "import sys, mindspore, kiln; print(mindspore is kiln, sys.argv)", "a"], tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "True ['-c', 'a']", r.stderr
    r = compat(["-", "q"], tmp_path, stdin="import sys, mindspore, kiln\nprint(mindspore is kiln, sys.argv)\n")
    assert r.returncode == 0 and r.stdout.strip() == "True ['-', 'q']", r.stderr


def test_usage(tmp_path):
    r = compat([], tmp_path)
    assert r.returncode == 2 and r.stdout == "" and "usage: python -m kiln.compat" in r.stderr
    r = compat(["--help"], tmp_path)
    assert r.returncode == 0 and "usage: python -m kiln.compat" in r.stdout
    r = compat(["-m"], tmp_path)
    assert r.returncode == 2 and "usage" in r.stderr
    r = compat(["--bogus"], tmp_path)
    assert r.returncode == 2 and "usage" in r.stderr


def test_no_alias_without_the_runner(tmp_path):
    r = run_py(["-c", textwrap.dedent("""
        import sys, kiln, kiln.compat
        assert not kiln.compat.is_installed()
        assert "mindspore" not in sys.modules
        try:
            import mindspore
        except ModuleNotFoundError:
            print("no alias")
        else:
            print("aliased?", mindspore)
        """)], tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "no alias", r.stdout + r.stderr


def test_a_real_mindspore_is_never_shadowed_outside_the_runner(tmp_path):
    # A stand-in for an installed MindSpore, found on sys.path.
    write(tmp_path / "site" / "mindspore" / "__init__.py", "REAL = True\n")
    r = run_py(["-c", "import kiln, kiln.compat, mindspore; print(getattr(mindspore, 'REAL', False))"],
               tmp_path, extra_path=[str(tmp_path / "site")])
    assert r.returncode == 0 and r.stdout.strip() == "True", r.stderr
    # ... while under the runner it is Kiln.
    r = compat(["-c", "import kiln, mindspore; print(mindspore is kiln)"], tmp_path,
               extra_path=[str(tmp_path / "site")])
    assert r.returncode == 0 and r.stdout.strip() == "True", r.stderr
    # install() refuses to mix a real MindSpore that is already imported with Kiln.
    r = run_py(["-c", "import mindspore, kiln.compat; kiln.compat.install()"], tmp_path,
               extra_path=[str(tmp_path / "site")])
    assert r.returncode == 1 and "RuntimeError" in r.stderr and "already imported" in r.stderr


def test_install_and_uninstall_programmatically(tmp_path):
    r = run_py(["-c", textwrap.dedent("""
        import sys, kiln, kiln.compat as compat
        compat.install(); compat.install()                       # idempotent
        assert compat.is_installed()
        import mindspore
        assert mindspore is kiln
        compat.uninstall(); compat.uninstall()                   # idempotent
        assert not compat.is_installed()
        assert "mindspore" not in sys.modules
        try:
            import mindspore
        except ModuleNotFoundError:
            print("removed")
        """)], tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "removed", r.stdout + r.stderr


def test_tensor_and_parameter_classes_read_mindspore_paths_under_the_runner(tmp_path):
    # type(x) prints MindSpore's class path (MindSpore's python_builtin_functions tutorial, `type`), which names this
    # very class in the process; pickles of tensors name their rebuild function, not the class, and stay loadable
    # without the alias; uninstall() restores the kiln path.
    script = write(tmp_path / "class_paths.py", """
        import pickle, sys
        import mindspore
        import mindspore.common.tensor as mct
        x = mindspore.tensor([1, 2, 3])
        p = mindspore.Parameter(mindspore.tensor([1.0]), name="w")
        print(type(x)); print(type(p))
        assert mct.Tensor is type(x) and pickle.loads(pickle.dumps(type(x))) is type(x)
        data = pickle.dumps((x, p))
        assert b"mindspore" not in data, data
        y, q = pickle.loads(data)
        assert isinstance(y, mindspore.Tensor) and type(q) is mindspore.Parameter and q.name == "w"
        import kiln.compat
        kiln.compat.uninstall()
        print(type(x)); print(type(p))
    """)
    r = compat([str(script)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["<class 'mindspore.common.tensor.Tensor'>",
                                     "<class 'mindspore.common.parameter.Parameter'>",
                                     "<class 'kiln.common.tensor.Tensor'>", "<class 'kiln.common.parameter.Parameter'>"]
    r = run_py(["-c", "import kiln; print(type(kiln.tensor([1])))"], tmp_path)
    assert r.stdout.strip() == "<class 'kiln.common.tensor.Tensor'>", r.stderr

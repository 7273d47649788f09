"""tools/run_as_mindspore.py (the reverse of kiln.compat: `kiln[.X]` -> `mindspore[.X]`), checked with a stand-in
`mindspore` package written into a temporary directory, so no real MindSpore is needed."""
import os
import subprocess
import sys

SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "run_as_mindspore.py")


def run(tmp_path, script_text, *args):
    pkg = tmp_path / "site" / "mindspore"
    (pkg / "train").mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("NAME = 'stand-in'\n")
    (pkg / "train" / "__init__.py").write_text("class Model:\n    pass\n")
    script = tmp_path / "prog" / "prog.py"
    script.parent.mkdir(exist_ok=True)
    (script.parent / "helper_mod.py").write_text("VALUE = 7\n")
    script.write_text(script_text)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(tmp_path / "site")
    return subprocess.run([sys.executable, SHIM, str(script), *args], capture_output=True, text=True, env=env,
                          cwd=str(tmp_path), timeout=120)


def test_kiln_names_are_the_mindspore_modules(tmp_path):
    out = run(tmp_path, (
        "import sys\n"
        "import kiln as ms\n"
        "import kiln.train\n"
        "from kiln.train import Model\n"
        "import mindspore, mindspore.train\n"
        "import helper_mod\n"  # sys.path[0] is the script's directory
        "assert ms is mindspore and kiln.train is mindspore.train and Model is mindspore.train.Model\n"
        "print(ms.NAME, __name__, sys.argv[1:], helper_mod.VALUE)\n"
        "sys.exit(5)\n"), "--flag", "x")
    assert out.returncode == 5, out.stderr
    assert out.stdout == "stand-in __main__ ['--flag', 'x'] 7\n"


def test_missing_submodule_and_bad_calls(tmp_path):
    out = run(tmp_path, "import kiln.nosuch\n")
    assert out.returncode == 1
    assert "ModuleNotFoundError: No module named 'kiln.nosuch': MindSpore has no 'mindspore.nosuch'" in out.stderr
    bad = subprocess.run([sys.executable, SHIM, str(tmp_path / "missing.py")], capture_output=True, text=True)
    assert bad.returncode == 2 and "no such script" in bad.stderr
    usage = subprocess.run([sys.executable, SHIM], capture_output=True, text=True)
    assert usage.returncode == 2 and "run_as_mindspore.py" in usage.stdout

"""Which Kiln the benchmark scripts measure, and the environment of the processes they start.

Kiln's policy (run.sh, tools/setup_env.sh): what is tested and measured is the Kiln that tools/setup_env.sh built and
installed into .venv. The source tree's python/ holds no built extension (kiln/_core*.so), so putting python/ on
sys.path or PYTHONPATH imports half a package (a circular-import ImportError, or no kiln._core). Hence:

- run a benchmark as `.venv/bin/python benchmarks/NAME.py ...`, with PYTHONPATH unset;
- require_kiln() (at the start of a script, or of the part of it that measures Kiln) turns a kiln that does not
  import, or imports without its extension, into one clear line instead of a traceback; require_kiln_in(python)
  does the same for another interpreter (a script's --kiln-python), kiln_path_problem(path) for a folder meant for
  PYTHONPATH (bench_cpu_step.py --kiln NAME=PATH: it must hold a built kiln, kiln/_core*.so);
- child_env() is the environment of every child process: this process's own (so that a child started with
  sys.executable imports the same kiln as its parent), with the thread counts set when asked. It never adds the
  source tree's python/; only the folders a child imports helpers from (benchmarks/, examples/: not the kiln
  package) may be added;
- child processes started with `-m` or `-c` put their working directory on sys.path: they run in CHILD_CWD
  (benchmarks/), never in a folder that could hold a `kiln` source package;
- a peer's interpreter (torch, mindspore, ...: benchmarks/setup_peers.sh, --torch-python, ...) is optional:
  missing_python() says why one cannot run, so that the script reports it and goes on.

`python benchmarks/_env.py` says which kiln that python imports (exit status 1 and the reason when none).
"""
import importlib.machinery
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXAMPLES = os.path.join(ROOT, "examples")
CHILD_CWD = HERE
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
HINT = "run tools/setup_env.sh and use .venv/bin/python (with PYTHONPATH unset)"


def _core_files(package_dir):
    """The kiln/_core extension files in package_dir that this interpreter can load."""
    return [os.path.join(package_dir, "_core" + s) for s in importlib.machinery.EXTENSION_SUFFIXES
            if os.path.isfile(os.path.join(package_dir, "_core" + s))]


def _on_pythonpath(folder):
    entries = [os.path.realpath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return os.path.realpath(folder) in entries


def kiln_problem():
    """None when `import kiln` works here and kiln._core (the built extension) is loaded; otherwise why not, in
    one line."""
    try:
        import kiln
        import kiln._core  # kiln/_loader.py loads it; here it must be there
    except Exception as e:  # noqa: BLE001  (any failure becomes the one-line reason below)
        try:
            spec = importlib.util.find_spec("kiln")
        except Exception:  # noqa: BLE001 (a broken install: reported as not found)
            spec = None
        if spec is None or not spec.origin:
            return f"kiln is not installed for {sys.executable}"
        package = os.path.dirname(os.path.abspath(spec.origin))
        if not _core_files(package):
            via = " (put on the path by PYTHONPATH)" if _on_pythonpath(os.path.dirname(package)) else ""
            return (f"kiln imports from {package}{via}, a source tree without its built extension "
                    f"(no kiln/_core*.so), and fails ({type(e).__name__})")
        return f"import kiln from {package} failed: {type(e).__name__}: {(str(e).splitlines() or [''])[0]}"
    if not getattr(kiln, "__file__", None):
        return "kiln is a namespace package here (no kiln/__init__.py): a folder named kiln shadows Kiln"
    return None


def require_kiln():
    """Imports kiln (with its built extension) and returns it; when that fails, exits with one line on stderr that
    says why and what to do (no traceback)."""
    problem = kiln_problem()
    if problem:
        sys.exit(f"{os.path.basename(sys.argv[0]) or 'benchmark'}: {problem}. {HINT}.")
    import kiln
    return kiln


def require_kiln_in(python, what="--kiln-python"):
    """require_kiln() for another interpreter (a script's --kiln-python): runs `python benchmarks/_env.py` there
    (with child_env(), in CHILD_CWD) and exits with its one-line reason when that python's kiln cannot be used."""
    if python and os.path.abspath(python) == os.path.abspath(sys.executable):
        require_kiln()
        return
    import subprocess
    why = missing_python(python)
    if not why:
        p = subprocess.run([python, os.path.abspath(__file__)], capture_output=True, text=True, env=child_env(),
                           cwd=CHILD_CWD)
        why = None if p.returncode == 0 else (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
    if why:
        sys.exit(f"{os.path.basename(sys.argv[0]) or 'benchmark'}: {what} {python}: {why}")


def kiln_path_problem(path):
    """None when `path` (a folder meant for PYTHONPATH, e.g. bench_cpu_step.py --kiln NAME=PATH) holds a built kiln
    that this interpreter can load: kiln/__init__.py and kiln/_core with one of its extension suffixes."""
    package = os.path.join(os.path.abspath(path), "kiln")
    if not os.path.isfile(os.path.join(package, "__init__.py")):
        return f"{path} holds no kiln package ({package}/__init__.py missing)"
    if not _core_files(package):
        return (f"{package} has no built extension for this python (kiln/_core"
                f"{importlib.machinery.EXTENSION_SUFFIXES[0]} missing: a source tree needs tools/dev_build.sh)")
    return None


def child_env(threads=None, path=(), **variables):
    """The environment of a child process: this process's, plus OMP/MKL/OPENBLAS_NUM_THREADS = threads (when
    given), the folders `path` put in front of PYTHONPATH (helpers such as examples/; never the source tree's
    python/), and `variables` (values turned into strings)."""
    env = dict(os.environ)
    if threads:
        for k in THREAD_VARS:
            env[k] = str(threads)
    if path:
        env["PYTHONPATH"] = os.pathsep.join([*map(os.path.abspath, path)] +
                                            ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.update({k: str(v) for k, v in variables.items()})
    return env


def run_msrun_workers(script, n, worker_args, timeout=1800):
    """Runs `script --worker worker_args...` in n processes under `python -m kiln.msrun` (this interpreter, a free
    local port, OMP/MKL/OPENBLAS_NUM_THREADS = cpu_count // n each) and returns (rank 0's log text, threads).

    Raises RuntimeError with the launcher's stderr and rank 0's log when the run fails, and
    subprocess.TimeoutExpired after `timeout` seconds."""
    import socket
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as logs:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        threads = max(1, (os.cpu_count() or 1) // n)
        r = subprocess.run([sys.executable, "-m", "kiln.msrun", f"--worker_num={n}", f"--local_worker_num={n}",
                            f"--master_port={port}", f"--log_dir={logs}", os.path.abspath(script), "--worker",
                            *worker_args],
                           env=child_env(OMP_NUM_THREADS=threads), cwd=CHILD_CWD, capture_output=True, text=True,
                           timeout=timeout)
        log = os.path.join(logs, "worker_0.log")
        text = open(log).read() if os.path.exists(log) else ""
        if r.returncode:
            raise RuntimeError(f"{n} processes failed:\n{r.stderr}\n{text}")
    return text, threads


def warn_if_busy():
    """Prints a warning when the 1-minute load average exceeds half the cores: figures taken then are not
    representative of the machine."""
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1) / 2:
        print(f"warning: load average {load:.1f} on {os.cpu_count()} cores: figures are not representative")


def missing_python(python):
    """None when `python` is an executable file; otherwise the reason to report for the framework it was to run
    (a peer's venv that is not there is skipped, never fatal)."""
    if not python:
        return "not installed (no python given)"
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        return f"not installed (no python at {python})"
    return None


if __name__ == "__main__":
    why = kiln_problem()
    if why:
        sys.exit(f"{why}. {HINT}.")
    import kiln
    print(f"kiln {getattr(kiln, '__version__', '?')} from {os.path.dirname(kiln.__file__)} ({sys.executable})")

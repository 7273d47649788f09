"""The subpackages that `import mindspore` makes attributes (MindSpore 2.x's __init__ imports common, dataset,
mindrecord, train, log, profiler, communication, numpy, parallel, and ops/nn/context/amp through them; and puts
mindrecord's FileWriter/FileReader at top level) are attributes of `kiln` after a bare `import kiln` too, and so of
`mindspore` under `python -m kiln.compat`; dataset and mindrecord load on first use. Each check runs in a fresh
interpreter (nothing imported before)."""
import socket
import subprocess
import sys
import textwrap

import numpy as np

from helpers import subprocess_env

SUBPACKAGES = ["common", "dataset", "mindrecord", "train", "log", "profiler", "communication", "numpy", "parallel",
               "ops", "nn", "context", "amp"]

CHECK = textwrap.dedent("""
    import sys, types
    assert "{pkg}.dataset" not in sys.modules and "kiln.dataset" not in sys.modules  # lazy: not loaded by the import
    names = dir(ms)
    for sub in {subs!r}:
        assert sub in names, sub
        assert isinstance(getattr(ms, sub), types.ModuleType), sub
    assert "FileWriter" in names and "FileReader" in names
    assert ms.dataset.MnistDataset.__name__ == "MnistDataset"
    assert ms.mindrecord.FileWriter.__name__ == "FileWriter"
    assert ms.FileWriter is ms.mindrecord.FileWriter and ms.FileReader is ms.mindrecord.FileReader
    try:
        ms.no_such_thing
    except AttributeError as e:
        assert "no_such_thing" in str(e), e
    else:
        raise AssertionError("no AttributeError")
    print("OK")
""")


def _run(args):
    r = subprocess.run([sys.executable, *args], env=subprocess_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), r.stdout + r.stderr
    return r


def test_bare_import_kiln_has_mindspore_subpackages():
    _run(["-c", "import kiln as ms\n" + CHECK.format(pkg="kiln", subs=SUBPACKAGES)])


def test_bare_import_mindspore_under_compat():
    code = "import mindspore as ms\nimport kiln\nassert ms is kiln\n" + CHECK.format(pkg="mindspore", subs=SUBPACKAGES)
    _run(["-m", "kiln.compat", "-c", code])


def _write_idx(path, arr, magic):
    with open(path, "wb") as f:
        f.write(magic.to_bytes(4, "big"))
        for s in arr.shape:
            f.write(int(s).to_bytes(4, "big"))
        f.write(arr.astype(np.uint8).tobytes())


def test_distributed_doc_example_first_lines(tmp_path):
    """docs/distributed.md's example up to the dataset line, in a 1-process job under the launcher: `init()`,
    `ms.set_auto_parallel_context(...)`, `data = ms.dataset.MnistDataset("mnist/train")` (which shards itself)."""
    rng = np.random.default_rng(0)
    d = tmp_path / "mnist" / "train"
    d.mkdir(parents=True)
    _write_idx(d / "train-images-idx3-ubyte", rng.integers(0, 256, (4, 28, 28)), 2051)
    _write_idx(d / "train-labels-idx1-ubyte", rng.integers(0, 10, 4), 2049)
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""
        import mindspore as ms
        from mindspore import nn
        from mindspore.communication import init, get_rank, get_group_size

        init()
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
        data = ms.dataset.MnistDataset("mnist/train")
        print("ROWS", data.get_dataset_size(), get_rank(), get_group_size(), flush=True)
    """))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = subprocess_env()
    for v in ("MS_WORKER_NUM", "MS_SCHED_HOST", "MS_SCHED_PORT", "MS_NODE_ID", "RANK_ID", "KILN_RENDEZVOUS_TOKEN"):
        env.pop(v, None)
    r = subprocess.run([sys.executable, "-m", "kiln.msrun", "--worker_num=1", "--local_worker_num=1",
                        "--master_addr=127.0.0.1", f"--master_port={port}", f"--log_dir={tmp_path / 'logs'}", "--join",
                        str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "ROWS 4 0 1" in r.stdout, r.stdout + r.stderr

"""MindSpore's parallel tutorials' sample scripts, unchanged, under `python -m kiln.msrun` (issue 27).

The samples are read from a checkout of MindSpore's docs repository (docs/sample_code/<dir>/; KILN_MINDSPORE_DOCS, or
the mirror at /work/.mirror/mindspore-ai+docs/repo, a bare clone read with `git show HEAD:<path>`), never copied into
Kiln: where there is none (CI), those tests are skipped, as test_tutorials.py's are; the semi-auto data-parallel,
hsdp and pipeline-copy tests below use Kiln's own scripts (dist_scripts/semi_auto_dp.py) and run everywhere. Each
sample test writes the sample into a scratch directory and starts it as its run.sh does (msrun's flags as written
there; the mpirun samples with the same worker count through msrun), with DATA_PATH at a small MNIST-format folder
made from scikit-learn's digits (examples/mnist_files.py): 128 training images (4 batches of 32; 10 epochs = 40
steps), 640 for the gradient accumulation sample (its LossMonitor(100) prints at steps 100 and 200). The samples read
no step-count variable, so the data set is what keeps them short. Values checked: the losses the samples print.
docs/distributed.md "MindSpore's parallel samples" has the table of what runs with 2, 4 and 8 processes."""
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from helpers import subprocess_env
from test_distributed import LAUNCH_VARS, free_port

HERE = os.path.dirname(os.path.abspath(__file__))


def _docs_checkout():
    path = os.environ.get("KILN_MINDSPORE_DOCS", "/work/.mirror/mindspore-ai+docs/repo")
    return path if os.path.isdir(path) else None


needs_docs = pytest.mark.skipif(_docs_checkout() is None,
                                reason="no mindspore-ai/docs checkout (set KILN_MINDSPORE_DOCS)")


def _write_sample(sample, script, dest):
    """Writes docs/sample_code/<sample>/<script> of the docs checkout to `dest` (a work tree's file, or the bare
    mirror's HEAD through git show)."""
    docs = _docs_checkout()
    rel = f"docs/sample_code/{sample}/{script}"
    if os.path.isfile(os.path.join(docs, rel)):
        shutil.copy(os.path.join(docs, rel), dest)
        return
    text = subprocess.run(["git", "-C", docs, "show", f"HEAD:{rel}"], capture_output=True, text=True, check=True).stdout
    with open(dest, "w", encoding="utf-8") as f:
        f.write(text)
# a loss line of the samples, read from each rank's own log (log_output/worker_<rank>.log): a worker's stderr shares
# its stdout pipe, so a warning can land inside a line that its buffered stdout flushed in two parts; the workers run
# with PYTHONUNBUFFERED=1 and the pattern is not anchored to the line's start
LOSS = re.compile(r"epoch: (\d+),? step: (\d+), loss is ([-0-9.e]+)")


def _mnist(root, images):
    pytest.importorskip("sklearn")
    sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
    try:
        import mnist_files
    finally:
        sys.path.pop(0)
    train = os.path.join(root, "MNIST_Data", "train")
    paths = mnist_files.write_mnist(train, test_size=1797 - images)
    for kind in ("images", "labels"):  # MnistDataset(dir) reads every split present: keep the training images
        os.remove(paths["test", kind])
    return train


def _run(tmp_path, sample, script, workers, images=128, pytest_task=False, timeout=400):
    """Writes the docs checkout's docs/sample_code/<sample>/<script> into tmp_path and runs it with `python -m kiln.msrun` as its run.sh
    does; returns (CompletedProcess, {rank: [(epoch, step, loss), ...]})."""
    _write_sample(sample, script, tmp_path / script)
    env = subprocess_env()
    for v in LAUNCH_VARS:
        env.pop(v, None)
    env["PYTHONUNBUFFERED"] = "1"
    env["DATA_PATH"] = _mnist(str(tmp_path), images) + os.sep
    task = ["pytest", "-s", script] if pytest_task else [script]
    cmd = [sys.executable, "-m", "kiln.msrun", f"--worker_num={workers}", f"--local_worker_num={workers}",
           "--master_addr=127.0.0.1", f"--master_port={free_port()}", "--join=True", "--log_dir=./log_output"] + task
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=tmp_path)
    losses = {}
    for log in sorted((tmp_path / "log_output").glob("worker_*.log")):
        rank = int(log.stem.split("_")[1])
        for epoch, step, loss in LOSS.findall(log.read_text()):
            losses.setdefault(rank, []).append((int(epoch), int(step), float(loss)))
    return r, losses


def _out(r, tmp_path):
    logs = "\n".join(f"--- {p.name}\n{p.read_text()}" for p in sorted((tmp_path / "log_output").glob("*.log")))
    return r.stdout[-6000:] + r.stderr[-3000:] + logs[-6000:]


@needs_docs
def test_optimizer_parallel_sample_equals_one_process(tmp_path):
    """distributed_optimizer_parallel.py: SEMI_AUTO_PARALLEL + enable_parallel_optimizer, set_comm_fusion, a @ms.jit
    step over value_and_grad with no gradient reducer (Kiln averages the gradients: kiln/parallel/_semi_auto_dp.py),
    every process reading the whole data set. 2 processes print, epoch by epoch, one process's losses."""
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    r1, one = _run(tmp_path / "one", "distributed_optimizer_parallel", "distributed_optimizer_parallel.py", 1)
    assert r1.returncode == 0, _out(r1, tmp_path / "one")
    r2, two = _run(tmp_path / "two", "distributed_optimizer_parallel", "distributed_optimizer_parallel.py", 2)
    assert r2.returncode == 0, _out(r2, tmp_path / "two")
    ref = [v for _, _, v in one[0]]
    assert len(ref) == 10 and ref[-1] < ref[0] - 0.2, ref  # step 0 of each of the 10 epochs; training moved it
    for rank in (0, 1):
        np.testing.assert_allclose([v for _, _, v in two[rank]], ref, rtol=0, atol=1e-5, err_msg=f"rank {rank}")


@needs_docs
def test_pipeline_parallel_sample_two_stages(tmp_path):
    """distributed_pipeline_parallel.py (2 stages) with 2 processes, and with 4 (2 per stage, data parallel inside
    each; its run.sh starts 8: docs/distributed.md's table): GRAPH_MODE, @ms.jit over value_and_grad through
    PipelineCell(4) (runs in PyNative), nn.PipelineGradReducer, ops.Print in MatMulCell. Every process prints the
    same falling losses, 4 processes the 2 processes' (every replica reads the same batches); the Print runs on
    stage 0's processes only."""
    (tmp_path / "two").mkdir()
    (tmp_path / "four").mkdir()
    r, losses = _run(tmp_path / "two", "distributed_pipeline_parallel", "distributed_pipeline_parallel.py", 2)
    assert r.returncode == 0, _out(r, tmp_path / "two")
    a = [v for _, _, v in losses[0]]
    assert len(a) == 10 and [v for _, _, v in losses[1]] == a, losses
    assert a[-1] < a[0] / 2, a  # 9.21 -> 3.39 (the sum of 4 micro-batch losses)
    assert "[rank 0] out is:" in r.stdout and "[rank 1] out is:" not in r.stdout
    r, losses = _run(tmp_path / "four", "distributed_pipeline_parallel", "distributed_pipeline_parallel.py", 4)
    assert r.returncode == 0, _out(r, tmp_path / "four")
    for rank in range(4):
        np.testing.assert_allclose([v for _, _, v in losses[rank]], a, rtol=0, atol=1e-5, err_msg=f"rank {rank}")
    assert "[rank 1] out is:" in r.stdout and "[rank 2] out is:" not in r.stdout


@needs_docs
def test_gradient_accumulation_sample(tmp_path):
    """distributed_gradient_accumulation/train.py as its run.sh starts it (msrun ... pytest -s train.py): Model over
    AutoParallel(GradAccumulation(WithLossCell, 4)).hsdp() in GRAPH_MODE (runs in PyNative), networks and optimizer
    made under no_init_parameters. The script trains at import and defines no test, so pytest exits 5 ("no tests
    collected") in every process, as it would under MindSpore; the LossMonitor's losses fall."""
    r, _ = _run(tmp_path, "distributed_gradient_accumulation", "train.py", 2, images=640, pytest_task=True)
    assert "exited with status 5" in r.stdout + r.stderr, _out(r, tmp_path)
    for rank in (0, 1):
        log = (tmp_path / "log_output" / f"worker_{rank}.log").read_text()
        assert "collected 0 items" in log and "Error" not in log.replace("RuntimeWarning", ""), log[-3000:]
        vals = [float(v) for v in re.findall(r"epoch: \d+ step: \d+, loss is ([-0-9.e]+)", log)]
        assert len(vals) == 2 and vals[1] < vals[0] - 0.01, vals  # steps 100 and 200 (sums of 4 micro-batches;
        # no seed is set: the initial weights, so the fall (0.09 to 0.2 in runs here), vary from run to run)


@needs_docs
@pytest.mark.parametrize("workers", [2, 4])
def test_data_parallel_sample(tmp_path, workers):
    """distributed_data_parallel.py (its run.sh: mpirun -n 8): DATA_PARALLEL, MnistDataset sharded by rank, an
    own step with nn.DistributedGradReducer. Each process prints its own shard's losses, which fall."""
    r, losses = _run(tmp_path, "distributed_data_parallel", "distributed_data_parallel.py", workers)
    assert r.returncode == 0, _out(r, tmp_path)
    assert sorted(losses) == list(range(workers))
    for rank, vals in losses.items():
        v = [x for _, _, x in vals]
        assert len(v) == 10 and v[-1] < v[0], (rank, v)


@needs_docs
def test_recompute_sample_one_process(tmp_path):
    """recompute/example.py as its tutorial runs it (`python example.py`, here `python -m kiln.compat`):
    AutoParallel over GradOperation of 10 attention blocks, no init(): one process, the input gradient printed."""
    _write_sample("recompute", "example.py", tmp_path / "example.py")
    r = subprocess.run([sys.executable, "-m", "kiln.compat", "example.py"], env=subprocess_env(), capture_output=True,
                       text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    vals = [float(v) for v in re.findall(r"[-0-9.]+(?:e[-+]\d+)?", r.stdout.replace("...", " "))]
    assert r.stdout.startswith("[[[[") and len(vals) > 100 and all(np.isfinite(vals)), r.stdout[:500]


# ------------------------------------------------------------------------------------------------ one process
def test_set_comm_fusion_sets_every_trainable_parameter():
    """Cell.set_comm_fusion / Parameter.comm_fusion: MindSpore 2.10's default 1, values and errors (messages as
    MindSpore's: ValueError "must be int and must >= 0" for -1, TypeError for 1.5 and True)."""
    import kiln
    from kiln import nn
    net = nn.SequentialCell(nn.Dense(2, 3), nn.Dense(3, 1))
    assert [p.comm_fusion for p in net.trainable_params()] == [1, 1, 1, 1]
    assert net.set_comm_fusion(3) is net and [p.comm_fusion for p in net.trainable_params()] == [3, 3, 3, 3]
    net[1].set_comm_fusion(0)
    assert [p.comm_fusion for p in net.trainable_params()] == [3, 3, 0, 0]
    net.set_comm_fusion(5, recurse=False)  # the SequentialCell holds no Parameter of its own
    assert [p.comm_fusion for p in net.trainable_params()] == [3, 3, 0, 0]
    with pytest.raises(ValueError, match="must be int and must >= 0, but got '-1'"):
        net.set_comm_fusion(-1)
    for bad in (1.5, True):
        with pytest.raises(TypeError, match="must be int"):
            net.set_comm_fusion(bad)
    p = kiln.Parameter(kiln.Tensor(np.ones(2, np.float32)), name="p")
    p.comm_fusion = 7
    assert p.comm_fusion == 7


def test_pipeline_grad_reducer_divides_by_scale_sense():
    """nn.PipelineGradReducer (and parallel.nn's): the gradients (already summed over the micro-batches by Kiln's
    PipelineCell) divided by scale_sense, a Parameter named 'scale_sense'; in PyNative and under jit."""
    import kiln
    from kiln import nn
    from kiln.parallel import nn as pnn
    assert pnn.PipelineGradReducer is nn.PipelineGradReducer
    ps = [kiln.Parameter(kiln.Tensor(np.ones((2, 2), np.float32)), name="a"),
          kiln.Parameter(kiln.Tensor(np.ones(3, np.float32)), name="b")]
    g = (kiln.Tensor(np.arange(4, dtype=np.float32).reshape(2, 2)), kiln.Tensor(np.full(3, 3.0, np.float32)))
    red = nn.PipelineGradReducer(kiln.ParameterTuple(ps), scale_sense=2.0)
    assert [p.name for p in red.get_parameters()] == ["scale_sense"]
    for out in (red(g), kiln.jit(lambda gr: red(gr))(g)):
        np.testing.assert_allclose(out[0].asnumpy(), np.arange(4, dtype=np.float32).reshape(2, 2) / 2)
        np.testing.assert_allclose(out[1].asnumpy(), np.full(3, 1.5, np.float32))
    with pytest.raises(ValueError, match="got 1 gradients for 2 parameters"):
        red(g[:1])
    with pytest.raises(TypeError, match="'parameters' must be a ParameterTuple"):
        nn.PipelineGradReducer([1])
    with pytest.raises(TypeError, match="'scale_sense' must be a float or int"):
        nn.PipelineGradReducer(ps, scale_sense="x")


def test_hsdp_checks_its_arguments():
    """AutoParallel.hsdp: MindSpore 2.10's checks and messages; level3 is refused by Kiln; in one process the
    optimizer stays whole and a Model over it trains as without hsdp."""
    from kiln import nn
    from kiln.parallel.auto_parallel import AutoParallel
    ap = AutoParallel(nn.Dense(2, 2))
    for kwargs, msg in (({"shard_size": 0}, "shard_size must be a positive integer or -1, but got 0"),
                        ({"threshold": -1}, "threshold must be a positive integer or 0, but got -1"),
                        ({"optimizer_level": "level4"}, "Optimizer level should in"),
                        ({"optimizer_level": "level3"}, "'level3' .* not supported by Kiln")):
        with pytest.raises(ValueError, match=msg):
            ap.hsdp(**kwargs)
    assert ap.hsdp(shard_size=2, threshold=0, optimizer_level="level2") is None
    opt = nn.SGD(ap.trainable_params(), 0.1)
    nn.TrainOneStepCell(nn.WithLossCell(ap, nn.MSELoss()), opt)
    assert opt._opt_shards is None  # one process: nothing to slice


def test_compiled_function_calling_autoparallel_runs_in_pynative():
    """A kiln.jit function whose trace meets an EagerOnly construct runs in PyNative with one RuntimeWarning, at
    either jit_syntax_level, with the same values."""
    import warnings
    import kiln
    from kiln import Tensor, nn
    from kiln.parallel.auto_parallel import AutoParallel
    net = nn.Dense(3, 2)
    x = Tensor(np.ones((2, 3), np.float32))
    want = net(x).asnumpy()
    for level in (kiln.LAX, kiln.STRICT):
        kiln.set_context(jit_syntax_level=level)
        try:
            f = kiln.jit(lambda t: AutoParallel(net)(t) * 2)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                np.testing.assert_allclose(f(x).asnumpy(), want * 2, rtol=1e-6)
                np.testing.assert_allclose(f(x).asnumpy(), want * 2, rtol=1e-6)
            assert sum("runs in PyNative mode" in str(w.message) for w in caught) == 1
        finally:
            kiln.set_context(jit_syntax_level=kiln.LAX)


@pytest.mark.parametrize("workers", [2, 4])
def test_semi_auto_data_parallel_and_hsdp(tmp_path, workers):
    """dist_scripts/semi_auto_dp.py: semi_auto_parallel without strategies, each process its own rows, an own step
    with no reducer (eagerly and under ms.jit; SGD, and Adam with enable_parallel_optimizer): every process's
    weights equal one process on the global batch, and the mean of the processes' losses is its loss; Adam's
    moments hold 1/N of the elements. AutoParallel(...).hsdp(threshold=0) under TrainOneStepCell, and
    AutoParallel(train_step).hsdp(threshold=0): the same weights and losses as one process, the moments cut to 1/N.
    Pipeline with 2 stages of N/2 processes (data parallel inside a stage, each replica its own rows): each
    process's stage weights equal one process on the replicas' rows, the mean loss its loss."""
    from test_distributed import launch, logs
    r, _ = launch("semi_auto_dp.py", tmp_path, tmp_path=tmp_path, workers=workers, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr + logs(tmp_path)
    for tag in ("semi_sgd_eager", "semi_sgd_jit", "semi_adam_eager", "semi_adam_jit", "hsdp", "hsdpfn", "pipe"):
        ref = dict(np.load(tmp_path / f"{tag}_ref.npz"))
        runs = [dict(np.load(tmp_path / f"{tag}_rank{k}.npz")) for k in range(workers)]
        steps = sorted(k for k in ref if k.startswith("loss:"))
        assert len(steps) == 3
        for k in steps:
            own = [run[k] for run in runs]
            if tag in ("hsdp", "hsdpfn") or (tag == "pipe" and workers == 2):  # the same batch on every process
                np.testing.assert_allclose(own, [ref[k]] * workers, rtol=0, atol=1e-6, err_msg=tag)
            else:  # each its own rows: the processes' losses differ, their mean is the global batch's
                assert max(own) - min(own) > 1e-3, (tag, own)
                np.testing.assert_allclose(np.mean(own), ref[k], rtol=0, atol=1e-6, err_msg=tag)
        for run in runs:
            assert tag != "pipe" or len([k for k in run if k.startswith("w:")]) == 2  # its stage's Dense only
            for k in run:
                if k.startswith("w:"):
                    np.testing.assert_allclose(run[k], ref[k], rtol=0, atol=1e-6, err_msg=f"{tag} {k}")
            if "moment_elems" in ref:  # 16x32 + 32 + 32x8 + 8 = 808 elements whole; every row count divides by N
                assert int(ref["moment_elems"]) == 808 and int(run["moment_elems"]) == 808 // workers, tag

"""Operator parallel (issue 27, semi-auto parallel): Primitive.shard strategies over 2 and 4 processes
(kiln/parallel/_op_shard.py, parallel.auto_parallel.AutoParallel). The launcher runs dist_scripts/op_parallel_train.py:
an MLP (MatMul, BiasAdd, ReLU, Tanh, Add; strategies that split the reduction dimension, the rows, the columns, and
some with repeated copies of the device matrix) and a Transformer-block-like chain (BatchMatMul projections,
attention scores with transpose_b, Softmax, GeLU feed-forward, residual Adds), trained 3 steps with SGD, Momentum and
Adam, through AutoParallel over MindSpore's functional train_step (each process passes its rows of the batch) and
through set_auto_parallel_context(semi_auto_parallel, full_batch=True) + TrainOneStepCell. Every process's losses and
the merged weights must equal one process on the whole model within 1e-5; each process holds only its slices (the
Parameters' and the optimizer states' element counts fall by the same factor). Plus the validation errors and the
in-process API."""
import os
import subprocess
import sys

import numpy as np
import pytest

from helpers import subprocess_env
from test_distributed import LAUNCH_VARS, SCRIPTS, free_port, launch, logs

import kiln
from kiln import Parameter, Tensor, nn, ops
from kiln.parallel import merge_parameters
from kiln.parallel.auto_parallel import AutoParallel

TOL = 1e-5
CONFIGS = ["mlp:sgd:auto", "mlp:momentum:ctx", "mlp:adam:autograph", "block:sgd:auto", "block:adam:ctxgraph",
           "block:momentum:autograph", "mlp:sgd:ctxgraph"]
# whole element counts: MLP w1 16x32, b1 32, w2 32x16, w3 16x8, b3 8; block wq/wk/wv/wo 8x8, w_ff1 8x16, w_ff2 16x8
LOCAL = {2: {"w1": 256, "b1": 32, "w2": 512, "w3": 64, "b3": 8, "wq": 32, "wk": 64, "wv": 32, "wo": 32,
             "w_ff1": 64, "w_ff2": 64},
         4: {"w1": 256, "b1": 16, "w2": 128, "w3": 64, "b3": 4, "wq": 32, "wk": 32, "wv": 16, "wo": 32,
             "w_ff1": 64, "w_ff2": 32}}


def _check(tmp_path, workers):
    for config in CONFIGS:
        tag = config.replace(":", "_")
        ref = dict(np.load(tmp_path / f"{tag}_ref.npz"))
        steps = sorted(k for k in ref if k.startswith("loss:"))
        weights = sorted(k for k in ref if k.startswith("w:"))
        assert len(steps) == 3 and weights
        for k in ref:
            if k.startswith("moved:"):
                assert ref[k] > 1e-3, (config, k)  # training moved every weight
        for r in range(workers):
            run = dict(np.load(tmp_path / f"{tag}_rank{r}.npz"))
            for k in steps + weights:
                np.testing.assert_allclose(run[k], ref[k], rtol=0, atol=TOL, err_msg=f"{config} rank {r}: {k}")
            for k in weights:  # whole checkpoints, and loading one back cuts each process's slice
                for kind in ("ckpt:", "reloaded:"):
                    np.testing.assert_allclose(run[kind + k[2:]], ref[k], rtol=0, atol=TOL, err_msg=f"{config} {kind}")
            for k in weights:  # each process holds its slice only
                assert int(run["local:" + k[2:]]) == LOCAL[workers][k[2:]], (config, r, k)
            assert int(run["param_elems"]) < int(ref["param_elems"])
            assert int(run["history"]) == 0, (config, r)
            # the optimizer's per-parameter state shrinks with its Parameters
            assert int(run["state_elems"]) * int(ref["param_elems"]) == int(ref["state_elems"]) * \
                int(run["param_elems"]), (config, r, run["state_elems"], ref["state_elems"])


def test_operator_parallel_two_processes(tmp_path):
    r, _ = launch("op_parallel_train.py", tmp_path, ",".join(["errors"] + CONFIGS), tmp_path=tmp_path, workers=2,
                  timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr + logs(tmp_path)
    assert (tmp_path / "logs" / "worker_1.log").read_text().count("ERRORS OK") == 1
    _check(tmp_path, 2)


def test_operator_parallel_four_processes(tmp_path):
    r, _ = launch("op_parallel_train.py", tmp_path, ",".join(["errors"] + CONFIGS), tmp_path=tmp_path, workers=4,
                  timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr + logs(tmp_path)
    assert (tmp_path / "logs" / "worker_3.log").read_text().count("ERRORS OK") == 1
    _check(tmp_path, 4)


@pytest.mark.parametrize("workers", [2, 4])
def test_misuse_across_processes_is_a_clear_error(tmp_path, workers):
    """Processes that disagree (AutoParallel rows per process, merge_parameters / save_checkpoint over different
    Parameters) get the same ValueError naming each rank's arguments, before any collective of mismatched sizes
    (before: Gloo aborted rank 0 with SIGABRT on `op.preamble.length <= op.nbytes`, or the merge returned on one
    rank and failed on the other), and the job goes on; a sharded primitive called after
    reset_auto_parallel_context() on a sliced Parameter names it (before: a shape error naming no cause, or the op
    computed on the slice). dist_scripts/op_parallel_misuse.py."""
    r, _ = launch("op_parallel_misuse.py", tmp_path, tmp_path, tmp_path=tmp_path, workers=workers, timeout=90)
    assert r.returncode == 0, r.stdout + r.stderr + logs(tmp_path)
    for rank in range(workers):
        assert f"MISUSE OK {rank}" in (tmp_path / "logs" / f"worker_{rank}.log").read_text()


def test_merge_parameters_argument_types():
    w = Parameter(Tensor(np.ones((2, 3), np.float32)), name="w")
    for bad, words in ((w, "must be a list (or another iterable) of Parameters, but got Parameter"),
                       (3, "but got int"), ([w, Tensor(np.ones(2, np.float32))], "every element must be a Parameter")):
        with pytest.raises(TypeError, match=r"For 'merge_parameters'") as e:
            merge_parameters(bad)
        assert words in str(e.value)
    (whole,) = merge_parameters(p for p in [w])  # one process, not sliced: a copy of the value
    np.testing.assert_array_equal(whole.asnumpy(), np.ones((2, 3), np.float32))


def test_mindspore_sample_eight_processes_launched_as_the_tutorial(tmp_path):
    """MindSpore's operator-parallel sample and its mint variant, as run.sh starts them (8 workers, --join=True, pytest
    as the task), on a
    small MNIST-format file (4 batches of 32 from scikit-learn's digits, examples/mnist_files.py): GRAPH_MODE,
    no_init_parameters, AutoParallel over the functional step. Every rank's losses and the merged weights equal one
    process training the same network on the same batches; the mint variant's logits equal one process's."""
    pytest.importorskip("sklearn")
    sys.path.insert(0, os.path.join(os.path.dirname(SCRIPTS), "..", "..", "examples"))
    try:
        import mnist_files
    finally:
        sys.path.pop(0)
    paths = mnist_files.write_mnist(str(tmp_path / "MNIST_Data" / "train"), test_size=1797 - 128)
    for kind in ("images", "labels"):  # MnistDataset(dir) reads every split present: keep the 128 training images
        os.remove(paths["test", kind])
    env = subprocess_env()
    for v in LAUNCH_VARS:
        env.pop(v, None)
    env.update(DATA_PATH=str(tmp_path / "MNIST_Data" / "train"), OP_SAMPLE_OUT=str(tmp_path))
    cmd = [sys.executable, "-m", "kiln.msrun", "--worker_num=8", "--local_worker_num=8", "--master_addr=127.0.0.1",
           f"--master_port={free_port()}", "--join=True", f"--log_dir={tmp_path / 'logs'}", "pytest", "-s", "-v",
           "-p", "no:cacheprovider", os.path.join(SCRIPTS, "op_parallel_sample.py")]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=400, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr + logs(tmp_path)
    assert r.stdout.count("2 passed") == 8 and "[rank 7] " in r.stdout  # --join=True: the workers' output here
    ref = dict(np.load(tmp_path / "sample_ref.npz"))
    assert sorted(k for k in ref if k.startswith("loss:")) == ["loss:0", "loss:1", "loss:2", "loss:3"], sorted(ref)
    # each rank holds fc1 cut 4 ways along its rows (repeated over matmul1's 2 row blocks), fc2 8 ways, fc3 whole
    local = {"fc1_weight": 784 * 512 // 4, "fc2_weight": 512 * 512 // 8, "fc3_weight": 512 * 10}
    for rank in range(8):
        run = dict(np.load(tmp_path / f"sample_rank{rank}.npz"))
        for k in ref:
            if k.startswith(("loss:", "w:")):
                np.testing.assert_allclose(run[k], ref[k], rtol=0, atol=TOL, err_msg=f"rank {rank}: {k}")
        assert {k[6:]: int(v) for k, v in run.items() if k.startswith("local:")} == local
    # the mint variant (ms.parallel.shard over mint.matmul and mint.nn.functional.relu, forward only)
    ref = dict(np.load(tmp_path / "mint_ref.npz"))
    assert len([k for k in ref if k.startswith("sum:")]) == 4
    for rank in range(8):
        run = dict(np.load(tmp_path / f"mint_rank{rank}.npz"))
        for k in ref:
            if k.startswith("logits:"):
                np.testing.assert_allclose(run[k], ref[k], rtol=0, atol=TOL, err_msg=f"mint rank {rank}: {k}")
        assert {k[6:]: int(v) for k, v in run.items() if k.startswith("local:")} == local


# ------------------------------------------------------------------------------------------------ one process
def test_shard_type_errors_and_returns_self():
    m = ops.MatMul()
    assert m.shard(((1, 1), (1, 1))) is m and type(m).__name__ == "MatMul" and isinstance(m, ops.MatMul)
    with pytest.raises(TypeError, match=r"For 'MatMul', the 'in_strategy' should be a tuple\(tuple\(int\)\)"):
        ops.MatMul().shard([(1, 1), (1, 1)])
    with pytest.raises(TypeError, match="the element of strategy must be int type"):
        ops.ReLU().shard(((1.0, 1),))
    with pytest.raises(ValueError, match="the element of strategy must be positive"):
        ops.ReLU().shard(((0, 1),))
    with pytest.raises(ValueError, match="takes out_strategy=None only"):
        ops.ReLU().shard(((1, 1),), ((1, 1),))


def test_shard_is_inactive_in_one_process():
    """Stand-alone (or one process in semi_auto_parallel): a sharded primitive computes as the plain one, and no
    Parameter is sliced (MindSpore ignores strategies outside its parallel modes)."""
    x = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    w = Parameter(Tensor(np.ones((4, 2), np.float32)), name="w")
    mm = ops.MatMul().shard(((1, 4), (4, 1)))
    np.testing.assert_allclose(mm(x, w).asnumpy(), x.asnumpy() @ np.ones((4, 2), np.float32))
    kiln.set_auto_parallel_context(parallel_mode="semi_auto_parallel")
    try:
        np.testing.assert_allclose(mm(x, w).asnumpy(), x.asnumpy() @ np.ones((4, 2), np.float32))
        assert w.shape == (4, 2)
        assert [t.shape for t in merge_parameters([w])] == [(4, 2)]
    finally:
        kiln.reset_auto_parallel_context()


def test_auto_parallel_one_process_runs_the_step_and_checks_arguments():
    net = nn.Dense(4, 2)
    ap = AutoParallel(net, parallel_mode="semi_auto")
    x = Tensor(np.ones((3, 4), np.float32))
    np.testing.assert_allclose(ap(x).asnumpy(), net(x).asnumpy())
    calls = []
    AutoParallel(lambda a, b: calls.append((a.shape, b)))(x, 5)
    assert calls == [((3, 4), 5)]
    with pytest.raises(ValueError, match="strategy search\\) is not supported by Kiln"):
        AutoParallel(net, parallel_mode="sharding_propagation")
    with pytest.raises(ValueError, match="must be one of"):
        AutoParallel(net, parallel_mode="semi")
    with pytest.raises(TypeError, match="must be a Cell or a function"):
        AutoParallel(3)
    with pytest.raises(ValueError, match="'data_parallel' or 'full_batch'"):
        ap.dataset_strategy(((1, 1),))
    ap.dataset_strategy("full_batch")
    with pytest.raises(TypeError, match="every element must be a Parameter"):
        merge_parameters([x])


def test_auto_parallel_in_graph_mode_runs_eagerly_first_then_compiled():
    """GRAPH_MODE: AutoParallel's first call runs the network eagerly (it slices the Parameters), the later ones
    compiled; a kiln.jit function that calls it runs in PyNative."""
    net = nn.Dense(4, 2)
    x = Tensor(np.ones((3, 4), np.float32))
    want = x.asnumpy() @ net.weight.asnumpy().T + net.bias.asnumpy()
    ap = AutoParallel(net)
    kiln.set_context(mode=kiln.GRAPH_MODE)
    try:
        for _ in range(2):
            np.testing.assert_allclose(ap(x).asnumpy(), want, rtol=1e-6)
        assert ap._ran_eagerly and ap.__dict__.get("_jit_construct") is not None
        # inside kiln.jit: the compiled function runs in PyNative (a RuntimeWarning), with the same values
        with pytest.warns(RuntimeWarning, match="does not compile a call of it inside another compiled function"):
            np.testing.assert_allclose(kiln.jit(lambda t: AutoParallel(net)(t))(x).asnumpy(), want, rtol=1e-6)
    finally:
        kiln.set_context(mode=kiln.PYNATIVE_MODE)


def test_parallel_context_accepts_full_batch_and_dataset_strategies():
    try:
        kiln.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True,
                                       dataset_strategy="full_batch")
        assert kiln.get_auto_parallel_context("full_batch") is True
        with pytest.raises(ValueError, match="tuple strategies are not supported"):
            kiln.set_auto_parallel_context(dataset_strategy=((2, 1),))
    finally:
        kiln.reset_auto_parallel_context()


def test_runtime_set_memory_checks_as_mindspore_cpu(monkeypatch):
    """mindspore.runtime.set_memory (the sample's first call): MindSpore 2.10 CPU checks the arguments, refuses a
    second call and changes nothing; the messages below are MindSpore 2.10's."""
    from kiln.runtime import memory
    monkeypatch.setattr(memory, "_set_memory_done", [False])
    with pytest.raises(TypeError, match="The parameter 'max_size' must be <class 'str'>, but got <class 'int'>"):
        kiln.runtime.set_memory(max_size=28)
    for bad in ("28", "0GB", "28gb"):
        with pytest.raises(ValueError, match=rf"The '{bad}' is illegal, it must be match regular"):
            kiln.runtime.set_memory(max_size=bad)
    with pytest.raises(ValueError, match=r"The optimize_level must be one of \['O0', 'O1'\], but got O2."):
        kiln.runtime.set_memory(optimize_level="O2")
    with pytest.raises(ValueError, match="The 'abc' is illegal"):
        kiln.runtime.set_memory(huge_page_reserve_size="abc")
    assert kiln.runtime.set_memory(max_size="28GB", init_size="1.5GB", huge_page_reserve_size="0GB") is None
    with pytest.raises(RuntimeError, match="The 'set_memory' can not be set repeatedly."):
        kiln.runtime.set_memory(max_size="28GB")


def test_msrun_takes_mindspores_join_spelling_and_pytest():
    from kiln.msrun import _join_spelling, _parser
    argv = _join_spelling(["--worker_num", "8", "--join=True", "--log_dir=x", "pytest", "-s", "--join=True"])
    assert argv == ["--worker_num", "8", "--join", "--log_dir=x", "pytest", "-s", "--join=True"]
    args = _parser().parse_args(argv)
    assert args.join is True and args.task_script == "pytest" and args.task_script_args == ["-s", "--join=True"]
    assert _parser().parse_args(_join_spelling(["--join=False", "a.py"])).join is False


def test_parallel_shard_of_functions():
    """mindspore.parallel.shard over mint/ops functions: the matching primitive's strategy; one process runs the
    function itself. Other callables (a Cell, a lambda) raise ValueError: Kiln has no layout propagation."""
    from kiln import mint
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3) - 2)
    f = kiln.parallel.shard(mint.nn.functional.relu, in_strategy=((2, 1),))
    np.testing.assert_array_equal(f(x).asnumpy(), np.maximum(x.asnumpy(), 0))
    mm = kiln.parallel.shard(mint.matmul, in_strategy=((1, 2), (2, 1)))
    np.testing.assert_allclose(mm(x, Tensor(np.ones((3, 2), np.float32))).asnumpy(), x.asnumpy() @ np.ones((3, 2)))
    with pytest.raises(ValueError, match="Kiln shards the matmul, bmm and element-wise functions"):
        kiln.parallel.shard(nn.Dense(2, 2), in_strategy=((1, 1),))
    with pytest.raises(ValueError, match="Kiln shards the matmul, bmm and element-wise functions"):
        kiln.parallel.shard(lambda a: a, in_strategy=((1, 1),))
    with pytest.raises(TypeError, match="should be a tuple"):
        kiln.parallel.shard(mint.matmul, in_strategy=[(1, 1), (1, 1)])
    with pytest.raises(ValueError, match="parameter_plan is not supported"):
        kiln.parallel.shard(mint.matmul, in_strategy=((1, 1), (1, 1)), parameter_plan={"w": (1, 1)})
    with pytest.raises(ValueError, match="'level' must be 0"):
        kiln.parallel.shard(mint.matmul, in_strategy=((1, 1), (1, 1)), level=1)
    # mindspore.shard is the same function (MindSpore 2.10: `mindspore.shard is mindspore.parallel.shard`)
    assert kiln.shard is kiln.parallel.shard
    np.testing.assert_array_equal(kiln.shard(mint.nn.functional.relu, ((2, 1),))(x).asnumpy(), np.maximum(x.asnumpy(), 0))


SHARED_MODES = ["ctx", "ctxgraph", "auto", "autograph"]


@pytest.mark.parametrize("workers", [2, 4])
def test_sliced_parameter_also_read_by_ops_without_strategy(tmp_path, workers):
    """A Parameter cut by one sharded op and also read by ops without a strategy (a MatMul, Mul and ReduceMean
    primitive, `self.w * 2`, ops.norm(self.w), a tied read through another Cell) must give those ops the whole
    tensor: the losses of 3 SGD steps and the merged weights equal one process on the whole model within 1e-5
    (before the fix they saw this process's slice as if it were whole: a silently wrong loss). PyNative, GRAPH_MODE,
    TrainOneStepCell and AutoParallel; 2 and 4 processes (4: b's device matrix repeated twice). Also: a read passed straight to the sharded op moves no
    Parameter, a read by an op without strategy gathers it once, and such a read after operator parallel was turned
    off raises ValueError naming the Parameter and the user's line; with full_batch, processes passing batches of
    different shapes get a ValueError naming each rank's shapes (TrainOneStepCell, AutoParallel) instead of Gloo
    aborting one."""
    r, _ = launch("op_parallel_shared.py", tmp_path, ",".join(SHARED_MODES), tmp_path=tmp_path, workers=workers,
                  timeout=180 * workers // 2)
    assert r.returncode == 0, r.stdout + r.stderr + logs(tmp_path)
    last = (tmp_path / "logs" / f"worker_{workers - 1}.log").read_text()
    assert last.count("READS OK") == 1 and last.count("SHAPES OK") == 1
    for mode in SHARED_MODES:
        ref = dict(np.load(tmp_path / f"shared_{mode}_ref.npz"))
        keys = sorted(k for k in ref if k.startswith(("loss:", "w:")))
        assert len([k for k in keys if k.startswith("loss:")]) == 3
        for rk in range(workers):
            run = dict(np.load(tmp_path / f"shared_{mode}_rank{rk}.npz"))
            for k in keys:
                np.testing.assert_allclose(run[k], ref[k], rtol=0, atol=TOL, err_msg=f"{mode} rank {rk}: {k}")
            # the Parameters stay stored sliced (w1 16x16 by rows, w2 16x8 by columns, b 8 in 2)
            assert (int(run["local:w1"]), int(run["local:w2"]), int(run["local:b"])) == \
                (256 // workers, 128 // workers, 4), mode

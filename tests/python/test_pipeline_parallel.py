"""Pipeline parallelism (issue 27): set_auto_parallel_context(parallel_mode='semi_auto_parallel', pipeline_stages=S),
cell.pipeline_stage, nn.PipelineCell / parallel.nn.Pipeline (kiln/nn/wrap/pipeline.py). The launcher with 2 and 4
workers runs dist_scripts/pipeline_train.py: an MLP of 4 Dense layers and a stack of 4 Transformer encoder blocks
with a Dense head, split into S stages, trained 3 steps (SGD, Momentum, Adam; TrainOneStepCell over PipelineCell,
and MindSpore's tutorial step: Pipeline with stage_config + ops.value_and_grad + optimizer(grads); the Network of
MindSpore's sample script with its stages, ReLUs staged and ops.Print inside, under CrossEntropyLoss); every process's
losses and each stage's weights (gathered from the owning processes) must match one process on the whole model
within 1e-5, and with a summed loss, one process on the whole batch without micro-batches. Plus the clear errors
and the in-process API."""
import numpy as np
import pytest

from test_distributed import LAUNCH_VARS, launch, logs

import kiln
from kiln import communication as comm
from kiln import nn
from kiln.parallel.nn import Pipeline

TOL = 1e-5


def _check(tmp_path, configs, workers):
    for config in configs:
        tag = config.replace(":", "_")
        ref = dict(np.load(tmp_path / f"{tag}_ref.npz"))
        runs = [dict(np.load(tmp_path / f"{tag}_rank{r}.npz")) for r in range(workers)]
        steps = sorted(k for k in ref if k.startswith("loss:"))
        weights = sorted(k for k in ref if k.startswith("w:"))
        assert len(steps) == 3 and weights
        gathered = {}
        micro, model = int(config.split(":")[2]), config.split(":")[3] == "model"
        for r, run in enumerate(runs):
            for s in steps:  # every process returns the loss (computed on the last stage); summed losses reach
                # ~200, where float32's spacing is 1.5e-5: relative 1e-6 there. Model: the sum of the micro-batches'
                # mean losses against the whole batch's mean
                np.testing.assert_allclose(run[s] / (micro if model else 1), ref[s], rtol=1e-6, atol=TOL,
                                           err_msg=f"{config} rank {r}: {s}")
            own = [k for k in run if k.startswith("w:")]
            assert own, f"{config}: rank {r} owns no Parameter"
            for k in own:
                assert k not in gathered, f"{config}: {k} owned by two stages"
                gathered[k] = run[k]
            # each process ran its own stage's Cells (once per micro-batch and step) and no other stage's
            ran = {k[4:]: int(run[k]) for k in run if k.startswith("ran:")}
            assert len(ran) >= workers, ran
            for cell, count in ran.items():
                assert count == (3 * micro if int(run[f"stage:{cell}"]) == r else 0), (config, r, cell, count)
            # the other stages' Parameters are materialized here but never updated (zero gradients)
            assert float(run["others_moved"]) == 0.0, (config, r, float(run["others_moved"]))
        assert sorted(gathered) == weights, config
        for k in weights:
            np.testing.assert_allclose(gathered[k], ref[k], rtol=0, atol=TOL, err_msg=f"{config}: {k}")
        assert float(ref["moved"]) > 1e-3, config  # training moved the weights
        if config.endswith(":sum"):  # micro-batches of a summed loss: exactly the whole batch
            whole = dict(np.load(tmp_path / f"{tag}_whole.npz"))
            for k in steps + weights:
                np.testing.assert_allclose(whole[k], ref[k], rtol=1e-6 if k in steps else 0, atol=TOL,
                                           err_msg=f"{config} whole batch: {k}")


def test_pipeline_two_processes(tmp_path):
    configs = ["mlp:sgd:2:cell:mean", "mlp:momentum:4:vag:mean", "mlp:adam:1:cell:sum", "mlp:sgd:4:cell:sum",
               "blocks:adam:2:cell:mean", "blocks:momentum:4:vag:sum", "sample:sgd:4:vag:mean",
               "mlp:momentum:4:model:mean"]
    r, _ = launch("pipeline_train.py", tmp_path, ",".join(["errors"] + configs), tmp_path=tmp_path, workers=2,
                  timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr + logs(tmp_path)
    assert (tmp_path / "logs" / "worker_1.log").read_text().count("ERRORS OK") == 1
    # the sample's ops.Print runs in its stage's process only: 3 steps x 4 micro-batches, twice in process 0 (the
    # pipeline run, then its one-process reference), never in process 1
    assert (tmp_path / "logs" / "worker_0.log").read_text().count("out is:") == 24
    assert "out is:" not in (tmp_path / "logs" / "worker_1.log").read_text()
    _check(tmp_path, configs, 2)


def test_pipeline_four_processes(tmp_path):
    configs = ["mlp:adam:4:cell:mean", "mlp:sgd:8:vag:sum", "blocks:sgd:4:cell:mean", "blocks:adam:2:vag:mean",
               "blocks:sgd:4:model:mean"]
    r, _ = launch("pipeline_train.py", tmp_path, ",".join(["errors"] + configs), tmp_path=tmp_path, workers=4,
                  timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr + logs(tmp_path)
    assert (tmp_path / "logs" / "worker_3.log").read_text().count("ERRORS OK") == 1
    _check(tmp_path, configs, 4)


# ---------------------------------------------------------------- in-process: the API and its errors

@pytest.fixture
def no_launcher(monkeypatch):
    for v in LAUNCH_VARS:
        monkeypatch.delenv(v, raising=False)
    yield
    comm.release()
    kiln.reset_auto_parallel_context()
    kiln.set_context(mode=kiln.PYNATIVE_MODE)


def _staged_mlp():
    kiln.set_seed(3)
    net = nn.SequentialCell([nn.Dense(4, 6), nn.Tanh(), nn.Dense(6, 3)])
    net[0].pipeline_stage = 0
    net[2].pipeline_stage = 1
    return net


@pytest.mark.parametrize("workers", [2, 4])
def test_pipeline_checkpoint_holds_the_stage_parameters(tmp_path, workers):
    """save_checkpoint in each process of a 2-stage pipeline writes its stage's Parameters only, trained (as
    MindSpore's per-rank checkpoints); before, rank 0's file also held stage 1's at their initial values. The files
    of the stages together equal one process trained on the whole batch. dist_scripts/pipeline_checkpoint.py."""
    r, _ = launch("pipeline_checkpoint.py", tmp_path, tmp_path=tmp_path, workers=workers, timeout=90)
    assert r.returncode == 0, r.stdout + r.stderr + logs(tmp_path)
    ref = dict(np.load(tmp_path / "ref.npz"))
    assert sorted(ref) == ["0.bias", "0.weight", "2.bias", "2.weight"], sorted(ref)
    for rank in range(workers):
        saved = dict(np.load(tmp_path / f"rank{rank}.npz"))
        stage = rank // (workers // 2)
        assert sorted(saved) == (["0.bias", "0.weight"] if stage == 0 else ["2.bias", "2.weight"]), (rank, sorted(saved))
        for k, v in saved.items():
            np.testing.assert_allclose(v, ref[k], rtol=0, atol=TOL, err_msg=f"rank {rank}: {k}")
        # the training network's file: this stage's weights and their SGD states (accum, stat), the scalars
        mine = ["0.bias", "0.weight"] if stage == 0 else ["2.bias", "2.weight"]
        want = mine + [f"{s}.{n}" for s in ("accum", "stat") for n in mine] + ["global_step", "learning_rate",
                                                                              "momentum"]
        assert (tmp_path / f"train{rank}.txt").read_text().split() == sorted(want), rank


def test_pipeline_stage_property(no_launcher):
    """MindSpore 2.10's checks and messages (obtained from it with the same calls)."""
    d = nn.Dense(2, 2)
    with pytest.raises(AttributeError, match="'Dense' object has no attribute 'pipeline_stage'"):
        _ = d.pipeline_stage
    d.pipeline_stage = 3
    assert d.pipeline_stage == 3
    with pytest.raises(TypeError, match="'pipeline_stage' must be int type"):
        d.pipeline_stage = True
    with pytest.raises(ValueError, match="'pipeline_stage' can not be less than 0, but got -1"):
        d.pipeline_stage = -1
    assert d.pipeline_stage == 3


def test_semi_auto_parallel_is_pipeline_only(no_launcher):
    kiln.set_auto_parallel_context(parallel_mode="semi_auto_parallel", pipeline_stages=4)
    assert kiln.get_auto_parallel_context("parallel_mode") == "semi_auto_parallel"
    assert kiln.get_auto_parallel_context("pipeline_stages") == 4
    with pytest.raises(ValueError, match=r"Cell.shard' \(Dense\), sharding a Cell .* is not supported"):
        nn.Dense(2, 2).shard(((1, 2),))
    with pytest.raises(ValueError, match=r"'pipeline_stages' must be in \[1, 4096\], but got 0"):
        kiln.set_auto_parallel_context(pipeline_stages=0)
    with pytest.raises(ValueError, match="parallel_mode='auto_parallel' is not supported"):
        kiln.set_auto_parallel_context(parallel_mode="auto_parallel")


def test_one_stage_is_the_sum_over_micro_batches(no_launcher):
    """pipeline_stages=1: PipelineCell runs the micro-batches in this process and adds their losses (MindSpore's
    forward), in PyNative and in Graph mode; the gradients are those of the sum."""
    net = _staged_mlp()
    rng = np.random.RandomState(0)
    x, y = rng.randn(8, 4).astype(np.float32), rng.randn(8, 3).astype(np.float32)
    w1, b1, w2, b2 = (p.asnumpy().astype(np.float64) for p in net.trainable_params())

    def np_loss(a, b):
        return np.mean((np.tanh(a @ w1.T + b1) @ w2.T + b2 - b) ** 2)
    want = sum(np_loss(x[i * 2:(i + 1) * 2], y[i * 2:(i + 1) * 2]) for i in range(4))
    pc = nn.PipelineCell(nn.WithLossCell(net, nn.MSELoss()), 4)
    got = pc(kiln.Tensor(x), kiln.Tensor(y)).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-5)
    grads = kiln.value_and_grad(pc, None, pc.trainable_params())(kiln.Tensor(x), kiln.Tensor(y))[1]
    kiln.set_context(mode=kiln.GRAPH_MODE)
    pc_graph = Pipeline(nn.WithLossCell(net, nn.MSELoss()), 4)
    np.testing.assert_allclose(pc_graph(kiln.Tensor(x), kiln.Tensor(y)).asnumpy(), got, rtol=1e-6)
    kiln.set_context(mode=kiln.PYNATIVE_MODE)
    # the weight gradient of layer 2 against float64 finite differences of the NumPy loss
    eps, gw2 = 1e-6, np.zeros_like(w2)
    for i in range(w2.shape[0]):
        for j in range(w2.shape[1]):
            w2[i, j] += eps
            up = sum(np_loss(x[k * 2:(k + 1) * 2], y[k * 2:(k + 1) * 2]) for k in range(4))
            w2[i, j] -= 2 * eps
            down = sum(np_loss(x[k * 2:(k + 1) * 2], y[k * 2:(k + 1) * 2]) for k in range(4))
            w2[i, j] += eps
            gw2[i, j] = (up - down) / (2 * eps)
    np.testing.assert_allclose(grads[2].asnumpy(), gw2, rtol=1e-4, atol=1e-5)


def test_pipeline_errors_in_one_process(no_launcher):
    x, y = kiln.Tensor(np.ones((4, 4), np.float32)), kiln.Tensor(np.ones((4, 3), np.float32))
    net = _staged_mlp()
    with pytest.raises(TypeError, match="'micro_size' must be integer"):
        nn.PipelineCell(nn.WithLossCell(net, nn.MSELoss()), 2.0)
    with pytest.raises(ValueError, match="'micro_size' must be large than 0, but got 0"):
        nn.PipelineCell(nn.WithLossCell(net, nn.MSELoss()), 0)
    with pytest.raises(KeyError, match=r"'stage_config' : \{'_backbone.9': 1\} is not found"):
        nn.PipelineCell(nn.WithLossCell(net, nn.MSELoss()), 2, stage_config={"_backbone.9": 1})
    with pytest.raises(ValueError, match="segment_config .* is not supported"):
        nn.PipelineCell(nn.WithLossCell(net, nn.MSELoss()), 2, segment_config={"_backbone.0": 0})
    pc = nn.PipelineCell(nn.WithLossCell(net, nn.MSELoss()), 2, stage_config={"_backbone.0": 1, "_backbone.2": 1})
    assert net[0].pipeline_stage == 1
    with pytest.raises(ValueError, match="no 'shard' on 'PipelineCell'"):
        pc.shard(((1,),))
    kiln.set_auto_parallel_context(pipeline_stages=2)
    with pytest.raises(ValueError, match="pipeline_stages=2 needs parallel_mode='semi_auto_parallel', but it is "
                                         "'stand_alone'"):
        pc(x, y)
    kiln.set_auto_parallel_context(parallel_mode="semi_auto_parallel")
    with pytest.raises(ValueError, match=r"pipeline stage\(s\) \[0\] of 2 have no Cell.*stages in use: \[1\]"):
        pc(x, y)
    net[0].pipeline_stage = 0
    net[2].pipeline_stage = 2
    with pytest.raises(ValueError, match="Cell '_backbone.2' has pipeline_stage 2, but pipeline_stages is 2"):
        pc(x, y)
    net[2].pipeline_stage = 1
    with pytest.raises(ValueError, match=r"0th dimension shape of input\(4\) must be divided by micro size\(3\)"):
        nn.PipelineCell(pc.network, 3)(x, y)
    with pytest.raises(RuntimeError, match="needs the communication initialized"):
        pc(x, y)
    kiln.set_context(mode=kiln.GRAPH_MODE)
    try:  # GRAPH_MODE: the Cell runs in PyNative (a RuntimeWarning), so it meets the same check
        with pytest.warns(RuntimeWarning, match=r"\(pipeline_stages=2\) runs in PyNative mode only"):
            with pytest.raises(RuntimeError, match="needs the communication initialized"):
                pc(x, y)
    finally:
        kiln.set_context(mode=kiln.PYNATIVE_MODE)


def test_values_of_other_stages_refuse_use():
    """Inside a pipeline run, a Cell of another stage returns a marker; any use other than passing it to a Cell names
    the Cell and the stage (kiln/nn/wrap/pipeline.py)."""
    from kiln.nn.wrap.pipeline import _Remote
    r = _Remote(1, "_backbone.layer1")
    msg = r"output of _backbone.layer1 is computed on pipeline stage 1, another process: .*must be Cells"
    for use in (lambda: r.reshape(2), lambda: r + 1, lambda: 2 * r, lambda: r[0], lambda: -r, lambda: bool(r)):
        with pytest.raises(TypeError, match=msg):
            use()
    with pytest.raises(TypeError, match="used as a sequence: a Cell whose output crosses a stage boundary must "
                                        "return one Tensor"):
        a, b = r

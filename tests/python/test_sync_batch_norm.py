"""nn.SyncBatchNorm: with 2 processes (the launcher) on an uneven split of one batch, each process's outputs, the
gradients summed over the processes and the moving statistics equal BatchNorm2d's on the whole batch in one process,
in PyNative and Graph mode; process_groups=[[0], [1]] normalizes each process alone; the errors of its arguments."""
import numpy as np
import pytest

from kiln import nn
from test_distributed import launch, logs

ROWS = [slice(0, 3), slice(3, 8)]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("syncbn")
    r, _ = launch("sync_bn.py", tmp, tmp_path=tmp, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr + logs(tmp)
    return tmp


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_matches_batchnorm_on_the_global_batch(results, mode):
    ref = np.load(results / f"ref_{mode}.npz")
    for rank in (0, 1):
        got = np.load(results / f"sync_{mode}_rank{rank}.npz")
        assert sorted(got.files) == sorted(ref.files)
        np.testing.assert_allclose(got["out"], ref["out"][ROWS[rank]], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got["mean"], ref["mean"], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got["var"], ref["var"], rtol=1e-5, atol=1e-6)
        for k in ref.files:
            if k.startswith("grad_"):
                np.testing.assert_allclose(got[k], ref[k], rtol=1e-4, atol=1e-5, err_msg=k)
    # the statistics really moved (momentum 0.9: mean = 0.1·batch mean) and differ from one rank's share alone
    assert np.abs(ref["mean"]).max() > 1e-2
    part = np.load(results / f"part0_{mode}.npz")
    assert np.abs(part["mean"] - ref["mean"]).max() > 1e-3


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_groups_of_one_normalize_alone(results, mode):
    for rank in (0, 1):
        got = np.load(results / f"alone_{mode}_rank{rank}.npz")
        want = np.load(results / f"part{rank}_{mode}.npz")
        for k in ("out", "mean", "var"):
            np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6, err_msg=k)


def test_without_init_is_batchnorm_of_a_world_of_one():
    """MindSpore 2.10: without communication.init(), SyncBatchNorm (process_groups None or [[0]]) is BatchNorm;
    a rank other than 0 in process_groups is out of the world's range."""
    import kiln
    x = kiln.Tensor(np.random.RandomState(2).randn(4, 3, 2, 2).astype(np.float32))
    ref = nn.BatchNorm2d(3)
    want = ref(x).asnumpy()
    for groups in (None, [[0]]):
        layer = nn.SyncBatchNorm(3, process_groups=groups)
        assert not layer.is_global
        np.testing.assert_allclose(layer(x).asnumpy(), want, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(layer.moving_mean.asnumpy(), ref.moving_mean.asnumpy(), rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match=r"rank id in process_groups must be in \[0, 1\), but got 1"):
        nn.SyncBatchNorm(3, process_groups=[[0, 1]])


def test_process_groups_zero_is_batchnorm():
    import kiln
    x = kiln.Tensor(np.random.RandomState(1).randn(4, 3, 2, 2).astype(np.float32))
    kiln.set_seed(0)
    a = nn.SyncBatchNorm(3, process_groups=0)
    b = nn.BatchNorm2d(3)
    np.testing.assert_allclose(a(x).asnumpy(), b(x).asnumpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(a.moving_variance.asnumpy(), b.moving_variance.asnumpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="must have 2 or 4 dims"):
        a(kiln.Tensor(np.zeros((2, 3, 4), np.float32)))

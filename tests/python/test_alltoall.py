"""AlltoAll on the Gloo backend (issue 27): ops.AlltoAll / ops.AlltoAllV and comm_func's
all_to_all_single_with_output_shape / all_to_all_with_output_shape on 2 and 4 processes under the launcher
(dist_scripts/alltoall.py: values and gradients against NumPy in PyNative and Graph mode, dtypes, empty pieces,
a group, argument errors), and in a one-process world."""
import numpy as np
import pytest

from test_distributed import launch, logs, no_launcher  # noqa: F401 (no_launcher is a fixture used below)

import kiln
from kiln import communication as comm
from kiln import ops


@pytest.mark.parametrize("workers", [2, 4])
def test_alltoall_processes(tmp_path, workers):
    r, _ = launch("alltoall.py", tmp_path=tmp_path, workers=workers, timeout=180, extra=("--join",))
    assert r.returncode == 0, r.stdout + r.stderr + logs(tmp_path)
    for k in range(workers):
        assert f"[rank {k}] ALLTOALL OK {k}" in r.stdout


def test_alltoall_one_process_world(no_launcher, monkeypatch):  # noqa: F811 (the fixture)
    """A world of one process: AlltoAll is the identity (split_dim == concat_dim or not), in both modes; the
    gradient too; split_count must be 1."""
    monkeypatch.setenv("MS_WORKER_NUM", "1")
    monkeypatch.setenv("MS_SCHED_HOST", "127.0.0.1")
    monkeypatch.setenv("MS_SCHED_PORT", "1")
    monkeypatch.setenv("MS_NODE_ID", "0")
    comm.init()
    try:
        a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
        x = kiln.Tensor(a)
        for sd, cd in ((0, 2), (1, 1), (-1, 0)):
            p = ops.AlltoAll(1, sd, cd)
            np.testing.assert_array_equal(p(x).asnumpy(), a)
            np.testing.assert_array_equal(kiln.jit(lambda t, p=p: p(t))(x).asnumpy(), a)
            w = kiln.Tensor(a * 0.5 + 1)
            g = kiln.grad(lambda t, p=p, w=w: (p(t) * w).sum())(x)
            np.testing.assert_array_equal(g.asnumpy(), a * 0.5 + 1)
        out, h = comm.comm_func.all_to_all_single_with_output_shape((2, 3, 4), x)
        assert h is None
        np.testing.assert_array_equal(out.asnumpy(), a)
        res, _ = comm.comm_func.all_to_all_with_output_shape([(4, 6)], [x])
        np.testing.assert_array_equal(res[0].asnumpy(), a.reshape(4, 6))
        with pytest.raises(ValueError, match=r"For 'AlltoAll', 'split_count' must equal the size of group 'world' "
                                             r"\(1\), but got 2"):
            ops.AlltoAll(2, 0, 1)(x)
    finally:
        comm.release()
    with pytest.raises(RuntimeError, match="For 'AlltoAll', mindspore.communication.init.. has not been called"):
        ops.AlltoAll(1, 0, 1)

"""Run by tests/python/test_sync_batch_norm.py under `python -m kiln.msrun --worker_num=2 sync_bn.py OUT_DIR`: a
conv + SyncBatchNorm + dense net on an uneven split of one global batch (rank 0: 3 rows, rank 1: 5 rows), in
PyNative and GRAPH_MODE: each rank saves its outputs, its parameter gradients all-reduced (SUM) over the ranks, and
the moving statistics after two training steps; rank 0 also saves the same net with BatchNorm2d on the whole batch
in one process (the reference). Then process_groups=[[0], [1]]: every process normalizes alone."""
import os
import sys

import numpy as np

import mindspore as ms
from mindspore import Tensor, nn, ops
from mindspore.communication import get_group_size, get_rank, init
from mindspore.communication import comm_func

out_dir = sys.argv[1]
init()
rank, size = get_rank(), get_group_size()
assert size == 2
rng = np.random.RandomState(0)
X = (rng.randn(8, 2, 3, 3) * 2 + 1).astype(np.float32)
W = rng.randn(8, 4).astype(np.float32)
ROWS = [slice(0, 3), slice(3, 8)]


class Net(nn.Cell):
    def __init__(self, bn):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, pad_mode="same", weight_init="normal", has_bias=True)
        self.bn = bn
        self.pool = ops.ReduceMean(keep_dims=False)

    def construct(self, x):
        return self.pool(ops.tanh(self.bn(self.conv(x))), (2, 3))


def run(bn_factory, x, w, graph):
    ms.set_context(mode=ms.GRAPH_MODE if graph else ms.PYNATIVE_MODE)
    ms.set_seed(3)
    net = Net(bn_factory())
    net.set_train(True)
    params = net.trainable_params()

    def loss_fn(x, w):
        return (net(x) * w).sum()

    grad_fn = ms.value_and_grad(loss_fn, None, params)
    if graph:
        grad_fn = ms.jit(grad_fn)
    out = net(Tensor(x)).asnumpy()
    _, grads = grad_fn(Tensor(x), Tensor(w))
    result = {"out": out, "mean": net.bn.moving_mean.asnumpy(), "var": net.bn.moving_variance.asnumpy()}
    for p, g in zip(params, grads):
        result["grad_" + p.name] = g
    return result


for graph in (False, True):
    tag = "graph" if graph else "pynative"
    mine = run(lambda: nn.SyncBatchNorm(4), X[ROWS[rank]], W[ROWS[rank]], graph)
    save = {k: (comm_func.all_reduce(v).asnumpy() if k.startswith("grad_") else v) for k, v in mine.items()}
    np.savez(os.path.join(out_dir, f"sync_{tag}_rank{rank}.npz"), **save)
    alone = run(lambda: nn.SyncBatchNorm(4, process_groups=[[0], [1]]), X[ROWS[rank]], W[ROWS[rank]], graph)
    np.savez(os.path.join(out_dir, f"alone_{tag}_rank{rank}.npz"),
             **{k: (v.asnumpy() if hasattr(v, "asnumpy") else v) for k, v in alone.items()})
    if rank == 0:
        ref = run(lambda: nn.BatchNorm2d(4), X, W, graph)
        np.savez(os.path.join(out_dir, f"ref_{tag}.npz"), **{k: (v.asnumpy() if hasattr(v, "asnumpy") else v)
                                                              for k, v in ref.items()})
        for i in (0, 1):  # each rank's rows alone, as process_groups=[[0], [1]] must give
            part = run(lambda: nn.BatchNorm2d(4), X[ROWS[i]], W[ROWS[i]], graph)
            np.savez(os.path.join(out_dir, f"part{i}_{tag}.npz"),
                     **{k: (v.asnumpy() if hasattr(v, "asnumpy") else v) for k, v in part.items()})
print(f"SYNC BN OK {rank}", flush=True)

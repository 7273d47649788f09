"""Run by tests/python/test_grad_accumulation.py under `python -m kiln.msrun --worker_num=2 grad_accu_train.py
OUT_DIR`: data-parallel Model.train of GradAccumulation(WithLossCell(MLP), 2) (each process: its 4 rows of the global
batch of 8, in 2 micro-batches of 2), in PyNative and GRAPH_MODE; on rank 0 also the reference, one process training
the same MLP on the global batch without accumulation. Weights go to OUT_DIR/<mode>_rank<r>.npz and
OUT_DIR/<mode>_ref.npz; the test compares them."""
import os
import sys

import numpy as np

import mindspore as ms
from mindspore import nn
from mindspore import dataset as ds
from mindspore.communication import get_group_size, get_rank, init
from mindspore.parallel.nn import GradAccumulation

out_dir = sys.argv[1]
init()
rank, size = get_rank(), get_group_size()
GLOBAL_BATCH, STEPS, MICRO = 8, 4, 2
data_rng = np.random.RandomState(0)
X = data_rng.randn(GLOBAL_BATCH * STEPS, 5).astype(np.float32)
Y = data_rng.randn(GLOBAL_BATCH * STEPS, 2).astype(np.float32)


def run(batch, micro, seed):
    ms.set_seed(seed)  # rank-dependent seeds: the reducer's broadcast must make the weights equal
    net = nn.SequentialCell([nn.Dense(5, 4), nn.Tanh(), nn.Dense(4, 2)])
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    model = ms.Model(GradAccumulation(loss_net, micro) if micro > 1 else loss_net, optimizer=opt)
    data = ds.NumpySlicesDataset({"x": X, "y": Y}, shuffle=False).batch(batch)
    model.train(1, data, dataset_sink_mode=False)
    return {p.name: p.asnumpy() for p in net.trainable_params()}


for graph in (False, True):
    ms.set_context(mode=ms.GRAPH_MODE if graph else ms.PYNATIVE_MODE)
    tag = "graph" if graph else "pynative"
    ms.reset_auto_parallel_context()
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
    np.savez(os.path.join(out_dir, f"{tag}_rank{rank}.npz"), **run(GLOBAL_BATCH // size, MICRO, seed=1 + rank))
    if rank == 0:
        ms.reset_auto_parallel_context()
        np.savez(os.path.join(out_dir, f"{tag}_ref.npz"), **run(GLOBAL_BATCH, 1, seed=1))
print(f"GRAD ACCU OK {rank}", flush=True)

"""Run by tests/python/test_distributed.py under `python -m kiln.msrun --worker_num=2 dp_train.py OUT_DIR`:
data-parallel training of a small MLP four ways (an own step with nn.DistributedGradReducer, and Model.train; each
in PyNative and GRAPH_MODE), then on rank 0 the same training in one process on the global batch. Weights go to
OUT_DIR/<config>_rank<r>.npz and OUT_DIR/<config>_ref.npz; the test compares them."""
import os
import sys

import numpy as np

import mindspore as ms
from mindspore import Tensor, nn
from mindspore import dataset as ds
from mindspore.communication import get_group_size, get_rank, init

out_dir = sys.argv[1]
init()
rank, size = get_rank(), get_group_size()
GLOBAL_BATCH, STEPS = 8, 4
data_rng = np.random.RandomState(0)
X = data_rng.randn(GLOBAL_BATCH * STEPS, 5).astype(np.float32)
Y = data_rng.randn(GLOBAL_BATCH * STEPS, 2).astype(np.float32)


def make_net(seed):
    ms.set_seed(seed)  # rank-dependent seeds: the reducer's broadcast must make the weights equal
    return nn.SequentialCell([nn.Dense(5, 4), nn.Tanh(), nn.Dense(4, 2)])


def weights(net):
    return {p.name: p.asnumpy() for p in net.trainable_params()}


def own_step(net, graph, reduce):
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
    grad_fn = ms.value_and_grad(loss_net, None, opt.parameters)
    reducer = nn.DistributedGradReducer(opt.parameters, mean=True) if reduce else None

    def step(x, y):
        loss, grads = grad_fn(x, y)
        if reducer is not None:
            grads = reducer(grads)
        opt(grads)
        return loss
    return ms.jit(step) if graph else step


def run_own(graph, reduce, seed):
    net = make_net(seed)
    step = own_step(net, graph, reduce)
    per = GLOBAL_BATCH // size if reduce else GLOBAL_BATCH
    for s in range(STEPS):
        start = s * GLOBAL_BATCH + (rank * per if reduce else 0)
        rows = slice(start, start + per)
        step(Tensor(X[rows]), Tensor(Y[rows]))
    return weights(net)


def run_model(batch, seed):
    net = make_net(seed)
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
    model = ms.Model(net, nn.MSELoss(), opt)
    # In data-parallel mode the source is sharded by itself (num_shards = 2, shard_id = rank: rows rank, rank+2,
    # ...), so per step the two processes together read the same 8 rows as the one process of the reference.
    data = ds.NumpySlicesDataset({"x": X, "y": Y}, shuffle=False).batch(batch)
    model.train(1, data, dataset_sink_mode=False)
    return weights(net)


for graph in (False, True):
    ms.set_context(mode=ms.GRAPH_MODE if graph else ms.PYNATIVE_MODE)
    tag = "graph" if graph else "pynative"
    ms.reset_auto_parallel_context()
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
    sampler = ds.DistributedSampler(shuffle=False)  # data-parallel: defaults to the group
    assert (sampler.num_shards, sampler.shard_id) == (size, rank), (sampler.num_shards, sampler.shard_id)
    source = ds.NumpySlicesDataset({"x": X}, shuffle=False)
    assert source.num_shards == size and source.shard_id == rank and source.get_dataset_size() == len(X) // size
    np.savez(os.path.join(out_dir, f"reducer_{tag}_rank{rank}.npz"), **run_own(graph, True, seed=1 + rank))
    np.savez(os.path.join(out_dir, f"model_{tag}_rank{rank}.npz"),
             **run_model(GLOBAL_BATCH // size, seed=1 + rank))
    if rank == 0:  # the reference: one process, the global batch, rank 0's initial weights
        ms.reset_auto_parallel_context()
        np.savez(os.path.join(out_dir, f"reducer_{tag}_ref.npz"), **run_own(graph, False, seed=1))
        np.savez(os.path.join(out_dir, f"model_{tag}_ref.npz"), **run_model(GLOBAL_BATCH, seed=1))
print(f"DP TRAIN OK {rank}", flush=True)

"""Run by tests/python/test_strategy_ckpt.py under `python -m kiln.msrun --worker_num=N strategy_ckpt.py OUT_DIR`:
strategy files and per-rank checkpoints of operator parallel (issue 27).

Layout A (every N): an MLP (MatMul -> BiasAdd -> ReLU -> MatMul) with w1 cut by columns, b1 cut, w2 cut by rows
(with 4 processes w1 also uses a repeated axis, and the others 2 repeated copies), trained 3 steps with Momentum
under set_auto_parallel_context(semi_auto_parallel, full_batch=True, strategy_ckpt_config={"save_file":
OUT/strategy_A_rank<r>.ckpt}); each rank saves OUT/A/rank_<r>/net.ckpt (integrated_save=False: its slices) and
OUT/whole_rank<r>.ckpt (integrated_save=True); rank 0 also runs the same steps in one process (stand-alone) and saves
OUT/ref.ckpt. OUT/A/rank_<r>/opt.ckpt holds the optimizer too (only_trainable_params=False file: strategy_A_all.ckpt).

Layout B (N = 2): the same MLP cut the other way (w1 by rows, w2 by columns, b1 whole); its strategy is written as
JSON (strategy_ckpt_save_file=OUT/strategy_B.json) after one forward; rank 0 transforms OUT/A -> OUT/B with
transform_checkpoints (src A, dst B), each rank loads OUT/B/rank_<r>/net<r>.ckpt (its B slices) into the B network,
and writes OUT/B_rank<r>.npz: the predictions on X, and the weights merged back whole (merge_parameters).

AutoParallel (every N): the same training through AutoParallel(train_step) with save_param_strategy_file(
OUT/strategy_AP_rank<r>.ckpt), each process passing its rows of the batch; slices in OUT/AP/rank_<r>/net.ckpt."""
import os
import sys

import numpy as np

import mindspore as ms
from mindspore import Parameter, Tensor, nn, ops
from mindspore.communication import get_group_size, get_rank, init
from mindspore.communication.comm_func import barrier
from mindspore.parallel.auto_parallel import AutoParallel

from kiln.parallel import merge_parameters

out = sys.argv[1]
init()
for d in ("A", "Aopt", "B0"):
    os.makedirs(f"{out}/{d}/rank_{get_rank()}", exist_ok=True)
rank, size = get_rank(), get_group_size()
X = np.random.RandomState(0).randn(8, 16).astype(np.float32)
Y = np.random.RandomState(1).randn(8, 8).astype(np.float32)


def layout(name):
    if name == "A":
        if size == 2:
            return dict(mm1=((1, 1), (1, 2)), bias1=((1, 2), (2,)), act1=((1, 2),), mm2=((1, 2), (2, 1)))
        return dict(mm1=((2, 1), (1, 2)), bias1=((1, 2), (2,)), act1=((1, 2),), mm2=((1, 2), (2, 1)))
    return dict(mm1=((1, 2), (2, 1)), bias1=((1, 1), (1,)), act1=((2, 1),), mm2=((1, 1), (1, 2)))


class MLP(nn.Cell):
    def __init__(self, st):
        super().__init__()
        rng = np.random.RandomState(2)
        self.w1 = Parameter(Tensor((rng.randn(16, 32) * 0.3).astype(np.float32)), name="w1")
        self.b1 = Parameter(Tensor((rng.randn(32) * 0.3).astype(np.float32)), name="b1")
        self.w2 = Parameter(Tensor((rng.randn(32, 8) * 0.3).astype(np.float32)), name="w2")
        self.frozen = Parameter(Tensor(np.arange(4, dtype=np.float32)), name="frozen", requires_grad=False)
        self.mm1, self.bias1 = ops.MatMul().shard(st["mm1"]), ops.BiasAdd().shard(st["bias1"])
        self.act1, self.mm2 = ops.ReLU().shard(st["act1"]), ops.MatMul().shard(st["mm2"])

    def construct(self, x):
        return self.mm2(self.act1(self.bias1(self.mm1(x, self.w1), self.b1)), self.w2)


def train(net, steps=3):
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    for _ in range(steps):
        step(Tensor(X), Tensor(Y))
    return step


ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True,
                             strategy_ckpt_config={"save_file": f"{out}/strategy_A_rank{rank}.ckpt"})
net = MLP(layout("A"))
step = train(net)
ms.save_checkpoint(net, f"{out}/A/rank_{rank}/net.ckpt", integrated_save=False)
ms.save_checkpoint(net, f"{out}/whole_rank{rank}.ckpt")
# the optimizer's states too: only_trainable_params=False writes their layouts
ms.set_auto_parallel_context(strategy_ckpt_config={"save_file": f"{out}/strategy_A_all.ckpt",
                                                   "only_trainable_params": False})
ms.save_checkpoint(step, f"{out}/Aopt/rank_{rank}/opt.ckpt", integrated_save=False)
ms.reset_auto_parallel_context()
if rank == 0:
    ref = MLP(layout("A"))
    train(ref)
    ms.save_checkpoint(ref, f"{out}/ref.ckpt")

# MindSpore 2.10's form: AutoParallel over the functional train step, each process its rows of the batch, the file
# named by AutoParallel.save_param_strategy_file
os.makedirs(f"{out}/AP/rank_{rank}", exist_ok=True)
net_ap = MLP(layout("A"))
opt_ap = nn.Momentum(net_ap.trainable_params(), 0.1, 0.9)
loss_fn = nn.MSELoss()
grad_fn = ms.value_and_grad(lambda x, y: loss_fn(net_ap(x), y), None, net_ap.trainable_params())


def train_step(x, y):
    loss, grads = grad_fn(x, y)
    opt_ap(grads)
    return loss


ap = AutoParallel(train_step, parallel_mode="semi_auto")
ap.save_param_strategy_file(f"{out}/strategy_AP_rank{rank}.ckpt")
rows = X.shape[0] // size
for _ in range(3):
    ap(Tensor(X[rank * rows:(rank + 1) * rows]), Tensor(Y[rank * rows:(rank + 1) * rows]))
ms.save_checkpoint(net_ap, f"{out}/AP/rank_{rank}/net.ckpt", integrated_save=False)
ms.reset_auto_parallel_context()  # a strategy file describes the networks run since the last reset

# GRAPH_MODE: the first step slices the Parameters in PyNative, the next ones compile; the same strategy file
ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True,
                             strategy_ckpt_config={"save_file": f"{out}/strategy_G_rank{rank}.ckpt"})
os.makedirs(f"{out}/G/rank_{rank}", exist_ok=True)
net_g = MLP(layout("A"))
step_g = nn.TrainOneStepCell(nn.WithLossCell(net_g, nn.MSELoss()), nn.Momentum(net_g.trainable_params(), 0.1, 0.9))
for s in range(3):
    if s == 1:
        ms.set_context(mode=ms.GRAPH_MODE)
    step_g(Tensor(X), Tensor(Y))
ms.set_context(mode=ms.PYNATIVE_MODE)
assert step_g.__dict__.get("_jit_construct") is not None
ms.save_checkpoint(net_g, f"{out}/G/rank_{rank}/net.ckpt", integrated_save=False)
ms.reset_auto_parallel_context()

if size == 2:
    ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True,
                                 strategy_ckpt_save_file=f"{out}/strategy_B.json")
    net_b = MLP(layout("B"))
    net_b(Tensor(X))  # the first sharded call slices the Parameters (and records their layouts)
    ms.save_checkpoint(net_b, f"{out}/B0/rank_{rank}/net.ckpt", integrated_save=False)  # writes the strategy
    barrier()
    if rank == 0:
        ms.transform_checkpoints(f"{out}/A", f"{out}/B", "net", f"{out}/strategy_A_rank0.ckpt",
                                 f"{out}/strategy_B.json")
    barrier()
    mine = ms.load_checkpoint(f"{out}/B/rank_{rank}/net{rank}.ckpt")
    shapes = {p.name: tuple(p.shape) for _, p in net_b.parameters_and_names()}
    assert {k: tuple(v.shape) for k, v in mine.items()} == shapes, (mine, shapes)
    ms.load_param_into_net(net_b, mine)
    res = {"pred": net_b(Tensor(X)).asnumpy()}
    # load_distributed_checkpoint straight from layout A's files into another B network, already sliced, with the
    # predict strategy read from B's strategy file (MindSpore's [dev_matrix, tensor_map, param_split_shape, field])
    net_b2 = MLP(layout("B"))
    net_b2(Tensor(X))
    b_layouts = ms.build_searched_strategy(f"{out}/strategy_B.json")
    predict = {n: [list(v.dev_matrix[0].dim), list(v.tensor_map[0].dim), [], 0] for n, v in b_layouts.items()}
    ms.load_distributed_checkpoint(net_b2, [f"{out}/A/rank_{r}/net.ckpt" for r in range(size)], predict,
                                   f"{out}/strategy_A_rank0.ckpt")
    res["pred_loaded"] = net_b2(Tensor(X)).asnumpy()
    try:  # a predict strategy that cuts w1 otherwise than this network does
        predict["w1"] = [[2, 1], [-1, 1], [], 0]
        ms.load_distributed_checkpoint(net_b2, [f"{out}/A/rank_{r}/net.ckpt" for r in range(size)], predict,
                                       f"{out}/strategy_A_rank0.ckpt")
    except ValueError as e:
        assert "parameter 'w1' is sliced here [2, 1]" in str(e), str(e)
    else:
        raise AssertionError("a predict strategy that disagrees with the network's layout was accepted")
    for p, w in zip(net_b.trainable_params(), merge_parameters(net_b.trainable_params())):
        res[f"w:{p.name}"] = w.asnumpy()
    np.savez(f"{out}/B_rank{rank}.npz", **res)
    ms.reset_auto_parallel_context()
print("STRATEGY OK", rank)

"""Run by tests/python/test_pipeline_parallel.py::test_pipeline_checkpoint_holds_the_stage_parameters under
`python -m kiln.msrun --worker_num=N pipeline_checkpoint.py OUT_DIR` (N = 2: one process per stage; N = 4: two per
stage): a 2-stage MLP trained 3 steps through PipelineCell (summed MSE, 2 micro-batches), then every process saves the
network with save_checkpoint. Each process's file must hold its own stage's Parameters only, with their trained
values (as MindSpore's per-rank checkpoints: before, rank 0's file also held stage 1's Parameters at their initial
values, untrained). Rank 0 then trains the same network stand-alone on the whole batch (the reference) and writes
OUT_DIR/ref.npz; every rank writes OUT_DIR/rank<r>.npz with the names it saved, and OUT_DIR/train<r>.txt the
names saved from the TrainOneStepCell (the optimizer's states of the other stage's Parameters left out too)."""
import os
import sys

import numpy as np

import mindspore as ms
from mindspore import Tensor, nn
from mindspore.communication import get_rank, init

out_dir = sys.argv[1]
ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel", pipeline_stages=2)
init()
rank = get_rank()
X = Tensor(np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8))
Y = Tensor(np.linspace(0, 1, 16, dtype=np.float32).reshape(4, 4))


def make():
    ms.set_seed(1)
    net = nn.SequentialCell([nn.Dense(8, 8), nn.ReLU(), nn.Dense(8, 4)])
    return net, nn.WithLossCell(net, nn.MSELoss(reduction="sum"))


net, body = make()
net[0].pipeline_stage = 0
net[2].pipeline_stage = 1
step = nn.TrainOneStepCell(nn.PipelineCell(body, 2), nn.SGD(net.trainable_params(), 0.05))
for _ in range(3):
    step(X, Y)
path = os.path.join(out_dir, f"rank{rank}.ckpt")
ms.save_checkpoint(net, path)
saved = ms.load_checkpoint(path)
np.savez(os.path.join(out_dir, f"rank{rank}.npz"), **{k: v.asnumpy() for k, v in saved.items()})
train_path = os.path.join(out_dir, f"train{rank}.ckpt")  # the training network: its optimizer's states too
ms.save_checkpoint(step, train_path)
with open(os.path.join(out_dir, f"train{rank}.txt"), "w") as f:
    f.write(" ".join(sorted(ms.load_checkpoint(train_path))))
if rank == 0:
    ms.reset_auto_parallel_context()
    ref, body = make()
    step = nn.TrainOneStepCell(body, nn.SGD(ref.trainable_params(), 0.05))
    for _ in range(3):
        step(X, Y)
    np.savez(os.path.join(out_dir, "ref.npz"), **{p.name: p.asnumpy() for p in ref.trainable_params()})
print("CKPT OK", rank)

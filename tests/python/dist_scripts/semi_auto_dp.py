"""Run by tests/python/test_parallel_samples.py under `python -m kiln.msrun --worker_num=N semi_auto_dp.py OUT_DIR`:
the two settings MindSpore's optimizer-parallel and gradient-accumulation samples use, with different rows per
process so that a missing gradient average would show.

  * semi: set_auto_parallel_context(parallel_mode=SEMI_AUTO_PARALLEL[, enable_parallel_optimizer=True]), no shard
    strategies, each process its own 4 rows of the global batch, an own step (value_and_grad + optimizer(grads),
    no reducer) eagerly and under ms.jit: the gradients are averaged over the processes (kiln/parallel/_semi_auto_dp.py).
  * hsdp: stand-alone context, TrainOneStepCell over AutoParallel(WithLossCell(net, loss)).hsdp(threshold=0) with
    Adam: the optimizer's moments are cut to 1/N of the rows (kiln/nn/optim/_parallel.enable_late).

Every rank writes OUT_DIR/<config>_rank<r>.npz (losses 'loss:<step>' for 'semi' the process's own, the weights 'w:<name>',
'moment_elems' of Adam's moment1); rank 0 writes <config>_ref.npz: one process, the whole global batch."""
import os
import sys

import numpy as np

import mindspore as ms
from mindspore import Tensor, nn
from mindspore.communication import get_group_size, get_rank, init
from mindspore.parallel.auto_parallel import AutoParallel

out_dir = sys.argv[1]
init()
rank, size = get_rank(), get_group_size()
ROWS, STEPS = 4, 3
rng = np.random.RandomState(0)
X = rng.randn(ROWS * size * STEPS, 16).astype(np.float32)
Y = rng.randn(ROWS * size * STEPS, 8).astype(np.float32)


def make_net():
    ms.set_seed(1)
    return nn.SequentialCell([nn.Dense(16, 32), nn.Tanh(), nn.Dense(32, 8)])


def batch(step, whole):
    lo = step * ROWS * size
    if whole:
        return Tensor(X[lo:lo + ROWS * size]), Tensor(Y[lo:lo + ROWS * size])
    lo += rank * ROWS
    return Tensor(X[lo:lo + ROWS]), Tensor(Y[lo:lo + ROWS])


def semi(opt_kind, jit, whole):
    net = make_net()
    opt = nn.Adam(net.trainable_params(), 0.01) if opt_kind == "adam" else nn.SGD(net.trainable_params(), 0.1)
    loss_fn = nn.MSELoss()

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, opt.parameters)

    def step(x, y):
        loss, grads = grad_fn(x, y)
        opt(grads)
        return loss

    run = ms.jit(step) if jit else step
    out = {f"loss:{s}": float(run(*batch(s, whole)).asnumpy()) for s in range(STEPS)}
    out.update({f"w:{p.name}": p.asnumpy() for p in net.trainable_params()})
    if opt_kind == "adam":
        out["moment_elems"] = sum(int(np.prod(m.shape)) for m in opt.moment1)
    return out


def hsdp(parallel, functional=False):
    net = make_net()
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    opt = nn.Adam(net.trainable_params(), 0.01)
    if functional:  # the optimizer-parallel tutorial's form: AutoParallel(train_step).hsdp()
        grad_fn = ms.value_and_grad(loss_net, None, opt.parameters)

        def train_step(x, y):
            loss, grads = grad_fn(x, y)
            opt(grads)
            return loss

        train = train_step
        if parallel:
            train = AutoParallel(train_step, parallel_mode="semi_auto")
            train.hsdp(threshold=0)
    else:
        if parallel:
            loss_net = AutoParallel(loss_net)
            loss_net.hsdp(threshold=0)
        train = nn.TrainOneStepCell(loss_net, opt)
    out = {f"loss:{s}": float(train(*batch(s, True)).asnumpy()) for s in range(STEPS)}
    out.update({f"w:{p.name}": p.asnumpy() for p in net.trainable_params()})
    out["moment_elems"] = sum(int(np.prod(m.shape)) for m in opt.moment1)
    return out


for opt_kind in ("sgd", "adam"):
    for jit in (False, True):
        tag = f"semi_{opt_kind}_{'jit' if jit else 'eager'}"
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.SEMI_AUTO_PARALLEL,
                                     enable_parallel_optimizer=opt_kind == "adam",
                                     parallel_optimizer_config={"parallel_optimizer_threshold": 0})
        np.savez(os.path.join(out_dir, f"{tag}_rank{rank}.npz"), **semi(opt_kind, jit, False))
        ms.reset_auto_parallel_context()
        if rank == 0:
            np.savez(os.path.join(out_dir, f"{tag}_ref.npz"), **semi(opt_kind, jit, True))
def pipe(parallel):
    """2 pipeline stages of N/2 processes each (data parallel inside a stage), PipelineCell(WithLossCell, 2), each
    replica its own 8 rows; the one-process reference (pipeline_stages=1: the sum over the micro-batches) takes, as
    micro-batch i, the replicas' micro-batches i side by side, so its loss is the replicas' mean."""
    d = size // 2 if parallel else 1
    net = make_net()
    net[0].pipeline_stage = 0
    net[2].pipeline_stage = 1
    opt = nn.SGD(net.trainable_params(), 0.1)
    train = nn.TrainOneStepCell(nn.PipelineCell(nn.WithLossCell(net, nn.MSELoss()), 2), opt)
    reps = size // 2
    out = {}
    for s in range(STEPS):
        lo = s * 8 * reps
        xs = [X[lo + j * 8:lo + (j + 1) * 8] for j in range(reps)]
        ys = [Y[lo + j * 8:lo + (j + 1) * 8] for j in range(reps)]
        if parallel:
            j = rank % d
            x, y = xs[j], ys[j]
        else:  # micro-batch i = the replicas' micro-batches i
            x = np.concatenate([a[i * 4:(i + 1) * 4] for i in range(2) for a in xs])
            y = np.concatenate([a[i * 4:(i + 1) * 4] for i in range(2) for a in ys])
        out[f"loss:{s}"] = float(train(Tensor(x), Tensor(y)).asnumpy())
    stage = rank // d if parallel else None
    for i, p in enumerate(net.trainable_params()):
        if stage is None or (i < 2) == (stage == 0):  # the Parameters of this process's stage
            out[f"w:{p.name}"] = p.asnumpy()
    return out


if size % 2 == 0:
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.SEMI_AUTO_PARALLEL, pipeline_stages=2)
    np.savez(os.path.join(out_dir, f"pipe_rank{rank}.npz"), **pipe(True))
    ms.reset_auto_parallel_context()
    if rank == 0:
        np.savez(os.path.join(out_dir, "pipe_ref.npz"), **pipe(False))
np.savez(os.path.join(out_dir, f"hsdp_rank{rank}.npz"), **hsdp(True))
np.savez(os.path.join(out_dir, f"hsdpfn_rank{rank}.npz"), **hsdp(True, functional=True))
if rank == 0:
    np.savez(os.path.join(out_dir, "hsdp_ref.npz"), **hsdp(False))
    np.savez(os.path.join(out_dir, "hsdpfn_ref.npz"), **hsdp(False, functional=True))
print("DONE", rank)

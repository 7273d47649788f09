"""Run by tests/python/test_operator_parallel.py under `python -m kiln.msrun --worker_num=N op_parallel_shared.py
OUT_DIR MODES`: Parameters stored sliced by one sharded op (Primitive.shard) and ALSO read by ops without a strategy
(a second MatMul primitive, an element-wise Mul primitive and a ReduceMean primitive without strategy, `self.w * 2`
and `ops.norm(self.w)` directly in construct, a tied weight read through another Cell's attribute by a MatMul without
strategy). Each of those consumers must see the whole Parameter (Kiln gathers it for them, with the
matching gradient), so the losses and the merged weights equal one process on the whole model.

MODES: comma-separated among ctx (set_auto_parallel_context(semi_auto_parallel, full_batch=True) + TrainOneStepCell,
PyNative), ctxgraph (the same, the first step PyNative and the next ones GRAPH_MODE), auto (AutoParallel over the
functional train_step, each process its rows of the batch), autograph (the same in GRAPH_MODE). Each rank writes
OUT_DIR/shared_<mode>_rank<r>.npz ('loss:<step>', 'w:<name>' the merged weights, 'local:<name>' the element count
held here); rank 0 also writes shared_<mode>_ref.npz (stand-alone, whole weights, the global batch)."""
import sys

import numpy as np

import mindspore as ms
from mindspore import Parameter, Tensor, nn, ops
from mindspore.communication import get_group_size, get_rank, init
from mindspore.parallel.auto_parallel import AutoParallel

from kiln.parallel import merge_parameters

out_dir, modes = sys.argv[1], sys.argv[2].split(",")
init()
rank, size = get_rank(), get_group_size()
BATCH, STEPS = 8, 3


def param(rng, shape, name):
    return Parameter(Tensor((rng.randn(*shape) * 0.3).astype(np.float32)), name=name)


class Head(nn.Cell):
    """Reads the embedding-like weight of another Cell (a tied weight) with a MatMul without strategy."""

    def __init__(self, owner):
        super().__init__()
        self.owner = [owner]  # not a child Cell: only its attribute is read
        self.mm = ops.MatMul(transpose_b=True)

    def construct(self, h):
        return self.mm(h, self.owner[0].w1)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        rng = np.random.RandomState(1)
        self.w1, self.w2, self.b = param(rng, (16, 16), "w1"), param(rng, (16, 8), "w2"), param(rng, (8,), "b")
        self.mm1 = ops.MatMul().shard(((1, size), (size, 1)))   # w1 cut by rows (the reduction dimension)
        self.relu = ops.ReLU().shard(((size, 1),))
        self.mm2 = ops.MatMul().shard(((1, 1), (1, size)))      # w2 cut by columns
        self.add = ops.Add().shard(((1, 2), (2,)))                # b cut in 2 (4 processes: 2 copies of each)
        self.plain_mm = ops.MatMul()                              # no strategy: needs the whole w1
        self.plain_mul = ops.Mul()
        self.mean = ops.ReduceMean()
        self.head = Head(self)

    def construct(self, x):
        h = self.relu(self.mm1(x, self.w1))
        h = h + self.plain_mm(x, self.w1) * 0.5                   # a second MatMul without strategy
        h = h + self.mean(self.plain_mul(self.w1, self.w1), 0)    # element-wise and reduction primitives
        h = h - 0.1 * self.head(h)                                # a tied read through another Cell
        y = self.add(self.mm2(h, self.w2), self.b)
        y = y + ops.norm(self.w2) * 0.05 + (self.w1 * 2).sum() * 0.01 + self.b * 0.5  # direct reads
        return y


X = np.random.RandomState(0).randn(BATCH * STEPS, 16).astype(np.float32)
Y = np.random.RandomState(3).randn(BATCH * STEPS, 8).astype(np.float32)


def run(mode, parallel):
    graph = mode.endswith("graph") and parallel
    mode = mode[:-5] if mode.endswith("graph") else mode
    ms.reset_auto_parallel_context()
    if parallel and mode == "ctx":
        ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True)
    net = Net()
    opt = nn.SGD(net.trainable_params(), 0.05)
    loss_fn = nn.MSELoss()
    losses = []
    if mode == "ctx":
        step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), opt)
        for s in range(STEPS):
            if graph and s == 1:  # the first step slices the Parameters in PyNative; the next ones compile
                ms.set_context(mode=ms.GRAPH_MODE)
            losses.append(float(step(Tensor(X[s * BATCH:(s + 1) * BATCH]),
                                     Tensor(Y[s * BATCH:(s + 1) * BATCH])).asnumpy()))
        ms.set_context(mode=ms.PYNATIVE_MODE)
        assert (step.__dict__.get("_jit_construct") is not None) == graph
    else:
        # a term read in the functional forward (outside any construct): the whole w2 too
        grad_fn = ms.value_and_grad(lambda d, t: loss_fn(net(d), t) + 0.01 * ops.norm(net.w2), None,
                                    net.trainable_params())

        def train_step(inputs, targets):
            loss_value, grads = grad_fn(inputs, targets)
            opt(grads)
            return loss_value

        if not parallel:  # the reference: the same step on the global batch
            for s in range(STEPS):
                losses.append(float(train_step(Tensor(X[s * BATCH:(s + 1) * BATCH]),
                                               Tensor(Y[s * BATCH:(s + 1) * BATCH])).asnumpy()))
        else:
            parallel_net = AutoParallel(train_step, parallel_mode="semi_auto")
            if graph:
                ms.set_context(mode=ms.GRAPH_MODE)
            rows = BATCH // size
            for s in range(STEPS):
                lo = s * BATCH + rank * rows
                losses.append(float(parallel_net(Tensor(X[lo:lo + rows]), Tensor(Y[lo:lo + rows])).asnumpy()))
            ms.set_context(mode=ms.PYNATIVE_MODE)
            assert (parallel_net.__dict__.get("_jit_construct") is not None) == graph
    out = {f"loss:{s}": v for s, v in enumerate(losses)}
    if parallel:
        for p in net.trainable_params():
            out[f"local:{p.name}"] = int(np.prod(p.shape))
        for p, whole in zip(net.trainable_params(), merge_parameters(net.trainable_params())):
            out[f"w:{p.name}"] = whole.asnumpy()
    else:
        for p in net.trainable_params():
            out[f"w:{p.name}"] = p.asnumpy()
    ms.reset_auto_parallel_context()
    return out


class Direct(nn.Cell):
    """Reads its sliced Parameter only as the last argument of its sharded MatMul (no gather)."""

    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.arange(32, dtype=np.float32).reshape(8, 4) / 32), name="wd")
        self.mm = ops.MatMul().shard(((1, 1), (1, size)))   # w cut by columns; the output gathered

    def construct(self, x):
        return self.mm(x, self.w)


def check_reads():
    """A read passed straight to the sharded op moves no Parameter (only the output's all-gather), a read by an op
    without strategy gathers it; once operator parallel is off, such a read raises naming the Parameter."""
    from kiln.parallel import _op_shard
    ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True)
    net, x = Direct(), Tensor(np.ones((4, 8), np.float32))
    want = np.ones((4, 8)) @ (np.arange(32).reshape(8, 4) / 32)
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)  # slices w
    before = _op_shard.comm_bytes[0]
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)
    assert _op_shard.comm_bytes[0] - before == (size - 1) * 4 * (4 // size) * 4, _op_shard.comm_bytes[0] - before
    ms.reset_auto_parallel_context()

    class Foreign(Direct):
        def construct(self, x):
            return ops.matmul(x, self.w * 2)

    class Twin(nn.Cell):  # holds another network's Parameter, outside that network
        def __init__(self, w):
            super().__init__()
            self.tw = w

        def construct(self, x):
            return ops.matmul(x, self.tw * 1.0)

    ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True)
    d2 = Direct()
    twin = Twin(d2.w)
    step = nn.TrainOneStepCell(nn.WithLossCell(d2, nn.MSELoss()), nn.SGD(d2.trainable_params(), 0.0))
    step(x, Tensor(np.zeros((4, 4), np.float32)))  # slices d2.w inside d2's construct (lr 0: the values stay)
    assert tuple(d2.w.shape) == (8, 4 // size)
    np.testing.assert_allclose(twin(x).asnumpy(), want, rtol=1e-6)  # the twin reads it whole too
    ms.reset_auto_parallel_context()

    f = Foreign()
    ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True)
    f.mm(x, f.w)  # slices f.w (outside a construct: the Parameter itself)
    before = _op_shard.comm_bytes[0]
    np.testing.assert_allclose(f(x).asnumpy(), 2 * want, rtol=1e-6)  # self.w * 2: the whole w, gathered
    assert _op_shard.comm_bytes[0] - before == (size - 1) * 8 * (4 // size) * 4, _op_shard.comm_bytes[0] - before
    ms.reset_auto_parallel_context()
    try:
        f(x)
    except ValueError as e:
        assert "For 'Foreign.w' read at" in str(e) and "op_parallel_shared.py" in str(e), str(e)
        assert "the Parameter 'wd' is stored sliced" in str(e) and "whole shape [8, 4]" in str(e), str(e)
    else:
        raise AssertionError("a sliced Parameter read by an op without strategy while operator parallel is off")
    print("READS OK", rank)


def check_full_batch_shapes():
    """full_batch=True with a different batch per process: a ValueError in every process naming each rank's shapes
    (before, the sharded ops' collectives differed in size and Gloo aborted a process); the job goes on."""
    def expect(fn, api):
        try:
            fn()
        except ValueError as e:
            assert f"For '{api}', every process must pass the same shapes and dtypes of its Tensor arguments" \
                in str(e), str(e)
            assert "rank 0: " in str(e) and "arg 0: [4, 8] Float32" in str(e) and "arg 0: [3, 8] Float32" in str(e), \
                str(e)
        else:
            raise AssertionError(f"{api}: different batch shapes per process accepted")

    rows = 4 if rank == 0 else 3
    x, y = Tensor(np.ones((rows, 8), np.float32)), Tensor(np.ones((rows, 4), np.float32))
    ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True)
    net = Direct()
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))
    step(Tensor(np.ones((4, 8), np.float32)), Tensor(np.ones((4, 4), np.float32)))  # equal shapes: slices, trains
    expect(lambda: step(x, y), "value_and_grad")  # TrainOneStepCell's grad
    step(Tensor(np.ones((4, 8), np.float32)), Tensor(np.ones((4, 4), np.float32)))  # the job goes on
    ms.set_context(mode=ms.GRAPH_MODE)  # the compiled step: checked by the Cell's call
    try:
        expect(lambda: step(x, y), "TrainOneStepCell")
        step(Tensor(np.ones((4, 8), np.float32)), Tensor(np.ones((4, 4), np.float32)))
        assert step.__dict__.get("_jit_construct") is not None
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.reset_auto_parallel_context()
    ap = AutoParallel(Direct(), parallel_mode="semi_auto")
    ap.dataset_strategy("full_batch")
    expect(lambda: ap(x), "AutoParallel")
    np.testing.assert_allclose(ap(Tensor(np.ones((4, 8), np.float32))).asnumpy(),
                               np.ones((4, 8)) @ (np.arange(32).reshape(8, 4) / 32), rtol=1e-6)
    print("SHAPES OK", rank)


check_reads()
check_full_batch_shapes()
for m in modes:
    np.savez(f"{out_dir}/shared_{m}_rank{rank}.npz", **run(m, True))
    if rank == 0:
        np.savez(f"{out_dir}/shared_{m}_ref.npz", **run(m, False))
print("DONE", rank)

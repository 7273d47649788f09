"""Run by tests/python/test_operator_parallel.py under `python -m kiln.msrun --worker_num=N op_parallel_train.py
OUT_DIR CONFIGS`: operator parallel (Primitive.shard strategies, semi-auto parallel) against one process on the whole
model. CONFIGS: comma-separated model:optimizer:mode with model in {mlp (MatMul/BiasAdd/ReLU/Tanh/Add chain),
block (a Transformer-block-like chain: BatchMatMul projections, attention scores, Softmax, GeLU feed-forward,
residual Adds)}, optimizer in {sgd, momentum, adam}, mode in {auto (parallel.auto_parallel.AutoParallel over
MindSpore's functional train_step, dataset strategy data_parallel: each process passes its rows of the batch),
ctx (set_auto_parallel_context(parallel_mode='semi_auto_parallel', full_batch=True) and nn.TrainOneStepCell, every
process the whole batch), autograph / ctxgraph (the same in GRAPH_MODE: AutoParallel compiles from its second call;
TrainOneStepCell's first step runs in PyNative, the next ones in GRAPH_MODE)}; 'errors' checks the validation
errors.

Each rank writes OUT_DIR/<tag>_rank<r>.npz: the losses ('loss:<step>'), the merged (whole) weights after training
('w:<name>', gathered with kiln.parallel.merge_parameters), each Parameter's local element count ('local:<name>'), the element counts of the Parameters and of the optimizer's per-parameter state here
('param_elems', 'state_elems');
'ckpt:<name>' (the whole value save_checkpoint wrote) and 'reloaded:<name>' (merged again after zeroing the
slices and loading that checkpoint with load_param_into_net); rank 0 also writes <tag>_ref.npz (stand-alone mode in the same process: the same network, whole weights, the
global batch)."""
import sys

import numpy as np

import mindspore as ms
from mindspore import Parameter, Tensor, nn, ops
from mindspore.communication import get_group_size, get_rank, init
from mindspore.parallel.auto_parallel import AutoParallel

from kiln.parallel import merge_parameters

out_dir, configs = sys.argv[1], sys.argv[2].split(",")
init()
rank, size = get_rank(), get_group_size()
BATCH, STEPS = 8, 3


def strategies(model, n):
    """Strategies that cut rows, columns and reduction dimensions; with 4 processes mm3 and add3 use 2 devices
    (their device matrix is repeated twice: w3 and b3 are cut in 2, each slice held by 2 processes)."""
    if model == "mlp":
        if n == 2:
            return dict(mm1=((1, 2), (2, 1)), bias1=((2, 1), (1,)), act1=((2, 1),), mm2=((2, 1), (1, 1)),
                        act2=((1, 2),), mm3=((1, 1), (1, 2)), add3=((2, 1), (1,)))
        return dict(mm1=((2, 2), (2, 1)), bias1=((2, 2), (2,)), act1=((4, 1),), mm2=((1, 2), (2, 2)),
                    act2=((2, 2),), mm3=((1, 1), (1, 2)), add3=((1, 2), (2,)))  # 2 devices: 2 repeated copies
    if n == 2:
        return dict(q=((1, 1, 2), (2, 1)), k=((2, 1, 1), (1, 1)), v=((1, 1, 1), (1, 2)), score=((2, 1, 1), (2, 1, 1)),
                    soft=((2, 1, 1),), ctx=((1, 2, 1), (1, 1, 1)), o=((1, 1, 2), (2, 1)), res=((2, 1, 1), (2, 1, 1)),
                    ff1=((1, 1, 1), (1, 2)), gelu=((1, 1, 2),), ff2=((1, 1, 2), (2, 1)), res2=((1, 2, 1), (1, 2, 1)))
    return dict(q=((2, 1, 2), (2, 1)), k=((1, 2, 2), (2, 1)), v=((1, 1, 1), (1, 4)), score=((2, 2, 1), (2, 1, 1)),
                soft=((4, 1, 1),), ctx=((2, 1, 2), (2, 2, 1)), o=((1, 2, 2), (2, 1)), res=((2, 2, 1), (2, 2, 1)),
                ff1=((2, 1, 1), (1, 2)), gelu=((1, 2, 2),), ff2=((1, 1, 4), (4, 1)), res2=((1, 1, 4), (1, 1, 4)))


def param(rng, shape, name):
    return Parameter(Tensor((rng.randn(*shape) * 0.3).astype(np.float32)), name=name)


class MLP(nn.Cell):
    def __init__(self, st):
        super().__init__()
        rng = np.random.RandomState(1)
        self.w1, self.b1 = param(rng, (16, 32), "w1"), param(rng, (32,), "b1")
        self.w2, self.w3, self.b3 = param(rng, (32, 16), "w2"), param(rng, (16, 8), "w3"), param(rng, (8,), "b3")
        self.mm1 = ops.MatMul().shard(st["mm1"])
        self.bias1 = ops.BiasAdd().shard(st["bias1"])
        self.act1 = ops.ReLU().shard(st["act1"])
        self.mm2 = ops.MatMul().shard(st["mm2"])
        self.act2 = ops.Tanh().shard(st["act2"])
        self.mm3 = ops.MatMul(transpose_b=False).shard(st["mm3"])
        self.add3 = ops.Add().shard(st["add3"])

    def construct(self, x):
        x = self.act1(self.bias1(self.mm1(x, self.w1), self.b1))
        x = self.act2(self.mm2(x, self.w2))
        return self.add3(self.mm3(x, self.w3), self.b3)


class Block(nn.Cell):
    def __init__(self, st, h=8):
        super().__init__()
        rng = np.random.RandomState(2)
        self.wq, self.wk, self.wv, self.wo = (param(rng, (h, h), n) for n in ("wq", "wk", "wv", "wo"))
        self.w1, self.w2 = param(rng, (h, 16), "w_ff1"), param(rng, (16, h), "w_ff2")
        bmm = ops.BatchMatMul
        self.q, self.k, self.v = bmm().shard(st["q"]), bmm().shard(st["k"]), bmm().shard(st["v"])
        self.score = bmm(transpose_b=True).shard(st["score"])
        self.soft = ops.Softmax().shard(st["soft"])
        self.ctx = bmm().shard(st["ctx"])
        self.o = bmm().shard(st["o"])
        self.res = ops.Add().shard(st["res"])
        self.ff1 = bmm().shard(st["ff1"])
        self.gelu = ops.GeLU().shard(st["gelu"])
        self.ff2 = bmm().shard(st["ff2"])
        self.res2 = ops.Add().shard(st["res2"])
        self.scale = 1.0 / np.sqrt(h)

    def construct(self, x):
        q, k, v = self.q(x, self.wq), self.k(x, self.wk), self.v(x, self.wv)
        a = self.soft(self.score(q, k) * self.scale)
        x = self.res(x, self.o(self.ctx(a, v), self.wo))
        return self.res2(x, self.ff2(self.gelu(self.ff1(x, self.w1)), self.w2))


DATA = {"mlp": (np.random.RandomState(0).randn(BATCH * STEPS, 16).astype(np.float32),
                np.random.RandomState(3).randn(BATCH * STEPS, 8).astype(np.float32)),
        "block": (np.random.RandomState(0).randn(BATCH * STEPS, 4, 8).astype(np.float32),
                  np.random.RandomState(3).randn(BATCH * STEPS, 4, 8).astype(np.float32))}


def make_opt(name, params):
    if name == "sgd":
        return nn.SGD(params, 0.1)
    if name == "momentum":
        return nn.Momentum(params, 0.1, 0.9)
    return nn.Adam(params, 0.01)


def run(model, opt_name, mode, parallel):
    graph = mode.endswith("graph") and parallel
    mode = mode[:-5] if mode.endswith("graph") else mode
    ms.reset_auto_parallel_context()
    if parallel and mode == "ctx":
        ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True)
    net = (MLP if model == "mlp" else Block)(strategies(model, size))
    opt = make_opt(opt_name, net.trainable_params())
    loss_fn = nn.MSELoss()
    losses = []
    x_all, y_all = DATA[model]
    if mode == "ctx" or not parallel:
        step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), opt)
        for s in range(STEPS):
            x, y = x_all[s * BATCH:(s + 1) * BATCH], y_all[s * BATCH:(s + 1) * BATCH]
            if graph and s == 1:  # the first step slices the Parameters in PyNative; the next ones compile
                ms.set_context(mode=ms.GRAPH_MODE)
            losses.append(float(step(Tensor(x), Tensor(y)).asnumpy()))
        ms.set_context(mode=ms.PYNATIVE_MODE)
        assert (step.__dict__.get("_jit_construct") is not None) == graph  # the later steps ran compiled
    else:
        def forward_fn(data, target):
            return loss_fn(net(data), target)

        grad_fn = ms.value_and_grad(forward_fn, None, net.trainable_params())

        def train_step(inputs, targets):
            loss_value, grads = grad_fn(inputs, targets)
            opt(grads)
            return loss_value

        parallel_net = AutoParallel(train_step, parallel_mode="semi_auto")
        if graph:  # AutoParallel runs its first call eagerly, then compiles
            ms.set_context(mode=ms.GRAPH_MODE)
        rows = BATCH // size
        for s in range(STEPS):
            lo = s * BATCH + rank * rows  # this process's rows of the global batch
            x, y = x_all[lo:lo + rows], y_all[lo:lo + rows]
            losses.append(float(parallel_net(Tensor(x), Tensor(y)).asnumpy()))
        ms.set_context(mode=ms.PYNATIVE_MODE)
        assert (parallel_net.__dict__.get("_jit_construct") is not None) == graph
    out = {f"loss:{s}": v for s, v in enumerate(losses)}
    mine = {id(p) for p in opt.parameters}
    out["state_elems"] = sum(int(np.prod(s.shape)) for s in opt.get_parameters() if id(s) not in mine
                             and s.name.split(".", 1)[-1] in {p.name for p in net.trainable_params()})
    out["param_elems"] = sum(int(np.prod(p.shape)) for p in net.trainable_params())
    if parallel:
        # a Parameter sliced during the first step's grad transform keeps no autodiff history after the step (that
        # history would hold the whole tensor)
        out["history"] = int(any(p._has_grad_fn for p in net.trainable_params()))
        for p in net.trainable_params():
            out[f"local:{p.name}"] = int(np.prod(p.shape))
        for p, whole in zip(net.trainable_params(), merge_parameters(net.trainable_params())):
            out[f"w:{p.name}"] = whole.asnumpy()
        # checkpoints: integrated_save (the default) gathers whole values in every process (a collective);
        # integrated_save=False writes the slices; load_param_into_net cuts a whole value to the slice
        whole_file, slice_file = f"{out_dir}/{model}_whole{rank}.ckpt", f"{out_dir}/{model}_slice{rank}.ckpt"
        ms.save_checkpoint(net, whole_file)
        ms.save_checkpoint(net, slice_file, integrated_save=False)
        whole, sliced = ms.load_checkpoint(whole_file), ms.load_checkpoint(slice_file)
        for p in net.trainable_params():
            out[f"ckpt:{p.name}"] = whole[p.name].asnumpy()
            assert tuple(sliced[p.name].shape) == tuple(p.shape), (p.name, sliced[p.name].shape, p.shape)
            p.set_data(ops.zeros_like(p))
        ms.load_param_into_net(net, whole)
        for p, w in zip(net.trainable_params(), merge_parameters(net.trainable_params())):
            out[f"reloaded:{p.name}"] = w.asnumpy()
    else:
        init = (MLP if model == "mlp" else Block)(strategies(model, size))
        for p, p0 in zip(net.trainable_params(), init.trainable_params()):
            out[f"w:{p.name}"] = p.asnumpy()
            out[f"moved:{p.name}"] = float(np.abs(p.asnumpy() - p0.asnumpy()).max())
    ms.reset_auto_parallel_context()
    return out


def check_errors():
    ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True)
    x, w = Tensor(np.ones((4, 8), np.float32)), Parameter(Tensor(np.ones((8, 4), np.float32)), name="we")
    cases = [(ops.MatMul().shard(((size, 1),)), "strategy len: 1 is not equal to inputs len: 2"),
             (ops.MatMul().shard(((size, 1, 1), (1, 1))), "strategy len: 3 is not equal to inputs len: 2, index: 0"),
             (ops.MatMul().shard(((size, 1), (1, 1))), f"shape 3 can not be divisible by strategy value {size}"),
             (ops.MatMul().shard(((size, 2 * size), (2 * size, 1))), "must divide the device num"),
             (ops.MatMul().shard(((1, size), (1, size))), "the strategy of the reduce dimension"),
             (ops.MatMul().shard(((size, 1), (1, 1))), None)]
    for i, (prim, msg) in enumerate(cases):
        a = Tensor(np.ones((3, 8), np.float32)) if i == 2 else x
        b = w
        if i == 4:
            a, b = Tensor(np.ones((4, 8), np.float32)), Tensor(np.ones((8, 4), np.float32))
        if msg is None:
            np.testing.assert_allclose(prim(x, w).asnumpy(), np.full((4, 4), 8.0, np.float32))
            continue
        try:
            prim(a, b)
        except ValueError as e:
            assert msg in str(e), (msg, str(e))
        else:
            raise AssertionError(f"no error for {msg}")
    try:
        ops.Softmax(axis=1).shard(((1, size),))(x)
    except ValueError as e:
        assert "the strategy corresponding to axis dimension (1) must be 1" in str(e), str(e)
    else:
        raise AssertionError("Softmax axis split accepted")
    try:
        ops.Add().shard(((1, size), (1, 1)))(Tensor(np.ones((4, 4), np.float32)), Tensor(np.ones((4, 4), np.float32)))
    except ValueError as e:
        assert "the inputs' strategies of output dimension 1 differ" in str(e), str(e)
    else:
        raise AssertionError("broadcast split accepted")
    try:
        ops.Gather().shard(((size, 1), (1,)))
    except (ValueError, AttributeError):
        pass
    try:
        ops.ReduceSum().shard(((size, 1),))(x)
    except ValueError as e:
        assert "not supported by Kiln for this primitive" in str(e), str(e)
    else:
        raise AssertionError("ReduceSum sharded silently")
    try:
        ops.ReLU().shard([(size, 1)])
    except TypeError as e:
        assert "should be a tuple(tuple(int))" in str(e), str(e)
    else:
        raise AssertionError("list strategy accepted")
    ms.set_auto_parallel_context(full_batch=False)
    try:
        ops.ReLU().shard(((size, 1),))(x)
    except ValueError as e:
        assert "needs full_batch=True in Kiln" in str(e), str(e)
    else:
        raise AssertionError("a batch slice taken as the whole batch")
    ms.set_auto_parallel_context(full_batch=True)
    fresh = Parameter(Tensor(np.ones((8, 4), np.float32)), name="fresh")
    try:
        ms.jit(lambda a: ops.MatMul().shard(((1, size), (size, 1)))(a, fresh))(x)
    except RuntimeError as e:
        assert "must be sliced by its first sharded use, which Kiln cannot do inside a compiled function" in str(e), \
            str(e)
    else:
        raise AssertionError("a Parameter sliced inside a trace")
    ms.reset_auto_parallel_context()
    print("ERRORS OK", rank)


for config in configs:
    if config == "errors":
        check_errors()
        continue
    model, opt_name, mode = config.split(":")
    tag = config.replace(":", "_")
    np.savez(f"{out_dir}/{tag}_rank{rank}.npz", **run(model, opt_name, mode, True))
    if rank == 0:
        np.savez(f"{out_dir}/{tag}_ref.npz", **run(model, opt_name, mode, False))
print("DONE", rank)

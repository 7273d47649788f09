"""Run by tests/python/test_optimizer_parallel.py under `python -m kiln.msrun --worker_num=N opt_parallel.py OUT_DIR
CONFIGS`: optimizer parallel (enable_parallel_optimizer=True, ZeRO-1) against plain data parallel and against one
process on the global batch. CONFIGS is a comma-separated list of model:optimizer:mode, with model in {mlp, block},
optimizer in {sgd, momentum, adam, adamwd, adagrad, rmsprop, groups}, mode in {pynative, jit, noinit, clip, clipjit,
model_pynative, model_graph, ls_pynative, ls_graph} (an own step with nn.DistributedGradReducer, eagerly or under
ms.jit, or under jit with the model and optimizer made in nn.no_init_parameters, or with ops.clip_by_global_norm
after the reducer, eagerly or under jit; Model.train in PyNative or GRAPH_MODE;
TrainOneStepWithLossScaleCell with an overflow at step 1 that every process must skip), and an optional fourth
field sK (optimizer_weight_shard_size K); the config 'errors' checks the error messages and the slicing rules,
'ring' the backend's reduce-scatter against NumPy.

For each config every rank writes OUT_DIR/<config>_<kind>_rank<r>.npz with kind in {dp, zero}: the weights after
training, the losses ('loss:<step>'), the optimizer-state bytes ('state_bytes') and, for zero, the sliced-parameter
count; rank 0 also writes <config>_ref.npz (one process, global batch). Rank r writes the
checkpoints ckpt_<kind>_rank<r>.ckpt of the first config's optimizer (weights and state; zero's are
gathered to whole tensors)."""
import os
import sys

import numpy as np

import mindspore as ms
from mindspore import Tensor, nn
from mindspore import dataset as ds
from mindspore.communication import get_group_size, get_rank, init
from kiln.nn.optim import _parallel

out_dir, configs = sys.argv[1], sys.argv[2].split(",")
init()
rank, size = get_rank(), get_group_size()
GLOBAL_BATCH, STEPS = 8, 3
CLIP_NORM = 0.05  # below the models' gradient norms: clipping scales every step
rng = np.random.RandomState(0)
DATA = {"mlp": (rng.randn(GLOBAL_BATCH * STEPS, 16).astype(np.float32),
                rng.randn(GLOBAL_BATCH * STEPS, 8).astype(np.float32)),
        "block": (rng.randn(GLOBAL_BATCH * STEPS, 3, 8).astype(np.float32),
                  rng.randn(GLOBAL_BATCH * STEPS, 3, 8).astype(np.float32))}


def make_net(model, seed):
    ms.set_seed(seed)  # rank-dependent seeds: the reducer's broadcast must make the weights equal
    if model == "mlp":
        return nn.SequentialCell([nn.Dense(16, 32), nn.Tanh(), nn.Dense(32, 8)])
    return nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)


def make_opt(name, params):
    if name == "sgd":
        return nn.SGD(params, learning_rate=0.1, momentum=0.9, weight_decay=0.01)
    if name == "momentum":
        return nn.Momentum(params, learning_rate=0.1, momentum=0.9, weight_decay=0.01)
    if name == "groups":  # parameter groups, a dynamic learning rate, gradient centralization
        weights = [p for p in params if p.ndim > 1]
        others = [p for p in params if p.ndim == 1]
        return nn.Momentum([{"params": weights, "weight_decay": 0.01, "grad_centralization": True},
                            {"params": others, "lr": 0.05}], learning_rate=[0.1, 0.08, 0.06], momentum=0.9)
    if name == "adagrad":
        return nn.Adagrad(params, learning_rate=0.1, weight_decay=0.01)
    if name == "rmsprop":
        return nn.RMSProp(params, learning_rate=0.01, momentum=0.5, centered=True)
    # eps 1e-4: the key bias of attention has a zero gradient (softmax ignores it), so its gradient is rounding
    # noise (~1e-9) that a tiny eps would turn into +-lr steps, differing between any two summation orders
    if name == "adam":
        return nn.Adam(params, learning_rate=0.01, weight_decay=0.01, eps=1e-4)
    return nn.AdamWeightDecay(params, learning_rate=0.01, weight_decay=0.01, eps=1e-4)


def run(model, opt_name, mode, kind, shard_size=-1):
    """Trains STEPS steps; returns (weights, losses, optimizer, train cell or None)."""
    ms.reset_auto_parallel_context()
    if kind != "ref":
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True,
                                     enable_parallel_optimizer=kind == "zero",
                                     parallel_optimizer_config={"parallel_optimizer_threshold": 0,
                                                                "optimizer_weight_shard_size": shard_size})
    ms.set_context(mode=ms.GRAPH_MODE if mode in ("model_graph", "ls_graph") else ms.PYNATIVE_MODE)
    if mode == "noinit":  # MindSpore's tutorial: net and optimizer made under nn.no_init_parameters
        from mindspore.nn.utils import no_init_parameters
        with no_init_parameters():
            net = make_net(model, 1 + rank if kind != "ref" else 1)
            opt = make_opt(opt_name, net.trainable_params())
    else:
        net = make_net(model, 1 + rank if kind != "ref" else 1)
        opt = make_opt(opt_name, net.trainable_params())
    x, y = DATA[model]
    per = GLOBAL_BATCH // size if kind != "ref" else GLOBAL_BATCH
    losses, train = [], None
    if mode.startswith("ls"):  # loss scale 1024; step 1 overflows (an inf label on rank 0's part): skipped
        y = y.copy()
        y[GLOBAL_BATCH] = np.inf
        train = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, nn.MSELoss()), opt,
                                                 scale_sense=Tensor(np.float32(1024.0)))
        for s in range(STEPS):
            rows = (slice(s * GLOBAL_BATCH, (s + 1) * GLOBAL_BATCH) if kind == "ref"
                    else np.arange(s * GLOBAL_BATCH + rank, (s + 1) * GLOBAL_BATCH, size))
            loss, cond, _ = train(Tensor(x[rows]), Tensor(y[rows]))
            assert bool(cond.asnumpy()) == (s == 1), (s, cond)
            losses.append(float(loss.asnumpy()))
    elif mode.startswith("model"):
        train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
        model_ = ms.Model(train)
        # data-parallel: the source shards itself (rows rank, rank + size, ...), so per step the processes read
        # the same GLOBAL_BATCH rows as the reference
        data = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(per)

        class Record(ms.train.Callback):
            def on_train_step_end(self, run_context):
                losses.append(float(run_context.original_args().net_outputs.asnumpy()))
        model_.train(1, data, callbacks=[Record()], dataset_sink_mode=False)
    else:
        loss_net = nn.WithLossCell(net, nn.MSELoss())
        grad_fn = ms.value_and_grad(loss_net, None, opt.parameters)
        reducer = nn.DistributedGradReducer(opt.parameters, mean=True) if kind != "ref" else None

        def step(a, b):
            loss, grads = grad_fn(a, b)
            if reducer is not None:
                grads = reducer(grads)
            if mode.startswith("clip"):  # by the whole gradients' norm, also where the reducer gives slices
                grads = ms.ops.clip_by_global_norm(grads, CLIP_NORM)
            opt(grads)
            return loss
        if mode in ("jit", "noinit", "clipjit"):
            step = ms.jit(step)
        for s in range(STEPS):
            if kind == "ref":
                rows = slice(s * GLOBAL_BATCH, (s + 1) * GLOBAL_BATCH)
            else:  # the rows the sharded dataset would give: rank, rank + size, ... of this step's batch
                rows = np.arange(s * GLOBAL_BATCH + rank, (s + 1) * GLOBAL_BATCH, size)
            losses.append(float(step(Tensor(x[rows]), Tensor(y[rows])).asnumpy()))
    w = {p.name: p.asnumpy() for p in net.trainable_params()}
    return w, losses, opt, train


def expect_error(exc, words, fn):
    try:
        fn()
    except exc as e:
        for w in words:
            assert w in str(e), (w, str(e))
        print(f"ERROR OK {exc.__name__}: {e}", flush=True)
        return
    raise AssertionError(f"no {exc.__name__} for {words}")


def errors_and_rules():
    """The configuration errors, and which parameters MindSpore's rules leave replicated."""
    ms.reset_auto_parallel_context()
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, enable_parallel_optimizer=True,
                                 parallel_optimizer_config={"parallel_optimizer_threshold": 0})
    net = nn.Dense(4, 8)
    opt = nn.Adam(net.trainable_params())
    bad = (ms.ops.zeros((3, 4), ms.float32), ms.ops.zeros((8,), ms.float32))
    expect_error(ValueError, ["'weight'", "(8, 4)", "(3, 4)", f"({8 // size}, 4)"], lambda: opt(bad))
    expect_error(RuntimeError, ["Lamb"], lambda: nn.Lamb(net.trainable_params(), 0.1))
    # the reducer: sliced gradients in one reduce-scatter bucket; all_reduce_fusion_config's gradient indices (2, 4)
    # split the all-reduced ones (1, 3, 4) before 3 (the first at or after index 2) and before 4
    ms.set_auto_parallel_context(all_reduce_fusion_config=[2, 4])
    P = ms.Parameter
    mixed = [P(np.ones((8, 4), np.float32), "w1"), P(np.ones(3, np.float32), "b1"), P(np.ones((8, 4), np.float32), "w2"),
             P(np.ones(3, np.float32), "b2"), P(np.ones(3, np.float32), "b3")]
    reducer = nn.DistributedGradReducer(mixed)
    assert reducer._rs_buckets == [[0, 2]] and reducer._buckets == [[1], [3], [4]], (reducer._rs_buckets,
                                                                                      reducer._buckets)
    out = reducer(tuple(ms.Tensor(np.full(p.shape, rank + 1.0, np.float32)) for p in mixed))
    total = size * (size + 1) / 2
    assert [tuple(o.shape) for o in out] == [(8 // size, 4), (3,), (8 // size, 4), (3,), (3,)]
    assert all(np.all(o.asnumpy() == total) for o in out)
    ms.set_auto_parallel_context(optimizer_weight_shard_size=2 * size)
    expect_error(ValueError, ["optimizer_weight_shard_size", str(2 * size)], lambda: nn.Adam(net.trainable_params()))
    ms.reset_auto_parallel_context()
    # default threshold 64 KB: a 64 KB float32 parameter (16384 elements) is sliced, one element less is not; so are
    # a dim 0 that size does not divide, parallel_optimizer=False, requires_grad=False and a 0-d parameter
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, enable_parallel_optimizer=True)
    P = ms.Parameter
    params = [P(np.zeros((4 * size, 4096 // size), np.float32), "big"),
              P(np.zeros(16383, np.float32), "under_threshold"),
              P(np.zeros((4 * size + 1, 4096), np.float32), "indivisible"),
              P(np.zeros((4 * size, 4096), np.float32), "opted_out", parallel_optimizer=False),
              P(np.zeros((4 * size, 4096), np.float32), "frozen", requires_grad=False),
              P(np.float32(1.0), "scalar")]
    opt = nn.Momentum(params, 0.1, 0.9)
    assert [s is not None for s in opt._opt_shards] == [True] + [False] * 5, opt._opt_shards
    assert opt.moments[0].shape == (4, 4096 // size) and opt.moments[2].shape == (4 * size + 1, 4096)
    ms.reset_auto_parallel_context()
    print("RULES OK", flush=True)


def ring_reduce_scatter():
    """The Gloo backend's ring reduce-scatter against NumPy: dtypes, ops, a shape that is not a multiple of 8."""
    from mindspore.communication import comm_func
    for dtype in (np.float32, np.float64, np.float16, np.int32, np.int64):
        for op in ("sum", "max", "min", "prod"):
            every = [np.random.RandomState(10 + r).randint(-3, 4, size=(size * 3, 5)).astype(dtype)
                     for r in range(size)]
            got = comm_func.reduce_scatter_tensor(Tensor(every[rank]), op=op).asnumpy()
            fold = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}[op]
            want = fold(np.stack(every), axis=0)[rank * 3:(rank + 1) * 3].astype(dtype)
            np.testing.assert_array_equal(got, want, err_msg=f"{dtype.__name__} {op}")
    print("RING OK", flush=True)


first = next(c for c in configs if c not in ("errors", "ring"))
for config in configs:
    if config == "errors":
        errors_and_rules()
        continue
    if config == "ring":
        ring_reduce_scatter()
        continue
    model, opt_name, mode, *rest = config.split(":")
    shard_size = int(rest[0][1:]) if rest else -1  # mlp:adam:jit:s2 = optimizer_weight_shard_size 2
    tag = config.replace(":", "_")
    for kind in ("dp", "zero"):
        w, losses, opt, train = run(model, opt_name, mode, kind, shard_size)
        extra = {f"loss:{s}": np.float64(v) for s, v in enumerate(losses)}
        extra["state_bytes"] = np.int64(_parallel.state_bytes(opt))
        extra["sliced"] = np.int64(0 if opt._opt_shards is None else sum(s is not None for s in opt._opt_shards))
        np.savez(os.path.join(out_dir, f"{tag}_{kind}_rank{rank}.npz"), **w, **extra)
        if config == first:  # checkpoints of the optimizer (weights and state); zero's gathers: every rank saves
            path = os.path.join(out_dir, f"ckpt_{kind}_rank{rank}.ckpt")
            ms.save_checkpoint(opt, path)
            if kind == "zero":  # loading the whole values back into a sliced optimizer gives its slices
                _, _, opt2, _ = run(model, opt_name, mode, kind, shard_size)
                for p in opt2.get_parameters():
                    p.set_data(ms.ops.zeros_like(p))
                not_loaded, _ = ms.load_param_into_net(opt2, ms.load_checkpoint(path))
                assert not not_loaded, not_loaded
                mine = {p.name: p.asnumpy() for p in opt.get_parameters()}
                for p in opt2.get_parameters():
                    np.testing.assert_array_equal(p.asnumpy(), mine[p.name], err_msg=p.name)
    if rank == 0:
        ms.reset_auto_parallel_context()
        w, losses, _, _ = run(model, opt_name, mode, "ref")
        np.savez(os.path.join(out_dir, f"{tag}_ref.npz"), **w, **{f"loss:{s}": np.float64(v)
                                                                  for s, v in enumerate(losses)})
print(f"OPT PARALLEL OK {rank}", flush=True)

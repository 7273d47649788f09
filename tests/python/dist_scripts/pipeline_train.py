"""Run by tests/python/test_pipeline_parallel.py under `python -m kiln.msrun --worker_num=S pipeline_train.py OUT_DIR
CONFIGS`: pipeline parallelism (parallel_mode='semi_auto_parallel', pipeline_stages=S, one process per stage)
against one process on the whole model. CONFIGS is a comma-separated list of model:optimizer:micro:mode:loss with
model in {mlp, blocks, sample (the Network of MindSpore's sample script, 2 stages as there, CrossEntropyLoss on
random 28x28 images)}, optimizer in {sgd, momentum, adam}, micro the micro_size, mode in {cell (TrainOneStepCell
over nn.PipelineCell), vag (MindSpore's tutorial: parallel.nn.Pipeline with stage_config, ops.value_and_grad over
forward_fn, optimizer(grads)), model (Model.train over a PipelineCell; its reference is one process on the whole
batch without micro-batches)}, loss in {mean, sum}; the config 'errors' checks the error messages.

For each config every rank writes OUT_DIR/<tag>_rank<r>.npz: its own stage's weights after training ('w:<name>'), the
losses ('loss:<step>'), how often each staged Cell ran here ('ran:<cell name>') and its stage ('stage:<cell name>'), 'moved' (the largest change of its own weights) and 'others_moved' (the largest change of the other stages' Parameters in this process: they
get zero gradients); rank 0 also writes <tag>_ref.npz (one process, pipeline_stages=1: the same PipelineCell) and,
for loss 'sum', <tag>_whole.npz (one process, no micro-batches: the whole batch through WithLossCell)."""
import math
import sys
import warnings

import numpy as np

import mindspore as ms
from mindspore import Parameter, Tensor, nn, ops
from mindspore import dataset as ds
from mindspore.common.initializer import HeUniform, initializer
from mindspore.communication import get_group_size, get_rank, init
from mindspore.parallel.nn import Pipeline

out_dir, configs = sys.argv[1], sys.argv[2].split(",")
init()
rank, size = get_rank(), get_group_size()
BATCH, STEPS = 8, 3
rng = np.random.RandomState(0)
DATA = {"mlp": (rng.randn(BATCH * STEPS, 16).astype(np.float32), rng.randn(BATCH * STEPS, 8).astype(np.float32)),
        "blocks": (rng.randn(BATCH * STEPS, 3, 8).astype(np.float32),
                   rng.randn(BATCH * STEPS, 3, 8).astype(np.float32)),
        "sample": (rng.rand(BATCH * STEPS, 1, 28, 28).astype(np.float32),
                   rng.randint(0, 10, BATCH * STEPS).astype(np.int32))}


class MLP(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.Dense(16, 32)
        self.act1 = nn.Tanh()
        self.layer2 = nn.Dense(32, 32)
        self.act2 = nn.Tanh()
        self.layer3 = nn.Dense(32, 32)
        self.act3 = nn.Tanh()
        self.layer4 = nn.Dense(32, 8)

    def construct(self, x):
        x = self.act1(self.layer1(x))
        x = self.act2(self.layer2(x))
        x = self.act3(self.layer3(x))
        return self.layer4(x)


class Blocks(nn.Cell):
    """A small Transformer-ish stack: 4 encoder blocks (attention + feed-forward, layer norms) and a Dense head."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.CellList([nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
                                   for _ in range(4)])
        self.head = nn.Dense(8, 8)

    def construct(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)


class MatMulCell(nn.Cell):
    """MindSpore's sample script (docs/sample_code/distributed_pipeline_parallel): a MatMul with ops.Print."""

    def __init__(self):
        super().__init__()
        self.param = Parameter(initializer(HeUniform(math.sqrt(5)), [28 * 28, 512]), name="param")
        self.print = ops.Print()
        self.matmul = ops.MatMul()

    def construct(self, x):
        out = self.matmul(x, self.param)
        self.print("out is:", out)
        return out


class SampleNetwork(nn.Cell):
    """The sample script's Network, as written there."""

    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.layer1 = MatMulCell()
        self.relu1 = nn.ReLU()
        self.layer2 = nn.Dense(512, 512)
        self.relu2 = nn.ReLU()
        self.layer3 = nn.Dense(512, 10)

    def construct(self, x):
        x = self.flatten(x)
        x = self.layer1(x)
        x = self.relu1(x)
        x = self.layer2(x)
        x = self.relu2(x)
        logits = self.layer3(x)
        return logits


def stage_config(model, stages):
    """{cell name in WithLossCell: stage}: 4 layers (blocks), 4 // stages per stage; the head with the last."""
    per = 4 // stages
    if model == "sample":  # the sample script's stages (2; one stage: all 0)
        return {"_backbone.layer1": 0, "_backbone.relu1": 0, "_backbone.layer2": 0,
                "_backbone.relu2": stages - 1, "_backbone.layer3": stages - 1}
    if model == "mlp":
        return {f"_backbone.layer{i + 1}": i // per for i in range(4)}
    conf = {f"_backbone.blocks.{i}": i // per for i in range(4)}
    conf["_backbone.head"] = stages - 1
    return conf


def make_opt(name, params, loss_kind):
    lr = 0.1 if loss_kind == "mean" else 0.002  # a summed loss has ~100x larger gradients
    if name == "sgd":
        return nn.SGD(params, learning_rate=lr)
    if name == "momentum":
        return nn.Momentum(params, learning_rate=lr, momentum=0.9)
    return nn.Adam(params, learning_rate=0.01, eps=1e-4)  # Adam: steps of ~lr whatever the loss scale


def run(model, opt_name, micro, mode, loss_kind, stages):
    """Trains STEPS steps on `stages` stages (1: this process alone, the reference); returns ({name: weight} of
    this process's stage, losses, largest change of the other stages' Parameters)."""
    ms.reset_auto_parallel_context()
    if stages > 1:
        ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel", pipeline_stages=stages)
    ms.set_seed(1)
    net = {"mlp": MLP, "blocks": Blocks, "sample": SampleNetwork}[model]()
    opt = make_opt(opt_name, net.trainable_params(), loss_kind)
    start = {p.name: p.asnumpy().copy() for p in net.trainable_params()}
    loss_fn = nn.CrossEntropyLoss(reduction=loss_kind) if model == "sample" else nn.MSELoss(reduction=loss_kind)
    loss_net = nn.WithLossCell(net, loss_fn)
    conf = stage_config(model, max(stages, 1))
    model_losses = []
    if mode == "whole":
        step = nn.TrainOneStepCell(loss_net, opt)
    elif mode == "model":  # Model.train: the summed micro-batch gradients times 1/micro_size (MindSpore's Model)
        for name, cell in loss_net.cells_and_names():
            if name in conf:
                cell.pipeline_stage = conf[name]
        model_ = ms.Model(nn.PipelineCell(loss_net, micro), optimizer=opt)

        class Record(ms.train.Callback):
            def on_train_step_end(self, run_context):
                model_losses.append(float(run_context.original_args().net_outputs.asnumpy()))
    elif mode == "cell":
        for name, cell in loss_net.cells_and_names():
            if name in conf:
                cell.pipeline_stage = conf[name]
        step = nn.TrainOneStepCell(nn.PipelineCell(loss_net, micro), opt)
    else:  # the tutorial's functional step
        net_with_loss = Pipeline(loss_net, micro, stage_config=conf)
        net_with_loss.set_train()

        def forward_fn(inputs, target):
            return net_with_loss(inputs, target)
        grad_fn = ops.value_and_grad(forward_fn, None, opt.parameters)

        def step(inputs, target):
            loss, grads = grad_fn(inputs, target)
            opt(grads)
            return loss
    ran = {name: [0] for name in conf}  # how often each staged Cell ran in this process (forward hooks)
    for name, cell in loss_net.cells_and_names():
        if name in ran:
            cell.register_forward_hook(lambda c, i, o, n=ran[name]: n.__setitem__(0, n[0] + 1))
    x, y = DATA[model]
    losses = []
    if mode == "model":
        data = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(BATCH)
        model_.train(1, data, callbacks=[Record()], dataset_sink_mode=False)
        losses = model_losses
    for s in range(STEPS if mode != "model" else 0):
        rows = slice(s * BATCH, (s + 1) * BATCH)
        losses.append(float(step(Tensor(x[rows]), Tensor(y[rows])).asnumpy()))
    mine = set()
    for name, cell in loss_net.cells_and_names():
        st = conf.get(name, None)
        if stages == 1 or st == rank:
            mine.update(p.name for p in cell.trainable_params())
    weights = {p.name: p.asnumpy().copy() for p in net.trainable_params() if p.name in mine}
    others = [np.abs(p.asnumpy() - start[p.name]).max() for p in net.trainable_params() if p.name not in mine]
    moved = max(np.abs(weights[n] - start[n]).max() for n in weights)
    return weights, losses, max(others, default=0.0), moved, {k: v[0] for k, v in ran.items()}, conf


def save(path, weights, losses, others, moved, ran, conf):
    data = {f"w:{k}": v for k, v in weights.items()}
    data.update({f"ran:{k}": np.int64(v) for k, v in ran.items()})
    data.update({f"stage:{k}": np.int64(v) for k, v in conf.items()})
    data["moved"] = np.float64(moved)
    data.update({f"loss:{i}": np.float64(v) for i, v in enumerate(losses)})
    data["others_moved"] = np.float64(others)
    np.savez(path, **data)


def expect(exc, pattern, fn):
    import re
    try:
        fn()
    except exc as e:
        assert re.search(pattern, str(e)), (pattern, str(e))
        return
    raise AssertionError(f"no {exc.__name__} matching {pattern!r}")


def errors():
    """The clear errors (raised on every process before anything is sent)."""
    x, y = Tensor(DATA["mlp"][0][:8]), Tensor(DATA["mlp"][1][:8])
    ms.reset_auto_parallel_context()
    ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel", pipeline_stages=size, device_num=size + 1)
    net = MLP()
    pc = nn.PipelineCell(nn.WithLossCell(net, nn.MSELoss()), 2, stage_config=stage_config("mlp", size))
    expect(ValueError, rf"device_num \({size + 1}\) must be divisible by pipeline_stages \({size}\)", lambda: pc(x, y))
    ms.set_auto_parallel_context(device_num=2 * size)
    expect(ValueError, rf"device_num \({2 * size}\) must equal the number of processes \({size}\)", lambda: pc(x, y))
    ms.set_auto_parallel_context(device_num=size)
    net.layer4.pipeline_stage = size
    expect(ValueError, rf"'_backbone.layer4' has pipeline_stage {size}, but pipeline_stages is {size}",
           lambda: pc(x, y))
    for c in (net.layer1, net.layer2, net.layer3, net.layer4):
        c.pipeline_stage = 0
    expect(ValueError, r"pipeline stage\(s\) \[1.*\] of %d have no Cell" % size, lambda: pc(x, y))
    for name, cell in pc.network.cells_and_names():
        if name in stage_config("mlp", size):
            cell.pipeline_stage = stage_config("mlp", size)[name]
    # activations that go back a stage (or, with 4 stages, skip one): every process refuses before sending
    flow = r"(can only go to the next stage|can only take activations from the previous stage)"
    order = (1, 0, 0, 1) if size == 2 else (0, 2, 1, 3)
    for c, st in zip((net.layer1, net.layer2, net.layer3, net.layer4), order):
        c.pipeline_stage = st
    expect(ValueError, flow, lambda: pc(x, y))
    for name, cell in pc.network.cells_and_names():
        if name in stage_config("mlp", size):
            cell.pipeline_stage = stage_config("mlp", size)[name]
    pc4 = nn.PipelineCell(pc.network, 3)
    expect(ValueError, r"input\(8\) must be divided by micro size\(3\)", lambda: pc4(x, y))
    expect(ValueError, "sharding a Cell .* is not supported", lambda: net.layer1.shard(((1, 2),)))
    # a compiled step (ms.jit, a GRAPH_MODE Cell) over a PipelineCell runs in PyNative, with PyNative's values
    want = float(pc(x, y).asnumpy())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = float(ms.jit(lambda a, b: pc(a, b))(x, y).asnumpy())
        ms.set_context(mode=ms.GRAPH_MODE)
        train = nn.TrainOneStepCell(pc, nn.SGD(net.trainable_params(), 0.1))
        got_train = float(train(x, y).asnumpy())  # the loss before the update
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert got == want and got_train == want, (got, got_train, want)
    assert any("pipeline_stages=%d) runs in PyNative mode only" % size in str(m.message) for m in caught)
    print("ERRORS OK", rank)


for config in configs:
    if config == "errors":
        errors()
        continue
    model, opt_name, micro, mode, loss_kind = config.split(":")
    tag = config.replace(":", "_")
    save(f"{out_dir}/{tag}_rank{rank}.npz", *run(model, opt_name, int(micro), mode, loss_kind, size))
    if rank == 0:  # Model: the reference is one step on the whole batch (PipelineCell scaled by 1/micro_size)
        save(f"{out_dir}/{tag}_ref.npz", *run(model, opt_name, int(micro), "whole" if mode == "model" else mode,
                                              loss_kind, 1))
        if loss_kind == "sum":
            save(f"{out_dir}/{tag}_whole.npz", *run(model, opt_name, int(micro), "whole", loss_kind, 1))
    print("CONFIG OK", config, rank)

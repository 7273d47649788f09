"""Quick ResNet-8 training-step check used while tuning the convolution / BatchNorm kernels (issue 9): ResNet-8
(stem conv 3->16, three basic blocks 16/32/64 with stride-2 1x1 shortcuts, global mean, Dense 64->10), 3x32x32
inputs, batch 32, Momentum(0.01, 0.9), softmax cross-entropy; prints the median steps/s of REPEATS runs of 20 steps.
benchmarks/bench_models.py is the full cross-framework benchmark; this one is one model, one framework per process:

    OMP_NUM_THREADS=1 PYTHONPATH=python .venv/bin/python benchmarks/resnet8_quick.py kiln      # PyNative
    OMP_NUM_THREADS=1 PYTHONPATH=python .venv/bin/python benchmarks/resnet8_quick.py kilnjit   # kiln.jit step
    OMP_NUM_THREADS=1 /work/torchvenv/bin/python benchmarks/resnet8_quick.py torch             # PyTorch eager
"""
import os
import statistics
import sys
import time

import numpy as np
B = 32
rng = np.random.default_rng(0)
X = rng.standard_normal((B, 3, 32, 32)).astype(np.float32)
Y = rng.integers(0, 10, B).astype(np.int32)

def kiln_step(jit):
    import kiln as ms
    nn, ops = ms.nn, ms.ops
    ms.set_seed(0)
    class Block(nn.Cell):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, pad_mode="pad", padding=1, has_bias=False)
            self.b1 = nn.BatchNorm2d(cout); self.r = nn.ReLU()
            self.c2 = nn.Conv2d(cout, cout, 3, 1, pad_mode="pad", padding=1, has_bias=False)
            self.b2 = nn.BatchNorm2d(cout)
            self.sc = None
            if stride != 1 or cin != cout:
                self.sc = nn.SequentialCell([nn.Conv2d(cin, cout, 1, stride, has_bias=False), nn.BatchNorm2d(cout)])
        def construct(self, x):
            h = self.r(self.b1(self.c1(x)))
            h = self.b2(self.c2(h))
            s = x if self.sc is None else self.sc(x)
            return self.r(h + s)
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.stem = nn.SequentialCell([nn.Conv2d(3, 16, 3, pad_mode="pad", padding=1, has_bias=False), nn.BatchNorm2d(16), nn.ReLU()])
            self.l1 = Block(16, 16, 1); self.l2 = Block(16, 32, 2); self.l3 = Block(32, 64, 2)
            self.fc = nn.Dense(64, 10)
        def construct(self, x):
            h = self.l3(self.l2(self.l1(self.stem(x))))
            return self.fc(ops.mean(h, (2, 3)))
    net = Net()
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    def fwd(d, l):
        return loss_fn(net(d), l)
    gf = ms.value_and_grad(fwd, None, opt.parameters)
    def train_step(d, l):
        loss, g = gf(d, l)
        return ops.depend(loss, opt(g))
    if jit:
        train_step = ms.jit(train_step)
    net.set_train(True)
    xd, yd = ms.Tensor(X), ms.Tensor(Y)
    last = {}
    def step():
        last["l"] = train_step(xd, yd)
    return step, lambda: float(last["l"].asnumpy())

def torch_step():
    import torch
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    tnn = torch.nn
    class Block(tnn.Module):
        def __init__(s, cin, cout, stride):
            super().__init__()
            s.c1 = tnn.Conv2d(cin, cout, 3, stride, 1, bias=False); s.b1 = tnn.BatchNorm2d(cout)
            s.c2 = tnn.Conv2d(cout, cout, 3, 1, 1, bias=False); s.b2 = tnn.BatchNorm2d(cout)
            s.sc = None
            if stride != 1 or cin != cout:
                s.sc = tnn.Sequential(tnn.Conv2d(cin, cout, 1, stride, bias=False), tnn.BatchNorm2d(cout))
        def forward(s, x):
            h = torch.relu(s.b1(s.c1(x))); h = s.b2(s.c2(h))
            return torch.relu(h + (x if s.sc is None else s.sc(x)))
    net = tnn.Sequential(tnn.Conv2d(3, 16, 3, 1, 1, bias=False), tnn.BatchNorm2d(16), tnn.ReLU(),
                         Block(16, 16, 1), Block(16, 32, 2), Block(32, 64, 2))
    fc = tnn.Linear(64, 10)
    params = list(net.parameters()) + list(fc.parameters())
    opt = torch.optim.SGD(params, lr=0.01, momentum=0.9)
    xt, yt = torch.from_numpy(X), torch.from_numpy(Y.astype(np.int64))
    lf = tnn.CrossEntropyLoss()
    last = {}
    def step():
        opt.zero_grad(set_to_none=True)
        loss = lf(fc(net(xt).mean((2, 3))), yt); loss.backward(); opt.step(); last["l"] = loss
    return step, lambda: float(last["l"].detach())

which = sys.argv[1]
step, sync = torch_step() if which == "torch" else kiln_step(which == "kilnjit")
for _ in range(3): step()
sync()
n = 20
runs = []
for _ in range(int(os.environ.get("REPEATS", "5"))):
    t0 = time.perf_counter()
    for _ in range(n): step()
    sync()
    runs.append(n / (time.perf_counter() - t0))
print(f"{which} threads={os.environ.get('OMP_NUM_THREADS')} steps/s median={statistics.median(runs):.1f} runs={[round(r,1) for r in runs]}")

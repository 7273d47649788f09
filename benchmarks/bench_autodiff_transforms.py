"""Cost of the issue-10 function transforms relative to the plain computation (kiln/_autodiff/functional_ad.py,
vmap.py, custom_grad.py).

Measured, each as the median of --repeats runs (seconds per call, after warm-up):
  grad         ms.grad of f(x) = sum(tanh(x @ W)), x (B, 64), W (64, 64)
  vjp_fn       one vjp_fn call after one ms.vjp (reverse pass only: the tape is kept)
  jvp          ms.jvp (a transposed reverse pass: about two reverse passes)
  jacrev       ms.jacrev of g(x) = tanh(x @ W) for one row x (64,): 64 reverse passes
  jacfwd       ms.jacfwd of the same: 64 transposed passes
  vmap         ms.vmap(g) over B rows (one call of g per row, then a stack) vs a Python loop over rows and
  batched      g applied to the whole (B, 64) batch at once (what per-op batching rules would reach)
  hook         ms.grad with a HookBackward / a Cell backward hook on the path vs without

    .venv/bin/python benchmarks/bench_autodiff_transforms.py [--batch 32] [--repeats 5]
Runs against this python's kiln: the installed Kiln (.venv/bin/python, tools/setup_env.sh; benchmarks/_env.py).
"""
import argparse
import statistics
import time

import numpy as np

from _env import require_kiln

require_kiln()  # one clear line (not a traceback) when kiln is missing or a source tree without kiln._core
import kiln as ms  # noqa: E402 (after require_kiln())
from kiln import nn, ops, Tensor  # noqa: E402 (after require_kiln())


def median_time(fn, repeats, calls=3):
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    W = Tensor(rng.normal(size=(64, 64)).astype(np.float32) * 0.1)
    X = Tensor(rng.normal(size=(a.batch, 64)).astype(np.float32))
    x1 = Tensor(rng.normal(size=(64,)).astype(np.float32))

    def f(x):
        return ops.tanh(ops.matmul(x, W)).sum()

    def g(x):
        return ops.tanh(ops.matmul(x.reshape((1, 64)), W)).reshape((64,))
    rows = [Tensor(X.asnumpy()[i]) for i in range(a.batch)]
    res = {}
    res["grad"] = median_time(lambda: ms.grad(f)(X).asnumpy(), a.repeats)
    _, vf = ms.vjp(lambda x: ops.tanh(ops.matmul(x, W)), X)
    ones = Tensor(np.ones((a.batch, 64), np.float32))
    res["vjp_fn"] = median_time(lambda: vf(ones)[0].asnumpy(), a.repeats)
    res["jvp"] = median_time(lambda: ms.jvp(lambda x: ops.tanh(ops.matmul(x, W)), X, X)[1].asnumpy(), a.repeats)
    res["jacrev"] = median_time(lambda: ms.jacrev(g)(x1).asnumpy(), a.repeats, calls=1)
    res["jacfwd"] = median_time(lambda: ms.jacfwd(g)(x1).asnumpy(), a.repeats, calls=1)
    res["vmap"] = median_time(lambda: ms.vmap(g)(X).asnumpy(), a.repeats)
    res["python_loop"] = median_time(lambda: ops.stack([g(r) for r in rows]).asnumpy(), a.repeats)
    res["batched"] = median_time(lambda: ops.tanh(ops.matmul(X, W)).asnumpy(), a.repeats)
    hk = ops.HookBackward(lambda grad: None)
    res["grad_hookbackward"] = median_time(lambda: ms.grad(lambda x: hk(ops.tanh(ops.matmul(x, W))).sum())(X)
                                           .asnumpy(), a.repeats)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.act = nn.Tanh()

        def construct(self, x):
            return self.act(ops.matmul(x, W)).sum()
    net = Net()
    res["grad_cell"] = median_time(lambda: ms.grad(net)(X).asnumpy(), a.repeats)
    net.act.register_backward_hook(lambda c, gi, go: None)
    res["grad_cell_backward_hook"] = median_time(lambda: ms.grad(net)(X).asnumpy(), a.repeats)
    for k, v in res.items():
        print(f"{k:24s} {v * 1e3:9.3f} ms")


if __name__ == "__main__":
    main()

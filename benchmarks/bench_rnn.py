"""Training-step speed of the recurrent layers (docs/layers.md): nn.GRU / nn.LSTM + Dense head, Adam, MSE.

The default case is the one benchmarks/bench_models.py uses: nn.GRU(input 64, hidden 128), seq 32, batch 32
(batch_first), a Dense(128, 1) head on the last hidden state, Adam(lr 1e-3). Reported: steps/s in PyNative (op by
op, eager tape) and under @jit (one compiled graph for forward + backward + Adam), the first jit call (trace +
compile + one step) separately, the process CPU time per step (all threads; less sensitive than steps/s to other
load on the machine), and the loss after the timed steps of each mode (they must agree: same seed, same
data, same numbers).

    .venv/bin/python benchmarks/bench_rnn.py [--cell gru|lstm] [--steps 20] [--layers 1]
        [--bidirectional] [--device CPU|GPU]
Runs against this python's kiln: the installed Kiln (.venv/bin/python, tools/setup_env.sh; benchmarks/_env.py).
"""
import argparse
import json
import time

import numpy as np

from _env import require_kiln

require_kiln()  # one clear line (not a traceback) when kiln is missing or a source tree without kiln._core
import kiln as ms  # noqa: E402 (after require_kiln())
from kiln import nn, ops  # noqa: E402 (after require_kiln())


def build(cell, layers, bidirectional, seed=0):
    ms.set_seed(seed)
    cls = nn.GRU if cell == "gru" else nn.LSTM
    rnn = cls(64, 128, num_layers=layers, batch_first=True, bidirectional=bidirectional)
    head = nn.Dense(128 * (2 if bidirectional else 1), 1)
    opt = nn.Adam(rnn.trainable_params() + head.trainable_params(), learning_rate=1e-3)

    def forward(x, y):
        out, _ = rnn(x)
        return ops.mean((head(out[:, -1]) - y) ** 2)

    grad_fn = ms.value_and_grad(forward, None, opt.parameters)

    def step(x, y):
        loss, grads = grad_fn(x, y)
        return ops.depend(loss, opt(grads))

    return step


def measure(step, x, y, steps):
    t0 = time.perf_counter()
    loss = step(x, y)  # first call: in jit mode this traces and compiles
    float(loss.asnumpy())
    first = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        loss = step(x, y)
    final = float(loss.asnumpy())
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return steps / wall, 1000 * cpu / steps, first, final


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cell", choices=["gru", "lstm"], default="gru")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--bidirectional", action="store_true")
    ap.add_argument("--device", default="CPU")
    a = ap.parse_args()
    ms.set_context(device_target=a.device)
    rng = np.random.default_rng(0)
    x = ms.Tensor(rng.standard_normal((32, 32, 64)).astype(np.float32))
    y = ms.Tensor(rng.standard_normal((32, 1)).astype(np.float32))
    res = {"case": f"{a.cell.upper()}(64, 128, layers={a.layers}, bidirectional={a.bidirectional}), seq 32, "
                   f"batch 32, Adam", "device": ms.get_context("device_target"), "steps": a.steps}
    sps, cpu, first, loss = measure(build(a.cell, a.layers, a.bidirectional), x, y, a.steps)
    res["pynative_steps_per_s"], res["pynative_cpu_ms_per_step"] = round(sps, 2), round(cpu, 1)
    res["pynative_loss"] = loss
    sps, cpu, first, loss = measure(ms.jit(build(a.cell, a.layers, a.bidirectional)), x, y, a.steps)
    res["jit_steps_per_s"], res["jit_cpu_ms_per_step"] = round(sps, 2), round(cpu, 1)
    res["jit_first_call_s"], res["jit_loss"] = round(first, 2), loss
    res["losses_agree"] = bool(np.isclose(res["pynative_loss"], loss, rtol=1e-4))
    print(json.dumps(res))


if __name__ == "__main__":
    main()

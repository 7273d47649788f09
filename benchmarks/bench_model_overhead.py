"""Per-step cost of Model.train against a hand-written loop of TrainOneStepCell calls on the same data (the seed
MLP: 10 → 16 → 1, batch 32), in PyNative and GRAPH_MODE, and of sink mode (kiln.train.data_sink).

    .venv/bin/python benchmarks/bench_model_overhead.py [--steps 2000]

Prints microseconds per step (median of 3 runs). Model.train adds the callback dispatch and the dataset iteration
to the step itself. Runs against this python's kiln: the installed Kiln (.venv/bin/python, tools/setup_env.sh;
benchmarks/_env.py)."""
import argparse
import time

import numpy as np

from _env import require_kiln

require_kiln()  # one clear line (not a traceback) when kiln is missing or a source tree without kiln._core
import kiln as ms  # noqa: E402 (after require_kiln())
from kiln import nn, Tensor  # noqa: E402 (after require_kiln())


class _Data:
    def __init__(self, batches):
        self.batches = batches

    def get_dataset_size(self):
        return len(self.batches)

    def create_tuple_iterator(self, num_epochs=-1, output_numpy=False):
        return iter(self.batches)


def _net():
    ms.set_seed(0)
    return nn.SequentialCell([nn.Dense(10, 16), nn.ReLU(), nn.Dense(16, 1)])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=2000)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    batches = [[Tensor(rng.standard_normal((32, 10)).astype(np.float32)),
                Tensor(rng.standard_normal((32, 1)).astype(np.float32))] for _ in range(100)]
    epochs = max(args.steps // len(batches), 1)
    n = epochs * len(batches)
    for mode, label in ((ms.PYNATIVE_MODE, "pynative"), (ms.GRAPH_MODE, "graph")):
        ms.set_context(mode=mode)
        res = {}
        for kind in ("loop", "model", "model+LossMonitor(100)", "model sink"):
            times = []
            for _ in range(3):
                net = _net()
                opt = nn.Adam(net.trainable_params(), 0.01)
                if kind == "loop":
                    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
                    step.set_train()
                    step(*batches[0])
                    t = time.perf_counter()
                    for _ in range(epochs):
                        for b in batches:
                            loss = step(*b)
                    loss.asnumpy()
                else:
                    model = ms.Model(net, nn.MSELoss(), opt)
                    model.train(1, _Data(batches[:1]))  # compile
                    cbs = [ms.LossMonitor(100)] if "LossMonitor" in kind else None
                    t = time.perf_counter()
                    model.train(epochs, _Data(batches), callbacks=cbs, dataset_sink_mode="sink" in kind)
                times.append(time.perf_counter() - t)
            res[kind] = sorted(times)[1] / n * 1e6
        print(label, "  ".join(f"{k}: {v:.1f} us/step" for k, v in res.items()), flush=True)
    ms.set_context(mode=ms.PYNATIVE_MODE)


if __name__ == "__main__":
    main()

"""Long op chains (issue 7, item 14): a tape or graph of 200k ops is built, differentiated and freed without
recursion proportional to its length (before: ~75k ops under `grad` overflowed the C stack when the tape was freed).

Each case runs in a fresh interpreter (a stack overflow would kill the test process) and, where said, in a thread
with a small stack: then even a chain much shorter than the default stack allows would crash if anything recursed
per op."""
import subprocess
import sys
import textwrap

from helpers import subprocess_env


def _run(*parts):
    code = "".join(textwrap.dedent(p) for p in parts)
    env = subprocess_env()
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=600)
    assert r.returncode == 0, f"exit status {r.returncode}\n{r.stderr[-3000:]}"
    return eval(r.stdout.strip().splitlines()[-1])


_PRELUDE = """
import threading
import numpy as np
import kiln as ms
from kiln import Tensor, ops

def chain(x, n):
    for _ in range(n):
        x = x * 1.0 + 1.0
    return x

def in_small_stack(fn, stack=2 << 20):
    # Runs fn() in a thread whose C stack is `stack` bytes; returns its result.
    out = []
    old = threading.stack_size(stack)
    try:
        t = threading.Thread(target=lambda: out.append(fn()))
        t.start()
        t.join()
    finally:
        threading.stack_size(old)
    assert out, "the thread failed"
    return out[0]
"""


def test_pynative_200k_op_chain_under_grad():
    # 100k multiplications and 100k additions: f(x) = sum(x + 100000), df/dx = 1.
    value, grad = _run(_PRELUDE, """
    N = 100_000
    x = Tensor(np.array([0.5, -2.0], np.float32))
    loss, g = ms.value_and_grad(lambda x: ops.sum(chain(x, N)))(x)
    print((float(loss.asnumpy()), g.asnumpy().tolist()))
    """)
    assert value == (0.5 + 100_000) + (-2.0 + 100_000)
    assert grad == [1.0, 1.0]


def test_pynative_chain_in_small_stack_thread():
    # 40k ops with a 2 MiB stack: ~75k ops overflowed 8 MiB before, so this needed ~4 times the stack it has.
    grad = _run(_PRELUDE, """
    x = Tensor(np.array([1.0, 2.0, 3.0], np.float64))
    print(in_small_stack(lambda: ms.grad(lambda x: ops.sum(chain(x, 20_000) * x))(x).asnumpy().tolist()))
    """)
    # f = sum((x + 20000)·x): df/dx = 2x + 20000
    assert grad == [20002.0, 20004.0, 20006.0]


def test_graph_mode_long_traced_chain_in_small_stack_thread():
    # The traced graph (forward and backward: ~80k nodes before optimization), its passes, verifier, printer,
    # executor and the symbolic tape are all walked without recursion.
    out = _run(_PRELUDE, """
    N = 20_000
    f = ms.jit(ms.value_and_grad(lambda x: ops.sum(chain(x, N) * x)))
    x = Tensor(np.array([1.0, -1.0], np.float64))
    def go():
        loss, g = f(x)
        cg = f.graphs[0]
        text = cg.graph_before.to_text()
        return (float(loss.asnumpy()), g.asnumpy().tolist(), cg.graph_before.num_nodes, len(text) > 0)
    print(in_small_stack(go))
    """)
    loss, grad, nodes, printed = out
    assert loss == (1.0 + 20_000) * 1.0 + (-1.0 + 20_000) * -1.0
    assert grad == [2.0 + 20_000, -2.0 + 20_000]
    assert nodes >= 4 * 20_000 and printed

"""Run by tests/python/test_operator_parallel.py::test_misuse_across_processes_is_a_clear_error under
`python -m kiln.msrun --worker_num=N op_parallel_misuse.py`: operator-parallel calls whose processes disagree, and
calls in the wrong order. Each must raise the same ValueError in every process before any collective of mismatched
sizes (which would make Gloo abort the process or pair unrelated data), and the job must go on working afterwards:
  * AutoParallel called with different row counts per process (rank 0 one row fewer);
  * merge_parameters and save_checkpoint over different Parameters per process;
  * a sharded primitive called after reset_auto_parallel_context() on a Parameter that is stored sliced;
  * set_auto_parallel_context(device_num=...) other than the number of processes;
  * optimizer parallel (enable_parallel_optimizer, AutoParallel.hsdp) on a Parameter cut by a strategy;
  * a strategy under pipeline stages: ignored (the op runs whole) with one RuntimeWarning per process.
Prints "MISUSE OK <rank>" at the end."""
import os
import sys
import warnings

import numpy as np

import mindspore as ms
from mindspore import Parameter, Tensor, nn, ops
from mindspore.communication import get_group_size, get_rank, init
from mindspore.parallel.auto_parallel import AutoParallel

from kiln.parallel import merge_parameters

out_dir = sys.argv[1]
init()
rank, size = get_rank(), get_group_size()
W1 = np.arange(32, dtype=np.float32).reshape(4, 8) / 10
W2 = np.arange(8 * size * 2, dtype=np.float32).reshape(8, 2 * size) / 100


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w1 = Parameter(Tensor(W1), name="w1")
        self.w2 = Parameter(Tensor(W2), name="w2")
        self.mm1 = ops.MatMul().shard(((1, size), (size, 1)))   # w1 rows cut
        self.mm2 = ops.MatMul().shard(((1, 1), (1, size)))      # w2 columns cut

    def construct(self, x):
        return self.mm2(self.mm1(x, self.w1), self.w2)


def raises(fn, *words):
    try:
        fn()
    except ValueError as e:
        for w in words:
            assert w in str(e), (w, str(e))
        return
    raise AssertionError(f"no ValueError for {words}")


net = Net()
step = AutoParallel(net)
rows = 2 if rank else 1
x = Tensor(np.ones((rows, 4), np.float32))
raises(lambda: step(x), "For 'AutoParallel'", "rank 0: AutoParallel (arg 0: [1, 4] Float32)",
       "rank 1: AutoParallel (arg 0: [2, 4] Float32)")
y = step(Tensor(np.ones((2, 4), np.float32)))  # the job goes on: equal rows, one process's result
np.testing.assert_allclose(y.asnumpy(), np.ones((2, 4), np.float32) @ W1 @ W2, rtol=1e-6)
assert tuple(net.w1.shape) == (4 // size, 8) and tuple(net.w2.shape) == (8, 2), (net.w1.shape, net.w2.shape)

mine = [net.w1] if rank == 0 else [net.w2]
raises(lambda: merge_parameters(mine), "For 'merge_parameters'", "rank 0: merge_parameters [w1 [4, 8] cut", "rank 1: merge_parameters [w2 [8, ")


class Holder(nn.Cell):  # holds net's w2 only
    def __init__(self):
        super().__init__()
        self.w2 = net.w2


raises(lambda: ms.save_checkpoint(net if rank == 0 else Holder(), os.path.join(out_dir, f"m{rank}.ckpt")),
       "For 'save_checkpoint'", "rank 0: save_checkpoint [w1 [4, 8]", "rank 1: save_checkpoint [w2 [8, ")
w1, w2 = merge_parameters([net.w1, net.w2])
np.testing.assert_array_equal(w1.asnumpy(), W1)
np.testing.assert_array_equal(w2.asnumpy(), W2)

ms.reset_auto_parallel_context()
ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True)
np.testing.assert_allclose(net(Tensor(np.ones((2, 4), np.float32))).asnumpy(), np.ones((2, 4)) @ W1 @ W2, rtol=1e-6)
ms.set_auto_parallel_context(device_num=2 * size)  # not the number of processes
raises(lambda: net(Tensor(np.ones((2, 4), np.float32))), "For 'MatMul'", f"device_num ({2 * size}",
       f"must equal the number of processes ({size})")
ms.reset_auto_parallel_context()  # stand-alone: the sliced Parameters can no longer be used as they are
raises(lambda: net(Tensor(np.ones((2, 4), np.float32))), "For 'MatMul'", "'w1' is stored sliced",
       "whole shape [4, 8]", f"slice [{4 // size}, 8]", "'stand_alone'")


def adam_step(model, opt):
    grad_fn = ms.value_and_grad(lambda a: model(a).sum(), None, opt.parameters)

    def train_step(a):
        loss, grads = grad_fn(a)
        opt(grads)
        return loss
    return train_step


# optimizer parallel and operator parallel on one Parameter: refused by name (before: Adam's compiled update failed
# on 'm' vs 'var' shapes, or an Assign of an empty slice on one rank and a Gloo error on the other)
ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel", enable_parallel_optimizer=True,
                             parallel_optimizer_config={"parallel_optimizer_threshold": 0})
net = Net()
step = AutoParallel(adam_step(net, nn.Adam(net.trainable_params(), 0.1)))
step.dataset_strategy("full_batch")
raises(lambda: step(Tensor(np.ones((2, 4), np.float32))), "For 'Adam'", "'w1' is sliced both by optimizer parallel",
       "cut (" + str(size) + ", 1) by 'MatMul'")
ms.reset_auto_parallel_context()
net = Net()
step = AutoParallel(adam_step(net, nn.Adam(net.trainable_params(), 0.1)))
step.hsdp(threshold=0)
raises(lambda: step(Tensor(np.ones((1, 4), np.float32))), "For 'Adam', AutoParallel.hsdp()",
       "'w1', which operator parallel already stores sliced (whole shape [4, 8]" if size == 2 else
       "'w2', which operator parallel already stores sliced (whole shape [8, 8]")  # w1's slice [1, 8]: kept whole

ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True, pipeline_stages=2)
fresh = Parameter(Tensor(W1), name="fresh")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = ops.MatMul().shard(((1, size), (size, 1)))(Tensor(np.ones((2, 4), np.float32)), fresh)
    ops.MatMul().shard(((1, size), (size, 1)))(Tensor(np.ones((2, 4), np.float32)), fresh)
np.testing.assert_allclose(out.asnumpy(), np.ones((2, 4)) @ W1, rtol=1e-6)  # whole, in every process
assert tuple(fresh.shape) == (4, 8), fresh.shape
said = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
assert len(said) == 1 and "is ignored with pipeline_stages=2" in said[0], said  # once per process
ms.reset_auto_parallel_context()
print("MISUSE OK", rank)

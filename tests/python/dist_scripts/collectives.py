"""Run by tests/python/test_distributed.py under `python -m kiln.msrun --worker_num=2`: every collective op and its
gradient against NumPy, eagerly and compiled, on 2 processes; groups; send/recv; argument errors. Prints
'COLLECTIVES OK <rank>' at the end (any failed check raises, which fails the job)."""
import os
import tempfile
import threading
import time

import numpy as np

import mindspore as ms
from mindspore import Tensor, ops
from mindspore.communication import (GlobalComm, comm_func, create_group, destroy_group, get_group_rank_from_world_rank,
                                     get_group_size, get_local_rank, get_local_rank_size, get_process_group_ranks,
                                     get_rank, get_world_rank_from_group_rank, init)

init()
rank, size = get_rank(), get_group_size()
assert size == 2 and get_local_rank() == rank and get_local_rank_size() == 2, (rank, size)
assert GlobalComm.INITED and GlobalComm.WORLD_COMM_GROUP == "mccl_world_group"
assert get_rank("hccl_world_group") == rank and get_group_size("nccl_world_group") == 2
other = 1 - rank


def xs(r, shape=(2, 3), dtype=np.float32):
    return (np.arange(np.prod(shape)).reshape(shape) + 10 * r + 1).astype(dtype)


def close(got, want, what):
    got = got.asnumpy() if hasattr(got, "asnumpy") else np.asarray(got)
    assert got.shape == np.shape(want) and np.allclose(got, want, rtol=1e-6, atol=1e-6), (what, got, want)


every = [xs(r) for r in range(2)]
x = Tensor(every[rank])
for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
    ms.set_context(mode=mode)
    # primitives, eager or compiled (jit)
    def prims(t):
        return (ops.AllReduce()(t), ops.AllReduce(ops.ReduceOp.MAX)(t), ops.AllReduce("min")(t),
                ops.AllReduce(ops.ReduceOp.PROD)(t), ops.AllGather()(t), ops.ReduceScatter()(t),
                ops.Broadcast(1)((t,))[0])
    fn = ms.jit(prims) if mode == ms.GRAPH_MODE else prims
    s, mx, mn, pr, ag, rs, bc = fn(x)
    close(s, every[0] + every[1], "sum")
    close(mx, np.maximum(every[0], every[1]), "max")
    close(mn, np.minimum(every[0], every[1]), "min")
    close(pr, every[0] * every[1], "prod")
    close(ag, np.concatenate(every), "all_gather")
    close(rs, (every[0] + every[1])[rank:rank + 1], "reduce_scatter")
    close(bc, every[1], "broadcast")

    # gradients (MindSpore's bprops): d/dx sum(w_r * AllReduce(x)) = sum_r w_r on every rank
    w = [np.array([[1., 2, 3], [4, 5, 6]], np.float32), np.array([[0.5, -1, 2], [1, 0, 3]], np.float32)]
    wt = Tensor(w[rank])

    def f_sum(t):
        return (ops.AllReduce()(t) * wt).sum()
    g = ms.grad(f_sum)
    g = ms.jit(g) if mode == ms.GRAPH_MODE else g
    close(g(x), w[0] + w[1], "grad all_reduce sum")

    def f_max(t):
        return (ops.AllReduce(ops.ReduceOp.MAX)(t) * wt).sum()
    gm = ms.grad(f_max)
    gm = ms.jit(gm) if mode == ms.GRAPH_MODE else gm
    mask = (every[rank] == np.maximum(every[0], every[1])).astype(np.float32)
    close(gm(x), (w[0] + w[1]) * mask, "grad all_reduce max")

    def f_prod(t):
        return (ops.AllReduce(ops.ReduceOp.PROD)(t) * wt).sum()
    gp = ms.grad(f_prod)
    gp = ms.jit(gp) if mode == ms.GRAPH_MODE else gp
    out = every[0] * every[1]
    close(gp(x), (w[0] * out + w[1] * out) / every[rank], "grad all_reduce prod")

    c = np.arange(12, dtype=np.float32).reshape(4, 3) * (rank + 1)
    ct = Tensor(c)

    def f_gather(t):
        return (ops.AllGather()(t) * ct).sum()
    gg = ms.grad(f_gather)
    gg = ms.jit(gg) if mode == ms.GRAPH_MODE else gg
    c_all = [np.arange(12, dtype=np.float32).reshape(4, 3) * (r + 1) for r in range(2)]
    close(gg(x), (c_all[0] + c_all[1])[2 * rank:2 * rank + 2], "grad all_gather")

    c2 = Tensor(np.array([[1., 2, 3]], np.float32) * (rank + 2))

    def f_rs(t):
        return (ops.ReduceScatter()(t) * c2).sum()
    gr = ms.grad(f_rs)
    gr = ms.jit(gr) if mode == ms.GRAPH_MODE else gr
    close(gr(x), np.concatenate([np.array([[1., 2, 3]], np.float32) * (r + 2) for r in range(2)]),
          "grad reduce_scatter")

    def f_bc(t):
        return (ops.Broadcast(0)((t,))[0] * wt).sum()
    gb = ms.grad(f_bc)
    gb = ms.jit(gb) if mode == ms.GRAPH_MODE else gb
    close(gb(x), w[rank], "grad broadcast (dout, as MindSpore)")

    # comm_func (eager and compiled)
    def funcs(t):
        return (comm_func.all_reduce(t), comm_func.all_reduce(t, "max"), comm_func.all_gather_into_tensor(t),
                comm_func.reduce_scatter_tensor(t), comm_func.broadcast(t, src=1))
    ff = ms.jit(funcs) if mode == ms.GRAPH_MODE else funcs
    a, b, cc, d, e = ff(x)
    close(a, every[0] + every[1], "comm_func.all_reduce")
    close(b, np.maximum(every[0], every[1]), "comm_func.all_reduce max")
    close(cc, np.concatenate(every), "comm_func.all_gather_into_tensor")
    close(d, (every[0] + every[1])[rank:rank + 1], "comm_func.reduce_scatter_tensor")
    close(e, every[1], "comm_func.broadcast")
    out, handle = comm_func.all_reduce(x, async_op=True)
    assert handle.wait() is None
    close(out, every[0] + every[1], "async all_reduce")
    assert comm_func.barrier() is None
    ops.Barrier()()

ms.set_context(mode=ms.PYNATIVE_MODE)
# other dtypes
for dt in (np.int32, np.int64, np.float64, np.float16, np.uint8):
    v = [xs(r, (5,), dt) for r in range(2)]
    close(comm_func.all_reduce(Tensor(v[rank])), (v[0] + v[1]).astype(dt), f"all_reduce {dt}")
bools = [np.array([True, False, True]), np.array([False, False, True])]
close(comm_func.all_gather_into_tensor(Tensor(bools[rank])), np.concatenate(bools), "all_gather bool")
# empty tensors
empty = Tensor(np.zeros((0, 3), np.float32))
assert comm_func.all_reduce(empty).shape == (0, 3) and comm_func.all_gather_into_tensor(empty).shape == (0, 3)
assert comm_func.broadcast(empty, src=1).shape == (0, 3)
# Successive all-reduces at 1 MiB (the largest block the caching allocator takes from malloc) and 4 MiB (mapped
# blocks): each result is a tensor of its own, bit-identical to NumPy's float32 sum, and stays so while later calls
# run (their outputs come from the allocator's cache: a block still held is never handed out again); the input is
# not written; a result dropped at once gives its block to the next call, which is still exact.
for nbytes in (1 << 20, 4 << 20):
    n = nbytes // 4
    ins = [[np.random.default_rng(100 * k + r).standard_normal(n).astype(np.float32) for r in range(2)]
           for k in range(3)]
    sources = [Tensor(v[rank]) for v in ins]
    held = [comm_func.all_reduce(t) for t in sources]
    for k in range(3):
        comm_func.all_reduce(sources[(k + 1) % 3])  # result dropped: its block is reused by the next call
        again = comm_func.all_reduce(sources[k])
        assert np.array_equal(again.asnumpy(), ins[k][0] + ins[k][1]), ("reused block", nbytes, k)
    for k in range(3):
        assert np.array_equal(held[k].asnumpy(), ins[k][0] + ins[k][1]), ("held result", nbytes, k)
        assert np.array_equal(sources[k].asnumpy(), ins[k][rank]), ("input written", nbytes, k)
    assert len({int(t.asnumpy().ctypes.data) for t in held}) == 3
    del held, sources, again
# non-contiguous input
nc = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3) * (rank + 1)).T
close(comm_func.all_reduce(nc), (np.arange(6, dtype=np.float32).reshape(2, 3) * 3).T, "non-contiguous")

# An eager collective waits without holding the GIL: rank 1 enters each collective only after a Python thread of
# rank 0 has run while rank 0's main thread was already waiting in it (a flag file). With the GIL held in the wait,
# that thread could not run: the job would stop at the collective timeout (the launcher's test timeout fails it).
flag = os.path.join(tempfile.gettempdir(), f"kiln_collectives_{os.environ['MS_SCHED_PORT']}_{{}}.flag")
waits = {"barrier": lambda: comm_func.barrier(),
         "small all_reduce": lambda: close(comm_func.all_reduce(x), every[0] + every[1], "all_reduce, GIL released"),
         "send/recv": lambda: (comm_func.send(x, dst=1) if rank == 0 else
                               close(comm_func.recv(x, src=0), every[0], "recv, GIL released"))}
for i, (what, wait) in enumerate(waits.items()):
    path = flag.format(i)
    if rank == 0:
        def mark():
            time.sleep(0.2)  # rank 0's main thread is in the collective by now
            with open(path, "w") as f:
                f.write(what)
        t = threading.Thread(target=mark)
        t.start()
        wait()
        t.join()
    else:
        deadline = time.monotonic() + 20
        while not os.path.exists(path):
            assert time.monotonic() < deadline, f"rank 0's Python thread did not run while rank 0 waited in {what}"
            time.sleep(0.01)
        os.remove(path)
        wait()

# Two threads of one process in collectives on one group at once: the second gets a RuntimeError before it sends
# anything (the processes pair collectives by order: it would pair with an unrelated one, and Gloo would abort a
# process or mix the data); the first completes normally. Rank 1 joins rank 0's first all_reduce only after rank 0's
# second thread has seen its error.
path = flag.format("threads")
if rank == 0:
    box = {}
    first = threading.Thread(target=lambda: box.setdefault("sum", comm_func.all_reduce(x)))
    first.start()
    time.sleep(0.3)  # the first thread waits in its all_reduce for rank 1 by now
    try:
        comm_func.all_reduce(x)
    except RuntimeError as e:
        assert "a collective on group 'world' was started while another thread of this process is running one on " \
            "the same group" in str(e), str(e)
        assert "issue a process's collectives from one thread" in str(e), str(e)
    else:
        raise AssertionError("two threads' collectives on one group at once were accepted")
    with open(path, "w") as f:
        f.write("go")
    first.join()
    close(box["sum"], every[0] + every[1], "all_reduce of the first thread")
else:
    deadline = time.monotonic() + 20
    while not os.path.exists(path):
        assert time.monotonic() < deadline, "rank 0 did not get its error"
        time.sleep(0.01)
    os.remove(path)
    close(comm_func.all_reduce(x), every[0] + every[1], "all_reduce after rank 0's refused one")

# send / recv, both directions, with tags
for src in (0, 1):
    payload = np.arange(7, dtype=np.float64) * (src + 1)
    if rank == src:
        comm_func.send(Tensor(payload), dst=1 - src, tag=3)
    else:
        got = comm_func.recv(Tensor(np.zeros(7)), src=src, tag=3)
        close(got, payload, "recv")

# groups: a 2-member group with the ranks in reverse order
create_group("rev", [1, 0])
assert get_rank("rev") == 1 - rank and get_group_size("rev") == 2
assert get_process_group_ranks("rev") == [1, 0]
assert get_group_rank_from_world_rank(rank, "rev") == 1 - rank
assert get_world_rank_from_group_rank("rev", 0) == 1
close(ops.AllGather("rev")(x), np.concatenate([every[1], every[0]]), "all_gather in group")
close(comm_func.broadcast(x, src=0, group="rev"), every[0], "broadcast in group (src is a world rank)")
destroy_group("rev")
create_group("rev", [0, 1])  # re-created with new members: fresh rendezvous
close(ops.AllGather("rev")(x), np.concatenate(every), "re-created group")
destroy_group("rev")


def raises(exc, f, *words):
    try:
        f()
    except exc as e:
        for w in words:
            assert w in str(e), (w, str(e))
        return
    raise AssertionError(f"{f} did not raise {exc.__name__}")


raises(ValueError, lambda: ops.AllReduce("avg"), "AllReduce", "avg")
raises(TypeError, lambda: ops.AllReduce(1), "AllReduce")
raises(ValueError, lambda: ops.AllReduce(group="nope")(x), "nope")
raises(TypeError, lambda: comm_func.all_reduce(Tensor(np.array([True, False]))), "AllReduce", "Bool")
raises(ValueError, lambda: ops.ReduceScatter()(Tensor(np.ones((3, 2), np.float32))), "ReduceScatter", "divisible")
raises(ValueError, lambda: ops.Broadcast(5), "root_rank")
raises(ValueError, lambda: comm_func.send(x, dst=rank), "send", "another process")
raises(ValueError, lambda: create_group("hccl_world_group", [0, 1]), "reserved")
raises(ValueError, lambda: create_group("g", [0, 0]), "repeat")
raises(ValueError, lambda: create_group("g", [0, 7]), "rank_ids")
raises(ValueError, lambda: destroy_group("missing"), "missing")
raises(ValueError, lambda: destroy_group("hccl_world_group"), "world")
raises(ValueError, lambda: get_local_rank("rev2"), "world group")
raises(TypeError, lambda: get_rank(3), "group")
raises(RuntimeError, lambda: ms.grad(lambda t: ops.ReduceScatter("max")(t).sum())(x), "ReduceScatter", "sum")
print(f"COLLECTIVES OK {rank}", flush=True)

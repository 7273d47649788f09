"""Run by tests/python/test_alltoall.py under `python -m kiln.msrun --worker_num=N` (N = 2 or 4): ops.AlltoAll,
ops.AlltoAllV, comm_func.all_to_all_single_with_output_shape and comm_func.all_to_all_with_output_shape against
NumPy, with their gradients, in PyNative and Graph mode (jit), in the world and in a group with the ranks reversed;
other dtypes, empty pieces and argument errors. Prints 'ALLTOALL OK <rank>' at the end (a failed check raises, which
fails the job)."""
import numpy as np

import mindspore as ms
from mindspore import Tensor, ops
from mindspore.communication import comm_func, create_group, destroy_group, get_group_size, get_rank, init

init()
rank, n = get_rank(), get_group_size()


def check(got, want, what):
    got = got.asnumpy() if hasattr(got, "asnumpy") else np.asarray(got)
    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype, (what, got.shape, got.dtype,
                                                                                   np.shape(want))
    assert np.array_equal(got, want), (what, got, want)


def xs(r, shape, dtype=np.float32):
    return (np.arange(np.prod(shape)).reshape(shape) + 1000 * r).astype(dtype)


def a2a_ref(every, me, size, sd, cd):
    """NumPy AlltoAll: block `me` of every process's x (split along sd), concatenated along cd in rank order."""
    return np.concatenate([np.split(x, size, axis=sd)[me] for x in every], axis=cd)


SHAPE = (2 * n, 3, n)
every = [xs(r, SHAPE) for r in range(n)]
x = Tensor(every[rank])
DIMS = [(0, 1), (0, 0), (2, 0), (-3, -1), (2, 2), (-1, 1)]
for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
    ms.set_context(mode=mode)
    jit = ms.jit if mode == ms.GRAPH_MODE else (lambda f: f)
    for sd, cd in DIMS:
        prim = ops.AlltoAll(n, sd, cd)
        assert (prim.split_count, prim.split_dim, prim.concat_dim, prim.rank_size) == (n, sd, cd, n)
        check(jit(lambda t, p=prim: p(t))(x), a2a_ref(every, rank, n, sd, cd), f"AlltoAll {sd} {cd} mode {mode}")

        # gradient (MindSpore's bprop: AlltoAll with the dims swapped): L = sum over processes q of
        # sum(AlltoAll(x)_q * c_q); dL/dx_r = the pieces of every c_q that came from x_r, put back where they were
        cs = [np.random.default_rng(7 * q + sd + 3).standard_normal(a2a_ref(every, q, n, sd, cd).shape)
              .astype(np.float32) for q in range(n)]
        c = Tensor(cs[rank])

        def loss(t, p=prim, c=c):
            return (p(t) * c).sum()
        want = np.concatenate([np.split(cs[q], n, axis=cd)[rank] for q in range(n)], axis=sd)
        check(jit(ms.grad(loss))(x), want, f"grad AlltoAll {sd} {cd} mode {mode}")

    # AlltoAllV: rank r sends r + j + 1 elements to rank j (values 1000·r + 10·j + k)
    pieces = {(r, j): (1000 * r + 10 * j + np.arange(r + j + 1)).astype(np.float32) for r in range(n) for j in range(n)}
    send_v = [r_ + 1 + rank for r_ in range(n)]
    recv_v = [j + rank + 1 for j in range(n)]
    xv = Tensor(np.concatenate([pieces[(rank, j)] for j in range(n)]))
    want_v = np.concatenate([pieces[(j, rank)] for j in range(n)])
    check(jit(lambda t: ops.AlltoAllV()(t, send_v, recv_v))(xv), want_v, f"AlltoAllV mode {mode}")
    wv = [np.random.default_rng(50 + q).standard_normal(sum(j + q + 1 for j in range(n))).astype(np.float32)
          for q in range(n)]

    def loss_v(t):
        return (ops.AlltoAllV()(t, send_v, recv_v) * Tensor(wv[rank])).sum()

    def piece_of(q, j):  # the part of w_q that came from process j
        off = sum(i + q + 1 for i in range(j))
        return wv[q][off:off + j + q + 1]
    check(jit(ms.grad(loss_v))(xv), np.concatenate([piece_of(q, rank) for q in range(n)]), f"grad AlltoAllV {mode}")
    # block_size: counts in blocks of 2 elements
    check(ops.AlltoAllV(block_size=2)(Tensor(np.repeat(every[rank][:, 0, 0], 1)), [1] * n, [1] * n),
          np.concatenate([every[j][2 * rank:2 * rank + 2, 0, 0] for j in range(n)]), "AlltoAllV block_size")

    # comm_func.all_to_all_single_with_output_shape: MindSpore's doc example generalized (x = arange(n) + n·rank:
    # element j goes to rank j, so rank r gets [r, n + r, 2n + r, ...])
    single = comm_func.all_to_all_single_with_output_shape
    xe = Tensor(np.arange(n, dtype=np.float32) + n * rank)
    out, handle = single((n,), xe)
    assert handle is None
    check(out, (np.arange(n) * n + rank).astype(np.float32), "all_to_all_single equal, eager")
    out = jit(lambda t: single((n,), t)[0])(xe)
    check(out, (np.arange(n) * n + rank).astype(np.float32), f"all_to_all_single equal, mode {mode}")
    # uneven rows of 2 columns: rank r sends r + j + 1 rows to rank j
    rows = {(r, j): np.stack([pieces[(r, j)], -pieces[(r, j)]], axis=1) for r in range(n) for j in range(n)}
    x2 = Tensor(np.concatenate([rows[(rank, j)] for j in range(n)]))
    in_sizes = [rank + j + 1 for j in range(n)]
    out_sizes = [j + rank + 1 for j in range(n)]
    out_shape = (sum(out_sizes), 2)
    want2 = np.concatenate([rows[(j, rank)] for j in range(n)])
    out = jit(lambda t: single(out_shape, t, out_sizes, in_sizes)[0])(x2)
    check(out, want2, f"all_to_all_single uneven, mode {mode}")
    w2 = [np.random.default_rng(90 + q).standard_normal((sum(j + q + 1 for j in range(n)), 2)).astype(np.float32)
          for q in range(n)]

    def loss_s(t):
        return (single(out_shape, t, out_sizes, in_sizes)[0] * Tensor(w2[rank])).sum()

    def rows_of(q, j):
        off = sum(i + q + 1 for i in range(j))
        return w2[q][off:off + j + q + 1]
    check(jit(ms.grad(loss_s))(x2), np.concatenate([rows_of(q, rank) for q in range(n)]),
          f"grad all_to_all_single, mode {mode}")

    # comm_func.all_to_all_with_output_shape: rank r sends a (r+1, j+1) tensor to rank j
    def mat(r, j):
        return (100 * r + 10 * j + np.arange((r + 1) * (j + 1))).reshape(r + 1, j + 1).astype(np.float32)
    send_list = [Tensor(mat(rank, j)) for j in range(n)]
    shapes = [(j + 1, rank + 1) for j in range(n)]
    res, handle = comm_func.all_to_all_with_output_shape(shapes, send_list)
    assert handle is None and isinstance(res, tuple) and len(res) == n
    for j in range(n):
        check(res[j], mat(j, rank), f"all_to_all_with_output_shape from {j}, eager")
    res = jit(lambda *ts: comm_func.all_to_all_with_output_shape(shapes, list(ts))[0])(*send_list)
    assert len(res) == n
    for j in range(n):
        check(res[j], mat(j, rank), f"all_to_all_with_output_shape from {j}, mode {mode}")
    cw = [[np.full((j + 1, q + 1), 1.0 + q + 10 * j, np.float32) for j in range(n)] for q in range(n)]

    def loss_l(*ts):
        got, _ = comm_func.all_to_all_with_output_shape(shapes, list(ts))
        return sum((g * Tensor(w)).sum() for g, w in zip(got, cw[rank]))
    grads = jit(ms.grad(loss_l, grad_position=tuple(range(n))))(*send_list)
    for j in range(n):
        check(grads[j], cw[j][rank], f"grad all_to_all_with_output_shape to {j}, mode {mode}")

ms.set_context(mode=ms.PYNATIVE_MODE)
# MindSpore's documented AlltoAll example (8 devices there, n here): ones([1, 1, n, 1]) * rank with split_dim=-2,
# concat_dim=-1 gives [[[[0, 1, ..., n-1]]]] on every process
check(ops.AlltoAll(n, -2, -1)(Tensor(np.ones([1, 1, n, 1], np.float32) * rank)),
      np.arange(n, dtype=np.float32).reshape(1, 1, 1, n), "MindSpore's AlltoAll example")
# MindSpore's documented 2-process example of all_to_all_with_output_shape (a 0-d piece)
if n == 2:
    if rank == 0:
        send_list, shapes = [Tensor(1.), Tensor([[2, 3], [4, 5.]])], [(), (2,)]
    else:
        send_list, shapes = [Tensor([2, 2.]), Tensor([4, 5, 6, 7.])], [(2, 2), (4,)]
    res, _ = comm_func.all_to_all_with_output_shape(shapes, send_list)
    want = ([np.float32(1.0), np.array([2., 2.], np.float32)] if rank == 0 else
            [np.array([[2., 3.], [4., 5.]], np.float32), np.array([4., 5., 6., 7.], np.float32)])
    for g, w in zip(res, want):
        check(g, w, "MindSpore's all_to_all_with_output_shape example")

# other dtypes (the blocks move as bytes): exact
for dt in (np.int32, np.int64, np.float64, np.float16, np.uint8, np.bool_):
    ev = [(xs(r, (n, 2)) % 7 == 1) if dt == np.bool_ else (xs(r, (n, 2)) % 100 + 10 * r).astype(dt)
          for r in range(n)]
    check(ops.AlltoAll(n, 0, 1)(Tensor(ev[rank])), a2a_ref(ev, rank, n, 0, 1), f"AlltoAll {dt.__name__}")
# non-contiguous input
nc = Tensor(every[rank]).transpose(2, 1, 0)
check(ops.AlltoAll(n, 0, 2)(nc), a2a_ref([e.transpose(2, 1, 0) for e in every], rank, n, 0, 2), "non-contiguous")
# empty tensors and empty pieces
check(ops.AlltoAll(n, 1, 0)(Tensor(np.zeros((0, n), np.float32))), np.zeros((0, 1), np.float32), "empty AlltoAll")
# rank 0 sends nothing to anyone; the others send one element to every rank
cnt = [0 if rank == 0 else 1] * n
got = ops.AlltoAllV()(Tensor(np.full(sum(cnt), rank, np.float32)), cnt, [0] + [1] * (n - 1))
check(got, np.arange(1, n, dtype=np.float32), "AlltoAllV with empty pieces")
out, handle = comm_func.all_to_all_single_with_output_shape((0, 3), Tensor(np.zeros((0, 3), np.float32)),
                                                            async_op=True)
assert handle.wait() is None and out.shape == ()  # nothing received: a 0-d tensor (MindSpore's doc)

# a group with the ranks in reverse order: group rank g is world rank n-1-g
create_group("rev", list(range(n))[::-1])
g = n - 1 - rank
check(ops.AlltoAll(n, 0, 1, "rev")(x), a2a_ref(every[::-1], g, n, 0, 1), "AlltoAll in group")
destroy_group("rev")


def raises(exc, words, f):
    try:
        f()
    except exc as e:
        assert all(w in str(e) for w in words), (words, str(e))
        return
    raise AssertionError(f"no {exc.__name__} for {words}")


raises(ValueError, ["AlltoAll", "'split_count' must equal the size", f"({n})", "got 3"],
       lambda: ops.AlltoAll(3 if n != 3 else 2, 0, 1)(x))
raises(ValueError, ["AlltoAll", "split_dim=1 (3)", f"divisible by split_count {n}", str(SHAPE[0])],
       lambda: ops.AlltoAll(n, 1, 0)(x))
raises(ValueError, ["AlltoAll", "'concat_dim' must be in [-3, 3)", "got 3"], lambda: ops.AlltoAll(n, 0, 3)(x))
raises(ValueError, ["AlltoAll", "at least 1 dimension"], lambda: ops.AlltoAll(n, 0, 0)(Tensor(1.0)))
raises(TypeError, ["AlltoAll", "'split_count' must be an int", "float"], lambda: ops.AlltoAll(2.0, 0, 1))
raises(TypeError, ["AlltoAll", "'split_dim' must be an int", "bool"], lambda: ops.AlltoAll(n, True, 1))
raises(TypeError, ["AlltoAll", "'group' must be a str"], lambda: ops.AlltoAll(n, 0, 1, group=1))
raises(TypeError, ["AlltoAll", "must be a Tensor", "ndarray"], lambda: ops.AlltoAll(n, 0, 1)(every[rank]))
raises(ValueError, ["AlltoAll", "'split_count' must equal"], lambda: ms.jit(ops.AlltoAll(n + 1, 0, 1))(x))
raises(ValueError, ["AlltoAllV", "one entry per process", f"({n})"],
       lambda: ops.AlltoAllV()(Tensor(np.zeros(3, np.float32)), [3], [3]))
raises(ValueError, ["AlltoAllV", "1-D with sum(send_counts)"],
       lambda: ops.AlltoAllV()(Tensor(np.zeros(3, np.float32)), [1] * n, [1] * n))
raises(ValueError, ["AlltoAllV", "'send_numel_list' must hold counts >= 0"],
       lambda: ops.AlltoAllV()(Tensor(np.zeros(3, np.float32)), [-1] * n, [1] * n))
raises(ValueError, ["AlltoAllV", "'block_size' must be >= 1"], lambda: ops.AlltoAllV(block_size=0))
fn = "all_to_all_single_with_output_shape"
raises(ValueError, [fn, "input shape at dim 0 (3) must be divisible by the group size"],
       lambda: comm_func.all_to_all_single_with_output_shape((n,), Tensor(np.zeros(3, np.float32))))
raises(ValueError, [fn, "'input_split_sizes' must have one entry per process", "summing to the input shape"],
       lambda: comm_func.all_to_all_single_with_output_shape((n,), Tensor(np.zeros(n, np.float32)), None, [n]))
raises(TypeError, [fn, "must be a Tensor"], lambda: comm_func.all_to_all_single_with_output_shape((n,), [1.0]))
raises(TypeError, [fn, "'output_shape' must be a Tensor or a tuple/list"],
       lambda: comm_func.all_to_all_single_with_output_shape(n, Tensor(np.zeros(n, np.float32))))
fn = "all_to_all_with_output_shape"
raises(TypeError, [fn, "one dtype"], lambda: comm_func.all_to_all_with_output_shape(
    [(1,)] * n, [Tensor(np.zeros(1, np.float32))] + [Tensor(np.zeros(1, np.int32))] * (n - 1)))
raises(ValueError, [fn, "one entry per process", f"({n})"],
       lambda: comm_func.all_to_all_with_output_shape([(1,)], [Tensor(np.zeros(1, np.float32))]))
raises(TypeError, [fn, "must be a Tensor"], lambda: comm_func.all_to_all_with_output_shape([(1,)] * n, [1.0] * n))
raises(TypeError, [fn, "'input_tensor_list' must be a tuple/list"],
       lambda: comm_func.all_to_all_with_output_shape([(1,)] * n, Tensor(np.zeros(1, np.float32))))
# the group still works after the errors (every rank raised before communicating)
check(ops.AlltoAll(n, 0, 1)(x), a2a_ref(every, rank, n, 0, 1), "after errors")
print(f"ALLTOALL OK {rank}", flush=True)

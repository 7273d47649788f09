"""Pipeline operations of kiln.dataset: map, batch, shuffle, repeat, project, rename, zip, concat, take, skip,
filter, split (MindSpore's MapDataset, BatchDataset, ... in `mindspore.dataset.engine.datasets`)."""
import collections
import itertools
import traceback

import numpy as np

from .. import config
from ._common import (INT32_MAX, ColumnError, as_outputs, batch_dicts, check_bool, check_int, check_workers, column_list,
                      place_columns, same_type, to_array)
from .datasets import Dataset
from .workers import OrderedPool, call_user, raise_user_error

_CHUNK = 16  # rows per task sent to a worker: amortizes the hand-off cost
_BATCH_ROWS = 32  # rows stacked at once where every operation of a map runs batched (see _batched_map)


def _fn_name(fn):
    return getattr(fn, "__name__", None) or type(fn).__name__


def _pool_kwargs(fn, kwargs, extra=()):
    allowed = {"python_multiprocessing", "max_rowsize", *extra}
    unknown = sorted(set(kwargs) - allowed)
    if unknown:
        raise TypeError(f"{fn}: got an unexpected keyword argument {unknown[0]!r} (supported: {sorted(allowed)}).")
    pm = check_bool(fn, "python_multiprocessing", kwargs.get("python_multiprocessing", False))
    mr = kwargs.get("max_rowsize")
    if mr is not None:
        items = mr if isinstance(mr, (list, tuple)) else [mr]
        for v in items:
            check_int(fn, "max_rowsize", v, -1, INT32_MAX)
    return pm


def _chunks(iterable, k):
    it = iter(iterable)
    while True:
        block = list(itertools.islice(it, k))
        if not block:
            return
        yield block


class _MapCompute:
    """map's work on one row, in a worker: the user's functions and the conversion to arrays."""

    def __init__(self, in_idx, ops, what):
        self.in_idx, self.ops, self.what = in_idx, ops, what

    def __call__(self, row):
        args = [row[i] for i in self.in_idx]
        try:
            for op in self.ops:
                out = op(*args)
                args = list(out) if isinstance(out, tuple) else [out]
        except Exception as e:
            file = getattr(row, "file", None)
            if file is not None:  # a row read from a file: name it in the error (MindSpore's wording)
                e.add_note(f"{self.what} failed. The corresponding data file is: {file}.")
            raise
        return [v if type(v) is np.ndarray else to_array(v, self.what, allow_dict=True) for v in args]


class RowPool:
    """Runs fn over rows in order for one iterator: inline with one worker, else through an OrderedPool (created at
    first use, shared by the iterator's epochs, shut down with the iterator) fed in chunks of rows."""

    def __init__(self, ctx, fn, workers, processes, what):
        self.ctx, self.fn, self.workers, self.processes, self.what = ctx, fn, workers or 1, processes, what
        self.pool = None

    @property
    def parallel(self):
        return self.workers > 1

    def run(self, rows):
        if not self.parallel:
            return (self.fn(r) for r in rows)
        if self.pool is None:
            window = max(2 * self.workers, config.get_prefetch_size() * self.workers // _CHUNK)
            self.pool = OrderedPool(_Block(self.fn), self.workers, self.processes, window, self.what)
            self.ctx.closers.append(self.pool.close)
        return self._flat(self.pool.imap(_chunks(rows, _CHUNK)))

    def _flat(self, blocks):
        for block in blocks:
            for ok, value in block:
                if not ok:
                    raise_user_error(self.what, value)
                yield value


class _Block:
    """fn over a chunk of rows in a worker: [(True, result), ...], ending at the first failure with (False,
    traceback text), so the rows before a failing one still come out."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, block):
        out = []
        for r in block:
            try:
                out.append((True, self.fn(r)))
            except Exception:  # noqa: BLE001 — reported in the main process with its traceback
                out.append((False, traceback.format_exc()))
                break
        return out


class MapDataset(Dataset):
    """The result of `Dataset.map` (see there)."""

    def __init__(self, child, operations, input_columns=None, output_columns=None, num_parallel_workers=None,
                 **kwargs):
        super().__init__([child], check_workers("map", num_parallel_workers))
        from .cache import check_cache
        check_cache("map", kwargs.pop("cache", None))
        self.python_multiprocessing = _pool_kwargs("map", kwargs)
        ops = list(operations) if isinstance(operations, (list, tuple)) else [operations]
        if not ops:
            raise ValueError("map: operations is an empty list; give a callable or a list of callables.")
        for op in ops:
            if not callable(op):
                raise TypeError(f"map: operations must be callables (transforms or Python functions), but got "
                                f"{op!r} ({type(op).__name__}).")
        self.operations = ops
        cols = child.get_col_names()
        self.input_columns = column_list("map", "input_columns", input_columns) or cols[:1]
        for c in self.input_columns:
            if c not in cols:
                raise ColumnError(f"map: input column {c!r} does not exist; the dataset's columns are {cols}.")
        self.output_columns = column_list("map", "output_columns", output_columns) or list(self.input_columns)
        self._cols = place_columns(cols, self.input_columns, self.output_columns)
        if len(set(self._cols)) != len(self._cols):
            raise ValueError(f"map: output_columns {self.output_columns} clash with the other columns {cols}.")
        self._what = "map operation: [" + ", ".join(_fn_name(op) for op in ops) + "]"

    def get_col_names(self):
        return list(self._cols)

    def _compute_size(self):
        return self.children[0].get_dataset_size()

    def _make(self, ctx):
        child_epoch = self.children[0]._make(ctx)
        names = self.children[0].get_col_names()
        in_idx = [names.index(c) for c in self.input_columns]
        ops, what, n_out = self.operations, self._what, len(self.output_columns)
        keep = [(i, c) for i, c in enumerate(names) if c not in self.input_columns]
        pos = {c: i for i, c in enumerate(self._cols)}
        workers = self.num_parallel_workers
        processes, out_cols = self.python_multiprocessing, self.output_columns

        compute = _MapCompute(in_idx, ops, what)  # runs in the worker (picklable for 'spawn')

        # where each output goes in the new row, and which input columns are kept where
        out_pos = [pos[c] for c in out_cols]
        keep_pos = [(i, pos[c]) for i, c in keep]
        in_place = len(in_idx) == n_out and all(pos[c] == names.index(i_c) for c, i_c in
                                                zip(out_cols, self.input_columns)) and len(pos) == len(names)

        def finish(row, outs):
            if len(outs) != n_out:
                raise RuntimeError(f"{what}: Invalid columns, the number of columns returned in 'map' operations "
                                   f"should match the number of 'output_columns', but got the number of columns "
                                   f"returned in 'map' operations: {len(outs)}, the number of 'output_columns': "
                                   f"{n_out}.")
            if in_place:
                new = list(row)
            else:
                new = [None] * len(pos)
                for i, j in keep_pos:
                    new[j] = row[i]
            for j, v in zip(out_pos, outs):
                new[j] = v
            return tuple(new)

        runner = RowPool(ctx, compute, workers, processes, what)
        batchable = len(in_idx) == 1 and n_out == 1 and all(getattr(op, "_batchable", False) for op in ops)

        def run_rows(chunk):
            for row in chunk:
                try:
                    outs = compute(row)
                except Exception as e:  # noqa: BLE001 — a user function failed: report with its traceback
                    raise_user_error(what, traceback.format_exc(), e)
                yield finish(row, outs)

        def epoch():
            rows = child_epoch()
            if runner.parallel:
                pending = collections.deque()  # rows in flight, oldest first: results come back in this order

                def feed():
                    for r in rows:
                        pending.append(r)
                        yield r
                for outs in runner.run(feed()):
                    yield finish(pending.popleft(), outs)
            elif batchable:
                for chunk, err in _pull_chunks(rows, _BATCH_ROWS):
                    outs = _batched_map(ops, [row[in_idx[0]] for row in chunk])
                    if outs is None:
                        yield from run_rows(chunk)
                    else:
                        for row, out in zip(chunk, outs):
                            yield finish(row, [out])
                    if err is not None:
                        raise err
            else:
                yield from run_rows(rows)

        return epoch


def _pull_chunks(rows, k):
    """Yields (up to k rows, None) from the iterator `rows`; when pulling raises, the rows pulled before come with
    the exception (chunk, error), so that they still come out before it is raised."""
    it = iter(rows)
    while True:
        chunk = []
        try:
            for _ in range(k):
                chunk.append(next(it))
        except StopIteration:
            if chunk:
                yield chunk, None
            return
        except BaseException as e:  # noqa: BLE001 — re-raised by the caller after the chunk's rows
            yield chunk, e
            return
        yield chunk, None


def _batched_map(ops, values):
    """Note [batched map]: a map whose operations all run batched (`_batchable`: Rescale, Normalize, HWC2CHW,
    TypeCast, ...) stacks a chunk of equal-shaped rows and runs each operation once on the stack — the per-row
    Python cost dominates small images otherwise (MNIST: ~9k rows/s row by row). The operations are elementwise or
    layout changes, so each row's result is bit for bit what the row-by-row path gives. Returns the per-row results,
    or None (rows of different shapes, a non-array value, an operation that declines this input, or any error: the
    row-by-row path then runs the chunk and reports an error for its row)."""
    first = values[0]
    if len(values) < 2 or type(first) is not np.ndarray:
        return None
    shape, dtype = first.shape, first.dtype
    for v in values:
        if type(v) is not np.ndarray or v.shape != shape or v.dtype != dtype:
            return None
    try:
        out = np.stack(values)
        for op in ops:
            out = op._execute_batch(out)
            if out is None:
                return None
    except Exception:  # noqa: BLE001 — the row-by-row path reproduces it with the row's own message
        return None
    if type(out) is not np.ndarray or out.ndim == 0 or out.shape[0] != len(values):
        return None
    return list(out)


class BatchInfo:
    """What a callable batch_size / per_batch_map learns about the batch being built."""

    def __init__(self, batch_num, epoch_num):
        self._batch_num, self._epoch_num = batch_num, epoch_num

    def get_batch_num(self):
        """Index of this batch in the epoch (0-based)."""
        return self._batch_num

    def get_epoch_num(self):
        """Index of the epoch (0-based)."""
        return self._epoch_num


def _stack(values, col, what):
    if any(isinstance(v, dict) for v in values):
        return batch_dicts(values, col, what)
    arrays = [v if type(v) is np.ndarray else to_array(v, what) for v in values]
    first = arrays[0].dtype
    other = next((a.dtype for a in arrays if a.dtype != first and not same_type(a.dtype, first)), None)
    if other is not None:  # np.stack would promote silently; MindSpore refuses
        raise RuntimeError(f"{what}: Cannot batch tensors with different types in column {col!r}. First element had "
                           f"type {first} and this element had type {other}.")
    try:
        return np.stack(arrays)
    except ValueError:
        first = arrays[0].shape
        other = next(a.shape for a in arrays if a.shape != first)
        raise RuntimeError(f"{what}: Cannot batch tensors with different shapes in column {col!r}. First element "
                           f"had shape {first} and this element had shape {other}.") from None


class _BatchBuild:
    """The rows of one batch -> the batched row (runs in a worker when per_batch_map runs in parallel; picklable for
    the 'spawn' start method)."""

    def __init__(self, names, in_idx, keep, pos, pbm, what, out_cols):
        self.names, self.in_idx, self.keep, self.pos = names, in_idx, keep, pos
        self.pbm, self.what, self.out_cols = pbm, what, out_cols

    def __call__(self, job):
        rows, info = job
        names, in_idx, keep, pos = self.names, self.in_idx, self.keep, self.pos
        pbm, what, out_cols = self.pbm, self.what, self.out_cols
        rows, info = job
        if pbm is None:
            return tuple(_stack([r[i] for r in rows], names[i], what) for i in range(len(names)))
        outs = as_outputs(pbm(*[[r[i] for r in rows] for i in in_idx], info))
        if len(outs) != len(out_cols):
            raise RuntimeError(f"{what}: per_batch_map returned {len(outs)} columns, but output_columns has "
                               f"{len(out_cols)} ({out_cols}).")
        new = [None] * len(pos)
        for i, c in keep:
            new[pos[c]] = _stack([r[i] for r in rows], c, what)
        for c, v in zip(out_cols, outs):
            if isinstance(v, dict):  # a Python-object column: the dict is the batch's value, as it is
                new[pos[c]] = v
                continue
            if not isinstance(v, np.ndarray):  # a list of rows: one per row of the batch (MindSpore's check)
                v = list(v)
                if len(v) != len(rows):
                    raise RuntimeError(f"{what}: Invalid data, column: {c} expects: {len(rows)} rows returned "
                                       f"from 'per_batch_map', got: {len(v)}")
                if v and all(isinstance(x, dict) for x in v):  # one dict per row: a dict of lists (MindSpore's)
                    new[pos[c]] = {k: [x.get(k) for x in v] for k in v[0]}
                    continue
                v = _stack(v, c, what)
            new[pos[c]] = v
        return tuple(new)


class BatchDataset(Dataset):
    """The result of `Dataset.batch` (see there)."""

    def __init__(self, child, batch_size, drop_remainder=False, num_parallel_workers=None, **kwargs):
        super().__init__([child], check_workers("batch", num_parallel_workers))
        self.python_multiprocessing = _pool_kwargs("batch", kwargs, ("per_batch_map", "input_columns",
                                                                     "output_columns"))
        if callable(batch_size):
            self.batch_size = batch_size
        else:
            self.batch_size = check_int("batch", "batch_size", batch_size, 1, INT32_MAX)
            from .sync import scale_gates
            scale_gates(child, self.batch_size)  # sync_wait gates below count batches of this size
        self.drop_remainder = check_bool("batch", "drop_remainder", drop_remainder)
        self.per_batch_map = kwargs.get("per_batch_map")
        if self.per_batch_map is not None and not callable(self.per_batch_map):
            raise TypeError(f"batch: per_batch_map must be callable, but got {self.per_batch_map!r}.")
        cols = child.get_col_names()
        ic = column_list("batch", "input_columns", kwargs.get("input_columns"))
        oc = column_list("batch", "output_columns", kwargs.get("output_columns"))
        if (ic or oc) and self.per_batch_map is None:
            raise ValueError("batch: input_columns/output_columns are only used with per_batch_map.")
        self.input_columns = ic or list(cols)
        for c in self.input_columns:
            if c not in cols:
                raise ColumnError(f"batch: input column {c!r} does not exist; the dataset's columns are {cols}.")
        self.output_columns = oc or list(self.input_columns)
        self._cols = place_columns(cols, self.input_columns, self.output_columns)
        if len(set(self._cols)) != len(self._cols):
            raise ValueError(f"batch: output_columns {self.output_columns} clash with the other columns {cols}.")
        self._what = ("batch: per_batch_map [" + _fn_name(self.per_batch_map) + "]") if self.per_batch_map else \
            "batch"

    def get_col_names(self):
        return list(self._cols)

    def get_batch_size(self):
        return self.batch_size if isinstance(self.batch_size, int) else -1

    def _compute_size(self):
        if not isinstance(self.batch_size, int):
            return self._count_rows()
        n = self.children[0].get_dataset_size()
        return n // self.batch_size if self.drop_remainder else -(-n // self.batch_size)

    def _make(self, ctx):
        if self.per_batch_map is None and isinstance(self.batch_size, int):
            make_batches = getattr(self.children[0], "_make_batches", None)  # Note [batched read] (sources.py)
            batched = make_batches(ctx, self.batch_size, self.drop_remainder) if make_batches else None
            if batched is not None:
                return batched
        child_epoch = self.children[0]._make(ctx)
        names = self.children[0].get_col_names()
        in_idx = [names.index(c) for c in self.input_columns]
        keep = [(i, c) for i, c in enumerate(names) if c not in self.input_columns]
        pos = {c: i for i, c in enumerate(self._cols)}
        pbm, what, out_cols = self.per_batch_map, self._what, self.output_columns
        bs = self.batch_size
        workers = self.num_parallel_workers if pbm is not None else 1

        build = _BatchBuild(names, in_idx, keep, pos, pbm, what, out_cols)  # in a worker with per_batch_map

        runner = RowPool(ctx, build, workers, self.python_multiprocessing, what)
        epochs = itertools.count()

        def size_of(info):
            if isinstance(bs, int):
                return bs
            k = call_user("batch: batch_size function", bs, info)
            if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
                raise RuntimeError(f"batch: the batch_size function returned {k!r}; expected a positive int.")
            return int(k)

        def jobs(rows, epoch_num):
            batch_num = 0
            info = BatchInfo(0, epoch_num)
            want = size_of(info)
            buf = []
            for r in rows:
                buf.append(r)
                if len(buf) == want:
                    yield buf, info
                    batch_num += 1
                    buf = []
                    info = BatchInfo(batch_num, epoch_num)
                    want = size_of(info)
            if buf and not self.drop_remainder:
                yield buf, info

        def epoch():
            batch_jobs = jobs(child_epoch(), next(epochs))
            if runner.parallel:
                yield from runner.run(batch_jobs)
            else:
                for job in batch_jobs:
                    yield call_user(what, build, job) if pbm is not None else build(job)

        return epoch


class FilterDataset(Dataset):
    """The result of `Dataset.filter` (see there)."""

    def __init__(self, child, predicate, input_columns=None, num_parallel_workers=None):
        super().__init__([child], check_workers("filter", num_parallel_workers))
        if not callable(predicate):
            raise TypeError(f"filter: predicate must be callable, but got {predicate!r} ({type(predicate).__name__}).")
        self.predicate = predicate
        cols = child.get_col_names()
        self.input_columns = column_list("filter", "input_columns", input_columns) or list(cols)
        for c in self.input_columns:
            if c not in cols:
                raise ColumnError(f"filter: input column {c!r} does not exist; the dataset's columns are {cols}.")
        self._what = "filter: predicate [" + _fn_name(predicate) + "]"

    def _make(self, ctx):
        child_epoch = self.children[0]._make(ctx)
        names = self.children[0].get_col_names()
        in_idx = [names.index(c) for c in self.input_columns]
        pred, what = self.predicate, self._what

        def test(row):
            r = np.asarray(pred(*[row[i] for i in in_idx]))
            if r.size != 1:
                raise ValueError(f"the predicate returned an array of shape {r.shape}; expected one bool.")
            return bool(r.reshape(()))

        runner = RowPool(ctx, test, self.num_parallel_workers, False, what)

        def epoch():
            rows = child_epoch()
            if runner.parallel:
                pending = collections.deque()

                def feed():
                    for r in rows:
                        pending.append(r)
                        yield r
                for ok in runner.run(feed()):
                    row = pending.popleft()
                    if ok:
                        yield row
            else:
                for row in rows:
                    if call_user(what, test, row):
                        yield row

        return epoch

"""MindSpore's nn.SyncBatchNorm: batch normalization whose training statistics cover the whole batch of a group of
data-parallel processes, not only each process's share.

In training (or with use_batch_statistics=True), with M = the number of elements per channel summed over the
group's processes (each process may hold a different batch size):
    mean = AllReduce(Σ_local x) / M,   var = AllReduce(Σ_local (x − mean)²) / M   (biased; two passes, so no
    cancellation of E[x²] − E[x]²),   y = (x − mean)/√(var + eps)·gamma + beta,
and the moving statistics are updated as BatchNorm's, with the unbiased factor M/(M − 1) of the global M. The
all-reduces are ops.AllReduce (SUM), whose gradient is the AllReduce SUM of the cotangent, so the gradient of every
process's loss reaches the statistics of all processes, as in one process on the global batch. Each process thus
ends with the same outputs, gradients and moving statistics as BatchNorm on the concatenated batch (tested in
tests/python/test_sync_batch_norm.py with 2 processes). In evaluation, or when this process is in no group of more
than one process (a single process, with or without communication.init(); process_groups=0), it is
BatchNorm.
"""
import hashlib

from ... import ops as _ops
from ...ops import _kernels
from ...common import dtype as mstype
from ...ops.comm_ops import AllReduce
from .normalization import _BatchNorm

__all__ = ["SyncBatchNorm"]

_group_names = {}  # "0_1" (a process group's ranks) -> the communication group made for it (one per process)


def _rank_and_size():
    from ...communication.management import GlobalComm, get_group_size, get_rank
    if not GlobalComm.INITED:
        return 0, 1  # a process without communication is a world of one (MindSpore 2.10: a plain BatchNorm)
    return get_rank(), get_group_size()


class SyncBatchNorm(_BatchNorm):
    r"""Batch normalization over (N, C) or (N, C, H, W) with the batch statistics of a group of processes (module
    docstring for the formulas).

    Args: num_features (int ≥ 1), eps (1e-5), momentum (0.9), affine (True), gamma_init ('ones'), beta_init
    ('zeros'), moving_mean_init ('zeros'), moving_var_init ('ones'), use_batch_statistics (None: batch statistics
    while training), process_groups (None: all processes of the world; a list of lists of world ranks: each process
    synchronizes with the list it is in (each rank at most once); 0: no synchronization), dtype (float32).

    Without communication.init() the process is a world of one (rank 0), so the layer is BatchNorm, as in
    MindSpore 2.10.

    Raises:
        TypeError: process_groups is neither None, 0 nor a list of lists of ints.
        ValueError: a rank in process_groups outside [0, world size), or listed twice; an input that is not 2-D or
            4-D, or whose channel count is not num_features.
    """

    _dims = (2, 4)

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones", beta_init="zeros",
                 moving_mean_init="zeros", moving_var_init="ones", use_batch_statistics=None, process_groups=None,
                 dtype=mstype.float32):
        super().__init__(num_features, eps, momentum, affine, gamma_init, beta_init, moving_mean_init,
                         moving_var_init, use_batch_statistics, dtype=dtype)
        self.process_groups = process_groups
        self.is_global = False
        self.group_name = None
        self.group_device_num = 1
        if isinstance(process_groups, int) and process_groups == 0:  # MindSpore's `process_groups != 0` test
            return
        rank, size = _rank_and_size()
        if process_groups is None:
            if size > 1:
                from ...communication.management import GlobalComm
                self.is_global, self.group_name, self.group_device_num = True, GlobalComm.WORLD_COMM_GROUP, size
            return
        if not isinstance(process_groups, list) or not all(isinstance(g, list) for g in process_groups):
            raise TypeError(f"For 'SyncBatchNorm', 'process_groups' must be None, 0 or a list of lists of ranks, but "
                            f"got {process_groups!r}.")
        seen = set()
        for rid in (r for g in process_groups for r in g):
            if isinstance(rid, bool) or not isinstance(rid, int):
                raise TypeError(f"For 'SyncBatchNorm', the ranks in 'process_groups' must be int, but got {rid!r}.")
            if not 0 <= rid < size:
                raise ValueError(f"For 'SyncBatchNorm', rank id in process_groups must be in [0, {size}), but got "
                                 f"{rid}.")
            if rid in seen:
                raise ValueError(f"For 'SyncBatchNorm', rank id in 'process_groups' must not be duplicated, but got "
                                 f"{process_groups}.")
            seen.add(rid)
        for group in process_groups:
            if rank in group and len(group) > 1:
                key = "_".join(map(str, group))
                if key not in _group_names:
                    from ...communication.management import create_group
                    name = f"{len(group)}_{hashlib.sha256(key.encode()).hexdigest()}"
                    create_group(name, list(group))
                    _group_names[key] = name
                self.is_global, self.group_name, self.group_device_num = True, _group_names[key], len(group)

    def construct(self, x):
        use_batch = self.training if self.use_batch_statistics is None else self.use_batch_statistics
        if not (self.is_global and use_batch):
            return super().construct(x)
        self._check_input(x)
        reduce = AllReduce(group=self.group_name)
        axes = [0] + list(range(2, x.ndim))
        c = self.num_features
        local = x.size // c
        # pass 1: the global sum and count -> mean (one all-reduce of [Σx (C values), count])
        sums = _kernels.concat([_kernels.sum(x, axes, False), _kernels.full([1], float(local), x.dtype)], 0)
        sums = reduce(sums)
        count = _kernels.strided_slice(sums, [c], [c + 1], [1])
        mean = _kernels.div(_kernels.strided_slice(sums, [0], [c], [1]), count)
        stat_shape = [1, c] + [1] * (x.ndim - 2)
        centered = _ops.sub(x, _kernels.reshape(mean, stat_shape))
        # pass 2: the global sum of squared deviations -> the biased variance
        var = _kernels.div(reduce(_kernels.sum(_ops.square(centered), axes, False)), count)
        inv_std = _ops.rsqrt(_ops.add(var, self.eps))
        y = _ops.mul(centered, _kernels.reshape(_ops.mul(inv_std, self.gamma), stat_shape))
        y = _ops.add(y, _kernels.reshape(self.beta, stat_shape))
        m = self.momentum
        mm, mv = self.moving_mean, self.moving_variance
        n = _kernels.stop_gradient(count)
        unbiased = _kernels.div(_ops.mul(_kernels.stop_gradient(var), n), _ops.sub(n, 1.0))
        _kernels.assign(mm, _ops.add(_ops.mul(mm, m), _ops.mul(_kernels.stop_gradient(mean), 1.0 - m)))
        _kernels.assign(mv, _ops.add(_ops.mul(mv, m), _ops.mul(unbiased, 1.0 - m)))
        return y

    def extend_repr(self):
        return super().extend_repr() + f", process_groups={self.process_groups}"


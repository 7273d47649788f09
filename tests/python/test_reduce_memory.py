"""Reductions read their input in its own dtype and accumulate wide in registers (issue 22, item 4); they must be
right for every input dtype and length."""
import numpy as np
import pytest

from kiln import Tensor, ops


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16, np.uint16, np.bool_, np.int32])
def test_narrow_integer_sums_at_every_length(dt):
    """Sums of 1- and 2-byte integers read directly (no cast to a wider dtype first): GCC 12 vectorized the kernel's
    lane loop wrongly for them (24 ones of Int8 summed to 9; src/ops/reduce.cpp, Note [GCC 12 narrow-integer
    reductions])."""
    for n in range(1, 81):
        a = (np.arange(n) * 7 % 5 - 2).astype(dt)
        x = Tensor(a)
        assert int(ops.sum(x).asnumpy()) == int(a.sum(dtype=np.int64)), n
        assert int(ops.sum(x.reshape(1, n), 1).asnumpy()[0]) == int(a.sum(dtype=np.int64)), n

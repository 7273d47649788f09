"""Registry entry of ops.dyn_shape (kiln/ops/shape_tensor_func.py): the shape as an int64 tensor (NumPy's
np.array(x.shape)). Its dynamic-shape behaviour (one graph, run-time sizes) is tested in
tests/python/test_graph_dyn_shape.py."""
import numpy as np

from kiln import ops

from .base import BOOL, FLOATS, I32, OpInfo, Sample, arr, register


def _samples(dtype, rng):
    yield Sample((arr(rng, (2, 3), dtype),))
    yield Sample((arr(rng, (), dtype),), desc="0-d")
    yield Sample((arr(rng, (0, 4, 1), dtype),), desc="empty")


register(OpInfo("dyn_shape", (), ops.dyn_shape, lambda x: np.array(x.shape, np.int64), _samples,
                FLOATS + (I32, BOOL), differentiable=False, graph=False,
                graph_reason="the result is a constant of the trace (no kernel); dynamic graphs: "
                             "test_graph_dyn_shape.py",
                special_skip="depends on the shape only"))

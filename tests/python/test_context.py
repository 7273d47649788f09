"""set_context / get_context / set_seed semantics (reference §1)."""
import warnings

import numpy as np
import pytest

import kiln as ms
from kiln import ops


def test_defaults_and_modes():
    assert ms.GRAPH_MODE == 0 and ms.PYNATIVE_MODE == 1
    assert ms.get_context("device_target") == "CPU"
    ms.set_context(mode=ms.PYNATIVE_MODE)
    assert ms.get_context("mode") == ms.PYNATIVE_MODE


def test_unavailable_device_falls_back_to_cpu_with_one_warning():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ms.context._warned_targets.clear()
        ms.set_context(device_target="Ascend")
        ms.set_context(device_target="Ascend")
    assert sum("not available" in str(x.message) for x in w) == 1
    assert ms.get_context("device_target") == "CPU"
    ms.set_context(device_target="CPU")


def test_errors():
    with pytest.raises(ValueError, match="GRAPH_MODE"):
        ms.set_context(mode=5)
    with pytest.raises(TypeError):
        ms.set_context(mode="graph")
    with pytest.raises(ValueError, match="must be one of"):
        ms.set_context(device_target="TPU")
    with pytest.raises(ValueError, match="not recognized"):
        ms.set_context(no_such_key=1)
    with pytest.raises(ValueError, match="not recognized"):
        ms.get_context("no_such_key")
    with pytest.raises(ValueError, match="device_id"):
        ms.set_context(device_id=5000)


def test_set_seed_makes_random_ops_repeat():
    ms.set_seed(7)
    a1, b1 = ops.randn(4, 3), ops.randn((4, 3))
    ms.set_seed(7)
    a2, b2 = ops.randn(4, 3), ops.randn((4, 3))
    np.testing.assert_array_equal(a1.asnumpy(), a2.asnumpy())
    np.testing.assert_array_equal(b1.asnumpy(), b2.asnumpy())
    assert not np.array_equal(a1.asnumpy(), b1.asnumpy())
    assert ms.get_seed() == 7
    r = ops.randint(0, 5, (1000,))
    assert r.dtype == ms.int64 and 0 <= r.asnumpy().min() and r.asnumpy().max() < 5
    u = ops.uniform((1000,), Tensor_(-2.0), Tensor_(3.0))
    assert -2.0 <= u.asnumpy().min() and u.asnumpy().max() < 3.0
    with pytest.raises(TypeError):
        ms.set_seed(1.5)
    with pytest.raises(ValueError):
        ms.set_seed(-1)
    with pytest.raises(ValueError):
        ops.randn(2, dtype=ms.int32)


def Tensor_(v):
    return ms.Tensor(v, ms.float32)


def test_compile_cache_context_keys():
    # The cache itself: test_compile_cache_disk.py.
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ms.set_context(enable_compile_cache=True)
    assert ms.get_context("enable_compile_cache") is True
    ms.set_context(enable_compile_cache=False)
    assert ms.get_context("enable_compile_cache") is False
    with pytest.raises(TypeError):
        ms.set_context(enable_compile_cache=1)
    with pytest.raises(ValueError):
        ms.set_context(compile_cache_path="")


def test_set_device_sets_target_and_id_like_set_context():
    import warnings
    import kiln
    try:
        kiln.set_device("CPU")
        assert kiln.get_context("device_target") == "CPU" and kiln.get_context("device_id") == 0
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            kiln.set_device("GPU", 1)  # not on this build: CPU, with a warning
        assert kiln.get_context("device_target") == "CPU" and kiln.get_context("device_id") == 1
        assert any("not available" in str(w.message) for w in caught)
        with pytest.raises(ValueError, match="device_target"):
            kiln.set_device("TPU")
        with pytest.raises(TypeError, match="device_id"):
            kiln.set_device("CPU", 1.5)
    finally:
        kiln.set_context(device_target="CPU", device_id=0)


def test_lowercase_tensor_is_tensor():
    import numpy as np
    import kiln
    from kiln.common import initializer as init
    assert kiln.tensor([1, 2]).dtype == kiln.int64 and kiln.tensor(1.0).dtype == kiln.float32
    t = kiln.tensor(np.ones(2), kiln.float16)
    assert type(t) is kiln.Tensor and t.dtype == kiln.float16
    np.testing.assert_array_equal(kiln.tensor(shape=(2, 3), dtype=kiln.float32, init=init.One()).asnumpy(),
                                  np.ones((2, 3)))
    with pytest.raises(ValueError, match="'device'"):
        kiln.tensor([1], device="Ascend")

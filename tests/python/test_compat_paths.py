"""MindSpore module paths that real programs import (counted by tools/api_file_coverage.py on the model zoo):
mindspore.log, ops.functional / ops.composite / ops.operations / ops.primitive, nn.metrics, dataset.engine(.config),
parallel._auto_parallel_context, train.model.ParallelMode, parallel.set_algo_parameters, and the all-reduce fusion
split indices they set. Each resolves to the same object as its main path, and what it does is checked."""
import importlib
import os
import subprocess
import sys

import numpy as np
import pytest

import kiln
from kiln import nn, ops
import kiln.communication as comm

def _compat_import(path):
    """`import mindspore.<...>` under the kiln.compat alias, then uninstalled again."""
    import kiln.compat
    was = kiln.compat.is_installed()
    kiln.compat.install()
    try:
        return importlib.import_module(path)
    finally:
        if not was:
            kiln.compat.uninstall()


# ---------------------------------------------------------------- mindspore.log

def _run_log(code, glog_v=None):
    # The child imports the same kiln as this process (an installed one in CI, the source tree in development).
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(kiln.__file__)))}
    env.pop("GLOG_v", None)
    if glog_v is not None:
        env["GLOG_v"] = glog_v
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def test_log_levels_follow_glog_v_and_lines_name_the_caller():
    code = ("import kiln.log as logger\n"
            "logger.debug('d %d', 0)\nlogger.info('i %d', 1)\nlogger.warning('w %s', 'two')\n"
            "logger.error('e')\nlogger.critical('c')\nprint(logger.get_level(), logger.get_log_config())\n")
    p = _run_log(code)
    assert p.returncode == 0, p.stderr
    lines = p.stderr.strip().splitlines()
    assert [ln.split("]")[0] for ln in lines] == ["[WARNING", "[ERROR", "[CRITICAL"]
    assert lines[0].startswith("[WARNING] KILN(") and lines[0].endswith("[<string>:4] w two")
    assert p.stdout.strip() == "2 {'GLOG_v': '2', 'GLOG_logtostderr': '1'}"
    p = _run_log(code, glog_v="0")
    assert [ln.split("]")[0] for ln in p.stderr.strip().splitlines()] == \
        ["[DEBUG", "[INFO", "[WARNING", "[ERROR", "[CRITICAL"]
    assert p.stdout.startswith("0 ")
    p = _run_log(code, glog_v="3")
    assert [ln.split("]")[0] for ln in p.stderr.strip().splitlines()] == ["[ERROR", "[CRITICAL"]


def test_log_bad_glog_v_is_a_clear_error():
    p = _run_log("import kiln.log as logger\nlogger.info('x')\n", glog_v="7")
    assert p.returncode != 0 and "GLOG_v must be one of 0, 1, 2, 3, 4" in p.stderr and "'7'" in p.stderr


def test_log_module_paths():
    import logging
    assert kiln.log is importlib.import_module("kiln.log") and kiln.log.logging is logging
    assert _compat_import("mindspore.log") is kiln.log


# ---------------------------------------------------------------- ops submodules

def test_functional_holds_every_ops_function():
    F, C, P = ops.functional, ops.composite, ops.operations
    for name in ("tuple_to_array", "dtype", "identity", "scalar_to_tensor", "make_range", "assign_add", "tuple_len",
                 "addn", "clip_by_value", "matmul", "softmax"):
        assert getattr(F, name) is getattr(ops, name), name
    for name in ("clip_by_value", "clip_by_global_norm", "ones_like", "zeros_like", "matmul", "sequence_mask"):
        assert getattr(C, name) is getattr(ops, name), name
    assert P.ReduceOp is ops.ReduceOp and P.ReduceOp.SUM == "sum"
    x = kiln.Tensor(np.array([[-2.0, 0.5], [3.0, 1.0]], np.float32))
    np.testing.assert_array_equal(C.clip_by_value(x, -1.0, 1.0).asnumpy(), np.clip(x.asnumpy(), -1, 1))
    np.testing.assert_array_equal(F.tuple_to_array((1, 2, 3)).asnumpy(), np.array([1, 2, 3]))
    prim = _compat_import("mindspore.ops.primitive")
    assert prim.constexpr is ops.constexpr and prim.Primitive is ops.Primitive


def test_floor_div_and_l2_loss_primitives():
    """Values pinned with MindSpore 2.10 (P.FloorDiv, P.L2Loss)."""
    a = kiln.Tensor(np.array([7, -7], np.int32))
    np.testing.assert_array_equal(ops.FloorDiv()(a, kiln.Tensor(np.array([2, 2], np.int32))).asnumpy(), [3, -4])
    np.testing.assert_array_equal(ops.FloorDiv()(7, kiln.Tensor(np.array([2, -2], np.int32))).asnumpy(), [3, -4])
    np.testing.assert_array_equal(ops.FloorDiv()(kiln.Tensor(np.array([7.0, -7.0], np.float32)), 2).asnumpy(),
                                  [3.0, -4.0])
    x = np.array([[1.5, -2.0], [3.0, 4.0]], np.float32)
    out = ops.operations.L2Loss()(kiln.Tensor(x))
    assert out.shape == () and out.dtype == kiln.float32 and float(out.asnumpy()) == 15.625
    assert ops.L2Loss()(kiln.Tensor(np.array([1, 2], np.float16))).dtype == kiln.float16
    assert float(ops.L2Loss()(kiln.Tensor(np.zeros((0, 3), np.float32))).asnumpy()) == 0.0
    with pytest.raises(TypeError, match=r"L2Loss.*Tensor\[Float16\], Tensor\[Float32\].*but got Tensor\[Int32\]"):
        ops.L2Loss()(kiln.Tensor(np.array([1, 2], np.int32)))
    with pytest.raises(TypeError, match="but got list"):
        ops.L2Loss()([1.0, 2.0])
    # the gradient of sum(x**2)/2 is x, in both modes
    xd = kiln.Tensor(x.astype(np.float64))
    g = kiln.grad(lambda t: ops.L2Loss()(t))(xd)
    np.testing.assert_allclose(g.asnumpy(), x, rtol=1e-12)
    gj = kiln.jit(kiln.grad(lambda t: ops.L2Loss()(t)))(xd)
    np.testing.assert_allclose(gj.asnumpy(), x, rtol=1e-12)


# ---------------------------------------------------------------- nn / train / dataset paths

def test_nn_metrics_train_model_and_dataset_engine_paths():
    m = _compat_import("mindspore.nn.metrics")
    assert m.Accuracy is kiln.train.metrics.Accuracy and m.Metric is nn.Metric
    acc = m.Accuracy()
    acc.update(kiln.Tensor(np.array([[0.1, 0.9], [0.8, 0.2]], np.float32)), kiln.Tensor(np.array([1, 1])))
    assert acc.eval() == 0.5
    assert _compat_import("mindspore.train.model").ParallelMode.DATA_PARALLEL == "data_parallel"
    eng = _compat_import("mindspore.dataset.engine")
    assert eng.GeneratorDataset is kiln.dataset.GeneratorDataset
    assert eng.ImageFolderDataset is kiln.dataset.ImageFolderDataset
    cfg = _compat_import("mindspore.dataset.engine.config")
    seed = kiln.dataset.config.get_seed()
    try:
        cfg.set_seed(1234)
        assert kiln.dataset.config.get_seed() == 1234
    finally:
        kiln.dataset.config.set_seed(seed)
    par = _compat_import("mindspore.parallel")
    assert par.set_algo_parameters is kiln.set_algo_parameters


# ---------------------------------------------------------------- auto_parallel_context()

@pytest.fixture
def fresh_context():
    kiln.reset_auto_parallel_context()
    yield
    comm.release()
    kiln.reset_auto_parallel_context()


def test_auto_parallel_context_object(fresh_context):
    from kiln.parallel._auto_parallel_context import auto_parallel_context
    ctx = auto_parallel_context()
    assert ctx is _compat_import("mindspore.parallel._auto_parallel_context").auto_parallel_context()
    assert ctx.get_device_num_is_set() is False and ctx.get_device_num() == 1
    assert ctx.get_parallel_mode() == "stand_alone" and ctx.get_pipeline_stages() == 1
    kiln.set_auto_parallel_context(device_num=2, parallel_mode="data_parallel")
    assert ctx.get_device_num_is_set() is True and ctx.get_device_num() == 2
    assert ctx.get_parallel_mode() == "data_parallel" and ctx.get_global_rank_is_set() is False
    ctx.set_gradients_mean(True)
    assert kiln.get_auto_parallel_context("gradients_mean") is True
    ctx.set_all_reduce_fusion_split_indices([2, 5])
    assert ctx.get_all_reduce_fusion_split_indices() == [2, 5]
    assert kiln.get_auto_parallel_context("all_reduce_fusion_config") == [2, 5]
    with pytest.raises(ValueError, match="strictly increasing"):
        ctx.set_all_reduce_fusion_split_indices([5, 2])
    with pytest.raises(TypeError, match="must be int"):
        kiln.set_auto_parallel_context(all_reduce_fusion_config=[1.5])
    with pytest.raises(TypeError, match="must be a list of int"):
        kiln.set_auto_parallel_context(all_reduce_fusion_config=3)
    with pytest.raises(ValueError, match="world group"):
        ctx.set_all_reduce_fusion_split_indices([1], group="other")
    with pytest.raises(AttributeError, match="no attribute 'get_nonsense'"):
        ctx.get_nonsense()
    ctx.reset()
    assert ctx.get_device_num_is_set() is False and ctx.get_all_reduce_fusion_split_indices() == []


def test_fusion_split_indices_make_the_reducer_buckets(fresh_context, monkeypatch):
    from kiln.nn.wrap.grad_reducer import _plan
    metas = [((2, 3), "f", 24), ((4,), "f", 16), ((3,), "d", 24), ((5,), "f", 20), ((1,), "f", 4)]
    assert _plan(metas, 40) == [[0, 1], [2], [3, 4]]
    assert _plan(metas, 40, [1, 4]) == [[0], [1], [2], [3], [4]]  # a dtype change cuts too
    assert _plan(metas, 8, [3]) == [[0, 1], [2], [3, 4]]  # the indices, not the size, decide
    for v in ("MS_WORKER_NUM", "MS_SCHED_HOST", "MS_SCHED_PORT", "MS_NODE_ID"):
        monkeypatch.setenv(v, {"MS_WORKER_NUM": "1", "MS_SCHED_HOST": "127.0.0.1", "MS_SCHED_PORT": "1",
                               "MS_NODE_ID": "0"}[v])
    comm.init()
    ps = [kiln.Parameter(kiln.Tensor(np.zeros(s, np.float32)), name=f"q{i}") for i, s in
          enumerate([(2, 3), (4,), (3,), (5,)])]
    kiln.set_auto_parallel_context(all_reduce_fusion_config=[2])
    red = nn.DistributedGradReducer(ps)
    assert red._buckets == [[0, 1], [2, 3]]
    grads = tuple(kiln.Tensor(np.full(p.shape, i + 1.0, np.float32)) for i, p in enumerate(ps))
    for o, g in zip(red(grads), grads):
        np.testing.assert_array_equal(o.asnumpy(), g.asnumpy())


def test_common_row_tensor_and_context_ps_paths():
    assert kiln.common.RowTensor is kiln.RowTensor
    assert kiln.context.set_ps_context is kiln.set_ps_context
    assert kiln.context.get_ps_context is kiln.get_ps_context and kiln.context.reset_ps_context is kiln.reset_ps_context

"""Issue 7, items 1, 6, 7, 10, 12: BatchNorm moving statistics (unbiased variance), argument validation of the
autodiff transforms, the weight-decay filter of every optimizer, tensor formatting and Tensor.from_numpy memory
sharing, and ops that take a tensor or a structure (stop_gradient, depend). NumPy is the reference for values;
each behaviour is checked in PyNative and in Graph mode / under kiln.jit where a mode applies."""
import numpy as np
import pytest

import kiln as ms
from kiln import Parameter, Tensor, nn, ops
from kiln.experimental import optim as xoptim

f32 = np.float32
MODES = ["pynative", "graph"]


@pytest.fixture
def mode(request):
    ms.set_context(mode=ms.GRAPH_MODE if request.param == "graph" else ms.PYNATIVE_MODE)
    yield request.param
    ms.set_context(mode=ms.PYNATIVE_MODE)


# ------------------------------------------------------------------------------ 1. BatchNorm moving statistics

@pytest.mark.parametrize("mode", MODES, indirect=True)
def test_batchnorm1d_moving_variance_is_unbiased_issue_example(mode):
    """BatchNorm1d(2, momentum=0.9) on x = [[1,2],[3,6],[5,7],[7,1]]: moving_variance = 0.9·1 + 0.1·var(x, ddof=1)
    (MindSpore: [1.5667, 1.7667]); the output is normalized with the biased variance."""
    x = np.array([[1, 2], [3, 6], [5, 7], [7, 1]], f32)
    bn = nn.BatchNorm1d(2, momentum=0.9)
    bn.set_train(True)
    y = bn(Tensor(x))
    xd = x.astype(np.float64)
    np.testing.assert_allclose(bn.moving_variance.asnumpy(), 0.9 + 0.1 * xd.var(axis=0, ddof=1), rtol=1e-6)
    np.testing.assert_allclose(bn.moving_mean.asnumpy(), 0.1 * xd.mean(axis=0), rtol=1e-6)
    np.testing.assert_allclose(y.asnumpy(), (xd - xd.mean(0)) / np.sqrt(xd.var(0) + 1e-5), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("cls,shape", [(nn.BatchNorm1d, (5, 3)), (nn.BatchNorm1d, (2, 3, 4)),
                                       (nn.BatchNorm2d, (2, 3, 3, 2))])
def test_batchnorm_moving_stats_over_steps_in_a_compiled_training_step(cls, shape, jit):
    """Three training steps (forward + grad + SGD, the whole step compiled when jit) keep moving statistics equal to
    the NumPy recurrence with the unbiased batch variance (the assigns may be fused by the graph passes)."""
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(shape).astype(f32) * 2 + 1 for _ in range(3)]
    bn = cls(shape[1], momentum=0.7)
    bn.set_train(True)
    opt = nn.SGD(bn.trainable_params(), 0.1)
    grad_fn = ms.value_and_grad(lambda x: ops.sum(bn(x) ** 2), None, opt.parameters)

    def step(x):
        loss, g = grad_fn(x)
        opt(g)
        return loss

    step = ms.jit(step) if jit else step
    mm, mv = np.zeros(shape[1]), np.ones(shape[1])
    axes = tuple(i for i in range(len(shape)) if i != 1)
    for x in xs:
        step(Tensor(x))
        xd = x.astype(np.float64)
        mm = 0.7 * mm + 0.3 * xd.mean(axis=axes)
        mv = 0.7 * mv + 0.3 * xd.var(axis=axes, ddof=1)
    np.testing.assert_allclose(bn.moving_mean.asnumpy(), mm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.moving_variance.asnumpy(), mv, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", MODES, indirect=True)
def test_batch_norm_function_running_var_is_unbiased(mode):
    x = np.random.default_rng(1).standard_normal((3, 2, 5)).astype(f32)
    rm = Parameter(Tensor(np.zeros(2, f32)), name="rm")
    rv = Parameter(Tensor(np.ones(2, f32)), name="rv")
    ops.batch_norm(Tensor(x), rm, rv, Tensor(np.ones(2, f32)), Tensor(np.zeros(2, f32)), training=True, momentum=0.1)
    np.testing.assert_allclose(rv.asnumpy(), 0.9 + 0.1 * x.astype(np.float64).var(axis=(0, 2), ddof=1), rtol=1e-6)


@pytest.mark.parametrize("mode", MODES, indirect=True)
def test_batchnorm_one_value_per_channel_raises_in_training_only(mode):
    """n = 1 per channel: the unbiased variance is undefined (MindSpore stores NaN; PyTorch raises): a clear
    ValueError, and the moving statistics are untouched. Evaluation mode is fine with one sample."""
    bn = nn.BatchNorm1d(2)
    bn.set_train(True)
    with pytest.raises(ValueError, match=r"For 'BatchNorm1d'.*more than 1 value per channel.*\(1, 2\)"):
        bn(Tensor(np.array([[1.0, 2.0]], f32)))
    bn2 = nn.BatchNorm2d(2)
    bn2.set_train(True)
    with pytest.raises(ValueError, match="For 'BatchNorm2d'.*more than 1 value per channel"):
        bn2(Tensor(np.ones((1, 2, 1, 1), f32)))
    bn2(Tensor(np.arange(4, dtype=f32).reshape(1, 2, 1, 2)))  # N = 1 but H·W = 2 values per channel: fine
    np.testing.assert_allclose(bn2.moving_variance.asnumpy(), 0.9 + 0.1 * np.array([0.5, 0.5]), rtol=1e-6)
    np.testing.assert_array_equal(bn.moving_mean.asnumpy(), [0, 0])
    np.testing.assert_array_equal(bn.moving_variance.asnumpy(), [1, 1])
    bn.set_train(False)
    np.testing.assert_allclose(bn(Tensor(np.array([[1.0, 2.0]], f32))).asnumpy(), [[1, 2] / np.sqrt(1 + 1e-5)],
                               rtol=1e-6)
    with pytest.raises(ValueError, match="For 'batch_norm'.*more than 1 value per channel"):
        ops.batch_norm(Tensor(np.ones((1, 2), f32)), Parameter(Tensor(np.zeros(2, f32)), name="m"),
                       Parameter(Tensor(np.ones(2, f32)), name="v"), Tensor(np.ones(2, f32)),
                       Tensor(np.zeros(2, f32)), training=True)


# ------------------------------------------------------------------------ 6. value_and_grad / grad validation

def _f(a, b):
    return ops.sum(a * b)


X = np.array([1.0, 2.0], f32)


@pytest.mark.parametrize("mode", MODES, indirect=True)
@pytest.mark.parametrize("api", ["grad", "value_and_grad"])
@pytest.mark.parametrize("arg", [2.0, 3, (1.0, 2.0), [1.0], np.array([1.0, 2.0], f32), None])
def test_grad_position_on_a_non_tensor_raises(mode, api, arg):
    """MindSpore returns () for grad_position pointing only at Python values: Kiln raises a TypeError naming it.
    Next to a Tensor position, a Python value's position is left out, as MindSpore does (ms 2.10:
    grad(f, grad_position=(0, 1, 2))(tensor, 2, tensor) gives the two tensors' gradients)."""
    t = getattr(ms, api)
    with pytest.raises(TypeError, match=rf"For '{api}', the argument at grad_position 1 must be a Tensor.*"
                                        rf"{type(arg).__name__}"):
        t(_f, grad_position=1)(Tensor(X), arg)
    with pytest.raises(TypeError, match=rf"For '{api}', the argument at grad_position 1 must be a Tensor"):
        t(_f, grad_position=(1,))(Tensor(X), arg)
    if arg is None:
        return
    out = t(_f, grad_position=(0, 1))(Tensor(X), arg)
    g = out[1] if api == "value_and_grad" else out
    assert isinstance(g, Tensor)  # one gradient left: a Tensor, not a tuple (as MindSpore)
    np.testing.assert_allclose(g.asnumpy(), np.broadcast_to(np.asarray(arg, f32), X.shape))


@pytest.mark.parametrize("mode", MODES, indirect=True)
def test_grad_argument_validation(mode):
    x = Tensor(X)
    with pytest.raises(IndexError, match="For 'grad', the 'grad_position' 2 is out of range.*2 positional"):
        ms.grad(_f, grad_position=2)(x, x)
    with pytest.raises(ValueError, match="For 'grad', there are duplicate positions"):
        ms.grad(_f, grad_position=(0, 0))
    with pytest.raises(ValueError, match="For 'value_and_grad', the 'grad_position' must be >= 0"):
        ms.value_and_grad(_f, grad_position=-1)
    with pytest.raises(TypeError, match="For 'grad', the 'grad_position' must be int or tuple"):
        ms.grad(_f, grad_position=[0, 1])
    with pytest.raises(TypeError, match="For 'grad', the 'grad_position' must be int or tuple.*str"):
        ms.grad(_f, grad_position=(0, "1"))
    with pytest.raises(TypeError, match="For 'grad', the 'weights' must be a Parameter.*Tensor"):
        ms.grad(_f, None, x)
    with pytest.raises(TypeError, match="For 'grad', the 'weights' must be a Parameter.*element of type Tensor"):
        ms.grad(_f, None, [x])
    with pytest.raises(ValueError, match="For 'grad', `grad_position` and `weight` can not be None"):
        ms.grad(_f, None, None)
    with pytest.raises(TypeError, match="For 'grad', the 'fn' must be a function or a Cell"):
        ms.grad(3)
    with pytest.raises(TypeError, match="For 'value_and_grad', the 'has_aux' must be bool"):
        ms.value_and_grad(_f, has_aux=1)
    with pytest.raises(TypeError, match="For 'grad', the 'return_ids' must be bool"):
        ms.grad(_f, return_ids="yes")
    # valid calls still give the right gradients (d/da Σ a·b = b, d/db = a), with keyword arguments passed on in
    # both modes (Graph mode once dropped them)
    ga, gb = ms.grad(_f, grad_position=(0, 1))(x, Tensor(np.array([3.0, 5.0], f32)))
    np.testing.assert_array_equal(ga.asnumpy(), [3, 5])
    np.testing.assert_array_equal(gb.asnumpy(), [1, 2])
    g = ms.grad(lambda a, b=None, scale=1.0: ops.sum(a * b) * scale)(x, b=Tensor(np.array([3.0, 5.0], f32)),
                                                                     scale=2.0)
    np.testing.assert_array_equal(g.asnumpy(), [6, 10])


# ------------------------------------------------------------------------------------ 7. weight-decay filter

NAMES = ["fc.weight", "fc.bias", "bn.gamma", "bn.beta", "ln.gamma"]
OPTIMIZERS = {
    "SGD": lambda p, wd: nn.SGD(p, 0.1, weight_decay=wd),
    "SGD-momentum": lambda p, wd: nn.SGD(p, 0.1, momentum=0.9, weight_decay=wd, loss_scale=2.0),
    "Momentum": lambda p, wd: nn.Momentum(p, 0.1, 0.9, weight_decay=wd),
    "Adam": lambda p, wd: nn.Adam(p, 0.1, weight_decay=wd),
    "Adam-amsgrad": lambda p, wd: nn.Adam(p, 0.1, weight_decay=wd, use_amsgrad=True),
    "AdamWeightDecay": lambda p, wd: nn.AdamWeightDecay(p, 0.1, weight_decay=wd),
    "RMSProp": lambda p, wd: nn.RMSProp(p, 0.1, weight_decay=wd),
    "Adagrad": lambda p, wd: nn.Adagrad(p, learning_rate=0.1, weight_decay=wd),
    "Lamb": lambda p, wd: nn.Lamb(p, 0.1, weight_decay=wd),
}


def _named_params():
    rng = np.random.default_rng(2)
    return [Parameter(Tensor(rng.uniform(0.5, 1.5, (3,)).astype(f32)), name=n) for n in NAMES]


def _step(opt, how):
    zeros = tuple(Tensor(np.zeros(3, f32)) for _ in NAMES)
    if how == "eager":
        opt.construct(zeros)
    elif how == "call":
        opt(zeros)
    else:
        ms.jit(lambda *g: opt(g))(*zeros)


@pytest.mark.parametrize("how", ["eager", "call", "jit"])
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_float_weight_decay_skips_beta_and_gamma_in_every_optimizer(name, how):
    """With zero gradients only the weight decay moves a parameter: every nn optimizer must leave 'gamma'/'beta'
    parameters exactly unchanged (MindSpore's default decay filter) and decay the others."""
    params = _named_params()
    w0 = [p.asnumpy().copy() for p in params]
    _step(OPTIMIZERS[name](params, 0.1), how)
    for p, w in zip(params, w0):
        if "gamma" in p.name or "beta" in p.name:
            np.testing.assert_array_equal(p.asnumpy(), w, err_msg=f"{name}: {p.name} was decayed")
        else:
            assert np.all(np.abs(p.asnumpy()) < np.abs(w)), f"{name}: {p.name} was not decayed"


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_group_weight_decay_applies_to_every_parameter_of_the_group(name):
    """MindSpore: with parameter groups the decay flag is 'λ > 0' per group (names are not filtered), also for a
    group inheriting the optimizer's weight_decay; a group with weight_decay 0 is not decayed."""
    params = _named_params()
    w0 = [p.asnumpy().copy() for p in params]
    groups = [{"params": params[:1], "weight_decay": 0.0}, {"params": params[1:3], "weight_decay": 0.2},
              {"params": params[3:]}]
    _step(OPTIMIZERS[name](groups, 0.1), "call")
    np.testing.assert_array_equal(params[0].asnumpy(), w0[0])
    for p, w in zip(params[1:], w0[1:]):
        assert np.all(np.abs(p.asnumpy()) < np.abs(w)), f"{name}: {p.name} in a decaying group was not decayed"


def test_sgd_weight_decay_values_match_numpy():
    """SGD (kernel-applied decay) against NumPy: w ← w − lr·(g + λ·w) for decayed names, w − lr·g otherwise."""
    params = _named_params()
    w0 = [p.asnumpy().astype(np.float64) for p in params]
    g = [np.random.default_rng(i).standard_normal(3).astype(f32) for i in range(len(NAMES))]
    nn.SGD(params, 0.1, weight_decay=0.05)(tuple(Tensor(a) for a in g))
    for p, w, gi in zip(params, w0, g):
        wd = 0.0 if ("gamma" in p.name or "beta" in p.name) else 0.05
        np.testing.assert_allclose(p.asnumpy(), w - 0.1 * (gi + wd * w), rtol=1e-6, atol=1e-7)


def test_experimental_adamw_decays_every_parameter_as_mindspore():
    """mindspore.experimental.optim.AdamW is PyTorch-style: weight_decay applies to every parameter of a group (no
    name filter); exclude norms by putting them in a group with weight_decay 0."""
    params = _named_params()
    w0 = [p.asnumpy().copy() for p in params]
    xoptim.AdamW(params, lr=0.1, weight_decay=0.1)(tuple(Tensor(np.zeros(3, f32)) for _ in NAMES))
    for p, w in zip(params, w0):
        np.testing.assert_allclose(p.asnumpy(), w * (1 - 0.1 * 0.1), rtol=1e-6)


# -------------------------------------------------------------------------- 10. formatting and from_numpy

def test_fstring_equals_str_and_format_specs_apply_to_one_element_tensors():
    cases = [Tensor(np.float32(0.1)), Tensor(np.array([0.1], f32)), Tensor(np.array([0.1, 2.5], f32)),
             Tensor(np.int32(3)), Tensor(True), Tensor(np.float16(0.1)), Tensor(np.array([[1e-8, 3.0]], f32)),
             Parameter(Tensor(np.array([0.1, 0.2], f32)), name="w"), Parameter(Tensor(np.float32(0.1)), name="lr")]
    for t in cases:
        assert f"{t}" == str(t) == format(t, "")
    assert str(Tensor(np.float32(0.1))) == "0.1" and str(Tensor(np.array([0.1], f32))) == "[0.1]"
    assert f"{Tensor(np.float32(0.1))}" == "0.1"  # not 0.10000000149011612
    loss = Tensor(np.float32(0.123456))
    assert f"{loss:.4f}" == "0.1235" and f"{loss:.2e}" == "1.23e-01" and f"{loss:.1%}" == "12.3%"
    assert f"{Tensor(np.array([[0.5]], f32)):.3f}" == "0.500"
    assert f"{Tensor(np.float32(0.1)):>6}" == "   0.1"  # no presentation type: the float32 shortest form
    assert f"{Tensor(np.float64(0.1)):>6}" == "   0.1"
    assert f"{Tensor(np.int32(7)):03d}" == "007" and f"{Tensor(np.int32(7)):.2f}" == "7.00"
    assert f"{Tensor(True):>5}" == " True"
    assert f"{Parameter(Tensor(np.float32(0.25)), name='lr'):.3f}" == "0.250"
    with pytest.raises(TypeError, match=r"For 'Tensor.__format__', the format spec '.4f' applies only to a "
                                        r"one-element tensor, but got shape \[2\]"):
        f"{Tensor(np.array([0.1, 2.5], f32)):.4f}"


def test_format_spec_inside_compiled_code_is_a_clear_error():
    @ms.jit
    def f(x):
        return f"{x:.3f}"

    with pytest.raises(RuntimeError, match="format spec '.3f' inside a compiled"):
        f(Tensor(np.float32(1.0)))


def test_float32_values_print_in_shortest_form():
    from kiln.common._format import _round_bfloat16, shortest_float
    for v in (0.1, 0.3, 1e-8, 123456.78, 3.0, -2.5e30):
        assert shortest_float(float(np.float32(v)), "Float32") == float(str(np.float32(v)))
    for v in (0.1, 0.3, 1e-3, 3.0, -1234.5):
        assert shortest_float(float(np.float16(v)), "Float16") == float(str(np.float16(v)))
    for v in (0.1, 0.1005859375, 3.14159, -7.7e12, 1e-20):  # bfloat16: the fewest %g digits that round back
        b = _round_bfloat16(v)
        s = shortest_float(b, "BFloat16")
        assert _round_bfloat16(s) == b
        digits = len(f"{s:.9g}".replace("-", "").replace(".", "").split("e")[0].strip("0"))
        assert digits == 1 or _round_bfloat16(float(f"{b:.{digits - 1}g}")) != b
    # MindSpore 2.10's str of bfloat16 values: C's "%f" each (tests/python/test_bfloat16_numpy.py)
    assert str(Tensor(0.1, ms.bfloat16)) == "0.100098" and str(Tensor([0.1, 2.0], ms.bfloat16)) == "[0.100098 2.000000]"
    assert shortest_float(0.1, "Float64") == 0.1 and np.isnan(shortest_float(float("nan"), "Float32"))
    net = nn.Dense(2, 3)
    opt = xoptim.AdamW(net.trainable_params(), lr=0.1)
    assert "    lr: 0.1\n" in repr(opt)


def test_from_numpy_shares_memory_both_ways():
    a = np.array([1.0, 2.0, 3.0], f32)
    t = Tensor.from_numpy(a)
    a[0] = 10.0  # the array's write is seen by the tensor ...
    np.testing.assert_array_equal(t.asnumpy(), [10, 2, 3])
    np.testing.assert_array_equal((t + 1).asnumpy(), [11, 3, 4])
    t[1] = 20.0  # ... and the tensor's in-place writes by the array
    ops.assign(t[2:], Tensor(np.array([30.0], f32)))
    np.testing.assert_array_equal(a, [10, 20, 30])
    p = Parameter(Tensor.from_numpy(np.zeros((2, 2), np.float64)), name="shared")
    b = p.asnumpy()
    ops.assign(p, Tensor(np.full((2, 2), 5.0)))
    np.testing.assert_array_equal(b, np.full((2, 2), 5.0))
    for arr in (np.arange(6, dtype=np.int64).reshape(2, 3), np.array(3.5, f32), np.zeros(0, f32),
                np.array([True, False]), np.arange(4, dtype=np.uint8)[1:]):
        u = Tensor.from_numpy(arr)
        assert u.shape == arr.shape and u.asnumpy().dtype == arr.dtype
        np.testing.assert_array_equal(u.asnumpy(), arr)
        if arr.size:
            flat = arr.reshape(-1)  # a view
            flat[0] = not flat[0] if arr.dtype == np.bool_ else flat[0] + 1
            np.testing.assert_array_equal(u.asnumpy(), arr)  # shared


def test_from_numpy_keeps_the_array_alive():
    import gc
    t = Tensor.from_numpy(np.arange(1000, dtype=np.float64))
    gc.collect()
    junk = [np.full(1000, -1.0) for _ in range(50)]  # would reuse the freed buffer if the array had died
    np.testing.assert_array_equal(t.asnumpy(), np.arange(1000))
    del junk


@pytest.mark.parametrize("mode", MODES, indirect=True)
def test_from_numpy_tensor_in_a_compiled_function_sees_array_updates(mode):
    a = np.ones(3, f32)
    w = Tensor.from_numpy(a)
    f = ms.jit(lambda x: x * w)
    np.testing.assert_array_equal(f(Tensor(np.full(3, 2.0, f32))).asnumpy(), [2, 2, 2])
    a[:] = 3.0
    np.testing.assert_array_equal(f(Tensor(np.full(3, 2.0, f32))).asnumpy(), [6, 6, 6])


def test_from_numpy_copies_what_it_cannot_share_and_rejects_unsupported_dtypes():
    base = np.arange(6, dtype=f32).reshape(2, 3)
    ro = np.zeros(3, f32)
    ro.flags.writeable = False
    unaligned = np.frombuffer(np.zeros(13, np.uint8).tobytes(), dtype=np.uint8)  # read-only bytes
    misaligned = np.zeros(17, np.uint8)[1:].view(f32)
    for arr in (base.T, base[:, ::2], np.arange(3, dtype=">f4"), np.asfortranarray(base), ro,
                np.broadcast_to(f32(1), (3,)), misaligned, unaligned):
        t = Tensor.from_numpy(arr)
        want = np.array(arr)
        np.testing.assert_array_equal(t.asnumpy(), want)
        assert t.asnumpy().dtype == want.dtype.newbyteorder("=")
        if arr.flags.writeable:
            arr.reshape(-1)[0] = 99 if arr.dtype.kind == "f" else 7
            np.testing.assert_array_equal(t.asnumpy(), want)  # a copy: the later write is not seen
        t[0] = 42  # never writes into read-only NumPy memory
    np.testing.assert_array_equal(ro, [0, 0, 0])
    for bad in (np.array(["a"]), np.array([None], dtype=object)):
        with pytest.raises(TypeError, match=rf"For 'Tensor.from_numpy', the array dtype {bad.dtype} is not supported"):
            Tensor.from_numpy(bad)
    with pytest.raises(TypeError, match="For 'Tensor.from_numpy', the input must be a numpy.ndarray, but got list"):
        Tensor.from_numpy([1.0, 2.0])


# -------------------------------------------------------------- 12. ops taking a tensor or a structure

def _sg_loss(x, y):
    s = ops.stop_gradient((x, [y, 2.0], {"k": x}))
    return ops.sum(s[0] * x) + ops.sum(s[1][0] * y * s[1][1]) + ops.sum(s[2]["k"] * x)


@pytest.mark.parametrize("mode", MODES, indirect=True)
@pytest.mark.parametrize("jit", [False, True])
def test_stop_gradient_on_structures(mode, jit):
    """ops.stop_gradient((a, b)) inside @jit once raised a nanobind TypeError. Structures keep their types and
    non-Tensor leaves; the gradient of Σ sg(x)·x + Σ sg(y)·y·2 + Σ sg(x)·x is (2x, 2y) — NumPy reference."""
    x, y = np.array([1.0, -2.0], f32), np.array([3.0], f32)
    g = ms.grad(_sg_loss, grad_position=(0, 1))
    g = ms.jit(g) if jit else g
    gx, gy = g(Tensor(x), Tensor(y))
    np.testing.assert_allclose(gx.asnumpy(), 2 * x)
    np.testing.assert_allclose(gy.asnumpy(), 2 * y)

    def structures(a, b):
        s = ops.stop_gradient((a, [b], {"k": a}, 2.0, None))
        return s, ops.StopGradient()([a, b])

    f = ms.jit(structures) if jit else structures
    s, p = f(Tensor(x), Tensor(y))
    assert type(s) is tuple and type(s[1]) is list and type(s[2]) is dict and s[3] == 2.0 and s[4] is None
    np.testing.assert_array_equal(s[2]["k"].asnumpy(), x)
    assert type(p) is list and len(p) == 2
    np.testing.assert_array_equal(p[1].asnumpy(), y)


@pytest.mark.parametrize("mode", MODES, indirect=True)
@pytest.mark.parametrize("jit", [False, True])
def test_depend_on_structures(mode, jit):
    def f(a, b):
        v = ops.depend((a * 2, [b]), (a, [b]))
        w = ops.Depend()(a + 1, [b, 3])
        u = ops.depend(b, 1.0)  # nothing to wait for
        z = ops.depend([a, {"b": b}], b)
        return v, w, u, z

    g = ms.jit(f) if jit else f
    v, w, u, z = g(Tensor(np.array([1.0, 2.0], f32)), Tensor(np.array([5.0], f32)))
    assert type(z) is list and type(z[1]) is dict
    np.testing.assert_array_equal(z[1]["b"].asnumpy(), [5])
    np.testing.assert_array_equal(v[0].asnumpy(), [2, 4])
    assert type(v[1]) is list
    np.testing.assert_array_equal(v[1][0].asnumpy(), [5])
    np.testing.assert_array_equal(w.asnumpy(), [2, 3])
    np.testing.assert_array_equal(u.asnumpy(), [5])
    # gradients flow to value only
    gx = ms.grad(lambda a, b: ops.sum(ops.depend((a * a, b), [b * 3])[0]))(Tensor(np.array([1.5], f32)),
                                                                            Tensor(np.array([2.0], f32)))
    np.testing.assert_allclose(gx.asnumpy(), [3.0])


@pytest.mark.parametrize("mode", MODES, indirect=True)
def test_has_aux_stops_gradients_through_nested_aux(mode):
    """value_and_grad(has_aux=True): aux outputs nested in tuples are stop-gradiented too (an outer transform does
    not differentiate through them): d/dx of [x² + aux] where aux = (x³,) nested is 2x (+ 0)."""
    def inner(x):
        return ops.sum(x * x), ((x * x * x,),)

    def outer(x):
        _, aux = ms.grad(inner, has_aux=True)(x)
        return ops.sum(aux[0][0][0])

    g = ms.grad(outer)(Tensor(np.array([2.0], f32)))
    np.testing.assert_allclose(g.asnumpy(), [0.0])


@pytest.mark.parametrize("jit", [False, True])
def test_print_prints_tensors_inside_structures_with_their_run_time_values(jit):
    """ops.print_((a, b), [a], {"k": b}) inside compiled code once printed '<symbolic: being compiled>' for the
    Tensors inside structures; they now print their values on every run, as top-level Tensors do."""
    import contextlib
    import io

    def f(a, b):
        ops.print_("s", (a, b), [a], {"k": b}, (a,))
        return a

    g = ms.jit(f) if jit else f
    buf, ref = io.StringIO(), io.StringIO()
    a, b = Tensor(np.array([1.0, 2.0], f32)), Tensor(np.array([3], np.int32))
    with contextlib.redirect_stdout(buf):
        g(a, b)
    with contextlib.redirect_stdout(ref):
        ops.print_(a)
        ops.print_(b)
    ta, tb = ref.getvalue().splitlines()
    assert buf.getvalue() == f"s ({ta}, {tb}) [{ta}] {{'k': {tb}}} ({ta},)\n"
    assert "symbolic" not in buf.getvalue()

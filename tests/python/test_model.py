"""Model: hook order (MindSpore 2.10's, recorded), learning, parity with a hand-written loop and between
PyNative/GRAPH, sink mode, resume from a checkpoint, fit with evaluation, build, predict and argument errors."""
import os

import numpy as np
import pytest

import kiln as ms
from kiln import nn, Tensor
from kiln.train import Model, Callback, LambdaCallback, ModelCheckpoint, CheckpointConfig, EarlyStopping

from model_helpers import _ArrayDataset, regression_data, classification_data, MLP, make_regression_model

HOOKS = ["on_train_begin", "on_train_epoch_begin", "on_train_step_begin", "on_train_step_end", "on_train_epoch_end",
         "on_train_end", "on_eval_begin", "on_eval_epoch_begin", "on_eval_step_begin", "on_eval_step_end",
         "on_eval_epoch_end", "on_eval_end"]
DATA = os.path.join(os.path.dirname(__file__), "data", "model_hook_order_ms210.txt")


@pytest.fixture(params=["pynative", "graph"])
def mode(request):
    ms.set_context(mode=ms.GRAPH_MODE if request.param == "graph" else ms.PYNATIVE_MODE)
    yield request.param
    ms.set_context(mode=ms.PYNATIVE_MODE)


class _Rec(Callback):
    def __init__(self):
        self.log = []


for _h in HOOKS:
    def _f(self, rc, h=_h):
        p = rc.original_args()
        self.log.append((h, p.get("mode"), p.get("cur_epoch_num"), p.get("cur_step_num"), p.get("batch_num"),
                         p.get("epoch_num"), sorted(p.get("metrics") or {}), sorted(p.get("eval_results") or {})))
    setattr(_Rec, _h, _f)


class _Stopper(Callback):
    def on_train_step_end(self, rc):
        if rc.original_args().cur_step_num == 3:
            rc.request_stop()


def test_hook_order_and_cb_params_match_mindspore(mode):
    """The same script as under MindSpore 2.10 (tests/python/data/model_hook_order_ms210.txt was written by it):
    train, eval, fit (valid every epoch), fit with initial_epoch and valid_frequency=[3], request_stop."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    y = np.random.default_rng(1).integers(0, 3, 6).astype(np.int32)

    def ds():
        return _ArrayDataset(x, y, batch_size=2)

    ms.set_seed(0)
    net = nn.Dense(4, 3)
    model = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                  nn.Momentum(net.trainable_params(), 0.1, 0.9), metrics={"acc"})
    lines = []
    runs = [("train", lambda r: model.train(2, ds(), callbacks=[r])),
            ("eval", lambda r: lines.append(f"EVALRES {sorted(model.eval(ds(), callbacks=[r]))}")),
            ("fit", lambda r: model.fit(2, ds(), ds(), valid_frequency=1, callbacks=[r])),
            ("fit_init", lambda r: model.fit(3, ds(), ds(), valid_frequency=[3], callbacks=[r], initial_epoch=1)),
            ("stop", lambda r: model.train(3, ds(), callbacks=[r, _Stopper()]))]
    for name, run in runs:
        r = _Rec()
        run(r)
        lines.append(f"== {name}")
        lines += [str(e) for e in r.log]
    with open(DATA) as f:
        expected = f.read().splitlines()
    assert lines == expected


def test_old_style_hooks_dispatch_in_train_and_eval():
    calls = []

    class Old(Callback):
        def begin(self, rc):
            calls.append(("begin", rc.original_args().mode))

        def step_end(self, rc):
            calls.append(("step_end", rc.original_args().mode))

        def end(self, rc):
            calls.append(("end", rc.original_args().mode))

    x, y = regression_data(n=8)
    model, _, _ = make_regression_model(metrics={"mae"})
    model.train(1, _ArrayDataset(x, y, batch_size=4), callbacks=Old())
    model.eval(_ArrayDataset(x, y, batch_size=8), callbacks=[Old()])
    assert calls == [("begin", "train"), ("step_end", "train"), ("step_end", "train"), ("end", "train"),
                     ("begin", "eval"), ("step_end", "eval"), ("end", "eval")]
    with pytest.raises(ValueError, match="on_train"):  # fit refuses old-style hooks on custom callbacks
        model.fit(1, _ArrayDataset(x, y), callbacks=[Old()])


def _losses_of(model, epochs, ds, **kw):
    losses = []
    cb = LambdaCallback(on_train_step_end=lambda rc: losses.append(float(rc.original_args().net_outputs.asnumpy())))
    model.train(epochs, ds, callbacks=[cb], **kw)
    return losses


def test_train_equals_hand_written_loop_and_learns(mode):
    x, y = classification_data()
    ms.set_seed(3)
    net = MLP(4, 16, 3)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Adam(net.trainable_params(), 0.02)
    model = Model(net, loss, opt, metrics={"acc", "loss"})
    losses = _losses_of(model, 6, _ArrayDataset(x, y, batch_size=16))

    ms.set_seed(3)
    net2 = MLP(4, 16, 3)
    step = nn.TrainOneStepCell(nn.WithLossCell(net2, loss), nn.Adam(net2.trainable_params(), 0.02))
    step.set_train()
    ref = [float(step(bx, by).asnumpy()) for _ in range(6)
           for bx, by in _ArrayDataset(x, y, batch_size=16).create_tuple_iterator()]
    assert losses == ref  # exactly the same computation
    assert np.mean(losses[-8:]) < 0.3 * np.mean(losses[:8])
    res = model.eval(_ArrayDataset(x, y, batch_size=32))
    assert set(res) == {"acc", "loss"} and res["acc"] > 0.9
    # The predict network is the backbone, in inference mode.
    logits = model.predict(Tensor(x))
    assert np.mean(np.argmax(logits.asnumpy(), 1) == y) == pytest.approx(res["acc"])
    assert not net.training


def test_pynative_and_graph_give_the_same_losses():
    x, y = regression_data()
    out = {}
    for m in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=m)
        try:
            model, _, _ = make_regression_model(lr=0.01)
            out[m] = _losses_of(model, 3, _ArrayDataset(x, y))
            if m == ms.GRAPH_MODE:  # one compiled graph for the whole step, compiled once
                graphs = model.train_network._jit_construct.graphs
                assert len(graphs) == 1 and model.train_network._jit_construct.trace_count == 1
        finally:
            ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(out[ms.GRAPH_MODE], out[ms.PYNATIVE_MODE], rtol=1e-6)


def test_sink_mode_callbacks_and_losses(mode):
    x, y = regression_data(n=48)  # 6 batches of 8
    model, _, _ = make_regression_model(lr=0.01)
    ref = _losses_of(model, 2, _ArrayDataset(x, y))  # 12 steps, per-step mode
    model, _, _ = make_regression_model(lr=0.01)
    log = []
    cb = LambdaCallback(
        on_train_step_end=lambda rc: log.append((rc.original_args().cur_epoch_num, rc.original_args().cur_step_num,
                                                 rc.original_args().batch_num,
                                                 float(rc.original_args().net_outputs.asnumpy()))))
    model.train(3, _ArrayDataset(x, y), callbacks=[cb], dataset_sink_mode=True, sink_size=4)
    # One step_end per sink; cur_step_num advances by sink_size; an epoch is sink_size steps; the dataset loops.
    assert [e[:3] for e in log] == [(1, 4, 4), (2, 8, 4), (3, 12, 4)]
    np.testing.assert_allclose([e[3] for e in log], [ref[3], ref[7], ref[11]], rtol=1e-6)


def test_sink_mode_full_dataset_and_eval_sink():
    x, y = classification_data(n=32)
    ms.set_seed(0)
    net = MLP(4, 8, 3)
    model = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                  nn.SGD(net.trainable_params(), 0.1), metrics={"acc"})
    steps = []
    model.train(2, _ArrayDataset(x, y), dataset_sink_mode=True,
                callbacks=LambdaCallback(on_train_step_end=lambda rc: steps.append(rc.original_args().cur_step_num)))
    assert steps == [4, 8]
    assert model.eval(_ArrayDataset(x, y), dataset_sink_mode=True) == model.eval(_ArrayDataset(x, y))


def test_resume_from_checkpoint_gives_the_same_losses(tmp_path, mode):
    x, y = regression_data()
    model, _, _ = make_regression_model(opt="adam", lr=0.01)
    full = _losses_of(model, 4, _ArrayDataset(x, y))

    model, _, _ = make_regression_model(opt="adam", lr=0.01)
    ckpt = ModelCheckpoint("run", str(tmp_path), CheckpointConfig(save_checkpoint_steps=8, append_info=["epoch_num",
                                                                                                      "step_num"]))
    losses = []
    model.train(2, _ArrayDataset(x, y), callbacks=[
        ckpt, LambdaCallback(on_train_step_end=lambda rc: losses.append(float(rc.original_args().net_outputs
                                                                              .asnumpy())))])
    assert sorted(os.listdir(tmp_path)) == ["run-1_8.ckpt", "run-2_8.ckpt"]
    assert losses == full[:16]

    model2, net2, opt2 = make_regression_model(seed=99, opt="adam", lr=0.01)  # other initial weights
    params = ms.load_checkpoint(str(tmp_path / "run-2_8.ckpt"))
    assert int(params["epoch_num"].asnumpy()) == 2 and int(params["step_num"].asnumpy()) == 16
    not_loaded, _ = ms.load_param_into_net(model2.train_network, params)
    assert not_loaded == []
    rest = _losses_of(model2, 4, _ArrayDataset(x, y), initial_epoch=2)
    np.testing.assert_allclose(rest, full[16:], rtol=1e-6)


def test_fit_with_early_stopping_restores_best(mode):
    x, y = regression_data()
    model, net, _ = make_regression_model(lr=0.01, metrics={"mae"})
    hist = ms.History()
    es = EarlyStopping(monitor="mae", patience=1, min_delta=100.0, restore_best_weights=True)
    model.fit(10, _ArrayDataset(x, y), _ArrayDataset(x, y), callbacks=[es, hist])
    # min_delta=100: only the first evaluation counts as an improvement → stop at epoch 2, weights of epoch 1.
    assert es.stopped_epoch == 2 and hist.epoch == {"epoch": [1, 2]}
    assert model.eval(_ArrayDataset(x, y))["mae"] == pytest.approx(hist.history["mae"][0], rel=1e-6)


def test_model_without_optimizer_and_custom_eval_network():
    x, y = regression_data(n=16)
    net = MLP()
    model = Model(net, nn.MSELoss())
    assert isinstance(model.train_network, nn.WithLossCell)
    model2 = Model(net, eval_network=nn.WithEvalCell(net, nn.MSELoss()), eval_indexes=[0, 1, 2], metrics={"mse"})
    ref = np.mean((net(Tensor(x)).asnumpy() - y) ** 2)
    assert model2.eval(_ArrayDataset(x, y, batch_size=16))["mse"] == pytest.approx(ref, rel=1e-5)
    assert model2.predict_network is net and model2.eval_network.__class__.__name__ == "WithEvalCell"


def test_build_compiles_without_running():
    x, y = regression_data()
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        model, net, _ = make_regression_model(metrics={"mae"})
        before = [p.asnumpy().copy() for p in net.trainable_params()]
        model.build(_ArrayDataset(x, y), _ArrayDataset(x, y))
        jf = model.train_network._jit_construct
        assert jf.trace_count == 1 and len(jf.graphs) == 1
        for b, p in zip(before, net.trainable_params()):
            np.testing.assert_array_equal(b, p.asnumpy())
        model.train(1, _ArrayDataset(x, y))
        assert jf.trace_count == 1  # the first real step reused the graph
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_argument_errors():
    x, y = regression_data(n=16)
    ds = _ArrayDataset(x, y)
    model, net, opt = make_regression_model()
    with pytest.raises(TypeError, match="network"):
        Model("net")
    with pytest.raises(TypeError, match="loss_fn"):
        Model(net, loss_fn=lambda a, b: a)
    with pytest.raises(ValueError, match="kwargs"):
        Model(net, nn.MSELoss(), opt, foo=1)
    with pytest.raises(ValueError, match="amp_level"):  # O1-O3 work (kiln.amp, tests/python/test_amp.py)
        Model(net, nn.MSELoss(), opt, amp_level="O5")
    with pytest.raises(ValueError, match="optimizer' is None"):
        Model(net, nn.MSELoss(), amp_level="O2")
    with pytest.raises(TypeError, match="loss_scale_manager"):
        Model(net, nn.MSELoss(), opt, loss_scale_manager=object())
    with pytest.raises(ValueError, match="optimizer"):
        Model(net, nn.MSELoss(), loss_scale_manager=ms.train.FixedLossScaleManager())
    with pytest.raises(ValueError, match="eval_network"):
        Model(net, metrics={"acc"})
    with pytest.raises(ValueError, match="eval_indexes"):
        Model(net, eval_network=net, eval_indexes=[0, 1], metrics={"acc"})
    with pytest.raises(ValueError, match="initial_epoch"):
        model.train(2, ds, initial_epoch=2)
    with pytest.raises(ValueError, match="epoch"):
        model.train(0, ds)
    with pytest.raises(TypeError, match="epoch"):
        model.train(1.5, ds)
    with pytest.raises(ValueError, match="sink_size"):
        model.train(1, ds, dataset_sink_mode=True, sink_size=0)
    with pytest.raises(TypeError, match="dataset_sink_mode"):
        model.train(1, ds, dataset_sink_mode=1)
    with pytest.raises(TypeError, match="train_dataset"):
        model.train(1, [(x, y)])
    with pytest.raises(ValueError, match="no valid data"):
        model.train(1, _ArrayDataset(x[:0], y[:0]))
    with pytest.raises(TypeError, match="Callback"):
        model.train(1, ds, callbacks=[print])
    with pytest.raises(ValueError, match="metrics"):
        model.eval(ds)
    with pytest.raises(ValueError, match="two elements"):
        model.train(1, _ArrayDataset(x, y, y))
    with pytest.raises(TypeError, match="valid_frequency"):
        model.fit(1, ds, valid_frequency="1")
    with pytest.raises(TypeError, match="Union"):
        model.predict(x)
    with pytest.raises(ValueError, match="empty"):
        model.predict(Tensor(np.zeros((0, 4), np.float32)))


def test_exception_in_callback_propagates_and_breakpoint_is_saved(tmp_path):
    x, y = regression_data(n=16)
    model, _, _ = make_regression_model()

    class Boom(Callback):
        def on_train_step_end(self, rc):
            if rc.original_args().cur_step_num == 1:
                raise RuntimeError("boom")

    ckpt = ModelCheckpoint("b", str(tmp_path), CheckpointConfig(save_checkpoint_steps=100, exception_save=True))
    with pytest.raises(RuntimeError, match="boom"):
        model.train(1, _ArrayDataset(x, y), callbacks=[ckpt, Boom()])
    assert os.listdir(tmp_path) == ["b-1_1_breakpoint.ckpt"]
    assert set(ms.load_checkpoint(str(tmp_path / "b-1_1_breakpoint.ckpt"))) >= {"fc1.weight", "global_step"}


def test_data_sink_runs_sink_size_steps_and_loops_the_dataset():
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    ds = _ArrayDataset(x, batch_size=2)  # batches: rows 0-1, 2-3, 4 (first column 0, 2 | 4, 6 | 8)
    # Kiln's data sink always compiles the step (docs/data_sink.md), so the batches are observed through outputs.
    one = ms.data_sink(lambda b: (b.sum(), b[:, 0]), ds, sink_size=1)
    assert [one()[1].asnumpy().tolist() for _ in range(4)] == [[0.0, 2.0], [4.0, 6.0], [8.0], [0.0, 2.0]]
    step = lambda b: b.sum()
    sink = ms.data_sink(step, ds, sink_size=2)
    assert float(sink().asnumpy()) == 4 + 5 + 6 + 7  # the output of the second step (rows 2-3)
    assert float(sink().asnumpy()) == 0 + 1 + 2 + 3  # row 4, then the dataset starts again (rows 0-1)
    jitted = ms.data_sink(lambda b: b * 2.0, _ArrayDataset(x, batch_size=5), sink_size=3, jit_config=ms.JitConfig())
    np.testing.assert_array_equal(jitted().asnumpy(), x * 2)
    with pytest.raises(ValueError, match="sink_size"):
        ms.data_sink(step, ds, sink_size=0)
    with pytest.raises(TypeError, match="sink_size"):
        ms.data_sink(step, ds, sink_size=1.0)
    with pytest.raises(ValueError, match="dataset is empty"):
        ms.data_sink(step, _ArrayDataset(x[:0]), 1)


def test_fit_eval_callbacks_are_filtered_as_mindspore(capsys):
    """During fit's evaluation only custom callbacks and TimeMonitor get the eval hooks."""
    x, y = regression_data(n=16)
    model, _, _ = make_regression_model(metrics={"mae"})
    model.fit(1, _ArrayDataset(x, y), _ArrayDataset(x, y), callbacks=[ms.LossMonitor(1), ms.TimeMonitor()])
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split(":")[0] for ln in lines] == ["epoch", "epoch", "Eval epoch time", "Eval result",
                                                  "Train epoch time"]


def test_model_with_loss_scale_managers(capsys):
    x, y = regression_data(n=32)
    x_bad = x.copy()
    x_bad[9, 0] = np.inf  # batch 2 of 4 overflows
    ms.set_seed(1)
    net = MLP()
    opt = nn.SGD(net.trainable_params(), 0.01)
    manager = ms.train.DynamicLossScaleManager(init_loss_scale=2.0 ** 10, scale_factor=2, scale_window=2)
    model = Model(net, nn.MSELoss(), opt, loss_scale_manager=manager)
    assert isinstance(model.train_network, nn.TrainOneStepWithLossScaleCell)
    outs = []
    model.train(1, _ArrayDataset(x_bad, y), callbacks=[
        ms.LossMonitor(1), LambdaCallback(on_train_step_end=lambda rc: outs.append(rc.original_args().net_outputs))])
    assert [bool(o[1].asnumpy()) for o in outs] == [False, True, False, False]
    assert int(opt.global_step.asnumpy()[0]) == 3
    # Host-side copy (MindSpore's rule): halved by the overflow at step 2, doubled at step 4 ((4 - 2) % 2 == 0).
    assert manager.get_loss_scale() == 2.0 ** 10
    # The update cell: 1024 → 512 at step 2, × 2 at step 4 (two steps since the overflow).
    assert float(model.train_network.scale_sense.asnumpy()) == 2.0 ** 10
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == f"epoch: 1 step: 1, loss is {outs[0][0]}"  # a tuple output: its first Tensor
    fixed = Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.01, loss_scale=64.0),
                  loss_scale_manager=ms.train.FixedLossScaleManager(64.0, drop_overflow_update=False))
    assert type(fixed.train_network) is nn.TrainOneStepCell and fixed.train_network.sens == 64.0
    with pytest.raises(ValueError, match="loss_scale"):
        ms.train.FixedLossScaleManager(0.5)
    with pytest.raises(ValueError, match="scale_window"):
        ms.train.DynamicLossScaleManager(scale_window=0)


def test_sink_functions_are_bounded_and_reused():
    x, y = regression_data(n=16)
    model, _, _ = make_regression_model()
    ds = _ArrayDataset(x, y)
    model.train(1, ds, dataset_sink_mode=True, sink_size=1)
    (sink,) = [entry[2] for entry in model._sinks.values()]
    model.train(2, ds, dataset_sink_mode=True, sink_size=1, initial_epoch=1)
    # The second call continued with the first one's sink function (its producer's pass over the dataset).
    assert [entry[2] for entry in model._sinks.values()] == [sink]
    for _ in range(10):
        model.train(1, _ArrayDataset(x, y), dataset_sink_mode=True)
    assert len(model._sinks) <= 4


def test_models_train_in_threads(mode):
    import threading
    x, y = regression_data()
    models = [make_regression_model(seed=0, lr=0.01)[0] for _ in range(3)]
    results, errors = {}, []

    def run(i):
        try:
            results[i] = _losses_of(models[i], 2, _ArrayDataset(x, y))
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results[0] == results[1] == results[2] and len(results[0]) == 16

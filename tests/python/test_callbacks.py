"""Callbacks: LossMonitor/TimeMonitor text, ModelCheckpoint files and policies, EarlyStopping and ReduceLROnPlateau
on scripted sequences (values checked against MindSpore 2.10), History and its plot, LambdaCallback, ProgressBar,
RunContext and the callback manager."""
import io
import os
import re

import numpy as np
import pytest
from PIL import Image

import kiln as ms
from kiln import nn, Tensor
from kiln.train import (Callback, RunContext, LossMonitor, TimeMonitor, ModelCheckpoint, CheckpointConfig,
                        EarlyStopping, ReduceLROnPlateau, History, LambdaCallback, ProgressBar)
from kiln.train.callback import _CallbackManager, _InternalCallbackParam

from model_helpers import _ArrayDataset, regression_data, make_regression_model


def _params(**kw):
    return _InternalCallbackParam(**kw)


def test_loss_monitor_text_and_per_print_times(capsys):
    cb = LossMonitor(per_print_times=2)
    rc = RunContext(_params(cur_epoch_num=1, batch_num=3, dataset_sink_mode=False))
    for step, loss in [(1, 0.5), (2, 0.25), (3, 2.0), (4, 1.5)]:
        rc.original_args().update(cur_step_num=step, net_outputs=Tensor(np.float32(loss)),
                                  cur_epoch_num=(step - 1) // 3 + 1)
        cb.on_train_step_end(rc)
    assert capsys.readouterr().out == "epoch: 1 step: 2, loss is 0.25\nepoch: 2 step: 1, loss is 1.5\n"
    LossMonitor(0)
    for bad, err in [(-1, ValueError), (1.5, TypeError), (True, TypeError)]:
        with pytest.raises(err, match="per_print_times"):
            LossMonitor(bad)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_loss_monitor_nan_raises(value):
    rc = RunContext(_params(cur_epoch_num=2, cur_step_num=5, batch_num=4, net_outputs=Tensor(np.float32(value))))
    with pytest.raises(ValueError, match=r"In epoch: 2 step: 1, loss is NAN or INF, training process cannot "
                                         r"continue, terminating training\."):
        LossMonitor().on_train_step_end(rc)


def test_loss_monitor_in_model_train(capsys):
    x, y = regression_data(n=32)
    model, _, _ = make_regression_model()
    losses = []
    model.train(2, _ArrayDataset(x, y), callbacks=[
        LossMonitor(3), LambdaCallback(on_train_step_end=lambda rc: losses.append(rc.original_args().net_outputs))])
    out = capsys.readouterr().out.splitlines()
    # steps 3 and 6 of 8 (global): epoch 1 step 3, epoch 2 step 2.
    assert out == [f"epoch: 1 step: 3, loss is {float(losses[2].asnumpy())}",
                   f"epoch: 2 step: 2, loss is {float(losses[5].asnumpy())}"]


def test_time_monitor_text(capsys):
    cb = TimeMonitor(data_time=True)
    rc = RunContext(_params(mode="train", batch_num=4, dataset_sink_mode=False))
    cb.on_train_epoch_begin(rc)
    for _ in range(4):
        cb.on_train_step_begin(rc)
        cb.on_train_step_end(rc)
    cb.on_train_epoch_end(rc)
    out = capsys.readouterr().out
    assert re.fullmatch(r"Train epoch time: \d+\.\d{3} ms, per step time: \d+\.\d{3} ms "
                        r"\(data time: \d+\.\d{3} ms\)\n", out)
    with pytest.raises(TypeError, match="data_time"):
        TimeMonitor(data_time=1)
    with pytest.raises(ValueError, match="data_size"):
        TimeMonitor(data_size=0).on_train_epoch_end(RunContext(_params(mode="train")))


def _train_with_ckpt(tmp_path, config, prefix="net", epochs=2, n=32):
    x, y = regression_data(n=n)
    model, net, _ = make_regression_model()
    cb = ModelCheckpoint(prefix, str(tmp_path), config)
    model.train(epochs, _ArrayDataset(x, y), callbacks=[cb])
    return cb, net


def test_model_checkpoint_names_keep_max_and_append_info(tmp_path):
    cfg = CheckpointConfig(save_checkpoint_steps=3, keep_checkpoint_max=2, append_info=["epoch_num", "step_num",
                                                                                        {"lr": 0.5}])
    cb, net = _train_with_ckpt(tmp_path, cfg)  # 8 steps: saves at 3, 6 and (end) 8
    assert sorted(os.listdir(tmp_path)) == ["net-2_2.ckpt", "net-2_4.ckpt"]
    assert cb.latest_ckpt_file_name == str(tmp_path / "net-2_4.ckpt")
    params = ms.load_checkpoint(cb.latest_ckpt_file_name)
    assert int(params["epoch_num"].asnumpy()) == 2 and int(params["step_num"].asnumpy()) == 8
    assert params["epoch_num"].dtype == ms.int64 and float(params["lr"].asnumpy()) == 0.5
    np.testing.assert_array_equal(params["fc1.weight"].asnumpy(), net.fc1.weight.asnumpy())
    assert {"moments.fc1.weight", "learning_rate", "global_step"} <= set(params)
    # A second run with the same prefix in the same directory gets the prefix net_1 (MindSpore's rule).
    _train_with_ckpt(tmp_path, CheckpointConfig(save_checkpoint_steps=4, keep_checkpoint_max=5))
    assert sorted(os.listdir(tmp_path)) == ["net-2_2.ckpt", "net-2_4.ckpt", "net_1-1_4.ckpt", "net_1-2_4.ckpt"]
    _train_with_ckpt(tmp_path, CheckpointConfig(save_checkpoint_steps=8), epochs=1)
    assert "net_2-1_4.ckpt" in os.listdir(tmp_path)


def test_checkpoint_config_values_and_errors():
    c = CheckpointConfig(save_checkpoint_steps=10, save_checkpoint_seconds=5, keep_checkpoint_max=3,
                         keep_checkpoint_per_n_minutes=2)
    assert (c.save_checkpoint_steps, c.save_checkpoint_seconds, c.keep_checkpoint_max,
            c.keep_checkpoint_per_n_minutes) == (10, None, 3, None)
    c = CheckpointConfig(save_checkpoint_steps=0, save_checkpoint_seconds=5, keep_checkpoint_max=0)
    assert (c.save_checkpoint_seconds, c.keep_checkpoint_max) == (5, 1)
    assert CheckpointConfig().append_dict is None
    with pytest.raises(ValueError, match="can't be all None or 0"):
        CheckpointConfig(0, 0, 0, 0)
    with pytest.raises(ValueError, match="append_info"):
        CheckpointConfig(append_info=["x"])
    with pytest.raises(TypeError, match="append_info"):
        CheckpointConfig(append_info="epoch_num")
    with pytest.raises(TypeError, match="only one dict"):
        CheckpointConfig(append_info=[{"a": 1}, {"b": 2}])
    with pytest.raises(TypeError, match="save_checkpoint_steps"):
        CheckpointConfig(save_checkpoint_steps=1.0)
    with pytest.raises(ValueError, match="keep_checkpoint_max"):
        CheckpointConfig(keep_checkpoint_max=-1)
    with pytest.raises(TypeError, match="saved_network"):
        CheckpointConfig(saved_network=1)
    with pytest.raises(NotImplementedError, match="enc_key"):
        CheckpointConfig(enc_key=b"0123456789abcdef")
    with pytest.raises(ValueError, match="prefix"):
        ModelCheckpoint(prefix="a/b")
    with pytest.raises(TypeError, match="CheckpointConfig"):
        ModelCheckpoint(config={})


def test_model_checkpoint_saved_network_and_callable_prefix(tmp_path):
    x, y = regression_data(n=16)
    model, net, _ = make_regression_model()
    cfg = CheckpointConfig(save_checkpoint_steps=2, saved_network=net)
    model.train(1, _ArrayDataset(x, y), callbacks=[
        ModelCheckpoint(lambda p: f"s{p.cur_step_num}", str(tmp_path / "sub"), cfg)])
    assert sorted(os.listdir(tmp_path / "sub")) == ["s2.ckpt"]
    assert set(ms.load_checkpoint(str(tmp_path / "sub" / "s2.ckpt"))) == set(net.parameters_dict())


def _run_early(seq, **kw):
    cb = EarlyStopping(**kw)
    rc = RunContext(_params())
    cb.on_train_begin(rc)
    for i, v in enumerate(seq):
        rc.original_args().update(cur_epoch_num=i + 1, eval_results={"eval_loss": v, "acc": v})
        cb.on_train_epoch_end(rc)
        if rc.get_stop_requested():
            return i + 1, float(cb.best), cb.wait
    return None, float(cb.best), cb.wait


def test_early_stopping_scripted_matches_mindspore():
    seq = [1.0, 0.9, 0.95, 0.91, 0.92, 0.5]
    # Values from MindSpore 2.10's EarlyStopping on the same sequences.
    assert _run_early(seq, patience=2) == (4, 0.9, 2)
    assert _run_early(seq, patience=3) == (5, 0.9, 3)
    assert _run_early(seq, patience=0) == (1, 1.0, 0)
    assert _run_early([0.5, 0.6, 0.61, 0.6, 0.55], patience=2, monitor="acc") == (5, 0.61, 2)
    assert _run_early([0.5, 0.6, 0.6005, 0.6, 0.55], patience=1, monitor="acc", min_delta=0.01) == (3, 0.6, 1)
    assert _run_early([1.0, 0.9, 0.8, 0.7, 0.6], patience=2, mode="max") == (3, 1.0, 2)
    # baseline: improvements that do not beat it do not reset the patience counter.
    assert _run_early([1.0, 0.9, 0.8, 0.7], patience=2, baseline=0.5)[0] == 2
    # A monitored value missing (no evaluation that epoch) is skipped.
    assert _run_early([], patience=0) == (None, np.inf, 0)
    with pytest.raises(ValueError, match="mode"):
        EarlyStopping(mode="x")
    with pytest.raises(TypeError, match="monitor"):
        EarlyStopping(monitor=1)


def test_early_stopping_missing_monitor_warns(caplog):
    cb = EarlyStopping(monitor="acc")
    rc = RunContext(_params(cur_epoch_num=1, eval_results={"eval_loss": 1.0}))
    cb.on_train_begin(rc)
    cb.on_train_epoch_end(rc)
    assert not rc.get_stop_requested() and "not available" in caplog.text


def _run_plateau(seq, opt, **kw):
    cb = ReduceLROnPlateau(**kw)
    rc = RunContext(_params(optimizer=opt))
    cb.on_train_begin(rc)
    lrs = []
    for i, v in enumerate(seq):
        rc.original_args().update(cur_epoch_num=i + 1, eval_results={"eval_loss": v})
        cb.on_train_epoch_end(rc)
        lrs.append(float(opt.learning_rate.asnumpy()))
    return lrs


def test_reduce_lr_on_plateau_scripted_matches_mindspore(capsys):
    net = nn.Dense(2, 1)
    opt = nn.SGD(net.trainable_params(), 1.0)
    assert _run_plateau([1] * 8, opt, patience=2, factor=0.5) == [1.0, 1.0, 0.5, 0.5, 0.25, 0.25, 0.125, 0.125]
    opt.learning_rate.set_data(Tensor(np.float32(1.0)))
    lrs = _run_plateau([1, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.8, 0.8], opt, patience=1, factor=0.5, cooldown=2,
                       min_lr=0.2, verbose=True)
    assert lrs == [1.0, 1.0, 0.5, 0.5, 0.25, 0.25, 0.20000000298023224, 0.20000000298023224,
                   0.20000000298023224, 0.20000000298023224]
    assert "Epoch 00003: ReduceLROnPlateau reducing learning rate to 0.5." in capsys.readouterr().out
    dyn = nn.SGD(net.trainable_params(), [0.1, 0.2])
    with pytest.raises(ValueError, match="dynamic learning rate"):
        _run_plateau([1.0], dyn)
    for bad in (0.0, 1.0):
        with pytest.raises(ValueError, match="factor"):
            ReduceLROnPlateau(factor=bad)


def test_reduce_lr_changes_training_in_graph_mode():
    """The new learning rate reaches a compiled step (the Parameter is read at run time)."""
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        x, y = regression_data(n=16)
        model, net, opt = make_regression_model()
        model.train(1, _ArrayDataset(x, y, batch_size=16))
        opt.learning_rate.set_data(Tensor(np.float32(0.0)))
        before = net.fc1.weight.asnumpy().copy()
        model.train(1, _ArrayDataset(x, y, batch_size=16))
        # MindSpore's momentum update is w -= lr * v: with lr 0 the weights stay.
        np.testing.assert_array_equal(before, net.fc1.weight.asnumpy())
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_history_records_and_plot(tmp_path):
    x, y = regression_data(n=32)
    model, _, _ = make_regression_model(metrics={"mae"})
    hist = History()
    model.fit(3, _ArrayDataset(x, y), _ArrayDataset(x, y), callbacks=[hist], valid_frequency=[2, 3])
    assert hist.epoch == {"epoch": [1, 2, 3]}
    assert len(hist.history["net_output"]) == 3 and len(hist.history["mae"]) == 2
    with pytest.raises(RuntimeError, match="nothing was recorded"):
        History().plot(str(tmp_path / "x.png"))
    with pytest.raises(KeyError, match="nope"):
        hist.plot(str(tmp_path / "x.png"), keys=["nope"])
    path = hist.plot(str(tmp_path / "curve.png"), title="run")
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    with Image.open(path) as im:
        im.verify()
    with Image.open(path) as im:
        assert im.size[0] > 100 and im.size[1] > 100


def test_history_writes_its_plot_at_the_end_of_training(tmp_path):
    x, y = regression_data(n=32)
    model, _, _ = make_regression_model(metrics={"mae"})
    path = tmp_path / "loss.png"
    hist = History(plot_path=str(path), plot_title="regression")
    model.fit(2, _ArrayDataset(x, y), _ArrayDataset(x, y), callbacks=[hist])
    assert len(hist.history["net_output"]) == 2 and len(hist.history["mae"]) == 2
    with Image.open(path) as im:
        im.verify()
    stamp = path.stat().st_mtime_ns
    model.train(1, _ArrayDataset(x, y), callbacks=[hist])  # each run rewrites it with every point recorded so far
    assert path.stat().st_mtime_ns >= stamp and len(hist.history["net_output"]) == 3
    with pytest.raises(TypeError, match="plot_path"):
        History(plot_path=3)


def test_lambda_callback_and_manager_errors():
    seen = []
    cb = LambdaCallback(on_train_begin=lambda rc: seen.append("tb"), on_eval_end=lambda rc: seen.append("ee"))
    rc = RunContext({})
    with _CallbackManager([cb]) as m:
        m.on_train_begin(rc)
        m.on_train_step_end(rc)
        m.on_eval_end(rc)
    assert seen == ["tb", "ee"]
    with pytest.raises(TypeError, match="callable"):
        LambdaCallback(on_train_begin=3)
    with pytest.raises(TypeError, match="Callback"):
        _CallbackManager([cb, 3])
    with pytest.raises(TypeError, match="Callback"):
        _CallbackManager(3)
    with pytest.raises(TypeError, match="dict"):
        RunContext([])


def test_callbacks_entered_and_exited_also_on_error():
    events = []

    class Ctx(Callback):
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            events.append(("enter", self.name))
            return self

        def __exit__(self, *err):
            events.append(("exit", self.name, err[0].__name__ if err[0] else None))

        def on_train_step_end(self, rc):
            if self.name == "b":
                raise KeyError("x")

    x, y = regression_data(n=8)
    model, _, _ = make_regression_model()
    with pytest.raises(KeyError):
        model.train(1, _ArrayDataset(x, y), callbacks=[Ctx("a"), Ctx("b")])
    assert events == [("enter", "a"), ("enter", "b"), ("exit", "b", "KeyError"), ("exit", "a", "KeyError")]


def test_progress_bar_line_mode_and_dynamic():
    x, y = regression_data(n=64)
    model, _, _ = make_regression_model()
    out = io.StringIO()  # not a terminal: plain lines
    model.train(2, _ArrayDataset(x, y), callbacks=[ProgressBar(file=out, log_fraction=0.5)])
    lines = out.getvalue().splitlines()
    assert len(lines) == 4
    assert re.match(r"Epoch 1/2:  50%\|.*\| 4/8 \[.*<.*, loss=\d+\.\d{4}\]", lines[0])
    assert re.match(r"Epoch 2/2: 100%\|.*\| 8/8 \[", lines[3])
    out = io.StringIO()
    model.train(3, _ArrayDataset(x, y), callbacks=[ProgressBar(file=out, dynamic=True)], initial_epoch=1)
    text = out.getvalue()
    assert "\r" in text and "Epoch 2/3" in text and "Epoch 3/3" in text and "8/8" in text and "loss=" in text
    out = io.StringIO()
    model.train(1, _ArrayDataset(x, y), callbacks=[ProgressBar(file=out, log_fraction=1.0)],
                dataset_sink_mode=True, sink_size=4)
    assert re.match(r"Epoch 1/1: 100%\|.*\| 4/4 \[", out.getvalue())
    with pytest.raises(ValueError, match="log_fraction"):
        ProgressBar(log_fraction=0)
    with pytest.raises(TypeError, match="dynamic"):
        ProgressBar(dynamic="yes")


class _Clock:
    def __init__(self):
        self.now = 1000.0

    def time(self):
        return self.now


def test_model_checkpoint_by_seconds_and_keep_per_minutes(tmp_path, monkeypatch):
    from kiln.train.callback import _checkpoint
    clock = _Clock()
    monkeypatch.setattr(_checkpoint, "time", clock)
    net = nn.Dense(2, 1)
    cb = ModelCheckpoint("t", str(tmp_path), CheckpointConfig(save_checkpoint_steps=None, save_checkpoint_seconds=10,
                                                             keep_checkpoint_max=None,
                                                             keep_checkpoint_per_n_minutes=1))
    rc = RunContext(_params(train_network=net, batch_num=100, cur_epoch_num=1))
    saved = []
    for step, t in [(1, 1005), (2, 1011), (3, 1015), (4, 1022), (5, 1040), (6, 1041)]:
        clock.now = t
        rc.original_args()["cur_step_num"] = step
        cb.on_train_step_end(rc)
        saved.append(sorted(os.listdir(tmp_path)))
        # Give each file the modification time of its (fake) save time.
        for f in os.listdir(tmp_path):
            if f == f"t-1_{step}.ckpt":
                os.utime(tmp_path / f, (t, t))
    # Saves when more than 10 s passed since the last save (steps 2, 4, 5); files younger than a minute but the
    # oldest are removed before each save (one file per minute is kept).
    assert saved[0] == [] and saved[1] == ["t-1_2.ckpt"]
    assert saved[3] == ["t-1_2.ckpt", "t-1_4.ckpt"]
    assert saved[4] == ["t-1_2.ckpt", "t-1_5.ckpt"]
    assert saved[5] == saved[4]


def test_learning_rate_scheduler_in_sink_mode_runs_once_per_sink():
    """With data sink, step_end runs once per sunk epoch (step = the last step number), as MindSpore's does."""
    from kiln.train import LearningRateScheduler
    x, y = regression_data(32)
    seen = []

    def halve(lr, step):
        seen.append((round(lr, 6), step))
        return lr * 0.5

    model, _, opt = make_regression_model(lr=0.04)
    model.train(2, _ArrayDataset(x, y), callbacks=[LearningRateScheduler(halve)], dataset_sink_mode=True)
    assert seen == [(0.04, 4), (0.02, 8)]
    np.testing.assert_allclose(float(opt.learning_rate.asnumpy()), 0.01, rtol=1e-6)


def test_learning_rate_scheduler_sets_the_lr_after_every_step(sink=False):
    """MindSpore's LearningRateScheduler: fn(lr, step) after each step; the new value is used from the next step on
    (the same weights as a loop that sets that lr by hand)."""
    from kiln.train import LearningRateScheduler
    assert ms.LearningRateScheduler is LearningRateScheduler
    x, y = regression_data(32)
    seen = []

    def halve_every_2(lr, step):
        seen.append((round(lr, 6), step))
        return lr * 0.5 if step % 2 == 0 else lr

    model, net, opt = make_regression_model(lr=0.04)
    model.train(1, _ArrayDataset(x, y), callbacks=[LearningRateScheduler(halve_every_2)], dataset_sink_mode=sink)
    assert seen == [(0.04, 1), (0.04, 2), (0.02, 3), (0.02, 4)]
    np.testing.assert_allclose(float(opt.learning_rate.asnumpy()), 0.01, rtol=1e-6)
    # the same training with the lr set by hand between the steps
    _, net2, opt2 = make_regression_model(lr=0.04)
    step = nn.TrainOneStepCell(nn.WithLossCell(net2, nn.MSELoss()), opt2)
    step.set_train()
    for i, lr in enumerate((0.04, 0.04, 0.02, 0.02)):
        opt2.learning_rate.set_data(Tensor(np.float32(lr)))
        step(Tensor(x[8 * i:8 * i + 8]), Tensor(y[8 * i:8 * i + 8]))
    for a, b in zip(net.trainable_params(), net2.trainable_params()):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)


def test_learning_rate_scheduler_errors():
    from kiln.train import LearningRateScheduler
    with pytest.raises(TypeError, match="must be callable"):
        LearningRateScheduler(0.1)
    x, y = regression_data(16)
    model, _, _ = make_regression_model()
    with pytest.raises(ValueError, match="must return a real number"):
        model.train(1, _ArrayDataset(x, y), callbacks=[LearningRateScheduler(lambda lr, s: "x")],
                    dataset_sink_mode=False)
    net = nn.Dense(4, 1)
    dyn = nn.Momentum(net.trainable_params(), nn.exponential_decay_lr(0.1, 0.9, 4, 2, 1), 0.9)
    m = ms.Model(net, nn.MSELoss(), dyn)
    with pytest.raises(ValueError, match="one fixed learning rate"):
        m.train(1, _ArrayDataset(x, y), callbacks=[LearningRateScheduler(lambda lr, s: lr)], dataset_sink_mode=False)

"""Summaries (issue 26): SummaryRecord, SummaryCollector and the summary ops, writing TensorBoard event files.

The files are read back here with their own format's rules (TFRecord framing with masked CRC-32C checked, then
tensorboardX's copy of TensorBoard's Event protobuf), and with TensorBoard's own EventAccumulator where the
`tensorboard` package is installed. Expected values marked "MindSpore 2.10" were obtained by running the same
program on MindSpore 2.10 (CPU) and reading its summary file."""
import glob
import io
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

import kiln as ms
from kiln import nn, ops, Tensor
from kiln.train import Model, SummaryCollector, SummaryRecord
from kiln.ops import summary_ops

pytest.importorskip("tensorboardX")
from tensorboardX.proto import event_pb2


@pytest.fixture(autouse=True)
def _fresh_cache():
    summary_ops._drain()
    yield
    assert SummaryRecord.count == 0, "a test left a SummaryRecord open"


def _masked_crc(data):
    import google_crc32c
    crc = google_crc32c.value(bytes(data))
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def read_events(path):
    """The Event protobufs of one event file, each record's CRCs checked."""
    data = open(path, "rb").read()
    events, pos = [], 0
    while pos < len(data):
        header = data[pos:pos + 8]
        (n,) = struct.unpack("<Q", header)
        assert struct.unpack("<I", data[pos + 8:pos + 12])[0] == _masked_crc(header)
        body = data[pos + 12:pos + 12 + n]
        assert struct.unpack("<I", data[pos + 12 + n:pos + 16 + n])[0] == _masked_crc(body)
        events.append(event_pb2.Event.FromString(body))
        pos += 16 + n
    assert pos == len(data)
    return events


def by_step(path):
    """{step: {tag: Summary.Value}} of the summary events in `path` (the first event is the version)."""
    events = read_events(path)
    assert events[0].file_version == "brain.Event:2"
    out = {}
    for ev in events[1:]:
        for v in ev.summary.value:
            out.setdefault(ev.step, {})[v.tag] = v
    return out


def decode_png(value):
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(value.image.encoded_image_string)))


def only_file(d):
    files = glob.glob(os.path.join(str(d), "*tfevents*"))
    assert len(files) == 1, files
    return files[0]


# ---- SummaryRecord: values written and read back ----

# Image batches and the pixels MindSpore 2.10 writes for them (channel 0 of its PNG; gray images are RGB-equal).
IMAGE_CASES = [
    (np.arange(12, dtype=np.float32).reshape(2, 1, 2, 3) / 11,  # values in [0, 1]: times 255; 2 images side by side
     [[0, 23, 46, 139, 162, 185], [69, 92, 115, 208, 231, 255]]),
    (np.array([0, 100, 200, 255], np.uint8).reshape(1, 1, 2, 2),  # uint8 too: (x - min) * 255 / (max - min + 1)
     [[0, 99], [199, 254]]),
    (np.arange(9, dtype=np.float32).reshape(9, 1, 1, 1),  # 9 images: a grid 8 wide, the empty cells 0
     [[0, 28, 56, 85, 113, 141, 170, 198], [226, 0, 0, 0, 0, 0, 0, 0]]),
]


@pytest.mark.parametrize("arr,expected", IMAGE_CASES)
def test_image_png_holds_mindspore_pixels(tmp_path, arr, expected):
    with SummaryRecord(str(tmp_path)) as sr:
        sr.add_value("image", "img", Tensor(arr))
        assert sr.record(3)
    v = by_step(only_file(tmp_path))[3]["img"]
    png = decode_png(v)
    assert png.shape == (len(expected), len(expected[0]), 3)
    assert (v.image.height, v.image.width, v.image.colorspace) == (png.shape[0], png.shape[1], 3)
    np.testing.assert_array_equal(png[..., 0], expected)
    np.testing.assert_array_equal(png[..., 0], png[..., 2])


def test_rgb_image_mapped_linearly():
    # MindSpore 2.10's PNG of this (1, 3, 2, 2) batch, values -3..8 (not in [0, 1]): HWC pixels
    from kiln.train.summary._values import image_canvas
    arr = np.arange(12, dtype=np.float32).reshape(1, 3, 2, 2) - 3
    np.testing.assert_array_equal(image_canvas(arr), [[[0, 85, 170], [21, 106, 191]],
                                                      [[42, 127, 212], [63, 148, 233]]])


def test_scalar_histogram_tensor_roundtrip(tmp_path):
    x = np.array([1.0, 2, 2, 3, 7, 9, np.nan, np.inf], np.float32)
    with SummaryRecord(str(tmp_path), file_prefix="run", file_suffix="_x1") as sr:
        assert os.path.basename(sr.log_dir).startswith("run.out.tfevents.")
        assert sr.log_dir.endswith("_x1") and os.path.dirname(sr.log_dir) == str(tmp_path)
        assert not os.path.exists(sr.log_dir)  # created at the first write
        sr.add_value("scalar", "loss", Tensor(np.array([0.25], np.float32)))
        sr.add_value("scalar", "count", Tensor(np.int32(7)))
        sr.add_value("histogram", "h", Tensor(x))
        sr.add_value("tensor", "t", Tensor(np.arange(6, dtype=np.int64).reshape(2, 3)))
        sr.record(1)
        sr.add_value("scalar", "loss", Tensor(np.float32(0.125)))
        sr.record(2)
        sr.flush()
        path = sr.log_dir
    steps = by_step(path)
    assert steps[1]["loss"].simple_value == 0.25 and steps[2]["loss"].simple_value == 0.125
    assert steps[1]["count"].simple_value == 7.0
    assert set(steps[2]) == {"loss"}  # values are consumed by record
    h = steps[1]["h"].histo
    # MindSpore 2.10 buckets this as 3 buckets over [1, 9] with counts 4, 0, 2 (NaN and inf in none)
    assert list(h.bucket) == [4.0, 0.0, 2.0]
    np.testing.assert_allclose(list(h.bucket_limit), [1 + 8 / 3, 1 + 16 / 3, 9.0])
    assert (h.min, h.max, h.num, h.sum, h.sum_squares) == (1.0, 9.0, 6.0, 24.0, 148.0)
    t = steps[1]["t"].tensor
    assert t.dtype == 9 and [d.size for d in t.tensor_shape.dim] == [2, 3]  # DT_INT64
    np.testing.assert_array_equal(np.frombuffer(t.tensor_content, "<i8").reshape(2, 3),
                                  np.arange(6).reshape(2, 3))


def test_histogram_bucket_counts_follow_mindspore():
    from kiln.train.summary._values import histogram_bins, histogram_value
    # MindSpore 2.10's _calc_histogram_bins
    assert [histogram_bins(n) for n in (0, 1, 5, 6, 10, 11, 880, 881, 10**6)] == [1, 2, 2, 3, 3, 2, 89, 90, 90]
    h = histogram_value("h", np.linspace(-1, 1, 25)).histo  # MindSpore 2.10: 3 buckets of 8, 8, 9
    assert list(h.bucket) == [8, 8, 9]
    h = histogram_value("h", np.array([5, 5, 5], np.int32)).histo  # all equal: [4.5, 5.5], MindSpore's counts 0, 3
    assert list(h.bucket) == [0, 3] and list(h.bucket_limit) == [5.0, 5.5]


def test_bfloat16_and_bool_values(tmp_path):
    x = Tensor(np.array([1.0, 2.0, np.nan, 4.0], np.float32)).astype(ms.bfloat16)  # NumPy has no bfloat16
    with SummaryRecord(str(tmp_path)) as sr:
        sr.add_value("tensor", "t", x)
        sr.add_value("scalar", "s", x[0:1])
        sr.add_value("histogram", "b", Tensor(np.array([True, False, True])))
        ops.HistogramSummary()("h", x)
        sr.record(0)
        path = sr.log_dir
    st = by_step(path)[0]
    np.testing.assert_array_equal(np.frombuffer(st["t"].tensor.tensor_content, "<f4"), [1, 2, np.nan, 4])
    assert st["s"].simple_value == 1.0
    assert list(st["b"].histo.bucket) == [1, 2] and list(st["h"].histo.bucket) == [2, 1]


def test_summary_ops_pynative(tmp_path):
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.s, self.i = ops.ScalarSummary(), ops.ImageSummary()
            self.t, self.h = ops.TensorSummary(), ops.HistogramSummary()

        def construct(self, x):
            y = x * 2
            self.s("sum", y.sum())
            self.i("img", y.reshape(1, 1, 2, 3))
            self.t("y_t", y)
            self.h("y_h", y)
            return y

    net = Net()
    with SummaryRecord(str(tmp_path)) as sr:
        for step in range(3):
            assert net(Tensor(np.arange(6, dtype=np.float32) + step)).shape == (6,)
            sr.record(step)
        path = sr.log_dir
    steps = by_step(path)
    for step in range(3):
        y = (np.arange(6, dtype=np.float32) + step) * 2
        assert steps[step]["sum"].simple_value == y.sum()
        np.testing.assert_array_equal(np.frombuffer(steps[step]["y_t"].tensor.tensor_content, "<f4"), y)
        assert steps[step]["y_h"].histo.sum == y.sum() and steps[step]["y_h"].histo.num == 6
    assert decode_png(steps[0]["img"]).shape == (2, 3, 3)


def _graph_net():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = ms.Parameter(Tensor(np.array([1.0, -2.0, 0.5], np.float32)), name="w")
            self.s, self.h = ops.ScalarSummary(), ops.HistogramSummary()

        def construct(self, x):
            y = x * self.w
            self.s("y_sum", y.sum())
            self.h("y", y)
            return (y * y).sum()
    return Net()


def _run_steps(tmp_path, train):
    net = _graph_net()
    step_fn = nn.TrainOneStepCell(net, nn.SGD(net.trainable_params(), 0.1)) if train else net
    outs = []
    with SummaryRecord(str(tmp_path)) as sr:
        for step in range(3):
            outs.append(float(step_fn(Tensor(np.array([1.0, 2.0, 3.0], np.float32) + step)).asnumpy()))
            sr.record(step)
        path = sr.log_dir
    steps = by_step(path)
    return outs, [steps[s]["y_sum"].simple_value for s in range(3)], [list(steps[s]["y"].histo.bucket)
                                                                      for s in range(3)]


@pytest.mark.parametrize("train", [False, True])
def test_summary_ops_graph_mode_record_every_run(tmp_path, train):
    pyn = _run_steps(tmp_path / "pynative", train)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        graph = _run_steps(tmp_path / "graph", train)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(graph[0], pyn[0], rtol=1e-6)
    np.testing.assert_allclose(graph[1], pyn[1], rtol=1e-6)
    assert graph[2] == pyn[2]
    assert len(set(graph[1])) == 3  # each run's own value, not the traced one


def test_summary_ops_in_jit_function(tmp_path):
    @ms.jit
    def f(x):
        ops.ScalarSummary()("m", x.mean())
        return x + 1

    with SummaryRecord(str(tmp_path)) as sr:
        for step in range(3):
            f(Tensor(np.full(4, float(step), np.float32)))
            sr.record(step)
        path = sr.log_dir
    assert [by_step(path)[s]["m"].simple_value for s in range(3)] == [0.0, 1.0, 2.0]


def test_tags_with_any_characters_and_ordinary_prints(tmp_path, capsys):
    tag = "a\x1eb\x1f/\u00fc %:[x]"
    ops.ScalarSummary()(tag, Tensor(1.5))
    from kiln._compiler.graph_builtins import write_text_slots
    write_text_slots("\x1cnot a channel \x1e\n", [Tensor(2.0)])  # a print that starts like a channel still prints
    assert summary_ops._drain() == {f"{tag}[:Scalar]": np.float32(1.5)}
    assert capsys.readouterr().out == "\x1cnot a channel 2.0\n"


_CACHE_SCRIPT = """
import sys, numpy as np, kiln as ms
from kiln import nn, ops, Tensor
from kiln.ops import summary_ops
ms.set_context(mode=ms.GRAPH_MODE, enable_compile_cache=True, compile_cache_path=sys.argv[1])
class N(nn.Cell):
    def construct(self, x):
        ops.ScalarSummary()("m", x.sum())
        return x * 2
N()(Tensor(np.ones(3, np.float32)))
print("drained", summary_ops._drain())
"""


def test_summary_ops_in_graphs_from_the_compile_cache(tmp_path):
    # The second process loads the compiled graph from the on-disk cache without tracing the Python again: the
    # value must still reach the cache (and print nothing).
    script = tmp_path / "s.py"
    script.write_text(_CACHE_SCRIPT)
    outs = [subprocess.run([sys.executable, str(script), str(tmp_path / "cache")], capture_output=True, text=True,
                           timeout=300) for _ in range(2)]
    for r in outs:
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == "drained {'m[:Scalar]': array(3., dtype=float32)}"
    assert os.listdir(tmp_path / "cache")


def test_eval_mode_and_plugin_filter(tmp_path):
    with SummaryRecord(str(tmp_path)) as sr:
        ops.ScalarSummary()("op", Tensor(1.0))
        sr.set_mode("eval")
        sr.add_value("scalar", "a", Tensor(2.0))
        sr.record(1)  # eval: the op's value is not recorded (it stays for the next train record)
        sr.set_mode("train")
        sr.add_value("scalar", "b", Tensor(3.0))
        sr.add_value("histogram", "hh", Tensor(np.ones(3, np.float32)))
        sr.record(2, plugin_filter=lambda plugin: plugin != "histogram")
        sr.add_value("scalar", "c", Tensor(4.0))
        sr.add_value("scalar", "c", Tensor(5.0))  # the newest one is recorded (with a warning)
        sr.record(3)
        path = sr.log_dir
    steps = by_step(path)
    assert set(steps[1]) == {"a"}
    assert set(steps[2]) == {"b", "op"} and steps[2]["op"].simple_value == 1.0
    assert steps[3]["c"].simple_value == 5.0


def test_export_npy_and_max_file_size(tmp_path):
    with SummaryRecord(str(tmp_path / "e"), export_options={"tensor_format": "npy"}) as sr:
        sr.add_value("tensor", "w/a", Tensor(np.arange(3, dtype=np.float32)))
        sr.record(5)
    exported = glob.glob(str(tmp_path / "e" / "export_*" / "tensor" / "*.npy"))
    assert [os.path.basename(p) for p in exported] == ["w%2Fa_5.npy"]
    np.testing.assert_array_equal(np.load(exported[0]), np.arange(3, dtype=np.float32))

    limit = 200
    with SummaryRecord(str(tmp_path / "m"), max_file_size=limit) as sr:
        for step in range(20):
            sr.add_value("scalar", "x", Tensor(float(step)))
            assert sr.record(step)
        path = sr.log_dir
    assert os.path.getsize(path) <= limit
    written = sorted(by_step(path))
    assert written == list(range(len(written))) and 0 < len(written) < 20


def test_image_with_two_channels_is_skipped(tmp_path, caplog):
    with SummaryRecord(str(tmp_path)) as sr:
        sr.add_value("image", "bad", Tensor(np.zeros((1, 2, 2, 2), np.float32)))  # C = 2: MindSpore logs, skips
        sr.add_value("scalar", "ok", Tensor(1.0))
        sr.record(0)
        path = sr.log_dir
    assert set(by_step(path)[0]) == {"ok"}
    assert "bad" in caplog.text


# ---- errors (MindSpore 2.10's exception types) ----

def test_summary_op_errors():
    x = Tensor(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="ScalarSummary.*name.*str"):
        ops.ScalarSummary()(1, Tensor(1.0))
    with pytest.raises(ValueError, match="ScalarSummary.*empty"):
        ops.ScalarSummary()("", Tensor(1.0))
    with pytest.raises(TypeError, match="ScalarSummary.*Tensor.*float"):
        ops.ScalarSummary()("a", 3.0)
    with pytest.raises(ValueError, match=r"ScalarSummary.*one element.*\(2,\)"):
        ops.ScalarSummary()("a", x)
    with pytest.raises(ValueError, match=r"ImageSummary.*rank-4.*\(2,\)"):
        ops.ImageSummary()("a", x)
    with pytest.raises(ValueError, match="TensorSummary.*0-d"):
        ops.TensorSummary()("a", Tensor(1.0))
    with pytest.raises(ValueError, match="HistogramSummary.*0-d"):
        ops.HistogramSummary()("a", Tensor(1.0))
    assert summary_ops._drain() == {}


def test_summary_op_errors_in_graph_mode(graph_mode):
    class N(nn.Cell):
        def construct(self, x):
            ops.ImageSummary()("img", x)
            return x + 1
    with pytest.raises(ValueError, match="ImageSummary.*rank-4"):
        N()(Tensor(np.ones(3, np.float32)))


def test_summary_record_errors(tmp_path):
    d = str(tmp_path)
    with pytest.raises(TypeError, match="log_dir is invalid"):
        SummaryRecord(3)
    with pytest.raises(TypeError, match="file_prefix"):
        SummaryRecord(d, file_prefix=1)
    with pytest.raises(ValueError, match="illegal"):
        SummaryRecord(d, file_suffix="a b")
    with pytest.raises(TypeError, match="max_file_size"):
        SummaryRecord(d, max_file_size=1.5)
    with pytest.raises(TypeError, match="raise_exception"):
        SummaryRecord(d, raise_exception=1)
    with pytest.raises(ValueError, match="export_options"):
        SummaryRecord(d, export_options={"x": "npy"})
    with pytest.raises(ValueError, match="export_format"):
        SummaryRecord(d, export_options={"tensor_format": "txt"})
    assert SummaryRecord.count == 0
    sr = SummaryRecord(d)
    try:
        with pytest.raises(RuntimeError, match="only one instance"):
            SummaryRecord(d)
        with pytest.raises(ValueError, match="name"):
            sr.add_value("scalar", 1, Tensor(1.0))
        with pytest.raises(ValueError, match="name"):
            sr.add_value("scalar", "", Tensor(1.0))
        with pytest.raises(TypeError, match="expect to be Tensor, but got float32"):
            sr.add_value("scalar", "a", np.float32(1.0))
        with pytest.raises(ValueError, match="rank must be less than or equal to 1, but got 2"):
            sr.add_value("scalar", "a", Tensor(np.ones(2, np.float32)))
        with pytest.raises(ValueError, match="valid image"):
            sr.add_value("image", "a", Tensor(np.zeros((1, 2, 2), np.float32)))
        with pytest.raises(ValueError, match="should not be empty"):
            sr.add_value("histogram", "a", Tensor(1.0))
        with pytest.raises(ValueError, match="no such \"plugin\""):
            sr.add_value("foo", "a", Tensor(1.0))
        with pytest.raises(ValueError, match="MindInsight"):
            sr.add_value("train_lineage", "a", object())
        with pytest.raises(TypeError, match="The type of 'step' should be 'int', but got type 'float'"):
            sr.record(1.0)
        with pytest.raises(TypeError, match="'step'.*'bool'"):
            sr.record(True)
        with pytest.raises(TypeError, match="train_network"):
            sr.record(1, train_network=3)
        with pytest.raises(ValueError, match="recognized mode"):
            sr.set_mode("x")
    finally:
        sr.close()
    sr.close()  # twice: nothing
    assert SummaryRecord.count == 0
    assert sr.record(1) is False  # closed: logged, False
    with pytest.raises(ValueError, match="has been closed"):
        with sr:
            pass


# ---- SummaryCollector in Model.train ----

class _CollectNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, pad_mode="valid", weight_init="ones")
        self.fc = nn.Dense(2 * 2 * 2, 3, weight_init="ones", bias_init="zeros")
        self.flat = nn.Flatten()
        self.ss = ops.ScalarSummary()

    def construct(self, x):
        y = self.flat(self.conv(x))
        self.ss("feat_mean", y.mean())
        return self.fc(y)


def _collect_train(summary_dir, **kw):
    import kiln.dataset as ds
    rng = np.random.default_rng(0)
    X = rng.random((12, 1, 4, 4)).astype(np.float32)
    Y = (np.arange(12) % 3).astype(np.int32)
    data = ds.NumpySlicesDataset({"x": X, "y": Y}, shuffle=False).batch(4)
    net = _CollectNet()
    model = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                  nn.Momentum(net.trainable_params(), 0.01, 0.9))
    sc = SummaryCollector(str(summary_dir), **kw)
    model.train(2, data, callbacks=[sc], dataset_sink_mode=False)
    return by_step(only_file(summary_dir))


# MindSpore 2.10, the same program (tests/python/test_summary.py::_collect_train, collect_freq=1,
# histogram_regular "^fc"), read from its summary file: loss/auto and feat_mean per step, the fc.weight histogram's
# bucket counts, the input image's pixel sum.
MS_LOSS = [1.098612, 1.154626, 1.160597, 1.166211, 1.120622, 1.080307]
MS_FEAT_MEAN = [4.724124, 5.363572, 4.626282, 4.723577, 5.362333, 4.624722]
MS_FC_WEIGHT_COUNTS = [[16, 2, 6], [8, 6, 10], [2, 8, 14], [4, 8, 12], [2, 12, 10], [4, 8, 12]]
MS_IMAGE_SUMS = [24075, 28281, 26472, 24075, 28281, 26472]


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_summary_collector_model_train(tmp_path, mode):
    if mode == "graph":
        ms.set_context(mode=ms.GRAPH_MODE)
    try:
        steps = _collect_train(tmp_path, collect_freq=1, collect_specified_data={"histogram_regular": "^fc"})
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert sorted(steps) == [1, 2, 3, 4, 5, 6]
    np.testing.assert_allclose([steps[s]["loss/auto"].simple_value for s in range(1, 7)], MS_LOSS, atol=1e-5)
    np.testing.assert_allclose([steps[s]["feat_mean"].simple_value for s in range(1, 7)], MS_FEAT_MEAN, atol=1e-5)
    assert [list(steps[s]["fc.weight/auto"].histo.bucket) for s in range(1, 7)] == MS_FC_WEIGHT_COUNTS
    assert [int(decode_png(steps[s]["input_data/auto"]).sum()) for s in range(1, 7)] == MS_IMAGE_SUMS
    assert [steps[s]["learning_rate/auto"].simple_value for s in range(1, 7)] == [np.float32(0.01)] * 6
    assert "conv.weight/auto" not in steps[1]


def test_summary_collector_schedule(tmp_path):
    # MindSpore's schedule: the first step, then every collect_freq steps; TensorSummary only at the steps of
    # collect_tensor_freq
    steps = _collect_train(tmp_path, collect_freq=4, collect_specified_data={"collect_input_data": False},
                           keep_default_action=True)
    assert sorted(steps) == [1, 4]
    assert "input_data/auto" not in steps[1]
    assert {"loss/auto", "feat_mean", "learning_rate/auto"} <= set(steps[4])
    # the first five parameters without histogram_regular
    assert {"conv.weight/auto", "fc.weight/auto", "fc.bias/auto"} <= set(steps[1])

    only = _collect_train(tmp_path / "only", collect_freq=2, collect_specified_data={"collect_metric": True},
                          keep_default_action=False)
    assert sorted(only) == [1, 2, 4, 6]
    assert set(only[2]) == {"loss/auto", "feat_mean"}


def test_summary_collector_dataset_sink_mode(tmp_path):
    # With sink mode the unit of collect_freq is the epoch (one sink per epoch: steps 3, 6, 9). The values equal
    # MindSpore 2.10's at those steps (its CPU build trains this without sinking and records every step).
    import kiln.dataset as ds
    rng = np.random.default_rng(0)
    X = rng.random((12, 1, 4, 4)).astype(np.float32)
    Y = (np.arange(12) % 3).astype(np.int32)
    data = ds.NumpySlicesDataset({"x": X, "y": Y}, shuffle=False).batch(4)
    net = _CollectNet()
    model = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                  nn.Momentum(net.trainable_params(), 0.01, 0.9))
    model.train(3, data, callbacks=[SummaryCollector(str(tmp_path), collect_freq=1)], dataset_sink_mode=True)
    steps = by_step(only_file(tmp_path))
    assert sorted(steps) == [3, 6, 9]
    np.testing.assert_allclose([steps[s]["loss/auto"].simple_value for s in (3, 6, 9)],
                               [1.160597, 1.080307, 1.164615], atol=1e-5)
    np.testing.assert_allclose([steps[s]["feat_mean"].simple_value for s in (3, 6, 9)],
                               [4.626282, 4.624722, 4.622964], atol=1e-5)


def test_summary_collector_argument_errors(tmp_path):
    d = str(tmp_path)
    with pytest.raises(ValueError, match="collect_freq.*greater than 0"):
        SummaryCollector(d, collect_freq=0)
    with pytest.raises(TypeError, match="collect_freq"):
        SummaryCollector(d, collect_freq=1.5)
    with pytest.raises(TypeError, match="collect_freq"):
        SummaryCollector(d, collect_freq=True)
    with pytest.raises(ValueError, match="unsupported"):
        SummaryCollector(d, collect_specified_data={"collect_everything": True})
    with pytest.raises(ValueError, match="regular expression"):
        SummaryCollector(d, collect_specified_data={"histogram_regular": "("})
    with pytest.raises(TypeError, match="collect_metric"):
        SummaryCollector(d, collect_specified_data={"collect_metric": 1})
    with pytest.raises(TypeError, match="keep_default_action"):
        SummaryCollector(d, keep_default_action=None)
    with pytest.raises(TypeError, match="custom_lineage_data"):
        SummaryCollector(d, custom_lineage_data={"a": [1]})
    with pytest.raises(ValueError, match="landscape_size"):
        SummaryCollector(d, collect_specified_data={"collect_landscape": {"landscape_size": 1, "intervals": [[1, 2, 3]]}})
    import kiln.dataset as ds
    net = _CollectNet()
    model = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                  nn.Momentum(net.trainable_params(), 0.01, 0.9))
    data = ds.NumpySlicesDataset({"x": np.zeros((4, 1, 4, 4), np.float32), "y": np.zeros(4, np.int32)}).batch(2)
    with pytest.raises(RuntimeError, match="only one instance"):  # MindSpore 2.10: the second one's SummaryRecord
        model.train(1, data, callbacks=[SummaryCollector(d + "/a"), SummaryCollector(d + "/b")],
                    dataset_sink_mode=False)
    assert SummaryRecord.count == 0  # the first one was closed (MindSpore 2.10 leaves its count at 1)


def test_summary_record_in_a_user_callback(tmp_path):
    # The pattern of mindcv's StateMonitor / LossAccSummary: a SummaryRecord opened in the callback's __enter__,
    # a scalar added per epoch and recorded at the optimizer's global step.
    from kiln.train import Callback
    from kiln.train._utils import _make_directory

    class LossSummary(Callback):
        def __init__(self, summary_dir):
            super().__init__()
            self._dir = _make_directory(summary_dir, "summary_dir")

        def __enter__(self):
            self.summary_record = SummaryRecord(self._dir)
            return self

        def __exit__(self, *exc):
            self.summary_record.close()

        def on_train_epoch_end(self, run_context):
            cb_params = run_context.original_args()
            loss = Tensor(np.mean(cb_params.net_outputs.asnumpy()))
            self.summary_record.add_value("scalar", "train_loss_0", loss)
            self.summary_record.record(int(cb_params.optimizer.global_step.asnumpy()[0]))

    import kiln.dataset as ds
    rng = np.random.default_rng(0)
    data = ds.NumpySlicesDataset({"x": rng.random((12, 1, 4, 4)).astype(np.float32),
                                  "y": (np.arange(12) % 3).astype(np.int32)}, shuffle=False).batch(4)
    net = _CollectNet()
    model = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                  nn.Momentum(net.trainable_params(), 0.01, 0.9))
    model.train(2, data, callbacks=[LossSummary(str(tmp_path / "sub"))], dataset_sink_mode=False)
    steps = by_step(only_file(tmp_path / "sub"))
    assert sorted(steps) == [3, 6]
    # the last step's loss of each epoch (MindSpore 2.10's loss/auto at steps 3 and 6 above)
    np.testing.assert_allclose([steps[s]["train_loss_0"].simple_value for s in (3, 6)], [MS_LOSS[2], MS_LOSS[5]],
                               atol=1e-5)
    assert steps[3]["feat_mean"].simple_value == pytest.approx(MS_FEAT_MEAN[2], abs=1e-5)  # the op's newest value


# ---- TensorBoard's own reader, and MindSpore's import paths ----

def test_tensorboard_event_accumulator_reads_the_files(tmp_path):
    ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    _collect_train(tmp_path, collect_freq=1)
    acc = ea.EventAccumulator(str(tmp_path), size_guidance={"scalars": 0, "images": 0, "histograms": 0})
    acc.Reload()
    np.testing.assert_allclose([e.value for e in acc.Scalars("loss/auto")], MS_LOSS, atol=1e-5)
    assert [e.step for e in acc.Scalars("loss/auto")] == [1, 2, 3, 4, 5, 6]
    assert [e.width for e in acc.Images("input_data/auto")] == [16] * 6
    assert "fc.weight/auto" in acc.Tags()["histograms"]
    from tensorboard.util import tensor_util
    with SummaryRecord(str(tmp_path / "t")) as sr:
        sr.add_value("tensor", "u32", Tensor(np.array([1, 2, 3], np.uint32)))
        sr.add_value("tensor", "f", Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)))
        sr.record(4)
    acc = ea.EventAccumulator(str(tmp_path / "t"))
    acc.Reload()
    u32 = tensor_util.make_ndarray(acc.Tensors("u32")[0].tensor_proto)
    assert u32.dtype == np.uint32 and u32.tolist() == [1, 2, 3]
    np.testing.assert_array_equal(tensor_util.make_ndarray(acc.Tensors("f")[0].tensor_proto),
                                  np.arange(6, dtype=np.float32).reshape(2, 3))


def test_mindspore_import_paths():
    code = ("import mindspore\n"
            "from mindspore.train import SummaryRecord\n"
            "from mindspore.train.summary import SummaryRecord as S2\n"
            "from mindspore.train.summary.summary_record import SummaryRecord as S3\n"
            "from mindspore.train.callback import SummaryCollector\n"
            "from mindspore.train._utils import _make_directory\n"
            "from mindspore.ops import operations as P\n"
            "assert SummaryRecord is mindspore.SummaryRecord is S2 is S3\n"
            "assert SummaryCollector is mindspore.SummaryCollector is mindspore.train.SummaryCollector\n"
            "assert P.ScalarSummary is mindspore.ops.ScalarSummary\n"
            "print('ok')\n")
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-m", "kiln.compat", "-c", code], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"

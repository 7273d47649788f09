"""C++ deployment (issue 14): kiln.export(..., file_format="KILN") writes a model that the C++ example program
examples/cpp/kiln_run_model (linked with the C++ library only, no Python) loads and runs with Kiln's outputs:
the LeNet of examples/train_lenet_digits.py, a multi-input/multi-output network with an integer input, and
MindSpore's own MindIR fixture converted through kiln.load + nn.GraphCell. Bad model and input files make the
program exit with status 1 and a clear message (never a crash); bad usage exits with 2.

The program is built with the C++ tests (CMake option KILN_BUILD_EXAMPLES, on with KILN_BUILD_TESTS:
`tools/dev_build.sh --tests` → build/dev/kiln_run_model, `./run.sh test` → build/cpp-tests/kiln_run_model, built
before the Python tests run); KILN_RUN_MODEL names another binary. Without one these tests are skipped."""
import glob
import os
import subprocess
import sys

import numpy as np
import pytest

import kiln as ms
from kiln import nn, ops, Tensor

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
FIX = os.path.join(ROOT, "..", "shared", "fixtures", "mindspore-2.10")
if not os.path.isdir(FIX):
    FIX = "/work/shared/fixtures/mindspore-2.10"


def _binary():
    env = os.environ.get("KILN_RUN_MODEL")
    if env:
        return env
    found = [p for p in glob.glob(os.path.join(ROOT, "build", "*", "kiln_run_model")) if os.access(p, os.X_OK)]
    return max(found, key=os.path.getmtime) if found else None


BINARY = _binary()
pytestmark = pytest.mark.skipif(BINARY is None, reason="kiln_run_model is not built (tools/dev_build.sh --tests)")


@pytest.fixture(autouse=True)
def _pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def run_model(*args):
    p = subprocess.run([BINARY, *map(str, args)], capture_output=True, text=True, timeout=120,
                       errors="strict")  # messages are valid text (damaged names are quoted as \xNN)
    return p.returncode, p.stdout, p.stderr


def run_ok(model, *inputs, tmp_path):
    """Runs the program on `inputs` (NumPy arrays, written as .npy) → (list of output arrays, stdout)."""
    files = []
    for i, x in enumerate(inputs):
        files.append(tmp_path / f"in{i}.npy")
        np.save(files[-1], x)
    rc, out, err = run_model(model, *files, "--save", tmp_path / "out")
    assert rc == 0, out + err
    outs = []
    while os.path.exists(tmp_path / f"out{len(outs)}.npy"):
        outs.append(np.load(tmp_path / f"out{len(outs)}.npy"))
    return outs, out


def _lenet():
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import train_lenet_digits as ex
    finally:
        sys.path.pop(0)
    return ex


def _set_bn_stats(net, rng):
    for _, c in net.cells_and_names():
        if isinstance(c, nn.BatchNorm2d):
            for p, v in ((c.moving_mean, rng.normal(0, 0.5, c.moving_mean.shape)),
                         (c.moving_variance, rng.uniform(0.5, 2.0, c.moving_variance.shape)),
                         (c.gamma, rng.uniform(0.5, 1.5, c.gamma.shape)), (c.beta, rng.normal(0, 0.5, c.beta.shape))):
                p.set_data(Tensor(v.astype(np.float32)))


@pytest.fixture(scope="module")
def lenet_file(tmp_path_factory):
    """The example's LeNet (BatchNorm statistics set, so that they matter) exported, with 16 images of the digits'
    size and range (8x8 in [0, 1]; random, so that scikit-learn's import stays out of this file) and its outputs."""
    ex = _lenet()
    ms.set_seed(3)
    net = ex.LeNet()
    _set_bn_stats(net, np.random.default_rng(0))
    x = np.random.default_rng(4).uniform(0, 1, (16, 1, 8, 8)).astype(np.float32)
    net.set_train(False)
    want = net(Tensor(x)).asnumpy()
    path = tmp_path_factory.mktemp("lenet") / "lenet"
    ms.export(net, Tensor(x), file_name=str(path), file_format="KILN")
    return str(path) + ".kiln", x, want, net


def test_lenet_runs_in_cpp_with_kiln_outputs(lenet_file, tmp_path):
    model, x, want, net = lenet_file
    from kiln._loader import _core
    with open(model, "rb") as f:  # the header of include/kiln/deploy.h: magic, u32 version
        assert f.read(12) == b"KILNMODL" + _core.DEPLOY_FORMAT_VERSION.to_bytes(4, "little")
    outs, stdout = run_ok(model, x, tmp_path=tmp_path)
    assert len(outs) == 1 and outs[0].dtype == np.float32 and outs[0].shape == (16, 10)
    np.testing.assert_allclose(outs[0], want, rtol=0, atol=1e-6)
    # Graph mode runs the same optimized graph: the same bits.
    ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_array_equal(outs[0], net(Tensor(x)).asnumpy())
    lines = stdout.splitlines()
    assert lines[0] == "model LeNet: 11 nodes, 14 weights"
    assert lines[1:3] == ["input  x: Float32[16, 1, 8, 8]", "output output0: Float32[16, 10]"]
    printed = [float(v) for v in lines[4].strip(" [],.").split(", ")[:64]]
    np.testing.assert_allclose(printed, want.reshape(-1)[:64], rtol=0, atol=1e-8)
    assert lines[4].endswith(", ...]")


def test_mnist_example_lenet5_runs_in_cpp(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        from train_mnist_model import LeNet5
    finally:
        sys.path.pop(0)
    ms.set_seed(2)
    net = LeNet5()
    net.set_train(False)
    x = np.random.default_rng(2).uniform(0, 1, (3, 1, 28, 28)).astype(np.float32)
    want = net(Tensor(x)).asnumpy()
    ms.export(net, Tensor(x), file_name=str(tmp_path / "lenet5"), file_format="KILN")
    outs, stdout = run_ok(tmp_path / "lenet5.kiln", x, tmp_path=tmp_path)
    np.testing.assert_allclose(outs[0], want, rtol=0, atol=1e-6)
    assert stdout.splitlines()[0].endswith(" 8 weights")  # 2 convolutions (no bias, MindSpore's default), 3 Dense


def test_raw_input_file_and_signature_only(lenet_file, tmp_path):
    model, x, want, _ = lenet_file
    raw = tmp_path / "x.bin"
    x.astype("<f4").tofile(raw)
    rc, out, err = run_model(model, raw, "--save", tmp_path / "r", "--max-values", "0")
    assert rc == 0, err
    np.testing.assert_allclose(np.load(tmp_path / "r0.npy"), want, rtol=0, atol=1e-6)
    assert "..." not in out  # --max-values 0: every value printed
    rc, out, err = run_model(model)  # no input: the signature only
    assert rc == 0 and out.splitlines()[1:] == ["input  x: Float32[16, 1, 8, 8]", "output output0: Float32[16, 10]"]
    rc, out, err = run_model(model, raw, "--repeat", "3")
    assert rc == 0 and "3 runs:" in out and "ms per run" in out


def test_mindspore_mindir_runs_in_cpp_after_conversion(tmp_path):
    """A MindIR file (here MindSpore 2.10's own export) becomes a Kiln model through load + GraphCell + export."""
    io = np.load(os.path.join(FIX, "convnet_io.npz"))
    cell = nn.GraphCell(ms.load(os.path.join(FIX, "convnet.mindir")))
    ms.export(cell, Tensor(io["x"]), file_name=str(tmp_path / "convnet"), file_format="KILN")
    outs, stdout = run_ok(tmp_path / "convnet.kiln", io["x"], tmp_path=tmp_path)
    np.testing.assert_allclose(outs[0], io["eval_logits"], rtol=0, atol=1e-6)
    assert "8 weights" in stdout.splitlines()[0]


class TwoHeads(nn.Cell):
    """Integer ids through an Embedding and a float feature vector; returns two outputs (float and int)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(7, 4)
        self.fc = nn.Dense(4 + 3, 2)

    def construct(self, ids, feats):
        h = ops.concat((self.emb(ids).mean(1), feats), 1)
        y = self.fc(h)
        return y, y.argmax(1).astype(ms.int32)


def test_multi_input_output_and_integer_dtypes(tmp_path):
    ms.set_seed(5)
    net = TwoHeads()
    net.set_train(False)
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 7, (5, 3)).astype(np.int32)
    feats = rng.normal(size=(5, 3)).astype(np.float32)
    want = [o.asnumpy() for o in net(Tensor(ids), Tensor(feats))]
    ms.export(net, Tensor(ids), Tensor(feats), file_name=str(tmp_path / "heads.kiln"), file_format="KILN")
    assert not os.path.exists(tmp_path / "heads.kiln.kiln")
    outs, stdout = run_ok(tmp_path / "heads.kiln", ids, feats, tmp_path=tmp_path)
    assert [o.dtype for o in outs] == [np.float32, np.int32]
    np.testing.assert_allclose(outs[0], want[0], rtol=0, atol=1e-6)
    np.testing.assert_array_equal(outs[1], want[1])
    assert "input  ids: Int32[5, 3]" in stdout and "input  feats: Float32[5, 3]" in stdout
    # An id out of the Embedding's range is a run-time error naming the check, not garbage or a crash.
    bad = ids.copy()
    bad[0, 0] = 9
    np.save(tmp_path / "bad.npy", bad)
    np.save(tmp_path / "feats.npy", feats)
    rc, out, err = run_model(tmp_path / "heads.kiln", tmp_path / "bad.npy", tmp_path / "feats.npy")
    assert rc == 1 and "kiln_run_model: error:" in err and "9" in err, err


# ------------------------------------------------------------------------------------------------ bad files
def test_bad_model_files_exit_1_with_a_message(lenet_file, tmp_path):
    model, x, _, _ = lenet_file
    np.save(tmp_path / "x.npy", x)
    data = open(model, "rb").read()

    def fails(path, *needles):
        rc, out, err = run_model(path, tmp_path / "x.npy")
        assert rc == 1, (rc, out, err)
        assert err.startswith("kiln_run_model: error: kiln::deploy::load: "), err
        for n in needles:
            assert n in err, err

    fails(tmp_path / "missing.kiln", "no such file")
    fails(tmp_path, "not a regular file")
    for n in (0, 5, 13, 100, len(data) // 2, len(data) - 1):
        (tmp_path / "cut.kiln").write_bytes(data[:n])
        fails(tmp_path / "cut.kiln", "truncated")
    (tmp_path / "tail.kiln").write_bytes(data + b"\0")
    fails(tmp_path / "tail.kiln", "1 bytes follow the model")
    fails(os.path.join(FIX, "convnet.mindir"), "not a Kiln model file")
    at = data.index(b"MatMulBiasAct")
    (tmp_path / "op.kiln").write_bytes(data[:at] + b"MatMulBiasAcX" + data[at + 13:])
    fails(tmp_path / "op.kiln", "unknown op 'MatMulBiasAcX'")
    version = bytearray(data)
    version[8] = 2
    (tmp_path / "v.kiln").write_bytes(bytes(version))
    fails(tmp_path / "v.kiln", "format version 2")
    # Random corruption: status 0 (a changed weight byte) or 1 with a message, never a signal.
    rng = np.random.default_rng(0)
    for trial in range(12):
        b = bytearray(data)
        for i in rng.integers(0, len(b), 3):
            b[i] = int(rng.integers(0, 256))
        (tmp_path / "rnd.kiln").write_bytes(bytes(b))
        rc, out, err = run_model(tmp_path / "rnd.kiln", tmp_path / "x.npy")
        assert rc in (0, 1), (trial, rc, err)
        assert rc == 0 or "kiln_run_model: error:" in err


def test_bad_inputs_and_usage(lenet_file, tmp_path):
    model, x, _, _ = lenet_file

    def fails(rc_want, needle, *args):
        rc, out, err = run_model(*args)
        assert rc == rc_want and needle in err, (rc, out, err)

    np.save(tmp_path / "short.npy", x[:2])
    fails(1, "input 0 ('x') must be Float32[16, 1, 8, 8], but got Float32[2, 1, 8, 8]", model, tmp_path / "short.npy")
    np.save(tmp_path / "f64.npy", x.astype(np.float64))
    fails(1, "but got Float64[16, 1, 8, 8]", model, tmp_path / "f64.npy")
    np.save(tmp_path / "fortran.npy", np.asfortranarray(x.reshape(16, 64)))
    fails(1, "Fortran-order", model, tmp_path / "fortran.npy")
    np.save(tmp_path / "c8.npy", np.zeros(3, np.complex64))
    fails(1, "dtype '<c8' is not one Kiln reads", model, tmp_path / "c8.npy")
    (tmp_path / "fake.npy").write_bytes(b"not numpy at all")
    fails(1, "not a .npy file", model, tmp_path / "fake.npy")
    good = (tmp_path / "short.npy").read_bytes()
    (tmp_path / "cut.npy").write_bytes(good[:-5])
    fails(1, "the file holds", model, tmp_path / "cut.npy")
    (tmp_path / "x.bin").write_bytes(b"\0" * 100)
    fails(1, "must hold 4096 bytes, but the file has 100", model, tmp_path / "x.bin")
    fails(1, "takes 1 input(s), but 2 input file(s)", model, tmp_path / "x.bin", tmp_path / "x.bin")
    fails(1, "cannot be opened", model, tmp_path / "nothere.npy")
    fails(2, "no model file given")
    fails(2, "unknown option --bogus", model, "--bogus")
    fails(2, "--repeat needs a count", model, "--repeat", "x")
    fails(2, "out of range", model, "--repeat", "99999999999999999999")
    fails(2, "--save needs a value", model, "--save")


# ------------------------------------------------------------------------------------------- export checks
def test_export_refuses_networks_that_are_not_inference_graphs(tmp_path):
    class Noisy(nn.Cell):
        def construct(self, x):
            return x + ops.uniform(x.shape, Tensor(0.0), Tensor(1.0))

    with pytest.raises(ValueError, match=r"For 'export'.*UniformReal.*test_deploy_cpp.py:\d+.*random numbers"):
        ms.export(Noisy(), Tensor(np.ones((2, 2), np.float32)), file_name=str(tmp_path / "n"), file_format="KILN")

    class Counter(nn.Cell):
        def __init__(self):
            super().__init__()
            self.count = ms.Parameter(Tensor(np.zeros(2, np.float32)), name="count")

        def construct(self, x):
            ops.assign(self.count, self.count + x)
            return x * 2

    with pytest.raises(ValueError, match=r"Assign.*writes its inputs"):
        ms.export(Counter(), Tensor(np.ones(2, np.float32)), file_name=str(tmp_path / "c"), file_format="KILN")
    assert not os.listdir(tmp_path)  # nothing (not even a temporary file) is left behind
    with pytest.raises(ValueError, match="custom_func"):
        ms.export(nn.ReLU(), Tensor(np.ones(2, np.float32)), file_name=str(tmp_path / "r"), file_format="KILN",
                  custom_func=lambda m: None)
    with pytest.raises(ValueError, match=r"'file_format' must be one of \['AIR', 'ONNX', 'MINDIR', 'KILN'\]"):
        ms.export(nn.ReLU(), Tensor(np.ones(2, np.float32)), file_name=str(tmp_path / "r"), file_format="kiln")


def test_weight_names_are_parameter_names_and_distinct(tmp_path):
    from kiln.train._kiln_export import _weight_names
    from kiln.train._export_load import _param_names
    from kiln._loader import _core
    net = nn.SequentialCell(nn.Dense(3, 2), nn.Dense(2, 2))
    extra = Tensor(np.ones(2, np.float32))
    with _core.Trace("t") as tr:
        x = tr.input((1, 3), ms.float32)
        g = tr.finish([net(x) + extra])
    assert _weight_names(g, _param_names(net)) == ["0.weight", "0.bias", "1.weight", "1.bias", "_tensor4"]
    same = {p._id: "w" for p in net.trainable_params()}  # four Parameters with one name
    assert _weight_names(g, same) == ["w", "w#1", "w#2", "w#3", "_tensor4"]

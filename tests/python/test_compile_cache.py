"""The compile cache and every Python cache around it (issue 7, items 11, 15, 16).

* No tensor made while tracing outlives the trace: every layer, loss, learning-rate schedule and optimizer of the
  package (found by walking the package, so a new class must be added here) is compiled at two batch sizes and
  then called eagerly; each result equals PyNative, and no symbolic tensor is left reachable from the cell.
* The key holds the training flags themselves: toggling set_train every epoch traces exactly twice.
* The cache is bounded (LRU, size settable), thread-safe, and dropped with its Cell or function.
"""
import copy
import gc
import importlib
import inspect
import pkgutil
import threading
import weakref

import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, nn, ops
from kiln._compiler.jit import JitFunction
from kiln.parallel.nn import GradAccumulation

B1, B2 = 4, 3  # the two batch sizes


@pytest.fixture(autouse=True)
def pynative_after():
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def f32(rng, *shape):
    return Tensor(rng.standard_normal(shape).astype(np.float32))


def labels(rng, n, classes=5):
    return Tensor(rng.integers(0, classes, n).astype(np.int32))


def probs(rng, *shape):
    p = rng.random(shape) + 0.1
    return Tensor((p / p.sum(-1, keepdims=True)).astype(np.float32))


def _sig(rng, *shape):
    return Tensor((1 / (1 + np.exp(-rng.standard_normal(shape)))).astype(np.float32))


def _act(n):
    return f32(np.random.default_rng(n), n, 5),


# class name -> list of (constructor, inputs(batch) -> tuple of args). Every public Cell subclass with a construct
# of its own in kiln.nn must appear here or in NOT_LAYERS.
def _r(n):
    return np.random.default_rng(100 + n)


LAYERS = {
    "Dense": [(lambda: nn.Dense(5, 3), lambda n: (f32(_r(n), n, 5),))],
    "Linear": [(lambda: ms.mint.nn.Linear(5, 3), lambda n: (f32(_r(n), n, 5),))],  # (mint.nn: a Dense)
    # kiln.mint.nn's own layers (the others are kiln.nn subclasses under the same names, run above)
    "Hardsigmoid": [(lambda: ms.mint.nn.Hardsigmoid(), lambda n: (f32(_r(n), n, 5),))],
    "SoftMarginLoss": [(lambda: ms.mint.nn.SoftMarginLoss(), lambda n: (f32(_r(n), n, 5), f32(_r(n + 9), n, 5)))],
    "UpsamplingNearest2d": [(lambda: ms.mint.nn.UpsamplingNearest2d(scale_factor=2),
                             lambda n: (f32(_r(n), n, 2, 3, 4),))],
    "UpsamplingBilinear2d": [(lambda: ms.mint.nn.UpsamplingBilinear2d(size=(5, 7)),
                              lambda n: (f32(_r(n), n, 2, 3, 4),))],
    "ConstantPad1d": [(lambda: ms.mint.nn.ConstantPad1d(1, 0.5), lambda n: (f32(_r(n), n, 2, 3, 4),))],
    "ConstantPad2d": [(lambda: ms.mint.nn.ConstantPad2d(1, 0.5), lambda n: (f32(_r(n), n, 2, 3, 4),))],
    "ConstantPad3d": [(lambda: ms.mint.nn.ConstantPad3d(1, 0.5), lambda n: (f32(_r(n), n, 2, 3, 4),))],
    "ZeroPad1d": [(lambda: ms.mint.nn.ZeroPad1d(1), lambda n: (f32(_r(n), n, 2, 3, 4),))],
    "ZeroPad2d": [(lambda: ms.mint.nn.ZeroPad2d(1), lambda n: (f32(_r(n), n, 2, 3, 4),))],
    "ZeroPad3d": [(lambda: ms.mint.nn.ZeroPad3d(1), lambda n: (f32(_r(n), n, 2, 3, 4),))],
    "ReflectionPad1d": [(lambda: ms.mint.nn.ReflectionPad1d(1), lambda n: (f32(_r(n), n, 2, 3, 4),))],
    "ReflectionPad2d": [(lambda: ms.mint.nn.ReflectionPad2d(1), lambda n: (f32(_r(n), n, 2, 3, 4),))],
    "ReflectionPad3d": [(lambda: ms.mint.nn.ReflectionPad3d(1), lambda n: (f32(_r(n), n, 2, 3, 4),))],
    "ReplicationPad1d": [(lambda: ms.mint.nn.ReplicationPad1d(1), lambda n: (f32(_r(n), n, 2, 3, 4),))],
    "ReplicationPad2d": [(lambda: ms.mint.nn.ReplicationPad2d(1), lambda n: (f32(_r(n), n, 2, 3, 4),))],
    "ReplicationPad3d": [(lambda: ms.mint.nn.ReplicationPad3d(1), lambda n: (f32(_r(n), n, 2, 3, 4),))],
    "Dropout": [(lambda: nn.Dropout(p=0.5), lambda n: (f32(_r(n), n, 6),))],
    "Pad": [(lambda: nn.Pad(((0, 0), (1, 2)), mode="REFLECT"), lambda n: (f32(_r(n), n, 4),)),
            (lambda: nn.Pad(((0, 1), (2, 0))), lambda n: (f32(_r(n), n, 3),))],
    "ClipByNorm": [(lambda: nn.ClipByNorm(axis=1), lambda n: (f32(_r(n), n, 4), f32(_r(n + 9), 1)))],
    "Flatten": [(lambda: nn.Flatten(), lambda n: (f32(_r(n), n, 2, 3),))],
    "Identity": [(lambda: nn.Identity(), lambda n: (f32(_r(n), n, 3),))],
    "SequentialCell": [(lambda: nn.SequentialCell([nn.Dense(5, 4), nn.ReLU(), nn.Dropout(p=0.3)]),
                        lambda n: (f32(_r(n), n, 5),))],
    "AdaptiveAvgPool1d": [(lambda: nn.AdaptiveAvgPool1d(2), lambda n: (f32(_r(n), n, 3, 6),))],
    "AdaptiveAvgPool2d": [(lambda: nn.AdaptiveAvgPool2d(2), lambda n: (f32(_r(n), n, 3, 4, 4),))],
    "AvgPool1d": [(lambda: nn.AvgPool1d(kernel_size=2, stride=2), lambda n: (f32(_r(n), n, 3, 6),))],
    "AvgPool2d": [(lambda: nn.AvgPool2d(kernel_size=2, stride=2), lambda n: (f32(_r(n), n, 3, 4, 4),))],
    "MaxPool1d": [(lambda: nn.MaxPool1d(kernel_size=2, stride=2), lambda n: (f32(_r(n), n, 3, 6),))],
    "MaxPool2d": [(lambda: nn.MaxPool2d(kernel_size=2, stride=2), lambda n: (f32(_r(n), n, 3, 4, 4),))],
    "BatchNorm1d": [(lambda: nn.BatchNorm1d(4), lambda n: (f32(_r(n), n, 4),))],
    "BatchNorm2d": [(lambda: nn.BatchNorm2d(3), lambda n: (f32(_r(n), n, 3, 4, 4),))],
    # one process: process_groups=0 (with a group it all-reduces: tests/python/test_sync_batch_norm.py)
    "SyncBatchNorm": [(lambda: nn.SyncBatchNorm(3, process_groups=0), lambda n: (f32(_r(n), n, 3, 4, 4),))],
    "LayerNorm": [(lambda: nn.LayerNorm((5,)), lambda n: (f32(_r(n), n, 5),))],
    "GroupNorm": [(lambda: nn.GroupNorm(2, 4), lambda n: (f32(_r(n), n, 4, 3, 3),))],
    "Conv1d": [(lambda: nn.Conv1d(3, 4, 3), lambda n: (f32(_r(n), n, 3, 8),))],
    "Conv2d": [(lambda: nn.Conv2d(3, 4, 3), lambda n: (f32(_r(n), n, 3, 6, 6),))],
    "Conv1dTranspose": [(lambda: nn.Conv1dTranspose(3, 4, 3), lambda n: (f32(_r(n), n, 3, 8),))],
    "Conv2dTranspose": [(lambda: nn.Conv2dTranspose(3, 4, 3), lambda n: (f32(_r(n), n, 3, 5, 5),))],
    "Embedding": [(lambda: nn.Embedding(10, 4), lambda n: (labels(_r(n), (n, 3), 10),)),
                  (lambda: nn.Embedding(10, 4, use_one_hot=True), lambda n: (labels(_r(n), (n, 3), 10),))],
    "PReLU": [(lambda: nn.PReLU(3, 0.1), lambda n: (f32(_r(n), n, 3, 2),))],
    "MatMul": [(lambda: nn.MatMul(transpose_x2=True), lambda n: (f32(_r(n), n, 2, 3), f32(_r(n + 9), 4, 3)))],
    "InstanceNorm1d": [(lambda: nn.InstanceNorm1d(3), lambda n: (f32(_r(n), n, 3, 5),))],
    "InstanceNorm2d": [(lambda: nn.InstanceNorm2d(3), lambda n: (f32(_r(n), n, 3, 4, 4),))],
    "InstanceNorm3d": [(lambda: nn.InstanceNorm3d(2), lambda n: (f32(_r(n), n, 2, 2, 3, 3),))],
    "BatchNorm3d": [(lambda: nn.BatchNorm3d(2), lambda n: (f32(_r(n), n, 2, 2, 3, 3),))],
    "Conv2dBnAct": [(lambda: nn.Conv2dBnAct(3, 4, 3, has_bn=True, activation="relu"),
                     lambda n: (f32(_r(n), n, 3, 5, 5),))],
    "DenseBnAct": [(lambda: nn.DenseBnAct(5, 3, has_bn=True, activation="leakyrelu"), lambda n: (f32(_r(n), n, 5),))],
    "Upsample": [(lambda: nn.Upsample(size=(5, 7), mode="bilinear"), lambda n: (f32(_r(n), n, 2, 3, 4),)),
                 (lambda: nn.Upsample(scale_factor=2.0), lambda n: (f32(_r(n), n, 2, 3, 4),))],
    "PSNR": [(lambda: nn.PSNR(), lambda n: (f32(_r(n), n, 2, 4, 4), f32(_r(n + 9), n, 2, 4, 4)))],
    "SSIM": [(lambda: nn.SSIM(filter_size=3), lambda n: (f32(_r(n), n, 2, 5, 5), f32(_r(n + 9), n, 2, 5, 5)))],
    "Dropout2d": [(lambda: nn.Dropout2d(p=0.5), lambda n: (f32(_r(n), n, 3, 2, 2),))],
    "Dropout3d": [(lambda: nn.Dropout3d(p=0.5), lambda n: (f32(_r(n), n, 3, 2, 2, 2),))],
    # recurrent layers and cells: optional hx (an LSTM's is a tuple), seq_length, dropout between layers
    "RNN": [(lambda: nn.RNN(3, 4, 2, nonlinearity="relu", dropout=0.3), lambda n: (f32(_r(n), 5, n, 3),))],
    "GRU": [(lambda: nn.GRU(3, 4, bidirectional=True), lambda n: (f32(_r(n), 5, n, 3), None, labels(_r(n), n, 6))),
            (lambda: nn.GRU(3, 4, batch_first=True), lambda n: (f32(_r(n), n, 5, 3), f32(_r(n + 9), 1, n, 4)))],
    "LSTM": [(lambda: nn.LSTM(3, 4, 2, bidirectional=True),
              lambda n: (f32(_r(n), 5, n, 3), (f32(_r(n + 1), 4, n, 4), f32(_r(n + 2), 4, n, 4)),
                         labels(_r(n), n, 6)))],
    "RNNCell": [(lambda: nn.RNNCell(3, 4), lambda n: (f32(_r(n), n, 3), f32(_r(n + 9), n, 4)))],
    "GRUCell": [(lambda: nn.GRUCell(3, 4), lambda n: (f32(_r(n), n, 3), f32(_r(n + 9), n, 4)))],
    "LSTMCell": [(lambda: nn.LSTMCell(3, 4),
                  lambda n: (f32(_r(n), n, 3), (f32(_r(n + 9), n, 4), f32(_r(n + 8), n, 4))))],
    # losses
    "MSELoss": [(lambda: nn.MSELoss(), lambda n: (f32(_r(n), n, 5), f32(_r(n + 9), n, 5)))],
    "L1Loss": [(lambda: nn.L1Loss(), lambda n: (f32(_r(n), n, 5), f32(_r(n + 9), n, 5)))],
    "MAELoss": [(lambda: nn.MAELoss(), lambda n: (f32(_r(n), n, 5), f32(_r(n + 9), n, 5)))],
    "SmoothL1Loss": [(lambda: nn.SmoothL1Loss(), lambda n: (f32(_r(n), n, 5), f32(_r(n + 9), n, 5)))],
    "HuberLoss": [(lambda: nn.HuberLoss(), lambda n: (f32(_r(n), n, 5), f32(_r(n + 9), n, 5)))],
    "SoftmaxCrossEntropyWithLogits": [
        (lambda: nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
         lambda n: (f32(_r(n), n, 5), labels(_r(n), n))),
        (lambda: nn.SoftmaxCrossEntropyWithLogits(sparse=False), lambda n: (f32(_r(n), n, 5), probs(_r(n), n, 5)))],
    "CrossEntropyLoss": [
        (lambda: nn.CrossEntropyLoss(), lambda n: (f32(_r(n), n, 5), labels(_r(n), n))),
        (lambda: nn.CrossEntropyLoss(weight=Tensor(np.linspace(0.5, 1.5, 5).astype(np.float32)), ignore_index=2,
                                     label_smoothing=0.1),
         lambda n: (f32(_r(n), n, 5), labels(_r(n), n))),
        (lambda: nn.CrossEntropyLoss(), lambda n: (f32(_r(n), n, 5), probs(_r(n), n, 5)))],
    "NLLLoss": [
        (lambda: nn.NLLLoss(), lambda n: (ops.log_softmax(f32(_r(n), n, 5), -1), labels(_r(n), n))),
        (lambda: nn.NLLLoss(weight=Tensor(np.linspace(0.5, 1.5, 5).astype(np.float32)), ignore_index=1),
         lambda n: (ops.log_softmax(f32(_r(n), n, 5), -1), labels(_r(n), n)))],
    "BCELoss": [(lambda: nn.BCELoss(), lambda n: (_sig(_r(n), n, 5), _sig(_r(n + 9), n, 5)))],
    "BCEWithLogitsLoss": [(lambda: nn.BCEWithLogitsLoss(), lambda n: (f32(_r(n), n, 5), _sig(_r(n + 9), n, 5)))],
    "KLDivLoss": [(lambda: nn.KLDivLoss(reduction="batchmean"),
                   lambda n: (ops.log_softmax(f32(_r(n), n, 5), -1), probs(_r(n + 9), n, 5)))],
}


def _train_one_step():
    net = nn.Dense(5, 3)
    return nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.Momentum(net.trainable_params(), 0.1, 0.9))


def _loss_scale_step():
    net = nn.Dense(5, 3)
    return nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, nn.MSELoss()), nn.Adam(net.trainable_params(), 0.1),
                                            nn.DynamicLossScaleUpdateCell(2.0 ** 8, 2, 1))


# wrapper cells (TrainOneStepCell: the cell and its PyNative twin take the same steps, so the losses stay equal)
LAYERS.update({
    "WithLossCell": [(lambda: nn.WithLossCell(nn.Dense(5, 3), nn.MSELoss()),
                      lambda n: (f32(_r(n), n, 5), f32(_r(n + 9), n, 3)))],
    "WithEvalCell": [(lambda: nn.WithEvalCell(nn.Dense(5, 3), nn.MSELoss()),
                      lambda n: (f32(_r(n), n, 5), f32(_r(n + 9), n, 3)))],
    "TrainOneStepCell": [(_train_one_step, lambda n: (f32(_r(n), n, 5), f32(_r(n + 9), n, 3)))],
    "TrainOneStepWithLossScaleCell": [(_loss_scale_step, lambda n: (f32(_r(n), n, 5), f32(_r(n + 9), n, 3)))],
    # 2n rows in 2 micro-batches (each batch size must be divisible by micro_size)
    "GradAccumulation": [(lambda: GradAccumulation(nn.WithLossCell(nn.Dense(5, 3), nn.MSELoss()), 2),
                          lambda n: (f32(_r(n), 2 * n, 5), f32(_r(n + 9), 2 * n, 3)))],
    "GradAccumulationCell": [(lambda: nn.GradAccumulationCell(nn.WithLossCell(nn.Dense(5, 3), nn.MSELoss()), 2),
                              lambda n: (f32(_r(n), 2 * n, 5), f32(_r(n + 9), 2 * n, 3)))],
    "MicroBatchInterleaved": [(lambda: nn.MicroBatchInterleaved(nn.Dense(5, 3), 2), lambda n: (f32(_r(n), 2 * n, 5),))],
})
for _name in ("ELU", "FastGelu", "GELU", "HSigmoid", "HSwish", "LeakyReLU", "LogSigmoid", "LogSoftmax", "Mish",
              "ReLU", "ReLU6", "SiLU", "Sigmoid", "Softmax", "Softplus", "Softsign", "Tanh",
              "CELU", "SeLU", "Hardtanh", "HShrink", "SoftShrink", "Softmin", "Tanhshrink", "RReLU"):
    LAYERS[_name] = [(getattr(nn, _name), lambda n: (f32(_r(n), n, 5),))]


def _unpool_inputs(nd):
    """(x, indices) for MaxUnpool{nd}d(2): one index per 2-wide window (its first corner) of the output plane."""
    def make(n):
        insz = (2,) * nd
        outsz = tuple(2 * v for v in insz)
        pos = np.stack(np.meshgrid(*[np.arange(v) * 2 for v in insz], indexing="ij"), -1).reshape(-1, nd)
        flat = np.ravel_multi_index(tuple(pos.T), outsz).reshape(insz)
        idx = np.broadcast_to(flat, (n, 2) + insz).astype(np.int64).copy()
        return f32(_r(n), n, 2, *insz), Tensor(idx)
    return make


def _multilabel_targets(n):
    t = np.full((n, 4), -1, np.int32)
    t[:, 0], t[:, 1] = np.arange(n) % 4, (np.arange(n) + 1) % 4
    return Tensor(t)


def _ctc_inputs(n):
    lp = ops.log_softmax(f32(_r(n), 6, n, 5), -1)
    tg = Tensor((np.arange(3 * n).reshape(n, 3) % 4 + 1).astype(np.int32))
    return lp, tg, Tensor(np.full(n, 6, np.int32)), Tensor((np.arange(n) % 2 + 2).astype(np.int32))


# the NN-functional family's layers and losses (kiln/nn/layer/*_ext.py, kiln/nn/loss/loss_ext.py)
LAYERS.update({
    "Threshold": [(lambda: nn.Threshold(0.1, 2.0), lambda n: (f32(_r(n), n, 5),))],
    "GLU": [(lambda: nn.GLU(), lambda n: (f32(_r(n), n, 6),))],
    # mint.nn layers over the mint functional forms (kiln/mint/nn/_layers_more.py)
    "Hardshrink": [(lambda: ms.mint.nn.Hardshrink(0.3), lambda n: (f32(_r(n), n, 5),))],
    "Softshrink": [(lambda: ms.mint.nn.Softshrink(0.3), lambda n: (f32(_r(n), n, 5),))],
    "Hardswish": [(lambda: ms.mint.nn.Hardswish(), lambda n: (f32(_r(n), n, 5),))],
    "SELU": [(lambda: ms.mint.nn.SELU(), lambda n: (f32(_r(n), n, 5),))],
    "PixelShuffle": [(lambda: ms.mint.nn.PixelShuffle(2), lambda n: (f32(_r(n), n, 4, 2, 2),))],
    "Conv3d": [(lambda: nn.Conv3d(2, 3, 2), lambda n: (f32(_r(n), n, 2, 3, 4, 4),))],
    "Conv3dTranspose": [(lambda: nn.Conv3dTranspose(2, 3, 2, stride=2), lambda n: (f32(_r(n), n, 2, 2, 3, 3),))],
    "MaxPool3d": [(lambda: nn.MaxPool3d(2, 2), lambda n: (f32(_r(n), n, 2, 4, 4, 4),))],
    "AvgPool3d": [(lambda: nn.AvgPool3d(2, 2), lambda n: (f32(_r(n), n, 2, 4, 4, 4),))],
    "AdaptiveMaxPool1d": [(lambda: nn.AdaptiveMaxPool1d(2), lambda n: (f32(_r(n), n, 3, 6),))],
    "AdaptiveMaxPool2d": [(lambda: nn.AdaptiveMaxPool2d(2, True), lambda n: (f32(_r(n), n, 3, 5, 5),))],
    "AdaptiveMaxPool3d": [(lambda: nn.AdaptiveMaxPool3d(2), lambda n: (f32(_r(n), n, 2, 3, 4, 5),))],
    "FractionalMaxPool2d": [(lambda: nn.FractionalMaxPool2d(2, output_size=(3, 3)), lambda n: (f32(_r(n), n, 2, 6, 5),))],
    "FractionalMaxPool3d": [(lambda: nn.FractionalMaxPool3d(2, output_ratio=0.5), lambda n: (f32(_r(n), n, 2, 4, 6, 5),))],
    "AdaptiveAvgPool3d": [(lambda: nn.AdaptiveAvgPool3d(2), lambda n: (f32(_r(n), n, 2, 3, 4, 5),))],
    "LPPool1d": [(lambda: nn.LPPool1d(2, 2), lambda n: (f32(_r(n), n, 3, 6),))],
    "LPPool2d": [(lambda: nn.LPPool2d(2, 2), lambda n: (f32(_r(n), n, 3, 4, 4),))],
    "LRN": [(lambda: nn.LRN(2), lambda n: (f32(_r(n), n, 3, 4, 4),))],
    "MaxUnpool1d": [(lambda: nn.MaxUnpool1d(2), _unpool_inputs(1))],
    "MaxUnpool2d": [(lambda: nn.MaxUnpool2d(2), _unpool_inputs(2))],
    "MaxUnpool3d": [(lambda: nn.MaxUnpool3d(2), _unpool_inputs(3))],
    "ChannelShuffle": [(lambda: nn.ChannelShuffle(2), lambda n: (f32(_r(n), n, 4, 3, 3),))],
    "Dropout1d": [(lambda: nn.Dropout1d(0.5), lambda n: (f32(_r(n), n, 4, 5),))],
    "BiDense": [(lambda: nn.BiDense(3, 4, 2), lambda n: (f32(_r(n), n, 3), f32(_r(n + 9), n, 4)))],
    "CosineEmbeddingLoss": [(lambda: nn.CosineEmbeddingLoss(0.1),
                             lambda n: (f32(_r(n), n, 5), f32(_r(n + 9), n, 5),
                                        Tensor(np.where(np.arange(n) % 2 == 0, 1, -1).astype(np.int32))))],
    "GaussianNLLLoss": [(lambda: nn.GaussianNLLLoss(full=True),
                         lambda n: (f32(_r(n), n, 5), f32(_r(n + 9), n, 5), _sig(_r(n + 8), n, 5)))],
    "MultiMarginLoss": [(lambda: nn.MultiMarginLoss(p=2), lambda n: (f32(_r(n), n, 5), labels(_r(n), n)))],
    "MultilabelMarginLoss": [(lambda: nn.MultilabelMarginLoss(),
                              lambda n: (f32(_r(n), n, 4), _multilabel_targets(n)))],
    "MultiLabelSoftMarginLoss": [(lambda: nn.MultiLabelSoftMarginLoss(),
                                  lambda n: (f32(_r(n), n, 5), _sig(_r(n + 9), n, 5)))],
    "TripletMarginLoss": [(lambda: nn.TripletMarginLoss(swap=True),
                           lambda n: (f32(_r(n), n, 5), f32(_r(n + 9), n, 5), f32(_r(n + 8), n, 5)))],
    "CTCLoss": [(lambda: nn.CTCLoss(), _ctc_inputs)],
    "SoftMarginLoss": [(lambda: nn.SoftMarginLoss(),
                        lambda n: (f32(_r(n), n, 5),
                                   Tensor(np.sign(_r(n + 9).standard_normal((n, 5))).astype(np.float32))))],
})
# issue 24's layers of kiln.nn (the names above with mint.nn's classes get kiln.nn's too)
for _name, _make, _shape in (("ConstantPad1d", lambda: nn.ConstantPad1d((1, -1), 0.5), (2, 3, 4)),
                             ("ConstantPad2d", lambda: nn.ConstantPad2d(1, 0.5), (2, 3, 4)),
                             ("ConstantPad3d", lambda: nn.ConstantPad3d((1, 0, 2, 1, 0, 1), 0.5), (2, 3, 4)),
                             ("ZeroPad2d", lambda: nn.ZeroPad2d(1), (2, 3, 4)),
                             ("ReflectionPad1d", lambda: nn.ReflectionPad1d(1), (2, 3, 4)),
                             ("ReflectionPad2d", lambda: nn.ReflectionPad2d(1), (2, 3, 4)),
                             ("ReflectionPad3d", lambda: nn.ReflectionPad3d(1), (2, 3, 4)),
                             ("ReplicationPad1d", lambda: nn.ReplicationPad1d(1), (2, 4)),
                             ("ReplicationPad2d", lambda: nn.ReplicationPad2d(1), (2, 3, 4)),
                             ("ReplicationPad3d", lambda: nn.ReplicationPad3d(1), (2, 2, 3, 4)),
                             ("PixelShuffle", lambda: nn.PixelShuffle(2), (4, 2, 2))):
    LAYERS[_name] = LAYERS[_name] + [(_make, lambda n, _shape=_shape: (f32(_r(n), n, *_shape),))]
LAYERS.update({
    "MultiheadAttention": [(lambda: nn.MultiheadAttention(4, 2, batch_first=True),
                            lambda n: (f32(_r(n), n, 3, 4), f32(_r(n + 9), n, 2, 4), f32(_r(n + 8), n, 2, 4)))],
    "PixelUnshuffle": [(lambda: nn.PixelUnshuffle(2), lambda n: (f32(_r(n), n, 1, 4, 4),))],
    "TransformerEncoderLayer": [(lambda: nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, batch_first=True),
                                 lambda n: (f32(_r(n), n, 3, 4),))],
    "TransformerDecoderLayer": [(lambda: nn.TransformerDecoderLayer(4, 2, 6, dropout=0.0, norm_first=True),
                                 lambda n: (f32(_r(n), 3, n, 4), f32(_r(n + 9), 2, n, 4)))],
    "TransformerEncoder": [(lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0), 2),
                            lambda n: (f32(_r(n), 3, n, 4),))],
    "TransformerDecoder": [(lambda: nn.TransformerDecoder(nn.TransformerDecoderLayer(4, 2, 6, dropout=0.0), 2),
                            lambda n: (f32(_r(n), 3, n, 4), f32(_r(n + 9), 2, n, 4)))],
    "Transformer": [(lambda: nn.Transformer(4, 2, 1, 1, 6, dropout=0.0),
                     lambda n: (f32(_r(n), 3, n, 4), f32(_r(n + 9), 2, n, 4)))],
    "Unfold": [(lambda: nn.Unfold([1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "same"),
                lambda n: (f32(_r(n), n, 2, 3, 4),))],
    "TimeDistributed": [(lambda: nn.TimeDistributed(nn.Dense(4, 3), 1, 0), lambda n: (f32(_r(n), n, 2, 4),)),
                        (lambda: nn.TimeDistributed(nn.Dense(4, 3), 1), lambda n: (f32(_r(n), n, 2, 4),))],
    "EmbeddingLookup": [(lambda: nn.EmbeddingLookup(10, 4), lambda n: (labels(_r(n), (n, 3), 12),)),
                        (lambda: nn.EmbeddingLookup(10, 4, target="DEVICE", max_norm=0.5),
                         lambda n: (labels(_r(n), (n, 3), 10),))],
    "MarginRankingLoss": [(lambda: nn.MarginRankingLoss(0.3),
                           lambda n: (f32(_r(n), n, 5), f32(_r(n + 9), n, 5),
                                      Tensor(np.sign(_r(n + 8).standard_normal((n, 5))).astype(np.float32))))],
    "HingeEmbeddingLoss": [(lambda: nn.HingeEmbeddingLoss(0.5, "sum"),
                            lambda n: (f32(_r(n), n, 5),
                                       Tensor(np.sign(_r(n + 9).standard_normal((n, 5))).astype(np.float32))))],
})

# global_step shapes (1,) and () stand for the two "batch sizes" of a schedule.
SCHEDULES = {
    "ExponentialDecayLR": lambda: nn.ExponentialDecayLR(0.1, 0.9, 4, is_stair=True),
    "NaturalExpDecayLR": lambda: nn.NaturalExpDecayLR(0.1, 0.9, 4),
    "InverseDecayLR": lambda: nn.InverseDecayLR(0.1, 0.5, 4),
    "CosineDecayLR": lambda: nn.CosineDecayLR(0.01, 0.1, 10),
    "PolynomialDecayLR": lambda: nn.PolynomialDecayLR(0.1, 0.01, 10, 2.0, update_decay_steps=True),
    "WarmUpLR": lambda: nn.WarmUpLR(0.1, 5),
}

OPTIMIZERS = {
    "Adam": lambda ps: nn.Adam(ps, learning_rate=0.01),
    "AdamWeightDecay": lambda ps: nn.AdamWeightDecay(ps, learning_rate=0.01, weight_decay=0.1),
    "SGD": lambda ps: nn.SGD(ps, learning_rate=0.1, momentum=0.9, weight_decay=0.01),
    "Momentum": lambda ps: nn.Momentum(ps, learning_rate=nn.CosineDecayLR(0.01, 0.1, 10), momentum=0.9),
    "RMSProp": lambda ps: nn.RMSProp(ps, learning_rate=0.01, centered=True),
    "Adagrad": lambda ps: nn.Adagrad(ps, learning_rate=0.1),
    "Lamb": lambda ps: nn.Lamb(ps, learning_rate=nn.PolynomialDecayLR(0.1, 0.01, 10, 1.0)),
    "AdamW": lambda ps: ms.experimental.optim.AdamW(ps, lr=0.01, amsgrad=True),
    "Adam (experimental)": lambda ps: ms.experimental.optim.Adam(ps, lr=0.01, amsgrad=True),
    "SGD (experimental)": lambda ps: ms.experimental.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
    "Adagrad (experimental)": lambda ps: ms.experimental.optim.Adagrad(ps, lr=0.1, lr_decay=0.1),
    "Adadelta": lambda ps: ms.experimental.optim.Adadelta(ps, weight_decay=0.01),
    "Adamax": lambda ps: ms.experimental.optim.Adamax(ps, lr=0.01),
    "ASGD": lambda ps: ms.experimental.optim.ASGD(ps, lr=0.1, t0=2.0),
    "NAdam": lambda ps: ms.experimental.optim.NAdam(ps, lr=0.01),
    "RAdam": lambda ps: ms.experimental.optim.RAdam(ps, lr=0.01, betas=(0.9, 0.6)),
    "RMSprop": lambda ps: ms.experimental.optim.RMSprop(ps, lr=0.01, momentum=0.5, centered=True),
    "Rprop": lambda ps: ms.experimental.optim.Rprop(ps, lr=0.01),
}

# Public Cell subclasses that are not run on their own here, and why.
NOT_LAYERS = {
    "Cell": "abstract base", "LossBase": "abstract base (get_loss is run by every loss)",
    "LearningRateSchedule": "abstract base", "Optimizer": "abstract base",
    "CellList": "container without construct", "CellDict": "container without construct",
    "DynamicLossScaleUpdateCell": "run inside TrainOneStepWithLossScaleCell (above and test_wrap_cells.py)",
    "FixedLossScaleUpdateCell": "run inside TrainOneStepWithLossScaleCell (test_wrap_cells.py)",
    "GraphCell": "runs a loaded MindIR graph of one fixed input shape: compiled in test_mindir.py (GRAPH_MODE, jit)",
    "DistributedGradReducer": "needs communication.init(): compiled (jit) in test_distributed.py, on one process "
                              "and inside data-parallel training steps on two",
    "GradientAccumulation": "takes (loss, gradients) and an optimizer: compiled inside a GRAPH_MODE training step "
                            "in test_ms_module_layout.py",
    "PipelineCell": "one stage: GradAccumulation, compiled in test_pipeline_parallel.py (GRAPH_MODE); more stages "
                    "refuse compilation (RuntimeError, tested there)",
    "Pipeline": "PipelineCell's newer name (test_pipeline_parallel.py)",
    "PipelineGradReducer": "takes the tuple of gradients of its parameters: run in PyNative and compiled (jit) in "
                           "test_parallel_samples.py::test_pipeline_grad_reducer_divides_by_scale_sense",
    "AutoParallel": "shards Parameters on its first, eager call (communication.init() and several processes): its "
                    "GRAPH_MODE compilation from the second call on is tested in test_operator_parallel.py (2 and 4 "
                    "processes)",
}


def _public_cells():
    """Every public Cell subclass defined in the kiln package, by name."""
    out = {}
    for info in pkgutil.walk_packages(ms.__path__, "kiln."):
        if ".compat" in info.name:
            continue
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if (inspect.isclass(obj) and issubclass(obj, nn.Cell) and obj.__module__ == info.name
                    and not name.startswith("_")):
                out[name] = obj
    return out


def test_every_public_cell_is_covered():
    missing = set(_public_cells()) - set(LAYERS) - set(SCHEDULES) - set(OPTIMIZERS) - set(NOT_LAYERS)
    assert not missing, f"add these classes to test_compile_cache.py: {sorted(missing)}"


def _symbolic_tensors(root):
    """(path, tensor) for every symbolic tensor reachable from `root` through containers and object __dict__s."""
    found, seen, todo = [], set(), [("cell", root)]
    while todo:
        path, obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, Tensor):
            if obj._symbolic:
                found.append(path)
            continue
        if isinstance(obj, dict):
            todo += [(f"{path}[{k!r}]", v) for k, v in obj.items()]
        elif isinstance(obj, (list, tuple, set, frozenset)):
            todo += [(f"{path}[{i}]", v) for i, v in enumerate(obj)]
        elif hasattr(obj, "__dict__") and type(obj).__module__.startswith("kiln"):
            todo += [(f"{path}.{k}", v) for k, v in vars(obj).items()]
    return found


def _outputs(out):
    if isinstance(out, (tuple, list)):  # nested too: an LSTM returns (output, (h_n, c_n))
        return [a for o in out for a in _outputs(o)]
    return [out.asnumpy()]


def _close(a, b, what):
    for x, y in zip(_outputs(a), _outputs(b)):
        np.testing.assert_allclose(x, y, rtol=2e-5, atol=1e-6, err_msg=what)


CASES = [pytest.param(make, inputs, id=f"{name}-{i}")
         for name, specs in LAYERS.items() for i, (make, inputs) in enumerate(specs)]


@pytest.mark.parametrize("make,inputs", CASES)
@pytest.mark.parametrize("training", [False, True])
def test_layer_compiled_at_two_batch_sizes_then_eager(make, inputs, training):
    ms.set_seed(1)
    cell = make().set_train(training)
    ms.set_seed(1)
    twin = make().set_train(training)  # the same parameters, run in PyNative only
    for mode, n in ((ms.GRAPH_MODE, B1), (ms.GRAPH_MODE, B2), (ms.PYNATIVE_MODE, B2), (ms.GRAPH_MODE, B1)):
        args = inputs(n)
        ms.set_context(mode=mode)
        ms.set_seed(7)  # the same random draws (Dropout) in both runs
        got = cell(*args)
        ms.set_context(mode=ms.PYNATIVE_MODE)
        ms.set_seed(7)
        _close(got, twin(*args), f"{type(cell).__name__}, mode {mode}, batch {n}")
        assert not _symbolic_tensors(cell), _symbolic_tensors(cell)
    assert cell._jit_construct.trace_count == 2  # the third graph-mode call reuses the first graph


@pytest.mark.parametrize("make,inputs", [c for c in CASES if ("Loss" in c.id or "Softmax" in c.id)
                                         and "TrainOneStep" not in c.id])  # losses only (a train step is stateful)
def test_loss_inside_jit_step_with_smaller_last_batch(make, inputs):
    """The reported case: a compiled step whose last batch is smaller, then the loss called eagerly."""
    ms.set_seed(1)
    loss = make()
    step = ms.jit(lambda *a: loss(*a))
    for n in (B1, B2):
        args = inputs(n)
        _close(step(*args), loss(*args), f"{type(loss).__name__}, batch {n}")
    assert step.trace_count == 2
    assert not _symbolic_tensors(loss)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_compiled_at_two_shapes_then_eager(name):
    sched = SCHEDULES[name]()
    f = ms.jit(lambda s: sched(s))
    for step, shape in ((3, (1,)), (7, ()), (12, (1,))):
        gs = Tensor(np.full(shape, step, np.int32))
        _close(f(gs), sched(gs), f"{name} at step {step}")
        assert not _symbolic_tensors(sched)
    assert f.trace_count == 2


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_in_step_at_two_batch_sizes_then_eager(name):
    def build():
        ms.set_seed(3)
        net = nn.Dense(5, 2)
        opt = OPTIMIZERS[name](net.trainable_params())
        loss_fn = nn.MSELoss()
        grad_fn = ms.value_and_grad(lambda x, y: loss_fn(net(x), y), None, opt.parameters)

        def step(x, y):
            loss, grads = grad_fn(x, y)
            opt(grads)
            return loss
        return net, opt, step

    net, opt, step = build()
    jstep = ms.jit(step)
    net2, _, step2 = build()
    rng = np.random.default_rng(0)
    for n, compiled in ((B1, True), (B2, True), (B2, False), (B1, True)):
        x, y = f32(rng, n, 5), f32(rng, n, 2)
        got = (jstep if compiled else step)(x, y)
        _close(got, step2(x, y), f"{name}, batch {n}, compiled {compiled}")
        _close(net.weight, net2.weight, f"{name} weights after batch {n}")
        assert not _symbolic_tensors(opt)
    assert jstep.trace_count == 2


# ------------------------------------------------------------------------------- training flags in the key
def _dropout_net():
    return nn.SequentialCell([nn.Dense(4, 4), nn.Dropout(p=0.5), nn.BatchNorm1d(4), nn.ReLU()])


def test_set_train_toggled_for_ten_epochs_traces_twice():
    ms.set_context(mode=ms.GRAPH_MODE)
    net = _dropout_net()
    x = Tensor(np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32))
    for _ in range(10):
        net.set_train(True)
        net(x)
        net.set_train(False)
        net(x)
    jf = net._jit_construct
    assert jf.trace_count == 2 and len(jf.graphs) == 2
    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_array_equal(net(x).asnumpy(), jf(x).asnumpy())  # the eval graph, reused


def test_plain_function_is_keyed_by_the_flags_of_the_cells_it_calls():
    net = _dropout_net()
    x = Tensor(np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32))

    @ms.jit
    def f(x):
        return net(x) * 2.0

    for _ in range(5):
        net.set_train(True)
        f(x)
        net.set_train(False)
        np.testing.assert_allclose(f(x).asnumpy(), net(x).asnumpy() * 2.0, rtol=1e-6)
    assert f.trace_count == 2
    # A sub-cell's flag alone also selects a graph (the whole sub-tree of a called cell is in the key).
    net[1].set_train(True)
    ms.set_seed(0)
    a = f(x).asnumpy()
    assert f.trace_count == 3
    ms.set_seed(0)
    np.testing.assert_allclose(a, net(x).asnumpy() * 2.0, rtol=1e-6)


def test_flag_of_an_unrelated_cell_does_not_retrace():
    net, other = _dropout_net(), _dropout_net()
    f = ms.jit(lambda x: net(x))
    x = Tensor(np.ones((8, 4), np.float32))
    f(x)
    for mode in (True, False, True, False):
        other.set_train(mode)
        f(x)
    assert f.trace_count == 1


def test_training_set_as_attribute_selects_the_graph():
    net = nn.Dropout(p=0.5)
    f = ms.jit(lambda x: net(x))
    x = Tensor(np.ones((64,), np.float32))
    np.testing.assert_array_equal(f(x).asnumpy(), x.asnumpy())  # eval: identity
    net.training = True
    assert set(np.unique(f(x).asnumpy())) <= {0.0, 2.0} and f.trace_count == 2


# ---------------------------------------------------------------------------------------------- lifetime
class JitNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 2)

    @ms.jit
    def construct(self, x):
        return self.fc(x)


def test_cells_with_jit_construct_are_freed():
    x = Tensor(np.ones((2, 3), np.float32))
    refs = []
    for _ in range(200):
        net = JitNet()
        np.testing.assert_allclose(net(x).asnumpy(), net.fc(x).asnumpy(), rtol=1e-6)
        refs.append(weakref.ref(net))
    del net
    gc.collect()
    assert sum(r() is not None for r in refs) == 0
    assert not JitNet.construct.__dict__.get("_bound")  # the class-level function holds no instance


def test_jit_construct_is_per_instance():
    x = Tensor(np.ones((2, 3), np.float32))
    a, b = JitNet(), JitNet()
    np.testing.assert_allclose(a(x).asnumpy(), a.fc(x).asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(b(x).asnumpy(), b.fc(x).asnumpy(), rtol=1e-6)
    assert a.construct is a.construct and a.construct is not b.construct
    assert a.construct.trace_count == 1 and b.construct.trace_count == 1


def test_copied_cell_runs_its_own_parameters():
    ms.set_context(mode=ms.GRAPH_MODE)
    x = Tensor(np.ones((2, 3), np.float32))
    for net in (JitNet(), nn.Dense(3, 2)):
        net(x)
        twin = copy.deepcopy(net)
        fc = net.fc if isinstance(net, JitNet) else net
        fc.weight.set_data(Tensor(np.zeros((2, 3), np.float32)))  # changes the original only
        ms.set_context(mode=ms.PYNATIVE_MODE)
        want_net, want_twin = fc(x).asnumpy(), (twin.fc if isinstance(twin, JitNet) else twin).construct(x)
        want_twin = want_twin.asnumpy()
        ms.set_context(mode=ms.GRAPH_MODE)
        assert not np.allclose(want_net, want_twin)
        np.testing.assert_allclose(twin(x).asnumpy(), want_twin, rtol=1e-6)
        np.testing.assert_allclose(net(x).asnumpy(), want_net, rtol=1e-6)


def test_graph_mode_cells_and_dropped_functions_are_freed():
    ms.set_context(mode=ms.GRAPH_MODE)
    x = Tensor(np.ones((2, 3), np.float32))
    net = nn.SequentialCell([nn.Dense(3, 2), nn.ReLU()])
    net(x)
    graphs = weakref.ref(net._jit_construct)
    ref = weakref.ref(net)
    del net
    gc.collect()
    assert ref() is None and graphs() is None

    def f(x):
        return x * 2.0
    jf = ms.jit(f)
    jf(x)
    ref = weakref.ref(jf)
    del jf
    gc.collect()
    assert ref() is None


# --------------------------------------------------------------------------------------------------- bound
def test_lru_evicts_beyond_the_bound_and_retraces_with_the_same_numbers():
    @ms.jit(cache_size=3)
    def f(x):
        return ops.sum(x * x, 0) + 1.0

    xs = [Tensor(np.arange(n * 2, dtype=np.float32).reshape(n, 2)) for n in range(1, 6)]
    first = [f(x).asnumpy() for x in xs[:3]]
    assert f.trace_count == 3 and len(f.graphs) == 3 and f.evictions == 0
    f(xs[0])  # xs[0] is now the most recently used: xs[1] is the least
    f(xs[3])
    assert len(f.graphs) == 3 and f.evictions == 1 and f.trace_count == 4
    f(xs[0])
    f(xs[2])
    assert f.trace_count == 4  # still cached
    np.testing.assert_array_equal(f(xs[1]).asnumpy(), first[1])  # evicted: traced again, same numbers
    assert f.trace_count == 5 and len(f.graphs) == 3
    for x in xs:
        np.testing.assert_array_equal(f(x).asnumpy(), (x.asnumpy() ** 2).sum(0) + 1.0)
    assert len(f.graphs) == 3


def test_cache_size_from_context_and_errors():
    ms.set_context(jit_cache_size=2)
    try:
        assert ms.get_context("jit_cache_size") == 2
        f = ms.jit(lambda x: x + 1.0)
        for n in range(1, 6):
            f(Tensor(np.zeros(n, np.float32)))
        assert len(f.graphs) == 2 and f.trace_count == 5 and f.evictions == 3
    finally:
        ms.set_context(jit_cache_size=32)
    with pytest.raises(ValueError, match="jit_cache_size"):
        ms.set_context(jit_cache_size=0)
    with pytest.raises(TypeError, match="jit_cache_size"):
        ms.set_context(jit_cache_size=2.5)
    with pytest.raises(ValueError, match="cache_size"):
        ms.jit(lambda x: x, cache_size=0)
    with pytest.raises(TypeError, match="cache_size"):
        ms.jit(lambda x: x, cache_size="8")


def test_many_toggles_keep_the_number_of_graphs_fixed():
    ms.set_context(mode=ms.GRAPH_MODE)
    net = _dropout_net()
    loss_fn = nn.MSELoss()
    opt = nn.Adam(net.trainable_params(), 0.01)
    grad_fn = ms.value_and_grad(lambda x, y: loss_fn(net(x), y), None, opt.parameters)
    rng = np.random.default_rng(0)
    x, y = f32(rng, 8, 4), f32(rng, 8, 4)
    counts = []
    for _ in range(30):
        net.set_train(True)
        _, g = grad_fn(x, y)
        opt(g)
        net.set_train(False)
        net(x)
        counts.append((len(net._jit_construct.graphs), net._jit_construct.trace_count,
                       opt._jit_construct.trace_count))
    assert counts[-1] == counts[1]  # nothing new is compiled after the first toggle


def test_unhashable_argument_keyed_by_identity_is_kept_alive():
    @ms.jit
    def f(x, table):
        return x * float(table[0])

    x = Tensor(np.ones(2, np.float32))
    for v in range(5):  # each array may reuse a freed one's id: the cache must not confuse them
        np.testing.assert_array_equal(f(x, np.array([v])).asnumpy(), [v, v])


# ------------------------------------------------------------------------------------------------- threads
def test_two_threads_with_different_shapes():
    @ms.jit(cache_size=4)
    def f(x):
        return ops.sum(x * 2.0, 0) + 1.0

    errors = []

    def work(n):
        try:
            x = Tensor(np.arange(n * 3, dtype=np.float32).reshape(n, 3))
            want = (x.asnumpy() * 2.0).sum(0) + 1.0
            for _ in range(50):
                np.testing.assert_allclose(f(x).asnumpy(), want, rtol=1e-6)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in (2, 3, 5, 7)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert 4 <= f.trace_count <= 8 and len(f.graphs) == 4


def test_jit_function_object_is_a_jit_function():
    assert isinstance(JitNet.construct, JitFunction)


def test_graph_mode_grad_keeps_keyword_arguments():
    def f(x, scale=1.0):
        return ops.sum(x * x) * scale

    x = Tensor(np.array([1.0, 2.0], np.float32))
    want = ms.grad(f)(x, scale=3.0).asnumpy()
    np.testing.assert_allclose(want, [6.0, 12.0], rtol=1e-6)
    ms.set_context(mode=ms.GRAPH_MODE)
    g = ms.grad(f)
    np.testing.assert_allclose(g(x, scale=3.0).asnumpy(), want, rtol=1e-6)
    np.testing.assert_allclose(g(x).asnumpy(), [2.0, 4.0], rtol=1e-6)


def test_construct_replaced_on_the_instance_compiles_once():
    ms.set_context(mode=ms.GRAPH_MODE)
    net = nn.Dense(3, 2)
    inner = nn.Dense(3, 2)
    net.construct = lambda x: inner(x) * 2.0
    x = Tensor(np.ones((2, 3), np.float32))
    for _ in range(3):
        out = net(x)
    assert net._jit_construct.trace_count == 1
    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(out.asnumpy(), inner(x).asnumpy() * 2.0, rtol=1e-6)

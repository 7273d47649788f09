"""DatasetHelper and connect_network_with_dataset (custom training loops as MindSpore's model zoo writes them):
without sink mode the helper yields each batch's Tensors (checked against MindSpore 2.10 with ms_oracle); in sink
mode the connected network runs sink_size steps per call on the next batches, ending with the same weights as the
same steps run one by one."""
import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, nn
from kiln import dataset as ds

X = np.random.RandomState(0).randn(12, 3).astype(np.float32)
Y = np.random.RandomState(1).randn(12, 2).astype(np.float32)


def _data():
    return ds.NumpySlicesDataset({"x": X, "y": Y}, shuffle=False).batch(4)  # 3 batches


def _train_net(seed=0):
    ms.set_seed(seed)
    net = nn.Dense(3, 2)
    return net, nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))


def test_non_sink_mode_yields_batches():
    h = ms.DatasetHelper(_data(), dataset_sink_mode=False, epoch_num=2)
    for _ in range(2):
        rows = list(h)
        assert len(rows) == 3 and all(isinstance(r, list) and len(r) == 2 for r in rows)
        np.testing.assert_array_equal(rows[1][0].asnumpy(), X[4:8])
    assert h.types_shapes() == ([ms.float32, ms.float32], [[4, 3], [4, 2]])
    with pytest.raises(RuntimeError, match="only defined in dataset sink mode"):
        h.sink_size()
    with pytest.raises(RuntimeError, match="should be called in dataset sink mode"):
        ms.connect_network_with_dataset(nn.Dense(3, 2), h)


@pytest.mark.parametrize("graph", [False, True])
def test_sink_mode_runs_sink_size_steps_per_call(graph):
    ms.set_context(mode=ms.GRAPH_MODE if graph else ms.PYNATIVE_MODE)
    try:
        net, step = _train_net()
        h = ms.DatasetHelper(_data(), dataset_sink_mode=True, sink_size=2, epoch_num=2)
        assert h.sink_size() == 2
        sink_net = ms.connect_network_with_dataset(step, h)
        losses = []
        for _ in range(2):
            inputs = list(h)
            assert inputs == [()]  # 3 batches // 2 per sink: one sink per epoch
            for i in inputs:
                losses.append(float(sink_net(*i).asnumpy()))
        h.release()
        # the same four steps one by one: batches 0, 1 (first sink), 2, 0 (the dataset loops)
        ref, ref_step = _train_net()
        ref_losses = []
        for b in (0, 1, 2, 0):
            rows = slice(4 * b, 4 * b + 4)
            loss = ref_step(Tensor(X[rows]), Tensor(Y[rows]))
            ref_losses.append(float(loss.asnumpy()))
        np.testing.assert_allclose(losses, [ref_losses[1], ref_losses[3]], rtol=1e-6)
        np.testing.assert_allclose(net.weight.asnumpy(), ref.weight.asnumpy(), rtol=1e-6, atol=1e-7)
        assert np.abs(net.weight.asnumpy() - _train_net()[0].weight.asnumpy()).max() > 1e-3  # it trained
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_sink_size_minus_one_is_one_epoch_per_sink():
    net, step = _train_net()
    h = ms.DatasetHelper(_data())
    assert h.sink_size() == 3 and list(h) == [()]
    sink_net = ms.connect_network_with_dataset(step, h)
    assert ms.connect_network_with_dataset(step, h) is not None  # the same network again: fine
    with pytest.raises(ValueError, match="connected to other network"):
        ms.connect_network_with_dataset(_train_net()[1], h)
    with pytest.raises(TypeError, match="reads its inputs from the dataset"):
        sink_net(Tensor(X[:4]))
    sink_net()
    h.release()


def test_argument_errors():
    with pytest.raises(TypeError, match="'dataset_sink_mode' must be bool"):
        ms.DatasetHelper(_data(), dataset_sink_mode=1)
    with pytest.raises(ValueError, match="'sink_size' must be -1 or positive"):
        ms.DatasetHelper(_data(), sink_size=0)
    with pytest.raises(ValueError, match="'epoch_num' must be >= 1"):
        ms.DatasetHelper(_data(), epoch_num=0)
    with pytest.raises(TypeError, match="must be a Dataset"):
        ms.DatasetHelper([1, 2])
    with pytest.raises(TypeError, match="must be a DatasetHelper"):
        ms.connect_network_with_dataset(nn.Dense(1, 1), None)

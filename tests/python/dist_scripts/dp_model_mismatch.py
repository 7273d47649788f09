"""Run by tests/python/test_distributed.py::test_data_parallel_models_that_differ_are_a_clear_error under
`python -m kiln.msrun --worker_num=N dp_model_mismatch.py`: in data parallel, the last rank builds another model
(a hidden layer of other width, then one more layer). Making nn.TrainOneStepCell (its DistributedGradReducer
broadcasts the Parameters) must raise the same ValueError in every process, naming each rank's Parameters (before:
Gloo aborted one rank with SIGABRT, or every process waited in the broadcast until the cluster timeout), and the
job must go on: equal models train afterwards. Prints "MISMATCH OK <rank>"."""
import numpy as np

import mindspore as ms
from mindspore import Tensor, nn
from mindspore.communication import get_group_size, get_rank, init

init()
rank, size = get_rank(), get_group_size()
ms.set_auto_parallel_context(parallel_mode="data_parallel", gradients_mean=True)
last = rank == size - 1


def model(hidden, extra=False):
    cells = [nn.Dense(8, hidden), nn.ReLU(), nn.Dense(hidden, 4)] + ([nn.Dense(4, 4)] if extra else [])
    return nn.SequentialCell(cells)


for net, words in ((model(8 if last else 16), ["[8, 8] Float32", "[16, 8] Float32"]),
                   (model(16, extra=last), ["6 Parameters", "4 Parameters"])):
    try:
        nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))
    except ValueError as e:
        msg = str(e)
        assert "For 'DistributedGradReducer', every process must pass the same number of Parameters" in msg, msg
        for w in words + [f"rank {size - 1}: DistributedGradReducer"]:
            assert w in msg, (w, msg)
    else:
        raise AssertionError("models that differ were accepted")
ms.set_seed(1)
net = model(16)
step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))
loss = step(Tensor(np.ones((2, 8), np.float32)), Tensor(np.zeros((2, 4), np.float32)))
assert np.isfinite(loss.asnumpy())
print("MISMATCH OK", rank)

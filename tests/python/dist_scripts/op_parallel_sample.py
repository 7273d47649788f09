"""Run by tests/python/test_operator_parallel.py as MindSpore's operator-parallel tutorial runs its sample
(docs/sample_code/distributed_operator_parallel: `msrun --worker_num=8 --local_worker_num=8 --join=True ... pytest -s
-v distributed_operator_parallel.py::test_distributed_operator_parallel`): the tutorial's program, written again with
the same API calls (GRAPH_MODE, runtime.set_memory, init, set_seed(1), the Network with its MatMul/ReLU strategies
for 8 devices, MnistDataset from DATA_PATH with the tutorial's transforms and batch 32, nn.no_init_parameters around
the network and SGD, CrossEntropyLoss, value_and_grad with has_aux, AutoParallel(train_step, "semi_auto")) on a small
MNIST-format file (OP_SAMPLE_STEPS batches, one epoch). Every rank writes OP_SAMPLE_OUT/sample_rank<r>.npz with its
losses and the merged weights; rank 0 then trains the same network stand-alone in the same process (no AutoParallel,
the same 32-image batches: every rank reads the same rows, so the global batch is 8 copies of them, whose mean loss is
the 32 rows' loss) into sample_ref.npz. test_mint_sample does the same for the tutorial's mint variant (ms.parallel.shard
over mint.matmul / mint.nn.functional.relu, AutoParallel over the network, forward only): mint_rank<r>.npz and
mint_ref.npz hold each batch's logits and their sum."""
import os

import numpy as np

import mindspore as ms
import mindspore.dataset as ds
import mindspore.runtime as rt
from mindspore import mint, nn, ops
from mindspore.common.initializer import initializer
from mindspore.communication import get_rank, init
from mindspore.nn.utils import no_init_parameters
from mindspore.parallel.auto_parallel import AutoParallel

from kiln.parallel import merge_parameters

ms.set_context(mode=ms.GRAPH_MODE)
rt.set_memory(max_size="28GB")
init()
ms.set_seed(1)


class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = ops.Flatten()
        self.fc1_weight = ms.Parameter(initializer("normal", [28 * 28, 512], ms.float32))
        self.fc2_weight = ms.Parameter(initializer("normal", [512, 512], ms.float32))
        self.fc3_weight = ms.Parameter(initializer("normal", [512, 10], ms.float32))
        self.matmul1 = ops.MatMul().shard(((2, 4), (4, 1)))
        self.relu1 = ops.ReLU().shard(((4, 1),))
        self.matmul2 = ops.MatMul().shard(((1, 8), (8, 1)))
        self.relu2 = ops.ReLU().shard(((8, 1),))
        self.matmul3 = ops.MatMul()

    def construct(self, x):
        x = self.flatten(x)
        x = self.relu1(self.matmul1(x, self.fc1_weight))
        x = self.relu2(self.matmul2(x, self.fc2_weight))
        return self.matmul3(x, self.fc3_weight)


def create_dataset(batch_size):
    dataset = ds.MnistDataset(os.getenv("DATA_PATH"))
    image_transforms = [ds.vision.Rescale(1.0 / 255.0, 0), ds.vision.Normalize(mean=(0.1307,), std=(0.3081,)),
                        ds.vision.HWC2CHW()]
    dataset = dataset.map(image_transforms, "image")
    dataset = dataset.map(ds.transforms.TypeCast(ms.int32), "label")
    return dataset.batch(batch_size)


def train(parallel):
    ms.set_seed(1)
    data_set = create_dataset(32)
    with no_init_parameters():
        net = Network()
        optimizer = nn.SGD(net.trainable_params(), 1e-2)
    loss_fn = nn.CrossEntropyLoss()

    def forward_fn(data, target):
        logits = net(data)
        return loss_fn(logits, target), logits

    grad_fn = ms.value_and_grad(forward_fn, None, net.trainable_params(), has_aux=True)

    def train_step(inputs, targets):
        (loss_value, _), grads = grad_fn(inputs, targets)
        optimizer(grads)
        return loss_value

    step = AutoParallel(train_step, parallel_mode="semi_auto") if parallel else train_step
    losses = []
    for image, label in data_set:
        loss = step(image, label)
        print("epoch: 0, step: %s, loss is %s" % (len(losses), loss))
        losses.append(float(loss.asnumpy()))
    out = {f"loss:{i}": v for i, v in enumerate(losses)}
    params = net.trainable_params()
    out.update({f"local:{p.name}": int(np.prod(p.shape)) for p in params})
    out.update({f"w:{p.name}": w.asnumpy() for p, w in zip(params, merge_parameters(params))})
    return out


def test_sample():
    out_dir = os.environ["OP_SAMPLE_OUT"]
    np.savez(os.path.join(out_dir, f"sample_rank{get_rank()}.npz"), **train(True))
    if get_rank() == 0:
        ms.set_context(mode=ms.PYNATIVE_MODE)
        np.savez(os.path.join(out_dir, "sample_ref.npz"), **train(False))


class MintNetwork(nn.Cell):
    """The tutorial's mint variant: ms.parallel.shard over mint.matmul and mint.nn.functional.relu."""

    def __init__(self):
        super().__init__()
        self.flatten = mint.flatten
        self.fc1_weight = ms.Parameter(initializer("normal", [28 * 28, 512], ms.float32))
        self.fc2_weight = ms.Parameter(initializer("normal", [512, 512], ms.float32))
        self.fc3_weight = ms.Parameter(initializer("normal", [512, 10], ms.float32))
        self.matmul1 = ms.parallel.shard(mint.matmul, in_strategy=((2, 4), (4, 1)))
        self.relu1 = ms.parallel.shard(mint.nn.functional.relu, in_strategy=((4, 1),))
        self.matmul2 = ms.parallel.shard(mint.matmul, in_strategy=((1, 8), (8, 1)))
        self.relu2 = ms.parallel.shard(mint.nn.functional.relu, in_strategy=((8, 1),))
        self.matmul3 = mint.matmul

    def construct(self, x):
        x = self.flatten(x, start_dim=1, end_dim=3)
        x = self.relu1(self.matmul1(x, self.fc1_weight))
        x = self.relu2(self.matmul2(x, self.fc2_weight))
        return self.matmul3(x, self.fc3_weight)


def forward_mint(parallel):
    ms.set_seed(1)
    data_set = create_dataset(32)
    net = MintNetwork()
    run = AutoParallel(net, parallel_mode="semi_auto") if parallel else net
    out = {}
    for i, (image, _) in enumerate(data_set):
        logits = run(image)
        out[f"sum:{i}"] = float(mint.sum(logits).asnumpy())
        print("epoch: 0, step: %s, forward_sum is %s" % (i, out[f"sum:{i}"]))
        out[f"logits:{i}"] = logits.asnumpy()
    params = net.trainable_params()
    out.update({f"local:{p.name}": int(np.prod(p.shape)) for p in params})
    return out


def test_mint_sample():
    out_dir = os.environ["OP_SAMPLE_OUT"]
    np.savez(os.path.join(out_dir, f"mint_rank{get_rank()}.npz"), **forward_mint(True))
    if get_rank() == 0:
        ms.set_context(mode=ms.PYNATIVE_MODE)
        np.savez(os.path.join(out_dir, "mint_ref.npz"), **forward_mint(False))

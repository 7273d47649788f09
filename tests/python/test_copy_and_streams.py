"""copy.deepcopy of Parameters and Cells, and random-stream ids handed out from several threads."""
import copy
import threading

import numpy as np

import kiln
from kiln import Parameter, Tensor, nn
from kiln.common import seed as _seed


def test_deepcopy_parameter_is_a_parameter_with_its_own_storage():
    p = Parameter(Tensor(np.arange(3, dtype=np.float32)), name="w", requires_grad=False)
    q = copy.deepcopy(p)
    assert type(q) is Parameter
    assert (q.name, q.requires_grad) == ("w", False)
    kiln.ops.assign(q, Tensor(np.full(3, 7, np.float32)))
    np.testing.assert_array_equal(p.asnumpy(), [0, 1, 2])
    np.testing.assert_array_equal(q.asnumpy(), [7, 7, 7])


def test_deepcopy_cell_copies_parameters_once():
    net = nn.Dense(3, 2)
    net.tied = net.weight  # the same Parameter reached twice stays one Parameter in the copy
    twin = copy.deepcopy(net)
    assert all(type(p) is Parameter for p in twin.get_parameters())
    assert twin.tied is twin.weight and twin.weight is not net.weight
    assert [p.name for p in twin.trainable_params()] == [p.name for p in net.trainable_params()]
    x = Tensor(np.ones((1, 3), np.float32))
    np.testing.assert_array_equal(twin(x).asnumpy(), net(x).asnumpy())
    kiln.ops.assign(twin.weight, kiln.ops.zeros((2, 3), kiln.float32))
    assert np.abs(net.weight.asnumpy()).sum() > 0


def test_stream_ids_are_unique_across_threads():
    kiln.set_seed(1)
    got, barrier = [], threading.Barrier(8)

    def work(t):
        barrier.wait()
        got.extend(_seed._next_key(f"Op{t}_{i}")[1] for i in range(500))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(got) == list(range(1, 8 * 500 + 1))

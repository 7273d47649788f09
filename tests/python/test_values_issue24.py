"""Issue 24, "silent wrong results": Parameter names and load_param_into_net, KLDivLoss, the gradients of PReLU and
its kind at their kinks, and the order of TopK / ops.topk, each against MindSpore 2.10 (CPU): every expected value
below was printed by MindSpore 2.10 (/work/ms-venv) running the same code.
Gradients are also checked against float64 finite differences, and PyNative against Graph mode (kiln.jit)."""
from collections import OrderedDict

import numpy as np
import pytest

import kiln
from kiln import Parameter, Tensor, nn, ops

from helpers import check_grad

MODES = pytest.mark.parametrize("use_jit", [False, True], ids=["pynative", "graph"])


# ------------------------------------------------------------------------------------------- parameter names
# Trees built every way MindSpore allows: attributes, CellList / SequentialCell built whole, appended to (also
# when empty), inserted into, extended, deleted from, item-assigned, nested, OrderedDict-keyed, sliced,
# insert_child_to_cell and auto_prefix=False. MindSpore 2.10 names a container's new child from the names its
# first two children with Parameters already carry (nn/layer/container.py's rule), which gives surprising names
# (`0.blocks.1.blocks.0.weight`); a checkpoint written by MindSpore carries them, so Kiln must give the same.

def D():
    return nn.Dense(2, 2)


class Block(nn.Cell):
    def __init__(self, n=2, empty_first=True):
        super().__init__()
        if empty_first:
            self.blocks = nn.CellList()
            for _ in range(n):
                self.blocks.append(D())
        else:
            self.blocks = nn.CellList([D() for _ in range(n)])

    def construct(self, x):
        return x


class Stage(nn.Cell):
    def __init__(self, mode):
        super().__init__()
        if mode == "append":
            self.stages = nn.CellList()
            for _ in range(2):
                self.stages.append(Block())
        elif mode == "seq_append":
            self.stages = nn.SequentialCell()
            for _ in range(2):
                self.stages.append(Block())
        elif mode == "list":
            self.stages = nn.CellList([Block(), Block()])
        elif mode == "seq":
            self.stages = nn.SequentialCell([Block(), Block()])
        elif mode == "local_then_assign":
            layers = nn.CellList()
            for _ in range(2):
                layers.append(Block())
            self.stages = layers
        else:  # "local_seq_then_assign"
            self.stages = nn.SequentialCell(*[Block(empty_first=False) for _ in range(2)])

    def construct(self, x):
        return x


class Net(nn.Cell):
    def __init__(self, step):
        super().__init__()
        self.a = D()
        if step >= 1:
            self.seq = nn.SequentialCell(OrderedDict([("fc", D()), ("blk", Block())]))
            self.seq.append(D())
        if step == 2:
            self.lst = nn.CellList([nn.CellList([D(), D()]), nn.CellList()])
            self.lst[1].append(D())
        if step == 3:
            self.lst = nn.CellList([nn.CellList([D(), D()]), D()])
            self.lst.append(nn.SequentialCell([D()]))
            self.lst.insert(1, D())
            self.lst.insert(-1, Block())
        if step == 4:
            self.insert_child_to_cell("child", D())
            self.nop = nn.CellList([D(), Block()], auto_prefix=False)
            self.nop.append(D())
        if step == 5:
            self.nested = nn.CellList()
            inner = nn.CellList()
            inner.append(D())
            self.nested.append(inner)
            self.nested[0].append(D())
            self.nested.append(D())
        self.w = Parameter(Tensor(np.ones(2, np.float32)), name="w")

    def construct(self, x):
        return x


class NoPrefix(nn.Cell):
    def __init__(self):
        super().__init__(auto_prefix=False)
        self.fc = D()
        self.blk = Block()

    def construct(self, x):
        return x


class Outer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.np = NoPrefix()
        self.l = nn.CellList()
        self.l.append(NoPrefix())

    def construct(self, x):
        return x


class Swin(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layers = nn.CellList()
        for _ in range(2):
            self.layers.append(Stage("append"))
        self.head = D()

    def construct(self, x):
        return x


class Later(nn.Cell):
    def __init__(self):
        super().__init__()
        self.body = nn.SequentialCell()
        self.body.append(D())
        self.body.append(D())
        del self.body[0]
        self.body.append(Block())
        self.body[0] = D()

    def construct(self, x):
        return x


class Wrap(nn.Cell):
    def __init__(self):
        super().__init__()
        c = nn.CellList([D(), D(), D()])
        del c[1]
        c.append(D())
        self.c = c

    def construct(self, x):
        return x


class CD(nn.Cell):
    def __init__(self):
        super().__init__()
        self.d = nn.CellDict({"a": D(), "b": Block()})
        self.d["c"] = D()

    def construct(self, x):
        return x


class Deep(nn.Cell):
    def __init__(self):
        super().__init__()
        self.features = nn.SequentialCell()
        for _ in range(3):
            stage = nn.SequentialCell()
            for _ in range(2):
                stage.append(Block())
            self.features.append(stage)
        self.features.append(nn.CellList([D()]))
        del self.features[1]

    def construct(self, x):
        return x


class InsEmpty(nn.Cell):
    def __init__(self):
        super().__init__()
        self.c = nn.CellList()
        self.c.insert(0, Block())
        self.c.insert(0, Block())
        self.c.insert(1, D())
        del self.c[0]

    def construct(self, x):
        return x


class WithParamless(nn.Cell):
    def __init__(self):
        super().__init__()
        self.seq = nn.SequentialCell([nn.ReLU(), D(), nn.ReLU()])
        self.seq.append(D())
        del self.seq[0]
        self.l = nn.CellList([nn.ReLU()])
        self.l.append(D())
        self.l.append(D())

    def construct(self, x):
        return x


def _top_cl_append():
    c = nn.CellList()
    c.append(Block())
    c.append(Block())
    return c


def _top_cl_insert():
    c = nn.CellList([D(), D()])
    c.insert(1, D())
    c.insert(0, Block())
    return c


def _top_cl_extend():
    c = nn.CellList([D()])
    c.extend([D(), Block()])
    return c


def _top_cl_extend_empty():
    c = nn.CellList()
    c.extend([Block(), D()])
    return c


def _top_seq_append():
    s = nn.SequentialCell()
    s.append(D())
    s.append(Block())
    return s


def _top_seq_od(append=False):
    s = nn.SequentialCell(OrderedDict([("conv", D()), ("blk", Block())]))
    if append:
        s.append(D())
    return s


def _cl_del_set():
    c = nn.CellList([D(), D(), D()])
    del c[1]
    c[0] = D()
    return c


def _slice(cls, keep_original):
    c = cls([D(), Block(), D()])
    s = c[1:]
    return c if keep_original else s


def _cl_insert_empty():
    c = nn.CellList()
    c.insert(0, Block())
    c.insert(0, Block())
    c.insert(1, D())
    return c


def _cl_noprefix_ops():
    c = nn.CellList([D()], auto_prefix=False)
    c.append(Block())
    c.insert(0, D())
    del c[1]
    return c


TREES = {
    **{mode: (lambda mode=mode: Stage(mode)) for mode in ("append", "seq_append", "list", "seq", "local_then_assign",
                                                          "local_seq_then_assign")},
    "top_cl_append": _top_cl_append, "top_cl_insert": _top_cl_insert, "top_cl_extend": _top_cl_extend,
    "top_cl_extend_empty": _top_cl_extend_empty, "top_seq_append": _top_seq_append, "top_seq_od": _top_seq_od,
    "top_seq_od_append": lambda: _top_seq_od(True),
    **{f"net{i}": (lambda i=i: Net(i)) for i in range(6)},
    "noprefix": Outer, "swinlike": Swin, "seq_del_set": Later, "cl_del_set": _cl_del_set, "wrap_del": Wrap,
    "celldict": CD, "seq_single": lambda: nn.SequentialCell(Block()),
    "cl_slice": lambda: _slice(nn.CellList, False), "seq_slice": lambda: _slice(nn.SequentialCell, False),
    "seq_slice_orig": lambda: _slice(nn.SequentialCell, True), "deep": Deep, "cl_insert_empty": _cl_insert_empty,
    "ins_empty_attr": InsEmpty, "cl_noprefix_ops": _cl_noprefix_ops, "paramless_first": WithParamless,
}

MS_NAMES = {  # MindSpore 2.10's Parameter.name of each trainable Parameter, in order (see _expand)
    'append': '0.blocks.0 0.blocks.1 0.blocks.1.blocks.0 0.blocks.1.blocks.1',
    'seq_append': '0.blocks.0 0.blocks.1 0.blocks.1.blocks.0 0.blocks.1.blocks.1',
    'list': 'stages.0.blocks.0 stages.0.blocks.1 stages.1.blocks.0 stages.1.blocks.1',
    'seq': 'stages.0.blocks.0 stages.0.blocks.1 stages.1.blocks.0 stages.1.blocks.1',
    'local_then_assign': 'stages.0.blocks.0 stages.0.blocks.1 stages.1.blocks.0 stages.1.blocks.1',
    'local_seq_then_assign': 'stages.0.blocks.0 stages.0.blocks.1 stages.1.blocks.0 stages.1.blocks.1',
    'top_cl_append': '0.blocks.0 0.blocks.1 0.blocks.1.blocks.0 0.blocks.1.blocks.1',
    'top_cl_insert': '0.blocks.0 0.blocks.1 1 2 3',
    'top_cl_extend': '0 1 2.blocks.0 2.blocks.1',
    'top_cl_extend_empty': '0.blocks.0 0.blocks.1 1',
    'top_seq_append': '0 1.blocks.0 1.blocks.1',
    'top_seq_od': 'conv blk.blocks.0 blk.blocks.1',
    'top_seq_od_append': 'conv blk.blocks.0 blk.blocks.1 2',
    'net0': '=w a',
    'net1': '=w a seq.fc seq.blk.blocks.0 seq.blk.blocks.1 seq.2',
    'net2': '=w a seq.fc seq.blk.blocks.0 seq.blk.blocks.1 seq.2 lst.0.0 lst.0.1 0',
    'net3': ('=w a seq.fc seq.blk.blocks.0 seq.blk.blocks.1 seq.2 lst.0.0 lst.0.1 lst.1 lst.2 lst.3.blocks.0 '
        'lst.3.blocks.1 lst.4.0'),
    'net4': '=w a seq.fc seq.blk.blocks.0 seq.blk.blocks.1 seq.2 <> nop.0 nop.1.blocks.0 nop.1.blocks.1 <>',
    'net5': '=w a seq.fc seq.blk.blocks.0 seq.blk.blocks.1 seq.2 0.0 0.1 0.1',
    'noprefix': 'np.fc np.blk.blocks.0 np.blk.blocks.1 0.fc 0.blk.blocks.0 0.blk.blocks.1',
    'swinlike': ('0.stages.0.blocks.0 0.stages.0.blocks.1 0.stages.1.blocks.0 0.stages.1.blocks.1 '
        '0.stages.0.blocks.1.stages.0.blocks.0 0.stages.0.blocks.1.stages.0.blocks.1 '
        '0.stages.0.blocks.1.stages.1.blocks.0 0.stages.0.blocks.1.stages.1.blocks.1 head'),
    'seq_del_set': '0 1.blocks.0 1.blocks.1',
    'cl_del_set': '0 1',
    'wrap_del': 'c.0 c.1 c.2',
    'celldict': 'd.a d.b.blocks.0 d.b.blocks.1 d.c',
    'seq_single': '0.blocks.0 0.blocks.1',
    'cl_slice': '0.blocks.0 0.blocks.1 1',
    'seq_slice': '1.blocks.0 1.blocks.1 2',
    'seq_slice_orig': '0 1.blocks.0 1.blocks.1 2',
    'deep': ('0.0.blocks.0 0.0.blocks.0 0.0.blocks.0 0.0.blocks.0 0.0.blocks.1.0.blocks.0 0.0.blocks.1.0.blocks.1 '
        '0.0.blocks.1.1.blocks.0 0.0.blocks.1.1.blocks.1 0.0.blocks.2.0'),
    'cl_insert_empty': '0.blocks.0.blocks.0 0.blocks.0.blocks.1 0.blocks.1 0.blocks.2 0.blocks.2',
    'ins_empty_attr': '0.blocks.0 0.blocks.1 0.blocks.1',
    'cl_noprefix_ops': '<> 0 1',
    'paramless_first': 'seq.0 seq.2 1 2',
}

MS_PATHS = {  # MindSpore 2.10's parameters_and_names() paths, where they differ from the names
    'append': 'stages.0.blocks.0 stages.0.blocks.1 stages.1.blocks.0 stages.1.blocks.1',
    'seq_append': 'stages.0.blocks.0 stages.0.blocks.1 stages.1.blocks.0 stages.1.blocks.1',
    'top_cl_append': '0.blocks.0 0.blocks.1 1.blocks.0 1.blocks.1',
    'net2': '=w a seq.fc seq.blk.blocks.0 seq.blk.blocks.1 seq.2 lst.0.0 lst.0.1 lst.1.0',
    'net4': '=w a seq.fc seq.blk.blocks.0 seq.blk.blocks.1 seq.2 child nop.0 nop.1.blocks.0 nop.1.blocks.1 nop.2',
    'net5': '=w a seq.fc seq.blk.blocks.0 seq.blk.blocks.1 seq.2 nested.0.0 nested.0.1 nested.1',
    'noprefix': 'np.fc np.blk.blocks.0 np.blk.blocks.1 l.0.fc l.0.blk.blocks.0 l.0.blk.blocks.1',
    'swinlike': ('layers.0.stages.0.blocks.0 layers.0.stages.0.blocks.1 layers.0.stages.1.blocks.0 '
        'layers.0.stages.1.blocks.1 layers.1.stages.0.blocks.0 layers.1.stages.0.blocks.1 '
        'layers.1.stages.1.blocks.0 layers.1.stages.1.blocks.1 head'),
    'seq_del_set': 'body.0 body.1.blocks.0 body.1.blocks.1',
    'deep': ('features.0.0.blocks.0 features.0.0.blocks.1 features.0.1.blocks.0 features.0.1.blocks.1 '
        'features.1.0.blocks.0 features.1.0.blocks.1 features.1.1.blocks.0 features.1.1.blocks.1 features.2.0'),
    'cl_insert_empty': '0.blocks.0 0.blocks.1 1 2.blocks.0 2.blocks.1',
    'ins_empty_attr': 'c.0 c.1.blocks.0 c.1.blocks.1',
    'cl_noprefix_ops': '0 1.blocks.0 1.blocks.1',
    'paramless_first': 'seq.0 seq.2 l.1 l.2',
}


def _expand(spec):
    """'a.b c =w <>' → ['a.b.weight', 'a.b.bias', 'c.weight', 'c.bias', 'w', 'weight', 'bias'] (each Dense has a
    weight and a bias; '=' marks a name taken as is, '<>' a Dense whose names carry no prefix)."""
    out = []
    for item in spec.split():
        if item.startswith("="):
            out.append(item[1:])
        elif item == "<>":
            out += ["weight", "bias"]
        else:
            out += [item + ".weight", item + ".bias"]
    return out


@pytest.mark.parametrize("case", sorted(TREES))
def test_parameter_names_match_mindspore(case):
    net = TREES[case]()
    assert [p.name for p in net.trainable_params()] == _expand(MS_NAMES[case])
    want_paths = _expand(MS_PATHS.get(case, MS_NAMES[case]))
    assert [n for n, _ in net.parameters_and_names()] == want_paths
    assert [p.name for p in net.get_parameters()] == _expand(MS_NAMES[case])


def test_appended_block_loads_a_mindspore_checkpoint():
    """The names MindSpore writes for a CellList filled by append (the regnet/swin pattern of issue 24) load into
    Kiln's net with no Parameter skipped, and the values land in the right layers."""
    ms_names = _expand(MS_NAMES["swinlike"])
    net = Swin()
    ckpt = {n: Parameter(Tensor(np.full(p.shape, i, np.float32)), name=n)
            for i, (n, p) in enumerate(zip(ms_names, net.trainable_params()))}
    not_loaded, ckpt_left = kiln.load_param_into_net(net, ckpt)
    assert not_loaded == [] and ckpt_left == []
    assert float(net.layers[1].stages[0].blocks[1].weight.asnumpy()[0, 0]) == ms_names.index(
        "0.stages.0.blocks.1.stages.0.blocks.1.weight")


class _BnBlock(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 3)
        self.bn = nn.BatchNorm2d(2)
        self.ls = nn.CellList()
        self.ls.append(nn.SequentialCell([nn.Conv2d(2, 2, 1), nn.BatchNorm2d(2)]))
        self.ls.append(nn.LayerNorm((2,)))

    def construct(self, x):
        return x


class _BnNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.stem = nn.SequentialCell()
        self.stem.append(nn.BatchNorm2d(2))
        self.stem.append(_BnBlock())
        self.stages = nn.CellList()
        for _ in range(3):
            self.stages.append(_BnBlock())
        self.stages.insert(1, nn.Dense(2, 2))
        del self.stages[2]
        self.head = nn.SequentialCell(_BnBlock(), nn.Dense(2, 2))

    def construct(self, x):
        return x


MS_BN_NAMES = (  # MindSpore 2.10's Parameter.name of every Parameter of _BnNet(), in order
    '0.moving_mean 0.moving_variance 0.gamma 0.beta 1.conv.weight 1.bn.moving_mean 1.bn.moving_variance '
    '1.bn.gamma 1.bn.beta 1.ls.0.0.weight 1.ls.0.1.moving_mean 1.ls.0.1.moving_variance 1.ls.0.1.gamma '
    '1.ls.0.1.beta 1.ls.1.gamma 1.ls.1.beta 0.conv.weight 0.bn.moving_mean 0.bn.moving_variance 0.bn.gamma '
    '0.bn.beta 0.ls.0.0.weight 0.ls.0.1.moving_mean 0.ls.0.1.moving_variance 0.ls.0.1.gamma 0.ls.0.1.beta '
    '0.ls.1.gamma 0.ls.1.beta 1.weight 1.bias 2.conv.weight 2.bn.moving_mean 2.bn.moving_variance 2.bn.gamma '
    '2.bn.beta 2.ls.0.0.weight 2.ls.0.1.moving_mean 2.ls.0.1.moving_variance 2.ls.0.1.gamma 2.ls.0.1.beta '
    '2.ls.1.gamma 2.ls.1.beta head.0.conv.weight head.0.bn.moving_mean head.0.bn.moving_variance '
    'head.0.bn.gamma head.0.bn.beta head.0.ls.0.0.weight head.0.ls.0.1.moving_mean '
    'head.0.ls.0.1.moving_variance head.0.ls.0.1.gamma head.0.ls.0.1.beta head.0.ls.1.gamma head.0.ls.1.beta '
    'head.1.weight head.1.bias').split()


@MODES
def test_parameter_names_with_buffers_match_mindspore_and_survive_a_call(use_jit):
    """Conv/BatchNorm/LayerNorm Parameters (moving statistics included) in appended, inserted and deleted-from
    containers: MindSpore 2.10's names, kept by the first call in PyNative and in Graph mode (MindSpore renames only
    when two Parameters share a name)."""
    net = _BnNet()
    assert [p.name for p in net.get_parameters()] == MS_BN_NAMES
    x = Tensor(np.ones((1, 2, 4, 4), np.float32))
    if use_jit:
        kiln.set_context(mode=kiln.GRAPH_MODE)
    try:
        net(x)
    finally:
        kiln.set_context(mode=kiln.PYNATIVE_MODE)
    assert [p.name for p in net.get_parameters()] == MS_BN_NAMES


# ------------------------------------------------------------------------------------------ load_param_into_net
class _Two(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(2, 2)
        self.fc2 = nn.Dense(2, 3)

    def construct(self, x):
        return x


def _pd(**values):
    return {k: Parameter(Tensor(np.asarray(v, np.float32)), name=k) for k, v in values.items()}


W, B, W2, B2 = np.full((2, 2), 3.0), np.full(2, 4.0), np.full((3, 2), 5.0), np.full(3, 6.0)


@pytest.fixture
def kiln_warnings():
    """The messages kiln.log warns with during the test (its logger does not propagate to pytest's caplog)."""
    import logging
    records = []

    class _Keep(logging.Handler):
        def emit(self, record):
            if record.levelno == logging.WARNING:
                records.append(record.getMessage())

    kiln.log.get_level()  # makes the logger (its level from GLOG_v), then lets warnings through whatever GLOG_v says
    handler = _Keep()
    lg = logging.getLogger("kiln.log")
    level = lg.level
    lg.setLevel(logging.WARNING)
    lg.addHandler(handler)
    try:
        yield records
    finally:
        lg.removeHandler(handler)
        lg.setLevel(level)


@pytest.mark.parametrize("strict", [False, True])
def test_load_param_into_net_warns_about_missing_parameters(strict, kiln_warnings):
    """MindSpore 2.10: (['fc2.weight', 'fc2.bias'], ['extra']) and two warnings (the count, then the list), with
    strict_load=True as well: MindSpore's strict_load does not raise for missing Parameters."""
    net = _Two()
    out = kiln.load_param_into_net(net, _pd(**{"fc.weight": W, "fc.bias": B, "extra": B}), strict_load=strict)
    assert out == (["fc2.weight", "fc2.bias"], ["extra"])
    np.testing.assert_array_equal(net.fc.weight.asnumpy(), W)
    warned = kiln_warnings
    assert len(warned) == 2, warned
    assert warned[0].endswith("For 'load_param_into_net', 2 parameters in the 'net' are not loaded, because they are "
                              "not in the 'parameter_dict', please check whether the network structure is consistent "
                              "when training and loading checkpoint.")
    assert warned[1].endswith("['fc2.weight', 'fc2.bias'] are not loaded.")


def test_load_param_into_net_retries_under_a_prefix(kiln_warnings):
    """Non-strict: a checkpoint written under wrappers ('network.', 'backbone.') loads, as MindSpore 2.10 does: it
    returns ([], every dict name) — the prefixed names stay in ckpt_not_load — and warns once per prefix."""
    net = _Two()
    ckpt = _pd(**{"network.fc.weight": W, "network.fc.bias": B, "network.fc2.weight": W2, "backbone.fc2.bias": B2,
                  "x": B})
    out = kiln.load_param_into_net(net, ckpt)
    assert out == ([], ["network.fc.weight", "network.fc.bias", "network.fc2.weight", "backbone.fc2.bias", "x"])
    for p, want in zip(net.trainable_params(), (W, B, W2, B2)):
        np.testing.assert_array_equal(p.asnumpy(), want)
    warned = kiln_warnings
    assert warned == [
        "For 'load_param_into_net', remove parameter prefix name: network., continue to load.",
        "For 'load_param_into_net', remove parameter prefix name: backbone., continue to load."]
    # a prefix that is not a dotted path works the same way (MindSpore: 'zz')
    net = _Two()
    out = kiln.load_param_into_net(net, _pd(**{"net.fc.weight": W, "fc.bias": B, "zzfc2.weight": W2, "fc2.bias": B2}))
    assert out == ([], ["net.fc.weight", "zzfc2.weight"])
    np.testing.assert_array_equal(net.fc2.weight.asnumpy(), W2)


def test_strict_load_does_not_retry_under_a_prefix():
    """MindSpore 2.10 with strict_load=True: nothing loads, every Parameter is reported, nothing raises."""
    net = _Two()
    before = [p.asnumpy().copy() for p in net.trainable_params()]
    ckpt = _pd(**{"network.fc.weight": W, "network.fc.bias": B})
    out = kiln.load_param_into_net(net, ckpt, strict_load=True)
    assert out == (["fc.weight", "fc.bias", "fc2.weight", "fc2.bias"], ["network.fc.weight", "network.fc.bias"])
    for p, b in zip(net.trainable_params(), before):
        np.testing.assert_array_equal(p.asnumpy(), b)


@pytest.mark.parametrize("strict", [False, True])
def test_load_param_into_net_dtype_rules(strict):
    """Float64 into Float32 converts (non-strict; with a warning), strict_load=True raises; Int32 into Float32
    raises either way (MindSpore 2.10: RuntimeError; Kiln's error is a RuntimeError and a TypeError)."""
    net = _Two()
    ckpt = {"fc.weight": Parameter(Tensor(W.astype(np.float64)), name="fc.weight")}
    if strict:
        with pytest.raises(RuntimeError, match="fc.weight"):
            kiln.load_param_into_net(net, ckpt, strict_load=True)
    else:
        kiln.load_param_into_net(net, ckpt)
        assert net.fc.weight.dtype == kiln.float32
        np.testing.assert_array_equal(net.fc.weight.asnumpy(), W)
    with pytest.raises(RuntimeError, match="fc.bias"):
        kiln.load_param_into_net(net, {"fc.bias": Parameter(Tensor(np.array([1, 2], np.int32)), name="fc.bias")},
                                 strict_load=strict)


# -------------------------------------------------------------------------------------------------- KLDivLoss
# MindSpore 2.10's CPU kernel: y·(log y − x) where that is a number, 0 where it is NaN (y = 0, y < 0, NaN y or x).
KL_X = np.array([[-1.0, -2, -3, 4], [0.5, 1, 2, 7]], np.float32)
KL_Y = np.array([[0.0, 0.5, -0.2, -1.5], [1.0, 0, 2, 1e-30]], np.float32)
MS_KL_NONE = [[0.0, 0.6534264, 0.0, 0.0], [-0.5, 0.0, -2.6137056, -7.6077555e-29]]
MS_KL = {"mean": -0.3075349, "sum": -2.4602792, "batchmean": -1.2301396}


@MODES
@pytest.mark.parametrize("reduction", ["none", "mean", "sum", "batchmean"])
def test_kl_div_values_match_mindspore(reduction, use_jit):
    loss = nn.KLDivLoss(reduction)
    run = kiln.jit(lambda a, b: loss(a, b)) if use_jit else loss
    want = MS_KL_NONE if reduction == "none" else MS_KL[reduction]
    np.testing.assert_allclose(run(Tensor(KL_X), Tensor(KL_Y)).asnumpy(), want, rtol=1e-6, atol=1e-12)
    f = kiln.jit(lambda a, b: ops.kl_div(a, b, reduction)) if use_jit else (lambda a, b: ops.kl_div(a, b, reduction))
    np.testing.assert_allclose(f(Tensor(KL_X), Tensor(KL_Y)).asnumpy(), want, rtol=1e-6, atol=1e-12)


def test_kl_div_special_values_match_mindspore():
    """MindSpore 2.10: 0 wherever y·(log y − x) is NaN — also y > 0 with x = NaN — and ±inf kept."""
    y = np.array([0.0, -0.0, -1.5, np.nan, 0.5, 1e-30, np.inf, 0.3], np.float32)
    x = np.array([np.nan, -np.inf, 4, 1, -np.inf, 2, 1, np.nan], np.float32)
    got = nn.KLDivLoss("none")(Tensor(x), Tensor(y)).asnumpy()
    np.testing.assert_allclose(got, [0, 0, 0, 0, np.inf, -7.107755e-29, np.inf, 0], rtol=1e-6)


def test_kl_div_batchmean_of_unnormalized_labels():
    """Issue 24's case: labels that are not probabilities (normal samples, some negative). MindSpore counts only the
    y > 0 terms; Kiln gave y·(−x) for y < 0, another number."""
    rng = np.random.default_rng(24)
    x, y = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    with np.errstate(invalid="ignore", divide="ignore"):
        want = np.where(y > 0, y * (np.log(np.where(y > 0, y, 1)) - x), 0.0).sum() / 4
    np.testing.assert_allclose(nn.KLDivLoss("batchmean")(Tensor(x), Tensor(y)).asnumpy(), want, rtol=1e-12)


@MODES
def test_kl_div_gradients(use_jit):
    """Gradient w.r.t. x: −y (MindSpore 2.10's bprop) where y > 0 and 0 where the term is 0 (for y < 0 MindSpore
    gives −y, not the derivative of its 0); float64 finite differences agree. W.r.t. y: log y + 1 − x, the
    derivative (MindSpore's bprop returns 0 for the labels)."""
    x, y = KL_X.astype(np.float64), np.abs(KL_Y.astype(np.float64)) + 0.1
    y[0, 0] = 0.0
    for reduction in ("sum", "batchmean", "mean"):
        def f(a, b, reduction=reduction):
            return nn.KLDivLoss(reduction)(a, b)
        g = kiln.grad(f, grad_position=(0, 1))
        gx, gy = (kiln.jit(g) if use_jit else g)(Tensor(x), Tensor(y))
        scale = {"sum": 1.0, "batchmean": 0.5, "mean": 1 / 8}[reduction]
        np.testing.assert_allclose(gx.asnumpy(), -y * scale, rtol=1e-12)
        logy = np.log(np.where(y > 0, y, 1.0))
        np.testing.assert_allclose(gy.asnumpy()[y > 0], ((logy + 1 - x) * scale)[y > 0], rtol=1e-12)
        assert gy.asnumpy()[0, 0] == 0.0
    yp = np.abs(KL_Y.astype(np.float64)) + 0.1
    check_grad(lambda a, b: nn.KLDivLoss("batchmean")(a, b), [x, yp])


# --------------------------------------------------------------------------------- activations at their kinks
Z = np.array([-1.0, 0.0, 2.0], np.float32)


@MODES
def test_prelu_gradient_at_zero_is_the_slope(use_jit):
    """MindSpore 2.10 (ops.prelu, ops.PReLU, nn.PReLU, mint): d/dx at x = 0 is the channel's slope, and at NaN 1;
    d/dw is x·dy below 0 (0 at 0)."""
    x = np.array([[-1.0, 0.0, 2.0], [0.0, -0.5, 0.0]], np.float32).reshape(2, 3, 1)
    w = np.array([0.3, 0.6, 0.9], np.float32)
    dy = np.arange(1, 7, dtype=np.float32).reshape(2, 3, 1)
    for prelu in (ops.prelu, lambda a, b: ops.PReLU()(a, b), kiln.mint.nn.functional.prelu):
        g = kiln.grad(lambda a, b, prelu=prelu: (prelu(a, b) * Tensor(dy)).sum(), grad_position=(0, 1))
        gx, gw = (kiln.jit(g) if use_jit else g)(Tensor(x), Tensor(w))
        np.testing.assert_allclose(gx.asnumpy().ravel(), [0.3, 1.2, 3.0, 1.2, 3.0, 5.4], rtol=1e-6)  # MindSpore's
        np.testing.assert_allclose(gw.asnumpy(), [-1.0, -2.5, 0.0], rtol=1e-6)
    net = nn.PReLU(3, [0.3, 0.6, 0.9])
    g = kiln.grad(lambda a: net(a).sum(), grad_position=0, weights=net.trainable_params())
    gx, (gw,) = (kiln.jit(g) if use_jit else g)(Tensor(x))
    np.testing.assert_allclose(gx.asnumpy().ravel(), [0.3, 0.6, 1.0, 0.3, 0.6, 0.9], rtol=1e-6)
    np.testing.assert_allclose(gw.asnumpy(), [-1.0, -0.5, 0.0], rtol=1e-6)
    nan = kiln.grad(lambda a: ops.prelu(a, Tensor(np.float32([0.3]))).sum())(Tensor(np.float32([np.nan, 0.0])))
    np.testing.assert_allclose(nan.asnumpy(), [1.0, 0.3], rtol=1e-6)
    check_grad(lambda a, b: ops.prelu(a, b), [np.array([[-1.5, 0.5, 2.0], [0.25, -0.5, -3.0]]),
                                              np.array([0.3, 0.6, 0.9])])


# MindSpore 2.10's gradient of sum(f(x)) at x = [-3, -1, 0, 1, 3] (f: nn.* cell or ops function).
MS_KINK_GRADS = {
    "leaky_relu(0.2)": (lambda a: ops.leaky_relu(a, 0.2), [0.2, 0.2, 0.6, 1, 1]),
    "leaky_relu(3.0)": (lambda a: ops.leaky_relu(a, 3.0), [3, 3, 2, 1, 1]),
    "nn.LeakyReLU(0.1)": (lambda a: nn.LeakyReLU(0.1)(a), [0.1, 0.1, 0.55, 1, 1]),
    "hardtanh": (ops.hardtanh, [0, 0.5, 1, 0.5, 0]),
    "nn.Hardtanh(-1, 1)": (lambda a: nn.Hardtanh(-1.0, 1.0)(a), [0, 0.5, 1, 0.5, 0]),
    "hardtanh(-3, 3)": (lambda a: ops.hardtanh(a, -3.0, 3.0), [0.5, 1, 1, 1, 0.5]),
    "rrelu(0.25, 0.25)": (lambda a: ops.rrelu(a, 0.25, 0.25), [0.25, 0.25, 0, 1, 1]),
    "nn.RReLU(0.25, 0.25)": (lambda a: nn.RReLU(0.25, 0.25)(a), [0.25, 0.25, 0, 1, 1]),
    "relu6": (ops.relu6, [0, 0, 0, 1, 1]),
    "elu": (ops.elu, [0.049787068, 0.36787945, 1, 1, 1]),
}


@MODES
@pytest.mark.parametrize("name", sorted(MS_KINK_GRADS))
def test_activation_gradients_at_kinks_match_mindspore(name, use_jit):
    f, want = MS_KINK_GRADS[name]
    g = kiln.grad(lambda a: f(a).sum())
    x = Tensor(np.array([-3.0, -1.0, 0.0, 1.0, 3.0], np.float32))
    np.testing.assert_allclose((kiln.jit(g) if use_jit else g)(x).asnumpy(), want, rtol=1e-6)


@MODES
def test_selu_gradient_at_zero_is_scale(use_jit):
    """MindSpore 2.10 gives scale (1.050701) at 0. Below 0 Kiln keeps the derivative scale·α·exp(x) (MindSpore's
    CPU SeLU gradient there is not it: −0.117 at x = −1, while the function increases)."""
    g = kiln.grad(lambda a: ops.selu(a).sum())
    got = (kiln.jit(g) if use_jit else g)(Tensor(np.array([-1.0, 0.0, 1.0], np.float32))).asnumpy()
    np.testing.assert_allclose(got, [1.0507009873554805 * 1.6732632423543772 * np.exp(-1), 1.050701, 1.050701],
                               rtol=1e-6)
    check_grad(ops.selu, [np.array([-2.0, -0.5, 0.5, 2.0])])


def test_leaky_relu_of_ints_matches_mindspore():
    """MindSpore 2.10 multiplies an int input by alpha truncated to an int (0.5 → 0: relu; 3.7 → 3)."""
    x = Tensor(np.array([-5, -1, 0, 3], np.int32))
    for alpha, want in ((0.5, [0, 0, 0, 3]), (0.2, [0, 0, 0, 3]), (1.5, [-5, -1, 0, 3]), (2.0, [-10, -2, 0, 3]),
                        (-0.5, [0, 0, 0, 3]), (3.7, [-15, -3, 0, 3])):
        out = ops.leaky_relu(x, alpha)
        assert out.dtype == kiln.int32
        np.testing.assert_array_equal(out.asnumpy(), want)


# --------------------------------------------------------------------------------------------------------- TopK
# MindSpore 2.10's CPU TopK: std::nth_element at k, then (sorted) std::stable_sort; ties and the sorted=False order
# are that algorithm's. Kiln runs the same algorithm (src/ops/index.cpp, topk_order_rows).
TK_X = np.array([[1, 5, 3, 9, 2, 7, 5, 0], [4, 4, 4, 1, 8, 8, 2, 6]], np.float32)
MS_TOPK = {  # (k, sorted, largest): MindSpore 2.10's indices for TK_X
    (3, False, True): [[5, 3, 1], [7, 5, 4]],
    (3, False, False): [[4, 7, 0], [6, 3, 1]],
    (3, True, True): [[3, 5, 1], [5, 4, 7]],  # the 8 at index 5 before the 8 at index 4
    (3, True, False): [[7, 0, 4], [3, 6, 1]],
    (5, False, True): [[5, 3, 1, 6, 2], [7, 5, 4, 1, 0]],
    (5, False, False): [[4, 7, 0, 2, 1], [6, 3, 1, 0, 2]],
    (5, True, True): [[3, 5, 1, 6, 2], [4, 5, 7, 0, 1]],
    (5, True, False): [[7, 0, 4, 2, 1], [3, 6, 0, 1, 2]],
    (8, False, True): [list(range(8))] * 2,  # k = n: the input's order
    (8, False, False): [list(range(8))] * 2,
    (8, True, True): [[3, 5, 1, 6, 2, 4, 0, 7], [4, 5, 7, 0, 1, 2, 6, 3]],
    (8, True, False): [[7, 0, 4, 2, 1, 6, 5, 3], [3, 6, 0, 1, 2, 7, 4, 5]],
}
TK_R = np.array([3, 1, 4, 1, 0, 2, 4, 4, 0, 3, 1, 2, 2, 4, 0, 3, 3, 1, 0, 2, 4, 1, 3, 0, 2, 2, 4, 1, 3, 0], np.int32)
MS_TOPK_R = {  # (k, sorted): MindSpore 2.10's indices for TK_R (Int32, and the same for Float16)
    (4, False): [26, 6, 7, 20], (4, True): [26, 6, 7, 20],
    (7, False): [20, 13, 26, 7, 6, 2, 22], (7, True): [20, 13, 26, 7, 6, 2, 22],
    (16, False): [0, 20, 2, 22, 16, 15, 6, 7, 26, 13, 11, 19, 28, 9, 5, 12],
    (16, True): [2, 6, 7, 13, 20, 26, 0, 9, 15, 16, 22, 28, 5, 11, 12, 19],
}


@MODES
@pytest.mark.parametrize("key", sorted(MS_TOPK))
def test_topk_order_matches_mindspore(key, use_jit):
    k, is_sorted, largest = key
    f = (lambda a: ops.topk(a, k, largest=largest, sorted=is_sorted))
    v, i = (kiln.jit(f) if use_jit else f)(Tensor(TK_X))
    assert i.dtype == kiln.int32
    np.testing.assert_array_equal(i.asnumpy(), MS_TOPK[key])
    np.testing.assert_array_equal(v.asnumpy(), np.take_along_axis(TK_X, np.array(MS_TOPK[key]), 1))
    # what every order promises: the k largest (smallest) values, as a multiset
    want = np.sort(TK_X, 1)[:, ::-1][:, :k] if largest else np.sort(TK_X, 1)[:, :k]
    np.testing.assert_array_equal(np.sort(v.asnumpy(), 1), np.sort(want, 1))
    if largest:  # the Primitive, ops.top_k and Tensor.topk give the same
        for g in (lambda a: ops.TopK(sorted=is_sorted)(a, k), lambda a: ops.top_k(a, k, sorted=is_sorted),
                  lambda a: a.topk(k, sorted=is_sorted)):
            np.testing.assert_array_equal(g(Tensor(TK_X))[1].asnumpy(), MS_TOPK[key])


@pytest.mark.parametrize("dtype", [np.int32, np.float16, np.float64])
@pytest.mark.parametrize("key", sorted(MS_TOPK_R))
def test_topk_ties_match_mindspore(key, dtype):
    k, is_sorted = key
    _, i = ops.topk(Tensor(TK_R.astype(dtype)), k, sorted=is_sorted)
    np.testing.assert_array_equal(i.asnumpy(), MS_TOPK_R[key])


def test_topk_along_another_dim_matches_mindspore():
    y = np.arange(24, dtype=np.float32).reshape(2, 3, 4) % 5
    _, i = ops.topk(Tensor(y), 2, dim=1, sorted=False)
    np.testing.assert_array_equal(i.asnumpy(), [[[1, 2, 0, 0], [2, 0, 1, 1]], [[0, 0, 0, 1], [1, 1, 1, 2]]])


def test_topk_row_with_nan_takes_nan_as_largest():
    """MindSpore 2.10 returns [nan, 5, 2] (indices [3, 4, 5]) for the 3 largest here — not the 3 largest values;
    Kiln keeps its documented rule for a row with a NaN: stable order, NaN largest."""
    x = np.array([[3.0, np.nan, 1.0, np.nan, 5.0, 2.0]], np.float32)
    for s in (True, False):
        v, i = ops.topk(Tensor(x), 3, sorted=s)
        np.testing.assert_array_equal(i.asnumpy(), [[1, 3, 4]])


def test_topk_gradient():
    x = np.array([[0.5, -1.0, 2.0, 0.25, 1.5], [3.0, 0.0, -2.0, 1.0, 0.75]])
    for s in (True, False):
        check_grad(lambda a, s=s: ops.topk(a, 3, sorted=s)[0], [x])

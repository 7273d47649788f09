"""Strategy files and distributed checkpoints of operator parallel (issue 27): set_auto_parallel_context(
strategy_ckpt_config=...) / strategy_ckpt_save_file write each Parameter's layout (kiln/parallel/_strategy_file.py);
merge_sliced_parameter, transform_checkpoints, transform_checkpoint_by_rank, rank_list_for_transform and
load_distributed_checkpoint (kiln/parallel/checkpoint_transform.py) merge or re-slice the per-rank checkpoints.
dist_scripts/strategy_ckpt.py trains a sharded MLP over 2 and 4 processes; the checks here run in one process:
the merged weights equal the integrated save_checkpoint and a one-process run of the same steps, predictions equal
NumPy's forward on those weights, and MindSpore 2.10 itself (when /work/ms-venv is there) reads the files and gets
the same merges, transforms and rank lists."""
import os
import shutil
import subprocess

import numpy as np
import pytest

from test_distributed import logs, launch

import kiln
from kiln import Parameter, Tensor, nn, ops
from kiln.parallel import _strategy_file

TOL = 1e-6
NAMES = ("w1", "b1", "w2")
X = np.random.RandomState(0).randn(8, 16).astype(np.float32)
MS_PYTHON = "/work/ms-venv/bin/python"


class Whole(nn.Cell):
    """The MLP of dist_scripts/strategy_ckpt.py without strategies (the same Parameter names)."""

    def __init__(self):
        super().__init__()
        self.w1 = Parameter(Tensor(np.zeros((16, 32), np.float32)), name="w1")
        self.b1 = Parameter(Tensor(np.zeros(32, np.float32)), name="b1")
        self.w2 = Parameter(Tensor(np.zeros((32, 8), np.float32)), name="w2")
        self.frozen = Parameter(Tensor(np.zeros(4, np.float32)), name="frozen", requires_grad=False)

    def construct(self, x):
        return ops.matmul(ops.relu(ops.matmul(x, self.w1) + self.b1), self.w2)


def forward(w):
    return np.maximum(X @ w["w1"] + w["b1"], 0) @ w["w2"]


def _np(ck):
    return {k: v.asnumpy() for k, v in ck.items()}


def _run(tmp_path, workers):
    r, _ = launch("strategy_ckpt.py", tmp_path, tmp_path=tmp_path, workers=workers, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr + logs(tmp_path)
    ref = _np(kiln.load_checkpoint(str(tmp_path / "ref.ckpt")))
    for rank in range(workers):
        whole = _np(kiln.load_checkpoint(str(tmp_path / f"whole_rank{rank}.ckpt")))
        for n in NAMES:  # the integrated save equals one process running the same steps
            np.testing.assert_allclose(whole[n], ref[n], rtol=0, atol=TOL, err_msg=n)
    return ref


def _check_merges(tmp_path, workers, ref):
    strategy_file = str(tmp_path / "strategy_A_rank0.ckpt")
    strategy = kiln.build_searched_strategy(strategy_file)
    for r in range(1, workers):  # every process wrote the same file
        assert (tmp_path / f"strategy_A_rank{r}.ckpt").read_bytes() == (tmp_path / "strategy_A_rank0.ckpt").read_bytes()
    assert set(NAMES) <= set(strategy)
    # the ops that take a Parameter, with their strategies, as parallel_strategy_items (in order of first call)
    m = _strategy_file.ParallelStrategyMap()
    m.ParseFromString((tmp_path / "strategy_A_rank0.ckpt").read_bytes())
    mm1 = [[1, 1], [1, 2]] if workers == 2 else [[2, 1], [1, 2]]
    assert [(it.node_name, [list(x.dim) for x in it.parallel_strategys.parallel_strategy])
            for it in m.parallel_strategy_item] == [("MatMul-op0", mm1), ("BiasAdd-op1", [[1, 2], [2]]),
                                                    ("MatMul-op2", [[1, 2], [2, 1]])]
    slices = [kiln.load_checkpoint(str(tmp_path / "A" / f"rank_{r}" / "net.ckpt")) for r in range(workers)]
    for n in NAMES:
        assert tuple(slices[0][n].shape) != ref[n].shape  # each file holds a slice
        merged = kiln.merge_sliced_parameter([s[n] for s in slices], strategy)
        assert merged.name == n
        np.testing.assert_allclose(merged.asnumpy(), ref[n], rtol=0, atol=TOL, err_msg=n)
    # to whole weights offline
    kiln.transform_checkpoints(str(tmp_path / "A"), str(tmp_path / "whole"), "w", strategy_file, None)
    whole = _np(kiln.load_checkpoint(str(tmp_path / "whole" / "rank_0" / "w0.ckpt")))
    for n in NAMES:
        np.testing.assert_allclose(whole[n], ref[n], rtol=0, atol=TOL, err_msg=n)
    # every block once, from rank 0's copy of the device matrix (with 4 processes ranks 0 and 1 hold all blocks)
    assert kiln.rank_list_for_transform(0, strategy_file, None) == [1, 0]
    # the optimizer's states too (strategy_A_all.ckpt: only_trainable_params=False)
    all_file = str(tmp_path / "strategy_A_all.ckpt")
    assert "moments.w1" in kiln.build_searched_strategy(all_file)
    # only_trainable_params: a Parameter with requires_grad=False only in the file written with False
    assert "frozen" not in strategy and list(kiln.build_searched_strategy(all_file)["frozen"].tensor_map[0].dim) == [-1]
    np.testing.assert_array_equal(_np(kiln.load_checkpoint(str(tmp_path / "whole" / "rank_0" / "w0.ckpt")))["frozen"],
                                  np.arange(4, dtype=np.float32))
    kiln.transform_checkpoints(str(tmp_path / "Aopt"), str(tmp_path / "opt_whole"), "o", all_file)
    opt = kiln.load_checkpoint(str(tmp_path / "opt_whole" / "rank_0" / "o0.ckpt"))
    assert tuple(opt["moments.w1"].shape) == (16, 32) and tuple(opt["w2"].shape) == (32, 8)
    # into an unsharded network
    net = Whole()
    files = [str(tmp_path / "A" / f"rank_{r}" / "net.ckpt") for r in range(workers)]
    with pytest.warns(RuntimeWarning, match=r"\['frozen'\] parameters in network are not in the slice strategy"):
        assert kiln.load_distributed_checkpoint(net, files, None, strategy_file) is True
    np.testing.assert_allclose(net(Tensor(X)).asnumpy(), forward(ref), rtol=0, atol=1e-5)
    # GRAPH_MODE after the first step: the same file, the same weights
    assert (tmp_path / "strategy_G_rank0.ckpt").read_bytes() == (tmp_path / "strategy_A_rank0.ckpt").read_bytes()
    g = [kiln.load_checkpoint(str(tmp_path / "G" / f"rank_{r}" / "net.ckpt")) for r in range(workers)]
    for n in NAMES:
        merged = kiln.merge_sliced_parameter([s[n] for s in g], strategy).asnumpy()
        np.testing.assert_allclose(merged, ref[n], rtol=0, atol=TOL, err_msg=n)
    # AutoParallel(train_step) with save_param_strategy_file: the same weights; load_distributed_checkpoint into an
    # AutoParallel takes its file when train_strategy_filename is None
    from kiln.parallel.auto_parallel import AutoParallel
    ap_files = [str(tmp_path / "AP" / f"rank_{r}" / "net.ckpt") for r in range(workers)]
    ap = AutoParallel(Whole())
    ap.save_param_strategy_file(str(tmp_path / "strategy_AP_rank0.ckpt"))
    with pytest.warns(RuntimeWarning, match="not in the slice strategy"):
        assert kiln.load_distributed_checkpoint(ap, ap_files) is True
    for n in NAMES:
        np.testing.assert_allclose(getattr(ap.network, n).asnumpy(), ref[n], rtol=0, atol=TOL, err_msg=n)
    return strategy_file, files


def test_strategy_files_two_processes(tmp_path):
    ref = _run(tmp_path, 2)
    strategy_file, files = _check_merges(tmp_path, 2, ref)
    # 2-way layout A -> 2-way layout B (transformed by rank 0 inside the job, loaded by each rank into the B network)
    layouts = kiln.build_searched_strategy(str(tmp_path / "strategy_B.json"))
    assert list(layouts["w1"].tensor_map[0].dim) == [1, 0] and list(layouts["w1"].dev_matrix[0].dim) == [1, 2, 1]
    for r in range(2):
        b = dict(np.load(tmp_path / f"B_rank{r}.npz"))
        np.testing.assert_allclose(b["pred"], forward(ref), rtol=0, atol=1e-5)
        np.testing.assert_allclose(b["pred_loaded"], forward(ref), rtol=0, atol=1e-5)
        for n in NAMES:
            np.testing.assert_allclose(b[f"w:{n}"], ref[n], rtol=0, atol=TOL, err_msg=n)
    # transform_checkpoint_by_rank gives the files transform_checkpoints wrote
    dst = str(tmp_path / "strategy_B.json")
    for r in range(2):
        need = kiln.rank_list_for_transform(r, strategy_file, dst)
        out = str(tmp_path / f"by_rank{r}.ckpt")
        kiln.transform_checkpoint_by_rank(r, {k: files[k] for k in need}, out, strategy_file, dst)
        got, want = _np(kiln.load_checkpoint(out)), _np(kiln.load_checkpoint(str(tmp_path / "B" / f"rank_{r}" /
                                                                                    f"net{r}.ckpt")))
        for n in NAMES:
            np.testing.assert_array_equal(got[n], want[n])
    _check_errors(tmp_path, strategy_file, files)
    if os.path.exists(MS_PYTHON):
        _check_with_mindspore(tmp_path, strategy_file)


def test_strategy_files_four_processes(tmp_path):
    """With 4 processes w1 is cut over a device matrix [2, 1, 2] (held twice), b1 and w2 by [2, 1, 2, 1]-style
    repeated copies: the merge picks one copy of each block."""
    ref = _run(tmp_path, 4)
    strategy_file, _ = _check_merges(tmp_path, 4, ref)
    layouts = kiln.build_searched_strategy(strategy_file)
    assert list(layouts["w1"].dev_matrix[0].dim) == [2, 1, 2] and list(layouts["w1"].tensor_map[0].dim) == [1, 0]
    assert list(layouts["w2"].dev_matrix[0].dim) == [2, 1, 2, 1]
    # to another 4-way layout: w2 cut in 4 by rows
    other = str(tmp_path / "other.ckpt")
    items = [("w1", [4, 1], [-1, -1]), ("b1", [4], [-1]), ("w2", [4, 1], [1, -1])]
    with open(other, "wb") as f:
        f.write(_strategy_file.encode(items, [], False))
    kiln.transform_checkpoints(str(tmp_path / "A"), str(tmp_path / "four"), "f", strategy_file, other)
    for r in range(4):
        ck = _np(kiln.load_checkpoint(str(tmp_path / "four" / f"rank_{r}" / f"f{r}.ckpt")))
        np.testing.assert_allclose(ck["w2"], ref["w2"][8 * r:8 * (r + 1)], rtol=0, atol=TOL)
        np.testing.assert_allclose(ck["w1"], ref["w1"], rtol=0, atol=TOL)
    # ranks 2 and 3 read the blocks of their own copy of the device matrix (MindSpore's choice)
    assert [kiln.rank_list_for_transform(r, strategy_file) for r in range(4)] == [[1, 0], [1, 0], [3, 2], [3, 2]]
    if os.path.exists(MS_PYTHON):  # MindSpore: the same rank lists, and the same files from the same transform
        script = """
import sys, numpy as np, mindspore as ms
d = sys.argv[1]
a, o = f"{d}/strategy_A_rank0.ckpt", f"{d}/other.ckpt"
ms.transform_checkpoints(f"{d}/A", f"{d}/msfour", "f", a, o)
out = {f"ranks{r}:{k}": np.array(ms.rank_list_for_transform(r, a, dst)) for r in range(4)
       for k, dst in (("whole", None), ("other", o))}
for r in range(4):
    out.update({f"{r}:{n}": v.asnumpy() for n, v in ms.load_checkpoint(f"{d}/msfour/rank_{r}/f{r}.ckpt").items()})
np.savez(f"{d}/ms_four.npz", **out)
"""
        run = subprocess.run([MS_PYTHON, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]
        ms_out = dict(np.load(tmp_path / "ms_four.npz"))
        for r in range(4):
            assert kiln.rank_list_for_transform(r, strategy_file) == list(ms_out[f"ranks{r}:whole"])
            assert kiln.rank_list_for_transform(r, strategy_file, other) == list(ms_out[f"ranks{r}:other"])
            ck = _np(kiln.load_checkpoint(str(tmp_path / "four" / f"rank_{r}" / f"f{r}.ckpt")))
            for n in NAMES:
                np.testing.assert_array_equal(ck[n], ms_out[f"{r}:{n}"])


def _check_errors(tmp_path, strategy_file, files):
    # a missing rank file
    partial = tmp_path / "partial"
    shutil.copytree(tmp_path / "A" / "rank_0", partial / "rank_0")
    with pytest.raises(ValueError, match=r"The checkpoint file of rank1 is needed for converting rank0's checkpoint"):
        kiln.transform_checkpoints(str(partial), str(tmp_path / "never"), "x", strategy_file)
    with pytest.raises(ValueError, match=r"checkpoint file of rank 1 is needed but missing"):
        kiln.transform_checkpoint_by_rank(0, {0: files[0]}, str(tmp_path / "never.ckpt"), strategy_file)
    with pytest.raises(ValueError, match=r"Checkpoint file .*nope.ckpt in rank 1 not exits"):
        kiln.transform_checkpoint_by_rank(0, {0: files[0], 1: str(tmp_path / "nope.ckpt")},
                                          str(tmp_path / "never.ckpt"), strategy_file)
    # a strategy file of another model
    foreign = str(tmp_path / "foreign.ckpt")
    with open(foreign, "wb") as f:
        f.write(_strategy_file.encode([("conv.weight", [2, 1], [1, -1, -1, -1])], [], False))
    with pytest.raises(ValueError, match=r"none of the parameters of the checkpoint file .* is in the source "
                                         r"strategy .*foreign.ckpt"):
        kiln.transform_checkpoints(str(tmp_path / "A"), str(tmp_path / "never"), "x", foreign)
    with pytest.raises(ValueError, match=r"tensor map of 3 dimensions .* 'w1'|'w1'.*tensor map of 3 dimensions"):
        bad = str(tmp_path / "bad_dims.ckpt")
        with open(bad, "wb") as f:
            f.write(_strategy_file.encode([("w1", [1, 1, 2], [2, 1, 0]), ("b1", [2], [-1]),
                                           ("w2", [2, 1], [1, -1])], [], False))
        kiln.transform_checkpoints(str(tmp_path / "A"), str(tmp_path / "never"), "x", bad)
    # mismatched shapes: rank 1's w2 slice of another shape
    odd = tmp_path / "odd"
    shutil.copytree(tmp_path / "A", odd)
    ck = kiln.load_checkpoint(str(odd / "rank_1" / "net.ckpt"))
    ck["w2"] = Parameter(Tensor(np.zeros((15, 8), np.float32)), name="w2")
    kiln.save_checkpoint([{"name": k, "data": v} for k, v in ck.items()], str(odd / "rank_1" / "net.ckpt"))
    with pytest.raises(ValueError, match=r"the slice of parameter 'w2' in the checkpoint file .*rank_1.*net.ckpt "
                                         r"\(rank 1\) has shape \[15, 8\]"):
        kiln.transform_checkpoints(str(odd), str(tmp_path / "never"), "x", strategy_file)
    with pytest.raises(ValueError, match=r"the argument 'predict_strategy' is dict"):
        kiln.load_distributed_checkpoint(Whole(), files, {"w1": [[2], [-1, -1]]}, strategy_file)
    net = Whole()  # a predict strategy of the right form: one process holds whole values
    with pytest.warns(RuntimeWarning, match="not in the slice strategy"):
        kiln.load_distributed_checkpoint(net, files, {"w1": [[1], [-1, -1], [], 0]}, strategy_file)
    assert net.w1.shape == (16, 32)
    with pytest.raises(ValueError, match=r"length of 'checkpoint_filenames' should be equal to the device count"):
        kiln.load_distributed_checkpoint(Whole(), files[:1], None, strategy_file)
    with pytest.raises(ValueError, match=r"must be a string ending with '.ckpt'"):
        kiln.load_distributed_checkpoint(Whole(), [files[0], str(tmp_path / "missing.ckpt")], None, strategy_file)
    with pytest.raises(ValueError, match=r"no such strategy file"):
        kiln.rank_list_for_transform(0, str(tmp_path / "missing_strategy.ckpt"))
    with pytest.raises(NotADirectoryError, match="is not a directory"):
        kiln.transform_checkpoints(str(tmp_path / "no_such_dir"), str(tmp_path / "never"), "x", strategy_file)
    with pytest.raises(TypeError, match="ckpt_prefix should be a str"):
        kiln.transform_checkpoints(str(tmp_path / "A"), str(tmp_path / "never"), 3, strategy_file)
    with pytest.raises(ValueError, match="should end with .ckpt"):
        kiln.transform_checkpoint_by_rank(0, {0: files[0], 1: files[1]}, str(tmp_path / "x.bin"), strategy_file)
    with pytest.raises(TypeError, match="rank_id should be a int"):
        kiln.rank_list_for_transform("0", strategy_file)
    with pytest.raises(TypeError, match=r"protobuf"):
        junk = tmp_path / "junk.ckpt"
        junk.write_bytes(b"\xff\xff\xff\xff not a strategy")
        kiln.build_searched_strategy(str(junk))


def _check_with_mindspore(tmp_path, strategy_file):
    """MindSpore 2.10 reads Kiln's strategy files (protobuf and JSON) and per-rank checkpoints: its merges,
    transforms and rank lists equal Kiln's."""
    script = """
import sys, numpy as np, mindspore as ms
d = sys.argv[1]
s = ms.build_searched_strategy(f"{d}/strategy_A_rank0.ckpt")
sj = ms.build_searched_strategy(f"{d}/strategy_B.json")
cks = [ms.load_checkpoint(f"{d}/A/rank_{r}/net.ckpt") for r in range(2)]
out = {n: ms.merge_sliced_parameter([c[n] for c in cks], s).asnumpy() for n in ("w1", "b1", "w2")}
ms.transform_checkpoints(f"{d}/A", f"{d}/msB", "net", f"{d}/strategy_A_rank0.ckpt", f"{d}/strategy_B.json")
for r in range(2):
    c = ms.load_checkpoint(f"{d}/msB/rank_{r}/net{r}.ckpt")
    for n in ("w1", "b1", "w2"):
        out[f"B{r}:{n}"] = c[n].asnumpy()
    out[f"ranks{r}"] = np.array(ms.rank_list_for_transform(r, f"{d}/strategy_A_rank0.ckpt", f"{d}/strategy_B.json"))
out["json_keys"] = np.array(sorted(sj))
np.savez(f"{d}/ms_out.npz", **out)
"""
    r = subprocess.run([MS_PYTHON, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    ms_out = dict(np.load(tmp_path / "ms_out.npz"))
    strategy = kiln.build_searched_strategy(strategy_file)
    slices = [kiln.load_checkpoint(str(tmp_path / "A" / f"rank_{k}" / "net.ckpt")) for k in range(2)]
    assert list(ms_out["json_keys"]) == sorted(NAMES)
    for n in NAMES:
        np.testing.assert_array_equal(kiln.merge_sliced_parameter([s[n] for s in slices], strategy).asnumpy(),
                                      ms_out[n])
    for k in range(2):
        mine = _np(kiln.load_checkpoint(str(tmp_path / "B" / f"rank_{k}" / f"net{k}.ckpt")))
        for n in NAMES:
            np.testing.assert_array_equal(mine[n], ms_out[f"B{k}:{n}"])
        assert kiln.rank_list_for_transform(k, strategy_file, str(tmp_path / "strategy_B.json")) == \
            list(ms_out[f"ranks{k}"])


def test_merge_sliced_parameter_in_one_process():
    """Without a strategy the slices are concatenated along axis 0; MindSpore's argument checks and messages."""
    a = Parameter(Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)), name="p")
    b = Parameter(Tensor(np.arange(6, 12, dtype=np.float32).reshape(2, 3)), name="p")
    m = kiln.merge_sliced_parameter([a, b])
    np.testing.assert_array_equal(m.asnumpy(), np.arange(12, dtype=np.float32).reshape(4, 3))
    assert m.name == "p" and m.requires_grad
    # a strategy cutting dimension 1 over 2 devices: slice r holds columns [3r, 3r+3)
    lay = _strategy_file.ParallelLayouts(field=0, opt_weight_shard_step=0, opt_weight_shard_size=0)
    lay.dev_matrix.add().dim.extend([2])
    lay.tensor_map.add().dim.extend([-1, 0])
    lay.param_split_shape.add()
    m = kiln.merge_sliced_parameter([a, b], {"p": lay})
    np.testing.assert_array_equal(m.asnumpy(), np.concatenate([a.asnumpy(), b.asnumpy()], axis=1))
    with pytest.raises(TypeError, match="should be list"):
        kiln.merge_sliced_parameter((a, b))
    with pytest.raises(ValueError, match="should not be empty"):
        kiln.merge_sliced_parameter([])
    with pytest.raises(TypeError, match="should be 'Parameter'"):
        kiln.merge_sliced_parameter([a, Tensor(np.ones((2, 3), np.float32))])
    with pytest.raises(ValueError, match="same name, dimension length and shape except 0 axis"):
        kiln.merge_sliced_parameter([a, Parameter(Tensor(np.ones((2, 4), np.float32)), name="p")])
    with pytest.raises(KeyError, match="should be a key in the 'strategy'"):
        kiln.merge_sliced_parameter([a, b], {"q": lay})
    with pytest.raises(ValueError, match="should be equal to device_count"):
        kiln.merge_sliced_parameter([a], {"p": lay})
    with pytest.raises(TypeError, match="should be dict"):
        kiln.merge_sliced_parameter([a, b], [lay])


def test_strategy_ckpt_config_checks():
    kiln.reset_auto_parallel_context()
    assert kiln.get_auto_parallel_context("strategy_ckpt_config") == {"load_file": "", "save_file": "",
                                                                      "only_trainable_params": True}
    kiln.set_auto_parallel_context(strategy_ckpt_config={"save_file": "/tmp/s.ckpt", "only_trainable_params": False})
    assert kiln.get_auto_parallel_context("strategy_ckpt_save_file") == "/tmp/s.ckpt"
    assert kiln.get_auto_parallel_context("strategy_ckpt_config")["only_trainable_params"] is False
    kiln.set_auto_parallel_context(strategy_ckpt_save_file="/tmp/t.json")
    assert kiln.get_auto_parallel_context("strategy_ckpt_config")["save_file"] == "/tmp/t.json"
    with pytest.raises(TypeError, match="must be dict"):
        kiln.set_auto_parallel_context(strategy_ckpt_config="/tmp/s.ckpt")
    with pytest.raises(ValueError, match=r"Unknown config: \['savefile'\]"):
        kiln.set_auto_parallel_context(strategy_ckpt_config={"savefile": "x"})
    with pytest.raises(TypeError, match="'only_trainable_params' must be bool"):
        kiln.set_auto_parallel_context(strategy_ckpt_config={"only_trainable_params": 1})
    with pytest.raises(TypeError, match="'save_file' must be str"):
        kiln.set_auto_parallel_context(strategy_ckpt_config={"save_file": 3})
    kiln.reset_auto_parallel_context()
    assert kiln.get_auto_parallel_context("strategy_ckpt_config")["only_trainable_params"] is True
    # the MindSpore module paths
    import kiln.parallel.checkpoint_transform as ct
    assert kiln.parallel.transform_checkpoints is ct.transform_checkpoints is kiln.transform_checkpoints
    assert kiln.train.serialization.merge_sliced_parameter is ct.merge_sliced_parameter
    assert kiln.train.load_distributed_checkpoint is ct.load_distributed_checkpoint


def _cut(whole, dev, tmap, rank):
    """NumPy reference: rank's slice of `whole` under (dev_matrix, tensor_map) in MindSpore's convention."""
    coords, q = [], rank
    for d in reversed(dev):
        coords.insert(0, q % d)
        q //= d
    idx = []
    for n, t in zip(whole.shape, tmap):
        if t == -1:
            idx.append(slice(None))
        else:
            k, c = dev[len(dev) - 1 - t], coords[len(dev) - 1 - t]
            idx.append(slice(c * n // k, (c + 1) * n // k))
    return whole[tuple(idx)]


CASES = [
    (([2, 2], [1, 0]), ([4], [0, -1])),                      # 2x2 blocks -> rows in 4
    (([2, 1, 2], [1, 0]), ([2, 2], [-1, 1])),                 # repeated copies -> columns in 2, held twice
    (([8], [0, -1]), ([2, 2, 2], [2, 0])),                    # 8 row slices -> 2x2 over 8 devices
    (([2], [-1, 0]), ([2, 2, 2], [0, 1])),                    # 2 devices -> 8 (more destination ranks)
    (([4, 2], [1, -1]), ([1], [-1, -1])),                     # -> whole
]
WHOLE = np.random.RandomState(5).randn(8, 16).astype(np.float32)
BIAS = np.arange(3, dtype=np.float32)  # not in the strategies: copied as it is


def _transform_case(d, src, dst):
    """Writes the strategy files and the source ranks' cuts of WHOLE under d, and transforms them with Kiln into
    d/out; returns the strategy file paths."""
    paths = {}
    for name, (dev, tmap) in (("src", src), ("dst", dst)):
        paths[name] = str(d / f"{name}.ckpt")
        with open(paths[name], "wb") as f:
            f.write(_strategy_file.encode([("w", dev, tmap)], [], False))
    for r in range(int(np.prod(src[0]))):
        os.makedirs(d / "in" / f"rank_{r}")
        kiln.save_checkpoint({"w": Tensor(_cut(WHOLE, *src, r)), "b": Tensor(BIAS)},
                             str(d / "in" / f"rank_{r}" / "c.ckpt"))
    kiln.transform_checkpoints(str(d / "in"), str(d / "out"), "t", paths["src"], paths["dst"])
    return paths


@pytest.mark.parametrize("src,dst", CASES)
def test_transform_against_numpy_cuts(tmp_path, src, dst):
    """transform_checkpoints / transform_checkpoint_by_rank between layouts of different device counts, repeated
    copies and cut dimensions: every destination file equals NumPy's cut of the whole array, and merging the
    destination slices back gives the whole array."""
    paths = _transform_case(tmp_path, src, dst)
    strategy = kiln.build_searched_strategy(paths["dst"])
    got = []
    for r in range(int(np.prod(dst[0]))):
        ck = kiln.load_checkpoint(str(tmp_path / "out" / f"rank_{r}" / f"t{r}.ckpt"))
        np.testing.assert_array_equal(ck["w"].asnumpy(), _cut(WHOLE, *dst, r))
        np.testing.assert_array_equal(ck["b"].asnumpy(), BIAS)
        got.append(ck["w"])
        need = kiln.rank_list_for_transform(r, paths["src"], paths["dst"])
        one = str(tmp_path / f"one{r}.ckpt")
        kiln.transform_checkpoint_by_rank(r, {k: str(tmp_path / "in" / f"rank_{k}" / "c.ckpt") for k in need}, one,
                                          paths["src"], paths["dst"])
        np.testing.assert_array_equal(kiln.load_checkpoint(one)["w"].asnumpy(), _cut(WHOLE, *dst, r))
    np.testing.assert_array_equal(kiln.merge_sliced_parameter(got, strategy).asnumpy(), WHOLE)


@pytest.mark.skipif(not os.path.exists(MS_PYTHON), reason="MindSpore 2.10 (/work/ms-venv) is not installed")
def test_transform_matches_mindspore(tmp_path):
    """MindSpore 2.10's transform_checkpoints on the same files and strategy files writes the same arrays. (Its
    rank_list_for_transform may name more ranks than Kiln's, which are the ones the blocks are read from:
    docs/decisions/strategy-files.md.)"""
    for i, (src, dst) in enumerate(CASES):
        os.makedirs(tmp_path / f"c{i}")
        _transform_case(tmp_path / f"c{i}", src, dst)
    script = """
import sys, numpy as np, mindspore as ms
for i in range(int(sys.argv[2])):
    d = f"{sys.argv[1]}/c{i}"
    ms.transform_checkpoints(f"{d}/in", f"{d}/msout", "t", f"{d}/src.ckpt", f"{d}/dst.ckpt")
"""
    run = subprocess.run([MS_PYTHON, "-c", script, str(tmp_path), str(len(CASES))], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    for i, (_, dst) in enumerate(CASES):
        for r in range(int(np.prod(dst[0]))):
            ms_ck = kiln.load_checkpoint(str(tmp_path / f"c{i}" / "msout" / f"rank_{r}" / f"t{r}.ckpt"))
            ck = kiln.load_checkpoint(str(tmp_path / f"c{i}" / "out" / f"rank_{r}" / f"t{r}.ckpt"))
            for n in ("w", "b"):
                np.testing.assert_array_equal(ck[n].asnumpy(), ms_ck[n].asnumpy(), err_msg=f"case {i} rank {r} {n}")

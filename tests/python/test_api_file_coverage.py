"""tools/api_file_coverage.py: which names a MindSpore program reaches, and whether Kiln resolves them."""
import ast
import importlib.util
import os

import pytest

_spec = importlib.util.spec_from_file_location(
    "api_file_coverage", os.path.join(os.path.dirname(__file__), "..", "..", "tools", "api_file_coverage.py"))
cov = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cov)

SRC = '''
import numpy as np
import mindspore as ms
import mindspore.nn as nn
from mindspore import ops, Tensor
from mindspore.ops import operations as P
from mindspore.train.callback import ModelCheckpoint as MC

class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(2, 3)
        self.sum = P.ReduceSum(keep_dims=True)
    def construct(self, x):
        return ops.relu(self.fc(x)).asnumpy() + np.random.uniform()

ms.set_context(mode=ms.GRAPH_MODE)
y = ms.Tensor(np.ones(3)).nonexistent_method()
z = ms.nn.NoSuchLayer
'''


def test_used_names_follow_aliases_and_stop_at_calls():
    names = cov.used_names(ast.parse(SRC))
    assert names == {"mindspore", "mindspore.nn", "mindspore.ops", "mindspore.Tensor", "mindspore.ops.operations",
                     "mindspore.train.callback", "mindspore.train.callback.ModelCheckpoint", "mindspore.nn.Cell",
                     "mindspore.nn.Dense", "mindspore.ops.operations.ReduceSum", "mindspore.ops.relu",
                     "mindspore.set_context", "mindspore.GRAPH_MODE", "mindspore.nn.NoSuchLayer"}
    assert cov.used_names(ast.parse("import numpy as np\nx = np.ones(3)\n")) is None


def test_attribute_names_leave_out_module_paths():
    attrs = cov.attribute_names(ast.parse(SRC))
    assert {"fc", "sum", "asnumpy", "nonexistent_method"} <= attrs
    assert not {"uniform", "random", "relu", "ReduceSum", "set_context", "NoSuchLayer"} & attrs


def test_resolves_under_the_compat_alias():
    import kiln.compat
    kiln.compat.install()
    try:
        assert cov.resolves("mindspore.nn.Dense") and cov.resolves("mindspore.ops.operations.ReduceSum")
        assert cov.resolves("mindspore.train.callback.ModelCheckpoint")
        assert not cov.resolves("mindspore.nn.NoSuchLayer") and not cov.resolves("mindspore.no_such_module.x")
    finally:
        kiln.compat.uninstall()


def test_directory_source(tmp_path, capsys):
    (tmp_path / "train.py").write_text(SRC)
    (tmp_path / "ok.py").write_text("import mindspore as ms\nms.set_context(mode=ms.GRAPH_MODE)\n")
    (tmp_path / "other.py").write_text("import os\n")
    (tmp_path / "py2.py").write_text("print 'x'\n")
    assert cov.main([str(tmp_path), "--top", "5"]) == 0
    out = capsys.readouterr().out
    assert "files importing mindspore: 2; covered (every module-path name resolves in Kiln): 1 (50.0%)" in out
    assert "training scripts (train*.py): 1; covered: 0 (0.0%)" in out
    assert "not parsed as Python 3 (left out): 1" in out
    assert "1  mindspore.nn.NoSuchLayer" in out
    with pytest.raises(SystemExit):
        cov.main([str(tmp_path / "missing")])

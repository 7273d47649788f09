"""History.plot and History(plot_path=...) with entries that are not real scalars (a fresh tester's findings):
None (an epoch without output) is a gap, arrays/strings/complex values are left out, and a run with nothing numeric
logs a warning at the end of training instead of failing there; plot() itself raises a clear ValueError."""
import logging

import numpy as np
import pytest
from PIL import Image

import kiln
from kiln.train.callback import History


def _hist(values, plot_path=None):
    h = History(plot_path=plot_path)
    h.history = dict(values)
    h.epoch = {"epoch": list(range(1, 1 + max(len(v) for v in values.values())))}
    return h


def test_none_is_a_gap_and_tensors_and_numbers_plot(tmp_path):
    h = _hist({"net_output": [np.float32(1.0), None, np.float32(0.5)], "acc": [kiln.Tensor(0.5), 0.7, True],
               "confusion": [np.eye(2), np.eye(2), np.eye(2)], "tag": ["a", "b", "c"]})
    path = h.plot(str(tmp_path / "c.png"))
    with Image.open(path) as im:
        im.verify()


@pytest.mark.parametrize("values", [{"net_output": [None]}, {"x": ["a"]}, {"x": [np.array([1.0, 2.0])]},
                                    {"net_output": [1 + 2j]}])
def test_nothing_numeric_raises_a_clear_error(tmp_path, values):
    # was: matplotlib's "Number of rows must be a positive integer, not 0", or float(None)'s TypeError
    with pytest.raises(ValueError, match="no entry of the history holds real numbers"):
        _hist(values).plot(str(tmp_path / "x.png"))


def test_a_key_with_non_numeric_values_raises(tmp_path):
    with pytest.raises(ValueError, match="'tag' are not real numbers"):
        _hist({"net_output": [1.0], "tag": ["a"]}).plot(str(tmp_path / "x.png"), keys=["tag"])


def test_end_of_training_with_nothing_numeric_warns_and_writes_nothing(tmp_path, caplog):
    path = tmp_path / "x.png"
    h = _hist({"net_output": [None, None]}, plot_path=str(path))
    with caplog.at_level(logging.WARNING, logger="kiln.train"):
        h.on_train_end(None)
    assert "nothing numeric was recorded" in caplog.text and not path.exists()
    h = _hist({"net_output": [2.0, None]}, plot_path=str(path))
    h.on_train_end(None)
    with Image.open(path) as im:
        im.verify()

"""kiln.dataset.text: Vocab, Lookup, PythonTokenizer — the values MindSpore 2.10 gives for the same calls (recorded
from MindSpore 2.10 in a side run; MindSpore is never needed here)."""
import numpy as np
import pytest

import kiln as ms
import kiln.dataset as ds
from kiln.dataset import text


def _tokens():
    d = ds.GeneratorDataset(["b a c a", "c d b a", "e"], "text", shuffle=False)
    return d.map(text.PythonTokenizer(lambda s: s.split()))


def test_python_tokenizer_in_a_pipeline():
    rows = [r[0] for r in _tokens().create_tuple_iterator(output_numpy=True, num_epochs=1)]
    assert [r.tolist() for r in rows] == [["b", "a", "c", "a"], ["c", "d", "b", "a"], ["e"]]
    assert rows[0].dtype.kind == "U"
    with pytest.raises(TypeError, match="NumPy array"):
        text.PythonTokenizer(str.split)("hello world")
    with pytest.raises(TypeError, match="callable"):
        text.PythonTokenizer(3)


def test_vocab_from_dataset_orders_by_frequency_then_token():
    d = _tokens()
    assert text.Vocab.from_dataset(d).vocab() == {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4}
    assert text.Vocab.from_dataset(d, special_tokens=["<pad>", "<unk>"]).vocab() == {
        "<pad>": 0, "<unk>": 1, "a": 2, "b": 3, "c": 4, "d": 5, "e": 6}
    assert text.Vocab.from_dataset(d, top_k=2).vocab() == {"a": 0, "b": 1}
    assert text.Vocab.from_dataset(d, freq_range=(2, 10)).vocab() == {"a": 0, "b": 1, "c": 2}
    assert text.Vocab.from_dataset(d, special_tokens=["<unk>"], special_first=False).vocab()["<unk>"] == 5
    with pytest.raises(ValueError, match="top_k"):
        text.Vocab.from_dataset(d, top_k=0)


def test_vocab_from_list_and_dict_and_conversions():
    v = text.Vocab.from_list(["x", "y", "z"], special_tokens=["<unk>"], special_first=False)
    assert v.vocab() == {"x": 0, "y": 1, "z": 2, "<unk>": 3}
    assert v.tokens_to_ids(["y", "q"]) == [1, -1] and v.tokens_to_ids("z") == 2
    assert v.ids_to_tokens([0, 3, 9]) == ["x", "<unk>", ""] and v.ids_to_tokens(1) == "y"
    assert text.Vocab.from_dict({"a": 3, "b": 7}).vocab() == {"a": 3, "b": 7}
    with pytest.raises(ValueError, match="unique"):
        text.Vocab.from_list(["x", "x"])
    with pytest.raises(ValueError, match="once"):
        text.Vocab.from_dict({"a": 1, "b": 1})


def test_lookup():
    d = _tokens()
    v = text.Vocab.from_dataset(d, special_tokens=["<pad>", "<unk>"])
    ids = [r[0] for r in d.map(text.Lookup(v, "<unk>")).create_tuple_iterator(output_numpy=True, num_epochs=1)]
    assert [i.tolist() for i in ids] == [[3, 2, 4, 2], [4, 5, 3, 2], [6]]
    assert all(i.dtype == np.int32 for i in ids)
    out = text.Lookup(v, "<unk>", ms.int64)(np.array(["a", "zz"]))
    assert out.tolist() == [2, 1] and out.dtype == np.int64
    with pytest.raises(RuntimeError, match="'zz' is not in the vocabulary"):
        text.Lookup(v)(np.array(["zz"]))
    with pytest.raises(ValueError, match="not in the vocabulary"):
        text.Lookup(v, "<missing>")
    with pytest.raises(TypeError, match="Vocab"):
        text.Lookup({"a": 1})

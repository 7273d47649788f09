"""kiln.dataset.text — MindSpore's `mindspore.dataset.text`, the part the tutorials use: `Vocab` (a token <-> id table
built from a list, a dict or a dataset's token column), `Lookup` (tokens -> ids) and `PythonTokenizer` (a Python
function splitting a string into tokens), `UnicodeCharTokenizer`, `ToNumber` (also under the module path
`kiln.dataset.text.transforms`). Semantics checked against MindSpore 2.10 (tests/python/test_dataset_text.py).

Not here (yet): MindSpore's C++ tokenizers (BasicTokenizer, BertTokenizer, JiebaTokenizer, ...), SentencePiece,
Ngram, sliding windows and the string-normalizing operations."""
import collections
import numbers

import numpy as np

from ..transforms._base import TensorOperation, to_numpy_dtype


def _check_tokens(tokens, what):
    if not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens):
        raise TypeError(f"{what}: expected a list of str, but got {tokens!r}.")
    if len(set(tokens)) != len(tokens):
        dup = [t for t, n in collections.Counter(tokens).items() if n > 1]
        raise ValueError(f"{what}: the tokens must be unique, but {dup} repeat.")


class Vocab:
    """A vocabulary: a one-to-one map between tokens (str) and ids (int >= 0).

    Build it with `Vocab.from_list`, `Vocab.from_dict` or `Vocab.from_dataset` (the constructor makes an empty one)."""

    def __init__(self):
        self._ids = {}
        self._tokens = {}

    @classmethod
    def _of(cls, ids):
        v = cls()
        v._ids = dict(ids)
        v._tokens = {i: t for t, i in v._ids.items()}
        return v

    @classmethod
    def from_list(cls, word_list, special_tokens=None, special_first=True):
        """Ids in list order. `special_tokens` (list of str) go first (ids 0..k-1) when `special_first`, else last.

        Raises TypeError for non-str tokens, ValueError for a repeated token (also between the two lists)."""
        special = list(special_tokens or [])
        _check_tokens(list(word_list), "Vocab.from_list: word_list")
        _check_tokens(special, "Vocab.from_list: special_tokens")
        words = list(word_list)
        ordered = special + words if special_first else words + special
        _check_tokens(ordered, "Vocab.from_list")
        return cls._of((t, i) for i, t in enumerate(ordered))

    @classmethod
    def from_dict(cls, word_dict):
        """The given token -> id pairs (ids non-negative ints, each used once).

        Raises TypeError for a non-str token or non-int id, ValueError for a negative or repeated id."""
        if not isinstance(word_dict, dict):
            raise TypeError(f"Vocab.from_dict: word_dict must be a dict, but got {type(word_dict).__name__}.")
        for t, i in word_dict.items():
            if not isinstance(t, str) or not isinstance(i, numbers.Integral) or isinstance(i, bool):
                raise TypeError(f"Vocab.from_dict: entries must be str -> int, but got {t!r} -> {i!r}.")
            if i < 0:
                raise ValueError(f"Vocab.from_dict: ids must be >= 0, but {t!r} has {i}.")
        if len(set(word_dict.values())) != len(word_dict):
            raise ValueError("Vocab.from_dict: every id must be used once.")
        return cls._of((t, int(i)) for t, i in word_dict.items())

    @classmethod
    def from_dataset(cls, dataset, columns=None, freq_range=None, top_k=None, special_tokens=None,
                     special_first=True):
        """Counts the tokens of `columns` (default: every column) over one pass of `dataset` and numbers them by
        frequency, highest first, ties in lexicographic order (MindSpore's order).

        Args:
            freq_range (tuple): (min_frequency, max_frequency), inclusive; default all.
            top_k (int): keep the `top_k` most frequent tokens (after freq_range); default all.
            special_tokens (list of str), special_first (bool): as in `from_list`.

        Raises TypeError/ValueError for bad arguments; RuntimeError for a non-string column."""
        cols = [columns] if isinstance(columns, str) else list(columns) if columns is not None else None
        if freq_range is not None:
            if (not isinstance(freq_range, tuple) or len(freq_range) != 2 or
                    not all(isinstance(f, numbers.Integral) and f >= 0 for f in freq_range)):
                raise ValueError(f"Vocab.from_dataset: freq_range must be a tuple of 2 ints >= 0, but got "
                                 f"{freq_range!r}.")
        if top_k is not None and (not isinstance(top_k, numbers.Integral) or isinstance(top_k, bool) or top_k < 1):
            raise ValueError(f"Vocab.from_dataset: top_k must be a positive int, but got {top_k!r}.")
        special = list(special_tokens or [])
        _check_tokens(special, "Vocab.from_dataset: special_tokens")
        counts = collections.Counter()
        for row in dataset.create_dict_iterator(num_epochs=1, output_numpy=True):
            for name in (cols if cols is not None else list(row)):
                if name not in row:
                    raise ValueError(f"Vocab.from_dataset: column {name!r} does not exist; the dataset's columns "
                                     f"are {list(row)}.")
                arr = np.asarray(row[name])
                if arr.dtype.kind not in "US":
                    raise RuntimeError(f"Vocab.from_dataset: column {name!r} holds {arr.dtype}, expected strings "
                                       "(tokens).")
                counts.update(str(t) for t in arr.reshape(-1))
        for t in special:
            counts.pop(t, None)
        words = sorted(counts, key=lambda t: (-counts[t], t))
        if freq_range is not None:
            lo, hi = freq_range
            words = [t for t in words if lo <= counts[t] <= hi]
        if top_k is not None:
            words = words[:top_k]
        ordered = special + words if special_first else words + special
        return cls._of((t, i) for i, t in enumerate(ordered))

    def vocab(self):
        """The token -> id dict (a copy)."""
        return dict(self._ids)

    def tokens_to_ids(self, tokens):
        """The id of a token (str) or the list of ids of a list of tokens; -1 for a token not in the vocabulary."""
        if isinstance(tokens, str):
            return self._ids.get(tokens, -1)
        return [self._ids.get(t, -1) for t in tokens]

    def ids_to_tokens(self, ids):
        """The token of an id (int) or the list of tokens of a list of ids; '' for an id not in the vocabulary."""
        if isinstance(ids, numbers.Integral):
            return self._tokens.get(int(ids), "")
        return [self._tokens.get(int(i), "") for i in ids]


class Lookup(TensorOperation):
    """Tokens -> ids through `vocab`: an array of str (any shape) in, an array of `data_type` (default int32) of
    the same shape out.

    Args:
        vocab (Vocab): the table.
        unknown_token (str): the token whose id replaces tokens not in `vocab` (it must be in `vocab`); without it,
            a token not in `vocab` raises RuntimeError.
        data_type: the output dtype, a numeric kiln/NumPy dtype (default int32)."""

    def __init__(self, vocab, unknown_token=None, data_type=np.int32):
        if not isinstance(vocab, Vocab):
            raise TypeError(f"Lookup: vocab must be a text.Vocab, but got {type(vocab).__name__}.")
        if unknown_token is not None:
            if not isinstance(unknown_token, str):
                raise TypeError(f"Lookup: unknown_token must be a str, but got {type(unknown_token).__name__}.")
            if unknown_token not in vocab._ids:
                raise ValueError(f"Lookup: unknown_token {unknown_token!r} is not in the vocabulary.")
        self.vocab, self.unknown_token = vocab, unknown_token
        self._dtype = to_numpy_dtype(data_type)
        if self._dtype.kind not in "iuf":
            raise TypeError(f"Lookup: data_type must be numeric, but got {self._dtype}.")

    def _execute(self, tokens):
        if tokens.dtype.kind not in "US":
            raise RuntimeError(f"Lookup: the input should be strings (tokens), but got {tokens.dtype}.")
        ids, unk = self.vocab._ids, self.unknown_token
        out = np.empty(tokens.shape, self._dtype)
        flat = out.reshape(-1)
        for k, t in enumerate(tokens.reshape(-1)):
            i = ids.get(str(t))
            if i is None:
                if unk is None:
                    raise RuntimeError(f"Lookup: token {str(t)!r} is not in the vocabulary and no unknown_token is "
                                       "set.")
                i = ids[unk]
            flat[k] = i
        return out


class PythonTokenizer:
    """A Python function `tokenizer(str) -> list of str` as a dataset operation: a string (0-d array of str) in,
    a 1-D array of the tokens out.

    Raises TypeError (not callable; input not a NumPy array of str, as MindSpore), RuntimeError when the function
    does not return a list of str."""

    def __init__(self, tokenizer):
        if not callable(tokenizer):
            raise TypeError(f"PythonTokenizer: tokenizer must be callable, but got {type(tokenizer).__name__}.")
        self.tokenizer = tokenizer

    def __call__(self, in_array):
        if not isinstance(in_array, np.ndarray):
            raise TypeError(f"input should be a NumPy array. Got {type(in_array)}.")
        if in_array.dtype.kind not in "US":
            raise TypeError(f"input should be a NumPy array of str. Got {in_array.dtype}.")
        tokens = self.tokenizer(str(in_array.reshape(-1)[0]) if in_array.size == 1 else in_array)
        if not isinstance(tokens, (list, tuple, np.ndarray)) or not all(isinstance(t, (str, np.str_)) for t in tokens):
            raise RuntimeError(f"PythonTokenizer: the tokenizer must return a list of str, but got {tokens!r}.")
        return np.array(list(tokens), dtype=np.str_)


from .transforms import ToNumber, UnicodeCharTokenizer  # noqa: E402 (transforms imports the classes above)

__all__ = ["Vocab", "Lookup", "PythonTokenizer", "ToNumber", "UnicodeCharTokenizer"]

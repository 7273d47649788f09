"""`map` with operations that run batched (Note [batched map] in kiln/dataset/engine/operations.py): the same rows,
bit for bit, as running each row alone; rows of other shapes, bad rows and failing sources behave as row by row."""
import numpy as np
import pytest

import kiln.dataset as ds
from kiln.dataset import transforms, vision


def _ops():
    return [vision.Rescale(1.0 / 255.0, -0.1), vision.Normalize(mean=(0.1307, 0.2, 0.3), std=(0.3081, 0.5, 0.7)),
            vision.HWC2CHW(), vision.ToType(np.float16), transforms.TypeCast(np.float64)]


def _per_row(images, ops):
    out = []
    for img in images:
        for op in ops:
            img = op(img)
        out.append(img)
    return out


def _rows(d):
    return [r[0] for r in d.create_tuple_iterator(output_numpy=True, num_epochs=1)]


@pytest.mark.parametrize("n", [1, 31, 32, 33, 100])
def test_batched_map_equals_each_row_alone(n):
    images = np.random.default_rng(n).integers(0, 256, (n, 5, 7, 3), dtype=np.uint8)
    got = _rows(ds.NumpySlicesDataset({"image": images}, shuffle=False).map(_ops(), input_columns="image"))
    want = _per_row(images, _ops())
    assert len(got) == n
    for g, w in zip(got, want):
        assert g.dtype == w.dtype == np.float64 and g.shape == w.shape == (3, 5, 7)
        np.testing.assert_array_equal(g, w)


def test_rows_of_different_shapes_and_grayscale_rows():
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 256, (4 + i % 3, 6, 1), dtype=np.uint8) for i in range(40)]
    ops = [vision.Rescale(1 / 255, 0), vision.Normalize(mean=(0.5,), std=(0.25,)), vision.HWC2CHW()]
    got = _rows(ds.GeneratorDataset(lambda: ((im,) for im in images), ["image"], shuffle=False)
                .map(ops, input_columns="image"))
    for g, w in zip(got, _per_row(images, ops)):
        np.testing.assert_array_equal(g, w)
    gray = rng.integers(0, 256, (40, 4, 6), dtype=np.uint8)  # (H, W) rows: Normalize keeps (H, W)
    got = _rows(ds.NumpySlicesDataset({"image": gray}, shuffle=False).map(ops, input_columns="image"))
    for g, w in zip(got, _per_row(gray, ops)):
        assert g.shape == w.shape == (4, 6)
        np.testing.assert_array_equal(g, w)


def test_a_bad_row_in_a_chunk_raises_its_own_error_after_the_rows_before_it():
    images = [np.full((2, 2, 3), i, np.uint8) for i in range(10)] + [np.zeros((2, 2, 2), np.uint8)]
    d = ds.GeneratorDataset(lambda: ((im,) for im in images), ["image"], shuffle=False)
    d = d.map([vision.Normalize(mean=(1.0, 2.0, 3.0), std=(1.0, 1.0, 1.0)), vision.HWC2CHW()], input_columns="image")
    seen = []
    with pytest.raises(RuntimeError, match="number of channels does not match"):
        for r in d.create_tuple_iterator(output_numpy=True, num_epochs=1):
            seen.append(r[0])
    assert len(seen) == 10
    np.testing.assert_array_equal(seen[9][0], np.full((2, 2), 9 - 1.0, np.float32))


def test_a_source_failing_mid_chunk_still_delivers_the_rows_before():
    def gen():
        for i in range(5):
            yield (np.full((2, 2, 1), i, np.uint8),)
        raise ValueError("source broke at row 5")

    d = ds.GeneratorDataset(gen, ["image"], shuffle=False).map([vision.Rescale(2.0, 0.0)], input_columns="image")
    seen = []
    with pytest.raises(Exception, match="source broke at row 5"):
        for r in d.create_tuple_iterator(output_numpy=True, num_epochs=1):
            seen.append(float(r[0][0, 0, 0]))
    assert seen == [0.0, 2.0, 4.0, 6.0, 8.0]


def test_a_python_function_among_the_operations_runs_row_by_row():
    images = np.arange(40 * 2 * 2 * 1, dtype=np.uint8).reshape(40, 2, 2, 1)
    calls = []

    def count(x):
        calls.append(x.shape)
        return x

    got = _rows(ds.NumpySlicesDataset({"image": images}, shuffle=False)
                .map([vision.Rescale(1.0, 1.0), count], input_columns="image"))
    assert calls == [(2, 2, 1)] * 40
    np.testing.assert_array_equal(np.stack(got), images.astype(np.float32) + 1)


def test_equal_shaped_rows_run_as_stacks(monkeypatch):
    stacks = []
    original = vision.HWC2CHW._execute_batch

    def spy(self, batch):
        stacks.append(batch.shape[0])
        return original(self, batch)

    monkeypatch.setattr(vision.HWC2CHW, "_execute_batch", spy)
    images = np.zeros((70, 3, 3, 3), np.uint8)
    assert len(_rows(ds.NumpySlicesDataset({"image": images}, shuffle=False)
                     .map([vision.Rescale(1.0, 0.0), vision.HWC2CHW()], input_columns="image"))) == 70
    assert stacks == [32, 32, 6]

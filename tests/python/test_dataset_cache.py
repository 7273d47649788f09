"""DatasetCache (tutorial dataset/cache.md): MindSpore 2.10's argument checks when it is built; using it in a
pipeline raises RuntimeError naming the missing cache server (MindSpore 2.10 raises "Cache server ... is
unreachable" where no server runs)."""
import numpy as np
import pytest

import kiln.dataset as ds


def test_dataset_cache_arguments_as_mindspore():
    c = ds.DatasetCache(session_id=1, size=0, spilling=False)
    assert (c.session_id, c.size, c.spilling) == (1, 0, False)
    with pytest.raises(TypeError, match="Argument session_id with value a is not of type"):  # MindSpore's words
        ds.DatasetCache(session_id="a", size=0)
    with pytest.raises(ValueError, match="session_id is not within the required interval"):
        ds.DatasetCache(session_id=0)
    with pytest.raises(ValueError, match="port is not within the required interval of"):
        ds.DatasetCache(1, port=80)
    with pytest.raises(TypeError, match="spilling"):
        ds.DatasetCache(1, spilling=1)


def test_cache_in_a_pipeline_names_the_missing_server(tmp_path):
    c = ds.DatasetCache(session_id=1)
    recs = np.zeros((2, 3073), np.uint8)
    recs.tofile(tmp_path / "data_batch_1.bin")
    with pytest.raises(RuntimeError, match="Cifar10Dataset: cache=.* needs MindSpore's dataset cache server"):
        ds.Cifar10Dataset(str(tmp_path), cache=c)
    d = ds.Cifar10Dataset(str(tmp_path))
    with pytest.raises(RuntimeError, match="map: cache=.* needs MindSpore's dataset cache server"):
        d.map(lambda x: x, input_columns="image", cache=c)
    with pytest.raises(TypeError, match="Argument cache with value 3 is not of type"):
        ds.Cifar10Dataset(str(tmp_path), cache=3)
    with pytest.raises(RuntimeError, match="no dataset cache server"):
        c.get_stat()

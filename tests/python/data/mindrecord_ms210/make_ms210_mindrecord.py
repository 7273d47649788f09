"""Writes the MindSpore-made MindRecord fixture that tests/python/test_mindrecord.py reads.

Run with real MindSpore 2.10 (the files here were made with MindSpore 2.10.0, NumPy 1.26.4):
    cd tests/python/data/mindrecord_ms210 && /work/msvenv/bin/python make_ms210_mindrecord.py

Writes:
  ms210.mindrecord0, ms210.mindrecord1 (+ .db)  FileWriter("ms210.mindrecord", shard_num=2) with a small header
      (16 KB) and page (32 KB), every field type, two write_raw_data calls; MindSpore spreads rows over the two
      shards at random, so the expected rows are read back (below), not assumed
  ms210_single.mindrecord (+ .db)  the same two calls into one shard: its bytes are deterministic, so Kiln's
      FileWriter must write exactly these bytes
  ms210_expected.npz  what MindSpore's MindDataset(["ms210.mindrecord0", "ms210.mindrecord1"], shuffle=False)
      gives, key "<row>/<column>", and "__columns__", and "__reader__/<row>/<column>" what FileReader gives
      (bytes as uint8 arrays, ints/floats/strings as 0-d arrays); "__sizes__": rows in shard 0 and 1
"""
import os

import numpy as np
from mindspore.mindrecord import FileReader, FileWriter
import mindspore.dataset as ds

for f in os.listdir("."):
    if f.startswith("ms210") and not f.endswith(".py"):
        os.remove(f)

SCHEMA = {"label": {"type": "int32"}, "big": {"type": "int64"}, "score": {"type": "float32"},
          "ratio": {"type": "float64"}, "name": {"type": "string"}, "raw": {"type": "bytes"},
          "ids": {"type": "int32", "shape": [-1]}, "mat": {"type": "float32", "shape": [2, 2]},
          "wide": {"type": "int64", "shape": [-1]}}


def row(i):
    return {"label": i - 3, "big": -(2**40) * i, "score": 0.1 * i, "ratio": 1.0 / (i + 1), "name": "név" + "x" * i,
            "raw": bytes(range(i, i + 3 + i)), "ids": np.array([i, -i, 300 * i, -70000 * i, 2**31 - 1][:i + 1],
                                                               np.int32),
            "mat": np.arange(4, dtype=np.float32).reshape(2, 2) * i - 0.5,
            "wide": np.array([2**40 + i, -5, i], np.int64)}


w = FileWriter("ms210.mindrecord", shard_num=2, overwrite=True)
w.set_header_size(1 << 14)
w.set_page_size(1 << 15)
w.add_schema(SCHEMA, "kiln fixture")
w.add_index(["label", "name"])
w.write_raw_data([row(i) for i in range(3)])
w.write_raw_data([row(i) for i in range(3, 5)])
w.commit()

w = FileWriter("ms210_single.mindrecord", overwrite=True)
w.set_header_size(1 << 14)
w.set_page_size(1 << 15)
w.add_schema(SCHEMA, "kiln fixture")
w.add_index(["label", "name"])
w.write_raw_data([row(i) for i in range(3)])
w.write_raw_data([row(i) for i in range(3, 5)])
w.commit()

files = ["ms210.mindrecord0", "ms210.mindrecord1"]
out = {}
data = ds.MindDataset(files, shuffle=False)
out["__columns__"] = np.array(data.get_col_names())
for r, values in enumerate(data.create_tuple_iterator(output_numpy=True)):
    for c, v in zip(data.get_col_names(), values):
        out[f"{r}/{c}"] = v
reader = FileReader(files)
for r, item in enumerate(reader.get_next()):
    for c, v in item.items():
        out[f"__reader__/{r}/{c}"] = np.frombuffer(v, np.uint8) if isinstance(v, bytes) else np.asarray(v)
reader.close()
out["__sizes__"] = np.array([FileReader([f]).len() for f in files])
np.savez_compressed("ms210_expected.npz", **out)
print(sorted(os.listdir(".")), out["__sizes__"])

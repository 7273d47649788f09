"""Developer check (not a test: it needs real MindSpore): files written by Kiln read identically in MindSpore 2.10,
and single-shard files are byte for byte the files MindSpore writes for the same calls.

    cd /work/wt/<tree> && .venv/bin/python tests/python/data/mindrecord_ms210/check_kiln_files_in_mindspore.py \
        [--mindspore-python /work/msvenv/bin/python]

Writes, with each framework in its own folder: A (3 shards, 32 KB pages, 6 calls of 10-15 rows of every field
type), B (one shard, 45 rows in two sessions through open_for_append, index fields name and ratio), C (blob fields
only: an int64 array), D (raw fields only), E (an empty commit), F (an empty bytes value next to another blob
field). Then reads every data set with MindDataset(shuffle=False) and FileReader in both frameworks and compares
columns, dtypes, shapes and bytes. Prints one line per data set; exits 1 on any difference."""
import argparse
import filecmp
import os
import pickle
import subprocess
import sys
import tempfile

WRITE = r'''
import sys
import numpy as np
if sys.argv[1] == "kiln":
    from kiln.mindrecord import FileWriter
else:
    from mindspore.mindrecord import FileWriter
SCHEMA = {"label": {"type": "int32"}, "big": {"type": "int64"}, "score": {"type": "float32"},
          "ratio": {"type": "float64"}, "name": {"type": "string"}, "raw": {"type": "bytes"},
          "ids": {"type": "int32", "shape": [-1]}, "mat": {"type": "float32", "shape": [2, 2]},
          "wide": {"type": "int64", "shape": [-1]}}
def row(i):
    return {"label": i - 3, "big": -(2**40) * i, "score": 0.1 * i, "ratio": 1.0 / (i + 1),
            "name": "név" + "x" * (i * 37 % 5000), "raw": bytes(range(i % 200, i % 200 + 1 + i % 7)),
            "ids": np.array([i, -i, 300 * i, -70000 * i, 2**31 - 1][:i % 5 + 1], np.int32),
            "mat": np.arange(4, dtype=np.float32).reshape(2, 2) * i - 0.5,
            "wide": np.array([2**40 + i, -5, i], np.int64)[: i % 3 + 1]}
w = FileWriter("A.mindrecord", shard_num=3, overwrite=True); w.set_header_size(1 << 14); w.set_page_size(1 << 15)
w.add_schema(SCHEMA, "desc é")
for c in range(6):
    w.write_raw_data([row(i) for i in range(c * 10, c * 10 + 10 + c)])
w.commit()
w = FileWriter("B.mindrecord", overwrite=True); w.set_page_size(1 << 15); w.add_schema(SCHEMA)
w.add_index(["name", "ratio"]); w.write_raw_data([row(i) for i in range(20)]); w.commit()
w = FileWriter.open_for_append("B.mindrecord"); w.write_raw_data([row(i) for i in range(20, 45)]); w.commit()
w = FileWriter("C.mindrecord", overwrite=True); w.add_schema({"ids": {"type": "int64", "shape": [-1]}})
w.write_raw_data([{"ids": np.arange(i, dtype=np.int64) * (1 << 33) - 7} for i in range(1, 6)]); w.commit()
w = FileWriter("D.mindrecord", overwrite=True); w.add_schema({"x": {"type": "int64"}, "s": {"type": "string"}})
w.write_raw_data([{"x": -i, "s": "é" * i} for i in range(7)]); w.commit()
w = FileWriter("E.mindrecord", overwrite=True); w.add_schema({"x": {"type": "int64"}}); w.commit()
w = FileWriter("F.mindrecord", overwrite=True)
w.add_schema({"b": {"type": "bytes"}, "v": {"type": "float64", "shape": [-1]}})
w.write_raw_data([{"b": b"", "v": np.array([1.5])}, {"b": b"ab", "v": np.array([2.5, 3])}]); w.commit()
'''

READ = r'''
import pickle, sys
import numpy as np
if sys.argv[1] == "kiln":
    import kiln.dataset as ds
    from kiln.mindrecord import FileReader
else:
    import mindspore.dataset as ds
    from mindspore.mindrecord import FileReader
out = {}
for name in ["A.mindrecord0", "B.mindrecord", "C.mindrecord", "D.mindrecord", "E.mindrecord", "F.mindrecord"]:
    data = ds.MindDataset(name, shuffle=False)
    out[name] = (data.get_col_names(), [[(v.dtype.str, v.shape, v.tobytes()) for v in r]
                                        for r in data.create_tuple_iterator(output_numpy=True)])
    reader = FileReader(name)
    out[name + " FileReader"] = [{k: (v.tobytes() if isinstance(v, np.ndarray) else v) for k, v in item.items()}
                                 for item in reader.get_next()]
    reader.close()
pickle.dump(out, open(sys.argv[2], "wb"))
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mindspore-python", default="/work/msvenv/bin/python")
    args = ap.parse_args()
    kiln_path = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "python"))
    pythons = {"kiln": sys.executable, "mindspore": args.mindspore_python}
    env = dict(os.environ, PYTHONPATH=kiln_path)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for impl, python in pythons.items():
            os.makedirs(os.path.join(tmp, impl))
            subprocess.run([python, "-c", WRITE, impl], cwd=os.path.join(tmp, impl), env=env, check=True,
                           capture_output=True)
        reads = {}
        for reader, python in pythons.items():  # each framework reads the files Kiln wrote
            out = os.path.join(tmp, f"read_by_{reader}.pkl")
            subprocess.run([python, "-c", READ, reader, out], cwd=os.path.join(tmp, "kiln"), env=env, check=True,
                           capture_output=True)
            reads[reader] = pickle.load(open(out, "rb"))
        for name in reads["kiln"]:
            ok = reads["kiln"][name] == reads["mindspore"][name]
            bad += not ok
            print(f"{name:28} read the same in Kiln and MindSpore: {ok}")
        for name in "BCDEF":
            f = f"{name}.mindrecord"
            ok = filecmp.cmp(os.path.join(tmp, "kiln", f), os.path.join(tmp, "mindspore", f), shallow=False)
            bad += not ok
            print(f"{f:28} same bytes as MindSpore's: {ok}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

"""Writes the MindSpore-made checkpoint fixtures that tests/python/test_checkpoint_formats.py checks.

Run with real MindSpore 2.10 (the files in this folder were made with MindSpore 2.10.0, NumPy 1.26.4, safetensors
0.8.0):  cd tests/python/data && /work/msvenv/bin/python make_ms210_checkpoint_formats.py

Writes:
  ms210_dtypes.safetensors      save_checkpoint(list, format="safetensors", append_dict=...): every dtype
  ms210_dtypes_crc.ckpt         the same entries, format="ckpt", crc_check=True (MindSpore's b"crc_num" trailer)
  ms210_dtypes_crc.safetensors  the same without the float16/bfloat16 entries, crc_check=True (MindSpore 2.10
                                cannot compute its safetensors CRC of a float16 or bfloat16 array: bytes(array)
                                raises "cannot include dtype 'E' in a buffer")
  ms210_dtypes.npz              the expected arrays by name (bfloat16 as the float32 of the same value), and
                                "__crc_num__" (the CRC MindSpore stored in the crc .safetensors metadata)
"""
import json
import struct

import numpy as np

ARRAYS = {
    "f32": np.array([[1.5, -2.0, 3.25], [0.0, -0.0, 1e-30]], np.float32),
    "f16": np.array([65504.0, 6e-5, -1.0, 0.0], np.float16),
    "f64": np.array([np.pi, -1e300], np.float64),
    "i8": np.array([-128, 127], np.int8),
    "i16": np.array([-32768, 32767], np.int16),
    "i32": np.array([-2**31, 2**31 - 1], np.int32),
    "i64": np.array([-2**62, 2**62 + 7], np.int64),
    "u8": np.array([0, 255], np.uint8),
    "u16": np.array([0, 65535], np.uint16),
    "u32": np.array([0, 2**32 - 1], np.uint32),
    "u64": np.array([0, 2**63 + 5], np.uint64),
    "bool": np.array([[True, False], [False, True]]),
    "scalar_f32": np.array(2.5, np.float32),
    "scalar_i32": np.array(7, np.int32),
    "layer.weight": np.arange(6, dtype=np.float32).reshape(2, 3) / 4,
}
BF16 = {"bf16": np.array([1.0, -0.5, 3.0, 0.15625], np.float32), "scalar_bf16": np.array(-2.0, np.float32)}
APPEND = {"epoch_num": 3, "lr": 0.25, "flag": True}


def main():
    import mindspore as ms  # only here: the tests import ARRAYS/BF16/APPEND without MindSpore
    from mindspore import Tensor
    items = [{"name": k, "data": Tensor(v)} for k, v in ARRAYS.items()]
    items += [{"name": k, "data": Tensor(v, ms.bfloat16)} for k, v in BF16.items()]
    ms.save_checkpoint(items, "ms210_dtypes", format="safetensors", append_dict=dict(APPEND))
    ms.save_checkpoint(items, "ms210_dtypes_crc.ckpt", crc_check=True, append_dict=dict(APPEND))
    no_half = [it for it in items if it["data"].dtype not in (ms.float16, ms.bfloat16)]
    ms.save_checkpoint(no_half, "ms210_dtypes_crc", format="safetensors", crc_check=True, append_dict=dict(APPEND))
    raw = open("ms210_dtypes_crc.safetensors", "rb").read()
    header = json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])
    expected = dict(ARRAYS)
    expected.update(BF16)
    expected.update({"epoch_num": np.array(3, np.int64), "lr": np.array(0.25, np.float32),
                     "flag": np.array(True)})
    expected["__crc_num__"] = np.array(int(header["__metadata__"]["crc_num"]), np.int64)
    np.savez("ms210_dtypes.npz", **expected)
    # MindSpore reads both back exactly
    names = sorted(k for k in expected if k != "__crc_num__")
    half = ("f16", "bf16", "scalar_bf16")
    for f, fmt, crc, want in (("ms210_dtypes.safetensors", "safetensors", False, names),
                              ("ms210_dtypes_crc.ckpt", "ckpt", True, names),
                              ("ms210_dtypes_crc.safetensors", "safetensors", True,
                               [k for k in names if k not in half])):
        loaded = ms.load_checkpoint(f, format=fmt, crc_check=crc)
        assert sorted(loaded) == want, sorted(loaded)
        for k, p in loaded.items():
            v = p.float().asnumpy() if p.dtype == ms.bfloat16 else p.asnumpy()
            np.testing.assert_array_equal(v, expected[k])
    print(header["__metadata__"])


if __name__ == "__main__":
    main()

"""kiln.dataset.text.transforms: UnicodeCharTokenizer and ToNumber (tutorial dataset/eager.md), checked against
MindSpore 2.10's outputs and error texts on the same inputs (its values in the expectations)."""
import numpy as np
import pytest

import kiln
import kiln.dataset as ds
import kiln.dataset.text as text_pkg
import kiln.dataset.text.transforms as text


def test_module_path_and_names():
    assert text.UnicodeCharTokenizer is text_pkg.UnicodeCharTokenizer
    assert text.Lookup is text_pkg.Lookup and text.ToNumber is text_pkg.ToNumber


def test_unicode_char_tokenizer():
    out = text.UnicodeCharTokenizer()("Welcome to Beijing !")
    assert out.dtype == np.dtype("<U1") and "".join(out.tolist()) == "Welcome to Beijing !"
    tokens, start, limit = text.UnicodeCharTokenizer(True)("héllo 你")
    assert tokens.tolist() == ["h", "é", "l", "l", "o", " ", "你"]
    # MindSpore 2.10: UTF-8 byte offsets, uint32
    assert start.dtype == np.uint32 and start.tolist() == [0, 1, 3, 4, 5, 6, 7]
    assert limit.tolist() == [1, 3, 4, 5, 6, 7, 10]
    assert text.UnicodeCharTokenizer()("").tolist() == [""]
    with pytest.raises(RuntimeError, match="the input shape should be scalar and the input datatype should be"):
        text.UnicodeCharTokenizer()(np.array(["ab", "c"]))
    with pytest.raises(TypeError, match="Wrong input type for with_offsets, should be boolean."):
        text.UnicodeCharTokenizer(1)
    d = ds.NumpySlicesDataset(["ab", "cde"], column_names=["t"], shuffle=False)
    d = d.map(text.UnicodeCharTokenizer(), input_columns="t")
    assert [x[0].tolist() for x in d.create_tuple_iterator(output_numpy=True)] == [["a", "b"], ["c", "d", "e"]]


@pytest.mark.parametrize("dtype, strings, expected", [  # MindSpore 2.10's results
    (kiln.int32, ["123456"], np.array([123456], np.int32)),
    (kiln.float32, ["1.5", "-2e3"], np.array([1.5, -2000.0], np.float32)),
    (kiln.int32, ["12a"], np.array([12], np.int32)),
    (kiln.int32, ["1.5"], np.array([1], np.int32)),
    (kiln.int32, [" 12"], np.array([12], np.int32)),
    (kiln.int32, ["+12"], np.array([12], np.int32)),
    (kiln.int32, ["0x10"], np.array([0], np.int32)),
    (kiln.float32, ["1.5abc"], np.array([1.5], np.float32)),
    (kiln.float32, [".5"], np.array([0.5], np.float32)),
    (kiln.float64, [" 2.5 "], np.array([2.5])),
    (kiln.uint64, ["18446744073709551615"], np.array([18446744073709551615], np.uint64)),
    (kiln.float64, [["1", "2"], ["3", "4"]], np.array([[1.0, 2.0], [3.0, 4.0]])),
])
def test_to_number_values(dtype, strings, expected):
    out = text.ToNumber(dtype)(np.array(strings))
    assert out.dtype == expected.dtype
    np.testing.assert_array_equal(out, expected)


def test_to_number_scalar_and_nan():
    out = text.ToNumber(kiln.int64)("42")
    assert out.shape == () and out.dtype == np.int64 and int(out) == 42
    assert np.isnan(text.ToNumber(kiln.float64)(["nan"])[0])


@pytest.mark.parametrize("dtype, s, message", [  # MindSpore 2.10's words
    (kiln.int8, "300", "ToNumber: string input 300 will be out of bounds if cast to int8. The valid range is: "
                       "[-128, 127]."),
    (kiln.uint8, "-1", "ToNumber: string input -1 will be out of bounds if cast to uint8. The valid range is: "
                       "[0, 255]."),
    (kiln.int64, "99999999999999999999", "out of bounds if cast to int64. The valid range is: "
                                         "[-9223372036854775808, 9223372036854775807]."),
    (kiln.int32, "abc", 'ToNumber: it is invalid to convert "abc" to a number.'),
    (kiln.int32, "", 'ToNumber: it is invalid to convert "" to a number.'),
    (kiln.float32, "1e39", "ToNumber: string input 1e39 will be out of bounds if cast to float32. The valid range is: "
                           "[-340282346638528859811704183484516925440.000000, "
                           "340282346638528859811704183484516925440.000000]."),
    (kiln.float32, "inf", "string input inf will be out of bounds if cast to float32"),
    (kiln.float32, "1e-50", "string input 1e-50 will be out of bounds if cast to float32"),
    (kiln.float16, "70000", "ToFloat16: value 70000.000000in input data is outside of valid float16 range "
                            "[65504.000000, -65504.000000]."),
])
def test_to_number_errors(dtype, s, message):
    with pytest.raises(RuntimeError) as info:
        text.ToNumber(dtype)([s])
    assert message in str(info.value)


def test_to_number_argument_errors():
    with pytest.raises(RuntimeError, match="ToNumber: input should be string datatype"):
        text.ToNumber(kiln.int32)(np.array([1, 2]))
    with pytest.raises(TypeError, match="data_type: Bool is not numeric data type."):
        text.ToNumber(kiln.bool_)
    with pytest.raises(TypeError, match="Argument data_type with value <class 'numpy.int16'> is not of type"):
        text.ToNumber(np.int16)

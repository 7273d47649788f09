// Reductions, shape ops, indexing and softmax. Thin: argument conversion only (axes via to_axes, shapes via
// to_shape, lists of tensors for concat/stack).
#include "bindings.h"

namespace kiln::py {

namespace {
std::vector<Tensor> to_tensors(nb::handle seq, const char* op) {
  KILN_CHECK(nb::isinstance<nb::tuple>(seq) || nb::isinstance<nb::list>(seq), Type, "For '", op,
             "', the input must be a list or tuple of tensors, but got '", nb::inst_name(seq).c_str(), "'.");
  std::vector<Tensor> r;
  for (nb::handle h : seq) r.push_back(to_tensor(h, "element"));
  return r;
}
std::optional<int64_t> opt_axis(nb::handle obj, const char* op) {
  if (obj.is_none()) return std::nullopt;
  KILN_CHECK(PyLong_Check(obj.ptr()) && !PyBool_Check(obj.ptr()), Type, "For '", op,
             "', the axis must be None or an int, but got '", nb::inst_name(obj).c_str(), "'.");
  return nb::cast<int64_t>(obj);
}
}  // namespace

void bind_reduce_shape(nb::module_& m) {
  using TL = const TensorLike&;
#define RED(NAME, OP)                                                                                       \
  m.def(#NAME, [](TL x, nb::handle axis, bool keep_dims) { return ops::NAME(x, to_axes(axis, OP), keep_dims); }, \
        nb::arg("x"), nb::arg("axis").none() = nb::none(), nb::arg("keep_dims") = false);
  RED(sum, "ReduceSum") RED(mean, "ReduceMean") RED(amax, "ReduceMax") RED(amin, "ReduceMin") RED(prod, "ReduceProd")
  RED(count_nonzero, "CountNonZero") RED(reduce_all, "ReduceAll") RED(reduce_any, "ReduceAny")
#undef RED
  m.def("var_mean",
        [](TL x, nb::handle axis, int64_t ddof, bool keep_dims, bool std) {
          return apply(OpId::VarMean, {x},
                       {{"axis", to_axes(axis, "VarMean")}, {"ddof", ddof}, {"keep_dims", keep_dims}, {"std", std}});
        },
        nb::arg("x"), nb::arg("axis").none() = nb::none(), nb::arg("ddof") = 0, nb::arg("keep_dims") = false,
        nb::arg("std") = false,
        "[var (std=True: its square root), mean] over axis, divided by N - ddof (the VarMean op; float inputs).");
  m.def("argmax", [](TL x, nb::handle axis, bool keep_dims) { return ops::argmax(x, opt_axis(axis, "Argmax"), keep_dims); },
        nb::arg("x"), nb::arg("axis").none() = nb::none(), nb::arg("keep_dims") = false);
  m.def("argmin", [](TL x, nb::handle axis, bool keep_dims) { return ops::argmin(x, opt_axis(axis, "Argmin"), keep_dims); },
        nb::arg("x"), nb::arg("axis").none() = nb::none(), nb::arg("keep_dims") = false);
  m.def("sum_to", [](TL x, nb::handle shape) { return ops::sum_to(x, to_shape(shape, "sum_to")); }, nb::arg("x"),
        nb::arg("shape"));

  m.def("reshape", [](TL x, nb::handle shape) { return ops::reshape(x, to_shape(shape, "Reshape")); }, nb::arg("x"),
        nb::arg("shape"));
  m.def("transpose", [](TL x, nb::handle perm) { return ops::transpose(x, to_axes(perm, "Transpose")); }, nb::arg("x"),
        nb::arg("perm"));
  m.def("broadcast_to", [](TL x, nb::handle shape) { return ops::broadcast_to(x, to_shape(shape, "BroadcastTo")); },
        nb::arg("x"), nb::arg("shape"));
  m.def("expand_dims", [](TL x, int64_t axis) { return ops::expand_dims(x, axis); }, nb::arg("x"), nb::arg("axis"));
  m.def("squeeze", [](TL x, nb::handle axis) { return ops::squeeze(x, to_axes(axis, "Squeeze")); }, nb::arg("x"),
        nb::arg("axis").none() = nb::none());
  m.def("concat", [](nb::handle xs, int64_t axis) { return ops::concat(to_tensors(xs, "Concat"), axis); },
        nb::arg("tensors"), nb::arg("axis") = 0);
  m.def("stack", [](nb::handle xs, int64_t axis) { return ops::stack(to_tensors(xs, "Stack"), axis); },
        nb::arg("tensors"), nb::arg("axis") = 0);
  m.def("split", [](TL x, std::vector<int64_t> sizes, int64_t axis) { return ops::split(x, sizes, axis); },
        nb::arg("x"), nb::arg("sizes"), nb::arg("axis") = 0);
  // begin/end/step: one entry per leading axis, normalized as Python's slice.indices(dim) returns them.
  m.def("strided_slice", [](TL x, std::vector<int64_t> b, std::vector<int64_t> e, std::vector<int64_t> s) {
          return ops::strided_slice(x, b, e, s);
        }, nb::arg("x"), nb::arg("begin"), nb::arg("end"), nb::arg("step"));
  m.def("diagonal", [](TL x, int64_t offset, int64_t dim1, int64_t dim2) { return ops::diagonal(x, offset, dim1, dim2); },
        nb::arg("x"), nb::arg("offset") = 0, nb::arg("dim1") = 0, nb::arg("dim2") = 1,
        "The offset diagonal over dim1, dim2, appended as the last dim (the Diagonal op; a view).");
  m.def("diag_embed",
        [](TL x, nb::handle shape, int64_t offset, int64_t dim1, int64_t dim2) {
          return ops::diag_embed(x, to_shape(shape, "DiagEmbed"), offset, dim1, dim2);
        },
        nb::arg("x"), nb::arg("shape"), nb::arg("offset"), nb::arg("dim1"), nb::arg("dim2"),
        "Zeros of `shape` with x on their diagonal(offset, dim1, dim2) (the DiagEmbed op).");

  m.def("gather", [](TL x, TL idx, int64_t axis) { return ops::gather(x, idx, axis); }, nb::arg("x"),
        nb::arg("indices"), nb::arg("axis") = 0);
  m.def("unsorted_segment_sum", [](TL x, TL ids, int64_t n) { return ops::unsorted_segment_sum(x, ids, n); },
        nb::arg("x"), nb::arg("segment_ids"), nb::arg("num_segments"));
  m.def("nonzero", [](TL x) { return ops::nonzero(x); }, nb::arg("x"));
  m.def("cumsum",
        [](TL x, int64_t axis, bool exclusive, bool reverse) {
          return apply1(OpId::CumSum, {x}, {{"axis", axis}, {"exclusive", exclusive}, {"reverse", reverse}});
        },
        nb::arg("x"), nb::arg("axis"), nb::arg("exclusive") = false, nb::arg("reverse") = false,
        "Running sums along axis (the CumSum op: exclusive, reverse as MindSpore's primitive).");
  m.def("cumprod",
        [](TL x, int64_t axis, bool exclusive, bool reverse) {
          return apply1(OpId::CumProd, {x}, {{"axis", axis}, {"exclusive", exclusive}, {"reverse", reverse}});
        },
        nb::arg("x"), nb::arg("axis"), nb::arg("exclusive") = false, nb::arg("reverse") = false,
        "Running products along axis (the CumProd op: exclusive, reverse as MindSpore's primitive).");
  m.def("gather_d", [](TL x, int64_t dim, TL index) { return apply1(OpId::GatherD, {x, index}, {{"dim", dim}}); },
        nb::arg("x"), nb::arg("dim"), nb::arg("index"),
        "out[p] = x[p with p[dim] = index[p]] (the GatherD op; negative indices count from the end).");
  m.def("tri_indices",
        [](int64_t row, int64_t col, int64_t offset, bool lower, DType dtype) {
          return apply1(lower ? OpId::TrilIndices : OpId::TriuIndices, {},
                        {{"row", row}, {"col", col}, {"offset", offset}, {"dtype", dtype}});
        },
        nb::arg("row"), nb::arg("col"), nb::arg("offset"), nb::arg("lower"), nb::arg("dtype"),
        "The (2, N) coordinates of the lower (lower=True) or upper triangle of a row x col matrix.");
  m.def("cummax", [](TL x, int64_t axis) { return apply(OpId::CumMax, {x}, {{"axis", axis}}); }, nb::arg("x"),
        nb::arg("axis"), "[running maximum, its Int64 index] along axis (the CumMax op; ties take the later index).");
  m.def("cummin", [](TL x, int64_t axis) { return apply(OpId::CumMin, {x}, {{"axis", axis}}); }, nb::arg("x"),
        nb::arg("axis"), "[running minimum, its Int64 index] along axis (the CumMin op; ties take the later index).");
  m.def("logcumsumexp",
        [](TL x, int64_t axis, bool reverse) {
          return apply1(OpId::LogCumSumExp, {x}, {{"axis", axis}, {"reverse", reverse}});
        },
        nb::arg("x"), nb::arg("axis"), nb::arg("reverse") = false,
        "log of the running sum of exp(x) along axis, without overflow (the LogCumSumExp op).");
  m.def("median",
        [](TL x, int64_t axis, bool keepdims, bool ignore_nan) {
          return apply(OpId::Median, {x}, {{"axis", axis}, {"keepdims", keepdims}, {"ignore_nan", ignore_nan}});
        },
        nb::arg("x"), nb::arg("axis"), nb::arg("keepdims") = false, nb::arg("ignore_nan") = false,
        "[lower median along axis, its Int64 index] (the Median op; ignore_nan: nanmedian's).");
  m.def("det", [](TL x) { return apply1(OpId::MatrixDeterminant, {x}); }, nb::arg("x"),
        "det of square matrices (..., n, n) (the MatrixDeterminant op: pivoted LU in double).");
  m.def("slogdet", [](TL x) { return apply(OpId::LogMatrixDeterminant, {x}); }, nb::arg("x"),
        "[sign, log|det|] of square matrices (..., n, n) (the LogMatrixDeterminant op).");
  m.def("inverse", [](TL x) { return apply1(OpId::MatrixInverse, {x}); }, nb::arg("x"),
        "The inverse of square matrices (..., n, n) (the MatrixInverse op: pivoted LU in double).");
  m.def("polygamma", [](int64_t n, TL x) { return apply1(OpId::Polygamma, {x}, {{"n", n}}); }, nb::arg("n"),
        nb::arg("x"), "psi^(n)(x), the n-th derivative of digamma (the Polygamma op; float results).");
  m.def("argsort", [](TL x, int64_t axis, bool descending) { return ops::argsort(x, axis, descending); },
        nb::arg("x"), nb::arg("axis") = -1, nb::arg("descending") = false,
        "Stable sorting permutation (Int64) along axis; NaN is the largest value.");
  m.def("argsort_topk",
        [](TL x, int64_t axis, bool largest, int64_t k, bool sorted) {
          return apply1(OpId::ArgSort, {x}, {{"axis", axis}, {"descending", largest}, {"topk", k},
                                             {"topk_sorted", sorted}});
        },
        nb::arg("x"), nb::arg("axis"), nb::arg("largest"), nb::arg("k"), nb::arg("sorted"),
        "ArgSort in MindSpore 2.10's TopK order along axis: its first k entries are the k largest (smallest) "
        "indices as MindSpore's CPU TopK returns them (std::nth_element, then std::stable_sort when sorted).");
  m.def("tensor_scatter_update",
        [](TL x, TL idx, TL upd, const std::string& op) { return ops::tensor_scatter_update(x, idx, upd, op); },
        nb::arg("input_x"), nb::arg("indices"), nb::arg("updates"), nb::arg("op") = "");
  m.def("tensor_scatter_reduce",
        [](TL x, TL idx, TL upd, const std::string& reduction, const std::string& op, bool rows) {
          Attrs a{{"reduction", std::string(reduction)}};
          if (!op.empty()) a.items.push_back({"op", std::string(op)});
          if (rows) a.items.push_back({"rows", true});
          return apply1(OpId::TensorScatterReduce, {x, idx, upd}, a);
        },
        nb::arg("input_x"), nb::arg("indices"), nb::arg("updates"), nb::arg("reduction"), nb::arg("op") = "",
        nb::arg("rows") = false,
        "The TensorScatterReduce op: input_x combined in turn with updates[i] at the index rows indices[i] by "
        "reduction ('add', 'sub', 'mul', 'div', 'max', 'min'; rows: indices of any shape holding row numbers into "
        "axis 0, MindSpore's ScatterMax/...); ValueError naming op for an index out of range.");
  m.def("tensor_scatter_elements",
        [](TL x, TL idx, TL upd, int64_t axis, const std::string& reduction, bool slices, const std::string& op) {
          Attrs a{{"axis", axis}, {"reduction", std::string(reduction)}};
          if (slices) a.items.push_back({"slices", true});
          if (!op.empty()) a.items.push_back({"op", std::string(op)});
          return apply1(OpId::TensorScatterElements, {x, idx, upd}, a);
        },
        nb::arg("input_x"), nb::arg("indices"), nb::arg("updates"), nb::arg("axis"), nb::arg("reduction"),
        nb::arg("slices") = false, nb::arg("op") = "",
        "The TensorScatterElements op: updates written ('none') or added ('add') along axis at indices (of x's rank; "
        "slices: 1-D indices picking whole slices, 'none' filling them with a 0-d value); ValueError naming op.");
  m.def("tensor_copy", [](TL x) { return ops::tensor_copy(x); }, nb::arg("x"));
  m.def("check_range",
        [](TL x, const std::string& op, const std::string& what, double lower, double upper, bool upper_closed,
           std::optional<int64_t> ignore, bool index_error) {
          return ops::check_range(x, op, what, lower, upper, upper_closed, ignore, index_error);
        },
        nb::arg("x"), nb::arg("op"), nb::arg("what"), nb::arg("lower"), nb::arg("upper"),
        nb::arg("upper_closed") = false, nb::arg("ignore") = nb::none(), nb::arg("index_error") = false);
  m.def("softmax", [](TL x, int64_t axis) { return ops::softmax(x, axis); }, nb::arg("x"), nb::arg("axis") = -1);
  m.def("log_softmax", [](TL x, int64_t axis) { return ops::log_softmax(x, axis); }, nb::arg("x"),
        nb::arg("axis") = -1);
}

}  // namespace kiln::py

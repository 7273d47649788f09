// Elementwise ops, matmul, creation and random ops. Thin: argument conversion only.
#include "bindings.h"
#include "kiln/random.h"

namespace kiln::py {

void bind_elementwise(nb::module_& m) {
  using TL = const TensorLike&;
  // The ops with a generated signature (src/ops/schema/ops.yaml): kiln._core.<api>, the schema's doc as docstring.
#include "bind_ops_generated.inc"
  m.def("select", [](TL c, TL x, TL y) { return with_op_name("select", [&] { return ops::select(c, x, y); }); }, nb::arg("cond"), nb::arg("x"), nb::arg("y"));
  m.def("gelu", [](TL x, bool approximate) { return ops::gelu(x, approximate); }, nb::arg("x"),
        nb::arg("approximate") = false);
  m.def("clip", [](TL x, std::optional<TensorLike> lo, std::optional<TensorLike> hi) {
          return with_op_name("clip_by_value", [&] { return ops::clip(x, lo ? lo->t : Tensor(), hi ? hi->t : Tensor()); });
        }, nb::arg("x"), nb::arg("lo").none(), nb::arg("hi").none());
  m.def("cast", [](TL x, DType t) { return ops::cast(x, t); }, nb::arg("x"), nb::arg("dtype"));
  m.def("view_as_real", [](TL x) { return ops::view_as_real(x); }, nb::arg("x"),
        "Complex64/Complex128 of shape S -> Float32/Float64 of shape S + [2] (real, imag).");
  m.def("view_as_complex", [](TL x) { return ops::view_as_complex(x); }, nb::arg("x"),
        "Float32/Float64 of shape S + [2] (real, imag) -> Complex64/Complex128 of shape S.");
  m.def("matmul", [](TL a, TL b, bool ta, bool tb) { return ops::matmul(a, b, ta, tb); }, nb::arg("a"), nb::arg("b"),
        nb::arg("transpose_a") = false, nb::arg("transpose_b") = false);

  m.def("full", [](nb::handle shape, double v, DType t) { return ops::full(to_shape(shape, "full"), v, t); },
        nb::arg("shape"), nb::arg("value"), nb::arg("dtype"));
  m.def("zeros_like", [](TL x) { return ops::zeros_like(x); });
  m.def("ones_like", [](TL x) { return ops::ones_like(x); });
  m.def("arange", &ops::arange, nb::arg("start"), nb::arg("end"), nb::arg("step"), nb::arg("dtype"));
  m.def("standard_normal", [](nb::handle shape, DType t, uint64_t seed, uint64_t offset, int64_t stream) {
          return ops::standard_normal(to_shape(shape, "randn"), t, seed, offset, stream);
        }, nb::arg("shape"), nb::arg("dtype"), nb::arg("seed"), nb::arg("offset"), nb::arg("stream") = -1);
  m.def("uniform_real", [](nb::handle shape, DType t, uint64_t seed, uint64_t offset, int64_t stream) {
          return ops::uniform_real(to_shape(shape, "uniform"), t, seed, offset, stream);
        }, nb::arg("shape"), nb::arg("dtype"), nb::arg("seed"), nb::arg("offset"), nb::arg("stream") = -1);
  m.def("uniform_int", [](nb::handle shape, int64_t lo, int64_t hi, DType t, uint64_t seed, uint64_t offset,
                          int64_t stream) {
          return ops::uniform_int(to_shape(shape, "randint"), lo, hi, t, seed, offset, stream);
        }, nb::arg("shape"), nb::arg("low"), nb::arg("high"), nb::arg("dtype"), nb::arg("seed"), nb::arg("offset"),
        nb::arg("stream") = -1);
  m.def("random_gamma", [](nb::handle shape, TL alpha, std::optional<TensorLike> beta, uint64_t seed, uint64_t offset,
                           int64_t stream) {
          std::vector<Tensor> in{alpha.t};
          if (beta) in.push_back(beta->t);
          return apply1(beta ? OpId::Gamma : OpId::RandomGamma, in,
                        {{"shape", to_shape(shape, "random_gamma")}, {"seed", int64_t(seed)}, {"offset", int64_t(offset)},
                         {"stream", stream}});
        }, nb::arg("shape"), nb::arg("alpha"), nb::arg("beta").none(), nb::arg("seed"), nb::arg("offset"),
        nb::arg("stream") = -1,
        "Gamma(alpha) samples (times the scale beta when given: the Gamma op, else RandomGamma) of `shape`, the "
        "output shape, to which alpha and beta broadcast.");
  m.def("kaiser_window", [](int64_t n, bool periodic, double beta, DType t) {
          return apply1(OpId::KaiserWindow, {}, {{"window_length", n}, {"periodic", periodic}, {"beta", beta},
                                                 {"dtype", t}});
        }, nb::arg("window_length"), nb::arg("periodic"), nb::arg("beta"), nb::arg("dtype"),
        "The Kaiser window (the KaiserWindow op; np.kaiser's formula in double).");
  m.def("reset_random_streams", &random::reset_streams, "Restarts every random stream at offset 0 (set_seed).");
}

}  // namespace kiln::py

// Class-index and sequence losses as single kernels (issue 23): NLLLoss / NLLLossGrad (ops.nll_loss, the class-index
// path of ops.cross_entropy, nn.NLLLoss / nn.CrossEntropyLoss), CTCLossV2 / CTCLossV2Grad (ops.ctc_loss,
// nn.CTCLoss), MultiMarginLoss and MultilabelMarginLoss with their Grad ops (ops.multi_margin_loss,
// ops.multilabel_margin_loss and their nn Cells). They replace Python compositions of 14-15 (NLL), ~250 (CTC) and
// 14 / 31 (margins) kernel launches.
//
// NLLLoss (MindSpore's primitive): loss_n = -w[t_n] * x[n, t_n] for log-probabilities x with classes on axis 1 (axis 0
// for 1-D x), 0 where t_n == ignore_index; total_weight = sum of w[t_n] over the kept n. Sums run in double. A class
// index outside [0, C) that is not ignore_index raises ValueError when the kernel runs (PyNative and every run of a
// compiled graph), worded as the CheckRange op the former composition used. The `op` attribute names the caller in
// messages (NLLLoss, CrossEntropyLoss).
//
// CTCLossV2 [Graves et al. 2006, section 4.1]: over the extended labels l' = (blank, l_1, blank, ..., l_S', blank) of
// length 2S' + 1 (S' = target_lengths[n]), in log space and double:
//   alpha_0(0) = y_0(blank), alpha_0(1) = y_0(l_1), alpha_t(s) = lse(alpha_{t-1}(s), alpha_{t-1}(s-1),
//   alpha_{t-1}(s-2) if l'_s != blank and l'_s != l'_{s-2}) + y_t(l'_s);  nll = -lse(alpha_{T'-1}(2S'),
//   alpha_{T'-1}(2S'-1)), T' = input_lengths[n]. log_alpha (N, T, 2S + 1) holds alpha_t(s) for t < T', s <= 2S' and
//   -inf elsewhere (MindSpore's CTCLossV2 layout). The gradient kernel recomputes alpha and runs the beta recursion
//   beta_t(s) = log P(rest after t | at s at time t) (y_t excluded), so that d nll / d y_t(c) in log space is
//   -exp(lse_{s: l'_s = c}(alpha_t(s) + beta_t(s)) + nll) (eq. 14-16 of the paper before any softmax): the exact
//   derivative w.r.t. log_probs, which Kiln's former autodiff of the recursion gave too. An infinite nll (no
//   alignment fits) gets gradient 0. Reduction (none | sum | mean: mean over n of nll_n / max(S'_n, 1), MindSpore's
//   ops.ctc_loss) and zero_infinity are attributes, so the whole loss is one node.
#include <omp.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "elementwise.h"
#include "families.h"

namespace kiln {
namespace {

using TV = std::vector<Tensor>;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

enum class Red { None, Mean, Sum };

Red reduction(const Attrs& a, const char* op) {
  const std::string& r = a.s("reduction");
  KILN_CHECK(r == "none" || r == "mean" || r == "sum", Value, "For '", op,
             "', the 'reduction' must be in ['mean', 'sum', 'none'], but got '", r, "'.");
  return r == "none" ? Red::None : r == "mean" ? Red::Mean : Red::Sum;
}

std::string caller(const Attrs& a, const char* dflt) {
  const AttrValue* v = a.find("op");
  return v ? std::get<std::string>(*v) : std::string(dflt);
}

std::vector<int64_t> int_values(const Tensor& x) {
  const Tensor c = ew::as_dtype(x, DType::Int64).contiguous();
  const int64_t* p = c.data<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

// A shape as Python writes a tuple: (5,), (2, 3), ().
std::string tuple_str(const Shape& s) {
  std::ostringstream o;
  o << "(";
  for (size_t d = 0; d < s.size(); ++d) o << (d ? ", " : "") << s[d];
  o << (s.size() == 1 ? ",)" : ")");
  return o.str();
}

std::string index_str(int64_t i, const Shape& shape) {
  Shape coord(shape.size());
  for (size_t d = coord.size(); d-- > 0;) {
    coord[d] = i % shape[d];
    i /= shape[d];
  }
  std::ostringstream s;
  s << "(";
  for (size_t d = 0; d < coord.size(); ++d) s << (d ? ", " : "") << coord[d];
  s << (coord.size() == 1 ? ",)" : ")");
  return s.str();
}

// ---------------------------------------------------------------------------------------------------- NLLLoss
// inputs (logits, target[, weight]); outputs (loss, total_weight)
struct NllDims {
  int64_t N, C, D;
};

NllDims nll_check(const Tensor& x, const Tensor& t, const Tensor* w, const char* op) {
  KILN_CHECK(is_floating(x.dtype()), Type, "For '", op, "', 'logits' must be a float tensor, but got ",
             dtype_name(x.dtype()), ".");
  KILN_CHECK(t.dtype() == DType::Int32 || t.dtype() == DType::Int64, Type, "For '", op,
             "', class-index labels must be int32 or int64, but got ", dtype_name(t.dtype()), ".");
  KILN_CHECK(x.ndim() >= 1, Value, "For '", op, "', 'logits' must have a class axis, but got a 0-d tensor.");
  Shape expect;
  NllDims d{1, x.shape()[x.ndim() == 1 ? 0 : 1], 1};
  if (x.ndim() > 1) {
    d.N = x.shape()[0];
    expect.push_back(d.N);
    for (int64_t k = 2; k < x.ndim(); ++k) {
      expect.push_back(x.shape()[k]);
      d.D *= x.shape()[k];
    }
  }
  KILN_CHECK(t.shape() == expect, Value, "For '", op, "', the labels must have shape ", tuple_str(expect),
             " (the logits' shape without the class axis), but got ", tuple_str(t.shape()), ".");
  if (w) {
    KILN_CHECK(w->shape() == Shape{d.C}, Value, "For '", op, "', the 'weight' must have shape (", d.C,
               ",) (one value per class), but got ", tuple_str(w->shape()), ".");
    KILN_CHECK(w->dtype() == x.dtype(), Type, "For '", op, "', 'weight' must have the logits' dtype ",
               dtype_name(x.dtype()), ", but got ", dtype_name(w->dtype()), ".");
  }
  return d;
}

std::vector<TensorMeta> infer_nll(const TV& in, const Attrs& a) {
  const std::string op = caller(a, "NLLLoss");
  KILN_CHECK(in.size() == 2 || in.size() == 3, Value, "For 'NLLLoss', expected (logits, target[, weight]).");
  nll_check(in[0], in[1], in.size() == 3 ? &in[2] : nullptr, op.c_str());
  a.i("ignore_index");
  const Red r = reduction(a, op.c_str());
  return {{r == Red::None ? in[1].shape() : Shape{}, in[0].dtype()}, {Shape{}, in[0].dtype()}};
}

template <typename T>
void nll_fwd(const T* px, const int64_t* pt, const T* pw, T* loss, T* tw, const NllDims& d, int64_t ignore, Red r,
             const Shape& tshape, const std::string& op) {
  using C = compute_t<T>;
  double total = 0.0, wsum = 0.0;
  const int64_t M = d.N * d.D;
  for (int64_t i = 0; i < M; ++i) {
    const int64_t c = pt[i];
    if (c == ignore) {
      if (r == Red::None) loss[i] = convert_value<T>(C(0));
      continue;
    }
    if (c < 0 || c >= d.C)
      throw Error(ErrorKind::Value,
                  detail::str("For '", op, "', every label must be in [0, ", d.C, ") or equal to ignore_index (",
                              ignore, "), but got ", c, " at index ", index_str(i, tshape), "."));
    const int64_t n = i / d.D, k = i % d.D;
    const double w = pw ? double(C(pw[c])) : 1.0;
    const double l = -w * double(C(px[(n * d.C + c) * d.D + k]));
    if (r == Red::None) loss[i] = convert_value<T>(C(l));
    total += l;
    wsum += w;
  }
  if (r == Red::Sum) loss[0] = convert_value<T>(C(total));
  if (r == Red::Mean) loss[0] = convert_value<T>(C(total / wsum));
  tw[0] = convert_value<T>(C(wsum));
}

void run_nll(const TV& in, TV& out, const Attrs& a) {
  const std::string op = caller(a, "NLLLoss");
  const Tensor x = in[0].contiguous();
  const Tensor* wp = in.size() == 3 ? &in[2] : nullptr;
  const NllDims d = nll_check(x, in[1], wp, op.c_str());
  const std::vector<int64_t> t = int_values(in[1]);
  const Tensor w = wp ? wp->contiguous() : Tensor();
  const Red r = reduction(a, op.c_str());
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      nll_fwd<T>(x.data<T>(), t.data(), wp ? w.data<T>() : nullptr, out[0].data<T>(), out[1].data<T>(), d,
                 a.i("ignore_index"), r, in[1].shape(), op);
  });
}

// NLLLossGrad: inputs (dout, logits, target, total_weight[, weight]) -> dlogits
std::vector<TensorMeta> infer_nll_grad(const TV& in, const Attrs& a) {
  KILN_CHECK(in.size() == 4 || in.size() == 5, Value,
             "For 'NLLLossGrad', expected (dout, logits, target, total_weight[, weight]).");
  nll_check(in[1], in[2], in.size() == 5 ? &in[4] : nullptr, "NLLLossGrad");
  const Red r = reduction(a, "NLLLossGrad");
  const Shape ds = r == Red::None ? in[2].shape() : Shape{};
  KILN_CHECK(in[0].shape() == ds && in[0].dtype() == in[1].dtype(), Value, "For 'NLLLossGrad', 'dout' must be ",
             dtype_name(in[1].dtype()), tuple_str(ds), ", but got ", dtype_name(in[0].dtype()),
             tuple_str(in[0].shape()), ".");
  return {{in[1].shape(), in[1].dtype()}};
}

template <typename T>
void nll_bwd(const T* pg, const int64_t* pt, const T* pw, const T* ptw, T* dx, const NllDims& d, int64_t ignore,
             Red r) {
  using C = compute_t<T>;
  const int64_t M = d.N * d.D;
  for (int64_t i = 0, n = M * d.C; i < n; ++i) dx[i] = convert_value<T>(C(0));
  double scale = 1.0;
  if (r != Red::None) scale = double(C(pg[0]));
  if (r == Red::Mean) scale /= double(C(ptw[0]));
  for (int64_t i = 0; i < M; ++i) {
    const int64_t c = pt[i];
    if (c == ignore || c < 0 || c >= d.C) continue;
    const int64_t n = i / d.D, k = i % d.D;
    const double w = pw ? double(C(pw[c])) : 1.0;
    const double g = r == Red::None ? double(C(pg[i])) : scale;
    dx[(n * d.C + c) * d.D + k] = convert_value<T>(C(-w * g));
  }
}

void run_nll_grad(const TV& in, TV& out, const Attrs& a) {
  const Tensor g = in[0].contiguous(), x = in[1];
  const bool has_w = in.size() == 5;
  const NllDims d = nll_check(x, in[2], has_w ? &in[4] : nullptr, "NLLLossGrad");
  const std::vector<int64_t> t = int_values(in[2]);
  const Tensor tw = in[3].contiguous();
  const Tensor w = has_w ? in[4].contiguous() : Tensor();
  const Red r = reduction(a, "NLLLossGrad");
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      nll_bwd<T>(g.data<T>(), t.data(), has_w ? w.data<T>() : nullptr, tw.data<T>(), out[0].data<T>(), d,
                 a.i("ignore_index"), r);
  });
}

TV bp_nll(const TV& in, const TV& out, const TV& g, const Attrs& a) {
  TV res(in.size());
  if (!g[0].defined()) return res;
  const Tensor go = g[0].dtype() == in[0].dtype() ? g[0] : ops::cast(g[0], in[0].dtype());
  TV args{go, in[0], in[1], out[1]};
  if (in.size() == 3) args.push_back(in[2]);
  res[0] = apply1(OpId::NLLLossGrad, args, a);
  return res;
}

// NLLLossGrad is linear in dout: its gradient to dout is NLLLoss of the incoming gradient (same target, weight and
// reduction: 'mean' divides by the same total_weight).
TV bp_nll_grad(const TV& in, const TV&, const TV& g, const Attrs& a) {
  TV res(in.size());
  if (!g[0].defined()) return res;
  const Tensor gg = g[0].dtype() == in[1].dtype() ? g[0] : ops::cast(g[0], in[1].dtype());
  TV args{gg, in[2]};
  if (in.size() == 5) args.push_back(in[4]);
  res[0] = apply(OpId::NLLLoss, args, a)[0];
  return res;
}

// ---------------------------------------------------------------------------------------------------- CTCLossV2
// inputs (log_probs (T, N, C), targets (N, S), input_lengths (N,), target_lengths (N,)); attrs blank, reduction,
// zero_infinity; outputs (loss, log_alpha (N, T, 2S + 1))
struct CtcDims {
  int64_t T, N, C, S, L;
};

CtcDims ctc_check(const TV& in, size_t k0, const char* op) {
  const Tensor &lp = in[k0], &tg = in[k0 + 1], &il = in[k0 + 2], &tl = in[k0 + 3];
  KILN_CHECK(is_floating(lp.dtype()), Type, "For '", op, "', the 'log_probs' must be a float Tensor, but got ",
             dtype_name(lp.dtype()), ".");
  for (const Tensor* t : {&tg, &il, &tl})
    KILN_CHECK(t->dtype() == DType::Int32 || t->dtype() == DType::Int64, Type, "For '", op,
               "', 'targets', 'input_lengths' and 'target_lengths' must be int32 or int64, but got ",
               dtype_name(t->dtype()), ".");
  KILN_CHECK(lp.ndim() == 3, Value, "For '", op, "', the 'log_probs' must be 3-D (T, N, C), but got shape ",
             tuple_str(lp.shape()), ".");
  CtcDims d{lp.shape()[0], lp.shape()[1], lp.shape()[2], 0, 0};
  KILN_CHECK(tg.ndim() == 2 && tg.shape()[0] == d.N, Value, "For '", op, "', the 'targets' must be 2-D (", d.N,
             ", S), but got shape ", tuple_str(tg.shape()), ".");
  KILN_CHECK(il.shape() == Shape{d.N} && tl.shape() == Shape{d.N}, Value, "For '", op,
             "', 'input_lengths' and 'target_lengths' must have shape (", d.N, ",), but got ", tuple_str(il.shape()),
             " and ", tuple_str(tl.shape()), ".");
  d.S = tg.shape()[1];
  d.L = 2 * d.S + 1;
  return d;
}

struct CtcArgs {
  std::vector<int64_t> tg, il, tl;
};

CtcArgs ctc_values(const TV& in, size_t k0, const CtcDims& d, const std::string& op) {
  CtcArgs v{int_values(in[k0 + 1]), int_values(in[k0 + 2]), int_values(in[k0 + 3])};
  auto fail = [&](const char* what, double lo, double hi, bool closed, int64_t val, int64_t i, const Shape& s) {
    throw Error(ErrorKind::Value, detail::str("For '", op, "', every ", what, " must be in [", int64_t(lo), ", ",
                                              int64_t(hi), closed ? "]" : ")", ", but got ", val, " at index ",
                                              index_str(i, s), "."));
  };
  for (int64_t n = 0; n < d.N; ++n) {
    if (v.il[n] < 1 || v.il[n] > d.T) fail("input_lengths", 1, d.T, true, v.il[n], n, Shape{d.N});
  }
  for (int64_t n = 0; n < d.N; ++n) {
    if (v.tl[n] < 0 || v.tl[n] > d.S) fail("target_lengths", 0, d.S, true, v.tl[n], n, Shape{d.N});
  }
  for (int64_t i = 0; i < d.N * d.S; ++i) {
    if (v.tg[i] < 0 || v.tg[i] >= d.C) fail("targets", 0, d.C, false, v.tg[i], i, Shape{d.N, d.S});
  }
  return v;
}

inline double lse(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  return a > b ? a + std::log1p(std::exp(b - a)) : b + std::log1p(std::exp(a - b));
}

// The extended label of position s for batch element n.
inline int64_t ext_label(const CtcArgs& v, const CtcDims& d, int64_t n, int64_t s, int64_t blank) {
  return (s & 1) ? v.tg[n * d.S + s / 2] : blank;
}

// alpha (T' x L' = 2S' + 1 used entries, row stride d.L) of batch element n in double; returns nll.
template <typename T>
double ctc_alpha(const T* lp, const CtcArgs& v, const CtcDims& d, int64_t n, int64_t blank, double* alpha) {
  const int64_t Tn = v.il[n], Ln = 2 * v.tl[n] + 1;
  auto y = [&](int64_t t, int64_t s) {
    return double(compute_t<T>(lp[(t * d.N + n) * d.C + ext_label(v, d, n, s, blank)]));
  };
  for (int64_t s = 0; s < Ln; ++s) alpha[s] = s < 2 ? y(0, s) : kNegInf;
  for (int64_t t = 1; t < Tn; ++t) {
    const double* prev = alpha + (t - 1) * d.L;
    double* cur = alpha + t * d.L;
    for (int64_t s = 0; s < Ln; ++s) {
      double a = prev[s];
      if (s >= 1) a = lse(a, prev[s - 1]);
      if (s >= 2 && (s & 1)) {
        const int64_t l = ext_label(v, d, n, s, blank);
        if (l != blank && l != ext_label(v, d, n, s - 2, blank)) a = lse(a, prev[s - 2]);
      }
      cur[s] = a == kNegInf ? kNegInf : a + y(t, s);
    }
  }
  const double* last = alpha + (Tn - 1) * d.L;
  const double ll = Ln >= 2 ? lse(last[Ln - 1], last[Ln - 2]) : last[Ln - 1];
  return -ll;
}

std::vector<TensorMeta> infer_ctc(const TV& in, const Attrs& a) {
  KILN_CHECK(in.size() == 4, Value, "For 'CTCLossV2', expected (log_probs, targets, input_lengths, target_lengths).");
  const std::string op = caller(a, "CTCLossV2");
  const CtcDims d = ctc_check(in, 0, op.c_str());
  const int64_t blank = a.i("blank");
  KILN_CHECK(blank >= 0 && blank < d.C, Value, "For '", op, "', the 'blank' must be in [0, ", d.C, "), but got ",
             blank, ".");
  a.b("zero_infinity");
  const Red r = reduction(a, op.c_str());
  const DType dt = in[0].dtype();
  return {{r == Red::None ? Shape{d.N} : Shape{}, dt}, {Shape{d.N, d.T, d.L}, dt}};
}

// Per-element weight of d loss / d nll_n for the reduction (0 for infinite nll, zeroed or not).
double ctc_red_weight(Red r, const CtcDims& d, int64_t tl) {
  if (r != Red::Mean) return 1.0;
  return 1.0 / (double(d.N) * double(std::max<int64_t>(tl, 1)));
}

template <typename T>
void ctc_fwd(const T* lp, const CtcArgs& v, const CtcDims& d, int64_t blank, bool zero_inf, Red r, T* loss,
             T* log_alpha) {
  using C = compute_t<T>;
  std::vector<double> nll(size_t(d.N));
#pragma omp parallel for schedule(dynamic) if (d.N > 1 && d.N * d.T * d.L >= cpu::kParallelMin && !omp_in_parallel())
  for (int64_t n = 0; n < d.N; ++n) {
    std::vector<double> alpha(size_t(d.T * d.L), kNegInf);
    nll[n] = ctc_alpha<T>(lp, v, d, n, blank, alpha.data());
    T* la = log_alpha + n * d.T * d.L;
    for (int64_t i = 0; i < d.T * d.L; ++i) la[i] = convert_value<T>(C(alpha[i]));
    if (zero_inf && std::isinf(nll[n])) nll[n] = 0.0;
  }
  if (r == Red::None) {
    for (int64_t n = 0; n < d.N; ++n) loss[n] = convert_value<T>(C(nll[n]));
    return;
  }
  double acc = 0.0;
  for (int64_t n = 0; n < d.N; ++n) acc += nll[n] * ctc_red_weight(r, d, v.tl[n]);
  if (r == Red::Mean && d.N == 0) acc = std::numeric_limits<double>::quiet_NaN();
  loss[0] = convert_value<T>(C(acc));
}

void run_ctc(const TV& in, TV& out, const Attrs& a) {
  const std::string op = caller(a, "CTCLossV2");
  const CtcDims d = ctc_check(in, 0, op.c_str());
  const CtcArgs v = ctc_values(in, 0, d, op);
  const Tensor lp = in[0].contiguous();
  const int64_t blank = a.i("blank");
  const bool zi = a.b("zero_infinity");
  const Red r = reduction(a, op.c_str());
  KILN_DISPATCH(lp.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      ctc_fwd<T>(lp.data<T>(), v, d, blank, zi, r, out[0].data<T>(), out[1].data<T>());
  });
}

// CTCLossV2Grad: inputs (dloss, log_probs, targets, input_lengths, target_lengths) -> dlog_probs
std::vector<TensorMeta> infer_ctc_grad(const TV& in, const Attrs& a) {
  KILN_CHECK(in.size() == 5, Value,
             "For 'CTCLossV2Grad', expected (dloss, log_probs, targets, input_lengths, target_lengths).");
  const CtcDims d = ctc_check(in, 1, "CTCLossV2Grad");
  const Red r = reduction(a, "CTCLossV2Grad");
  const Shape ds = r == Red::None ? Shape{d.N} : Shape{};
  KILN_CHECK(in[0].shape() == ds && in[0].dtype() == in[1].dtype(), Value, "For 'CTCLossV2Grad', 'dloss' must be ",
             dtype_name(in[1].dtype()), tuple_str(ds), ", but got ", dtype_name(in[0].dtype()),
             tuple_str(in[0].shape()), ".");
  return {{in[1].shape(), in[1].dtype()}};
}

template <typename T>
void ctc_bwd(const T* g, const T* lp, const CtcArgs& v, const CtcDims& d, int64_t blank, Red r, T* dlp) {
  using C = compute_t<T>;
  for (int64_t i = 0, m = d.T * d.N * d.C; i < m; ++i) dlp[i] = convert_value<T>(C(0));
#pragma omp parallel for schedule(dynamic) if (d.N > 1 && d.N * d.T * d.L >= cpu::kParallelMin && !omp_in_parallel())
  for (int64_t n = 0; n < d.N; ++n) {
    std::vector<double> alpha(size_t(d.T * d.L), kNegInf), beta(size_t(d.T * d.L), kNegInf);
    const double nll = ctc_alpha<T>(lp, v, d, n, blank, alpha.data());
    if (!std::isfinite(nll)) continue;
    const double gn = double(C(r == Red::None ? g[n] : g[0])) * ctc_red_weight(r, d, v.tl[n]);
    if (gn == 0.0) continue;
    const int64_t Tn = v.il[n], Ln = 2 * v.tl[n] + 1;
    auto y = [&](int64_t t, int64_t s) {
    return double(compute_t<T>(lp[(t * d.N + n) * d.C + ext_label(v, d, n, s, blank)]));
  };
    double* last = beta.data() + (Tn - 1) * d.L;
    last[Ln - 1] = 0.0;
    if (Ln >= 2) last[Ln - 2] = 0.0;
    for (int64_t t = Tn - 2; t >= 0; --t) {
      const double* nxt = beta.data() + (t + 1) * d.L;
      double* cur = beta.data() + t * d.L;
      for (int64_t s = 0; s < Ln; ++s) {
        double b = nxt[s] == kNegInf ? kNegInf : nxt[s] + y(t + 1, s);
        if (s + 1 < Ln && nxt[s + 1] != kNegInf) b = lse(b, nxt[s + 1] + y(t + 1, s + 1));
        if (s + 2 < Ln && nxt[s + 2] != kNegInf) {
          const int64_t l = ext_label(v, d, n, s + 2, blank);
          if (l != blank && l != ext_label(v, d, n, s, blank)) b = lse(b, nxt[s + 2] + y(t + 1, s + 2));
        }
        cur[s] = b;
      }
    }
    std::vector<double> occ(size_t(d.C));
    for (int64_t t = 0; t < Tn; ++t) {
      std::fill(occ.begin(), occ.end(), 0.0);
      const double* at = alpha.data() + t * d.L;
      const double* bt = beta.data() + t * d.L;
      for (int64_t s = 0; s < Ln; ++s) {
        const double e = at[s] + bt[s];
        if (e != kNegInf) occ[size_t(ext_label(v, d, n, s, blank))] += std::exp(e + nll);
      }
      T* row = dlp + (t * d.N + n) * d.C;
      for (int64_t c = 0; c < d.C; ++c)
        if (occ[size_t(c)] != 0.0) row[c] = convert_value<T>(C(-gn * occ[size_t(c)]));
    }
  }
}

void run_ctc_grad(const TV& in, TV& out, const Attrs& a) {
  const CtcDims d = ctc_check(in, 1, "CTCLossV2Grad");
  const CtcArgs v = ctc_values(in, 1, d, "CTCLossV2Grad");
  const Tensor g = in[0].contiguous(), lp = in[1].contiguous();
  const int64_t blank = a.i("blank");
  const Red r = reduction(a, "CTCLossV2Grad");
  KILN_DISPATCH(lp.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      ctc_bwd<T>(g.data<T>(), lp.data<T>(), v, d, blank, r, out[0].data<T>());
  });
}

TV bp_ctc(const TV& in, const TV&, const TV& g, const Attrs& a) {
  TV res(in.size());
  if (!g[0].defined()) return res;  // log_alpha's cotangent is not propagated (as MindSpore's CTCLossV2 bprop)
  const Tensor go = g[0].dtype() == in[0].dtype() ? g[0] : ops::cast(g[0], in[0].dtype());
  res[0] = apply1(OpId::CTCLossV2Grad, {go, in[0], in[1], in[2], in[3]}, a);
  return res;
}

// ---------------------------------------------------------------------------------------------------- margins
// MultiMarginLoss (input (N, C) or (C,), target (N,)[, weight (C,)]; attrs p, margin, reduction) and
// MultilabelMarginLoss (input and target of one shape; attr reduction; outputs loss and Int32 is_target). Hinges keep
// a NaN (as relu does) and count as active only where positive (the gradient 0 at the kink, relu's).
struct MarginDims {
  int64_t N, C;
};

MarginDims margin_dims(const Tensor& x, const char* op) {
  KILN_CHECK(is_floating(x.dtype()), Type, "For '", op, "', the 'input' must be a float Tensor, but got ",
             dtype_name(x.dtype()), ".");
  KILN_CHECK(x.ndim() == 1 || x.ndim() == 2, Value, "For '", op, "', the 'input' must be 1-D or 2-D, but got shape ",
             tuple_str(x.shape()), ".");
  return x.ndim() == 2 ? MarginDims{x.shape()[0], x.shape()[1]} : MarginDims{1, x.shape()[0]};
}

void check_int_target(const Tensor& t, const char* op) {
  KILN_CHECK(t.dtype() == DType::Int32 || t.dtype() == DType::Int64, Type, "For '", op,
             "', the 'target' must be an int32 or int64 Tensor, but got ", dtype_name(t.dtype()), ".");
}

Shape margin_loss_shape(const Tensor& x, Red r) {
  if (r != Red::None || x.ndim() == 1) return {};
  return {x.shape()[0]};
}

inline double hinge(double z) { return (z > 0.0 || z != z) ? z : 0.0; }

void check_targets(const std::vector<int64_t>& t, const Shape& shape, int64_t lo, int64_t hi, const std::string& op) {
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i] < lo || t[i] >= hi)
      throw Error(ErrorKind::Value, detail::str("For '", op, "', every target must be in [", lo, ", ", hi,
                                                "), but got ", t[i], " at index ", index_str(int64_t(i), shape),
                                                "."));
}

template <typename T> void write_reduced(const std::vector<double>& per, Red r, T* out) {
  using C = compute_t<T>;
  if (r == Red::None) {
    for (size_t n = 0; n < per.size(); ++n) out[n] = convert_value<T>(C(per[n]));
    return;
  }
  double acc = 0.0;
  for (double v : per) acc += v;
  if (r == Red::Mean) acc /= double(per.size());
  out[0] = convert_value<T>(C(acc));
}

// d loss / d loss_n of the reduction
template <typename T> double red_grad(const T* g, Red r, int64_t n, int64_t N) {
  using C = compute_t<T>;
  if (r == Red::None) return double(C(g[n]));
  return r == Red::Mean ? double(C(g[0])) / double(N) : double(C(g[0]));
}

// MultiMarginLoss: inputs (input, target[, weight])
void mm_check(const TV& in, size_t k0, const char* op, MarginDims* d) {
  *d = margin_dims(in[k0], op);
  const Tensor& t = in[k0 + 1];
  check_int_target(t, op);
  KILN_CHECK(t.numel() == d->N && t.ndim() <= 1, Value, "For '", op, "', the 'target' must have shape (", d->N,
             ",), but got ", tuple_str(t.shape()), ".");
  if (in.size() == k0 + 3) {
    const Tensor& w = in[k0 + 2];
    KILN_CHECK(w.shape() == Shape{d->C} && w.dtype() == in[k0].dtype(), Value, "For '", op,
               "', the 'weight' must have shape (", d->C, ",) and the input's dtype, but got ",
               dtype_name(w.dtype()), tuple_str(w.shape()), ".");
  }
}

std::vector<TensorMeta> infer_mm(const TV& in, const Attrs& a) {
  const std::string op = caller(a, "MultiMarginLoss");
  KILN_CHECK(in.size() == 2 || in.size() == 3, Value, "For 'MultiMarginLoss', expected (input, target[, weight]).");
  MarginDims d;
  mm_check(in, 0, op.c_str(), &d);
  const int64_t p = a.i("p");
  KILN_CHECK(p == 1 || p == 2, Value, "For '", op, "', the 'p' must be 1 or 2, but got ", p, ".");
  a.f("margin");
  return {{margin_loss_shape(in[0], reduction(a, op.c_str())), in[0].dtype()}};
}

template <typename T>
void mm_fwd(const T* x, const int64_t* t, const T* w, const MarginDims& d, int64_t p, double margin, Red r, T* out) {
  using C = compute_t<T>;
  std::vector<double> per(size_t(d.N));
  for (int64_t n = 0; n < d.N; ++n) {
    const T* xn = x + n * d.C;
    const int64_t y = t[n];
    const double xy = double(C(xn[y])), wy = w ? double(C(w[y])) : 1.0;
    double acc = 0.0;
    for (int64_t i = 0; i < d.C; ++i) {
      if (i == y) continue;
      const double h = hinge(margin - xy + double(C(xn[i])));
      acc += p == 2 ? h * h : h;
    }
    per[size_t(n)] = wy * acc / double(d.C);
  }
  write_reduced<T>(per, r, out);
}

void run_mm(const TV& in, TV& out, const Attrs& a) {
  const std::string op = caller(a, "MultiMarginLoss");
  MarginDims d;
  mm_check(in, 0, op.c_str(), &d);
  const std::vector<int64_t> t = int_values(in[1]);
  check_targets(t, in[1].shape(), 0, d.C, op);
  const Tensor x = in[0].contiguous();
  const Tensor w = in.size() == 3 ? in[2].contiguous() : Tensor();
  const Red r = reduction(a, op.c_str());
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      mm_fwd<T>(x.data<T>(), t.data(), w.defined() ? w.data<T>() : nullptr, d, a.i("p"), a.f("margin"), r,
                out[0].data<T>());
  });
}

// MultiMarginLossGrad: inputs (dout, input, target[, weight])
std::vector<TensorMeta> infer_mm_grad(const TV& in, const Attrs& a) {
  KILN_CHECK(in.size() == 3 || in.size() == 4, Value,
             "For 'MultiMarginLossGrad', expected (dout, input, target[, weight]).");
  MarginDims d;
  mm_check(in, 1, "MultiMarginLossGrad", &d);
  const Shape ds = margin_loss_shape(in[1], reduction(a, "MultiMarginLossGrad"));
  KILN_CHECK(in[0].shape() == ds && in[0].dtype() == in[1].dtype(), Value,
             "For 'MultiMarginLossGrad', 'dout' must be ", dtype_name(in[1].dtype()), tuple_str(ds), ", but got ",
             dtype_name(in[0].dtype()), tuple_str(in[0].shape()), ".");
  return {{in[1].shape(), in[1].dtype()}};
}

template <typename T>
void mm_bwd(const T* g, const T* x, const int64_t* t, const T* w, const MarginDims& d, int64_t p, double margin,
            Red r, T* dx) {
  using C = compute_t<T>;
  for (int64_t n = 0; n < d.N; ++n) {
    const T* xn = x + n * d.C;
    T* dn = dx + n * d.C;
    const int64_t y = t[n];
    const bool ok = y >= 0 && y < d.C;
    const double gn = ok ? red_grad<T>(g, r, n, d.N) * (w ? double(C(w[y])) : 1.0) / double(d.C) : 0.0;
    const double xy = ok ? double(C(xn[y])) : 0.0;
    double sy = 0.0;
    for (int64_t i = 0; i < d.C; ++i) {
      double gi = 0.0;
      if (ok && i != y) {
        const double z = margin - xy + double(C(xn[i]));
        if (z > 0.0) gi = gn * (p == 2 ? 2.0 * z : 1.0);
      }
      sy += gi;
      dn[i] = convert_value<T>(C(gi));
    }
    if (ok) dn[y] = convert_value<T>(C(-sy));
  }
}

void run_mm_grad(const TV& in, TV& out, const Attrs& a) {
  MarginDims d;
  mm_check(in, 1, "MultiMarginLossGrad", &d);
  const std::vector<int64_t> t = int_values(in[2]);
  const Tensor g = in[0].contiguous(), x = in[1].contiguous();
  const Tensor w = in.size() == 4 ? in[3].contiguous() : Tensor();
  const Red r = reduction(a, "MultiMarginLossGrad");
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      mm_bwd<T>(g.data<T>(), x.data<T>(), t.data(), w.defined() ? w.data<T>() : nullptr, d, a.i("p"),
                a.f("margin"), r, out[0].data<T>());
  });
}

TV bp_mm(const TV& in, const TV&, const TV& g, const Attrs& a) {
  TV res(in.size());
  if (!g[0].defined()) return res;
  const Tensor go = g[0].dtype() == in[0].dtype() ? g[0] : ops::cast(g[0], in[0].dtype());
  TV args{go, in[0], in[1]};
  if (in.size() == 3) args.push_back(in[2]);
  res[0] = apply1(OpId::MultiMarginLossGrad, args, a);
  return res;
}

// MultilabelMarginLoss: inputs (input, target) -> (loss, is_target)
void mlm_check(const Tensor& x, const Tensor& t, const char* op, MarginDims* d) {
  *d = margin_dims(x, op);
  check_int_target(t, op);
  KILN_CHECK(t.shape() == x.shape(), Value, "For '", op, "', the 'target' must have the input's shape ",
             tuple_str(x.shape()), ", but got ", tuple_str(t.shape()), ".");
}

std::vector<TensorMeta> infer_mlm(const TV& in, const Attrs& a) {
  const std::string op = caller(a, "MultilabelMarginLoss");
  KILN_CHECK(in.size() == 2, Value, "For 'MultilabelMarginLoss', expected (input, target).");
  MarginDims d;
  mlm_check(in[0], in[1], op.c_str(), &d);
  return {{margin_loss_shape(in[0], reduction(a, op.c_str())), in[0].dtype()}, {in[1].shape(), DType::Int32}};
}

// is_target of row n (1 for the classes listed before the first -1); returns the number listed.
int64_t mlm_row(const int64_t* tn, int64_t C, int32_t* is_t) {
  int64_t k = 0;
  for (int64_t c = 0; c < C; ++c) is_t[c] = 0;
  for (; k < C && tn[k] >= 0; ++k) is_t[tn[k]] = 1;
  return k;
}

template <typename T>
void mlm_fwd(const T* x, const int64_t* t, const MarginDims& d, Red r, T* out, int32_t* is_target) {
  using C = compute_t<T>;
  std::vector<double> per(size_t(d.N));
  for (int64_t n = 0; n < d.N; ++n) {
    const T* xn = x + n * d.C;
    const int64_t* tn = t + n * d.C;
    int32_t* it = is_target + n * d.C;
    const int64_t K = mlm_row(tn, d.C, it);
    double acc = 0.0;
    for (int64_t k = 0; k < K; ++k) {
      const double xj = double(C(xn[tn[k]]));
      for (int64_t i = 0; i < d.C; ++i)
        if (!it[i]) acc += hinge(1.0 - xj + double(C(xn[i])));
    }
    per[size_t(n)] = acc / double(d.C);
  }
  write_reduced<T>(per, r, out);
}

void run_mlm(const TV& in, TV& out, const Attrs& a) {
  const std::string op = caller(a, "MultilabelMarginLoss");
  MarginDims d;
  mlm_check(in[0], in[1], op.c_str(), &d);
  const std::vector<int64_t> t = int_values(in[1]);
  check_targets(t, in[1].shape(), -1, d.C, op);
  const Tensor x = in[0].contiguous();
  const Red r = reduction(a, op.c_str());
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      mlm_fwd<T>(x.data<T>(), t.data(), d, r, out[0].data<T>(), out[1].data<int32_t>());
  });
}

// MultilabelMarginLossGrad: inputs (dout, input, target)
std::vector<TensorMeta> infer_mlm_grad(const TV& in, const Attrs& a) {
  KILN_CHECK(in.size() == 3, Value, "For 'MultilabelMarginLossGrad', expected (dout, input, target).");
  MarginDims d;
  mlm_check(in[1], in[2], "MultilabelMarginLossGrad", &d);
  const Shape ds = margin_loss_shape(in[1], reduction(a, "MultilabelMarginLossGrad"));
  KILN_CHECK(in[0].shape() == ds && in[0].dtype() == in[1].dtype(), Value,
             "For 'MultilabelMarginLossGrad', 'dout' must be ", dtype_name(in[1].dtype()), tuple_str(ds),
             ", but got ", dtype_name(in[0].dtype()), tuple_str(in[0].shape()), ".");
  return {{in[1].shape(), in[1].dtype()}};
}

template <typename T>
void mlm_bwd(const T* g, const T* x, const int64_t* t, const MarginDims& d, Red r, T* dx) {
  using C = compute_t<T>;
  std::vector<int32_t> it(size_t(d.C));
  std::vector<double> acc(size_t(d.C));
  for (int64_t n = 0; n < d.N; ++n) {
    const T* xn = x + n * d.C;
    const int64_t* tn = t + n * d.C;
    std::fill(acc.begin(), acc.end(), 0.0);
    bool ok = true;
    for (int64_t c = 0; c < d.C; ++c) ok = ok && tn[c] >= -1 && tn[c] < d.C;
    const int64_t K = ok ? mlm_row(tn, d.C, it.data()) : 0;
    const double gn = red_grad<T>(g, r, n, d.N) / double(d.C);
    for (int64_t k = 0; k < K; ++k) {
      const int64_t j = tn[k];
      const double xj = double(C(xn[j]));
      for (int64_t i = 0; i < d.C; ++i)
        if (!it[size_t(i)] && 1.0 - xj + double(C(xn[i])) > 0.0) {
          acc[size_t(i)] += gn;
          acc[size_t(j)] -= gn;
        }
    }
    for (int64_t c = 0; c < d.C; ++c) dx[n * d.C + c] = convert_value<T>(C(acc[size_t(c)]));
  }
}

void run_mlm_grad(const TV& in, TV& out, const Attrs& a) {
  MarginDims d;
  mlm_check(in[1], in[2], "MultilabelMarginLossGrad", &d);
  const std::vector<int64_t> t = int_values(in[2]);
  const Tensor g = in[0].contiguous(), x = in[1].contiguous();
  const Red r = reduction(a, "MultilabelMarginLossGrad");
  KILN_DISPATCH(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      mlm_bwd<T>(g.data<T>(), x.data<T>(), t.data(), d, r, out[0].data<T>());
  });
}

TV bp_mlm(const TV& in, const TV&, const TV& g, const Attrs& a) {
  TV res(in.size());
  if (!g[0].defined()) return res;  // is_target is not differentiable
  const Tensor go = g[0].dtype() == in[0].dtype() ? g[0] : ops::cast(g[0], in[0].dtype());
  res[0] = apply1(OpId::MultilabelMarginLossGrad, {go, in[0], in[1]}, a);
  return res;
}

}  // namespace

namespace ops_impl {
void register_loss() {
  register_kernel(OpId::NLLLoss, infer_nll, run_nll, bp_nll);
  register_kernel(OpId::NLLLossGrad, infer_nll_grad, run_nll_grad, bp_nll_grad);
  register_kernel(OpId::CTCLossV2, infer_ctc, run_ctc, bp_ctc);
  register_kernel(OpId::CTCLossV2Grad, infer_ctc_grad, run_ctc_grad, nullptr);
  register_kernel(OpId::MultiMarginLoss, infer_mm, run_mm, bp_mm);
  register_kernel(OpId::MultiMarginLossGrad, infer_mm_grad, run_mm_grad, nullptr);
  register_kernel(OpId::MultilabelMarginLoss, infer_mlm, run_mlm, bp_mlm);
  register_kernel(OpId::MultilabelMarginLossGrad, infer_mlm_grad, run_mlm_grad, nullptr);
}
}  // namespace ops_impl
}  // namespace kiln

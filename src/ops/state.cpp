// State ops: they write Parameters (and optimizer state) in place. Assign, Depend and MindSpore's fused optimizer
// kernels Adam, ApplyMomentum and SGD (formulas: MindSpore 2.2 nn.Adam / nn.Momentum / nn.SGD and their CPU
// kernels, see the reference §5.2–5.3 and the comments in kiln/ops.h).
//
// Note [in-place ops and the tape]: every op here is an OpDef::direct op (the outputs are the written inputs, not
// fresh allocations). Assign and the optimizers are registered non-differentiable, so `apply` never records them:
// a Parameter that they write keeps grad_fn == nullptr. Depend is differentiable, but its output is a new alias of
// `value` (a fresh TensorImpl), so the tape node it records never becomes the grad_fn of `value` itself.
//
// The optimizer kernels read lr and the beta powers from 0-d/1-element tensors inside the kernel (not as
// attributes), so that a compiled graph can feed them per step; the scalar hyper-parameters that never change
// (beta1, beta2, eps, momentum, dampening, weight_decay, flags) are attributes.
#include <cmath>
#include <initializer_list>

#include "elementwise.h"
#include "kiln/autodiff.h"
#include "families.h"

namespace kiln {
namespace {

using TV = std::vector<Tensor>;

// ---- shared checks ----

// The value of a 1-element tensor (lr, beta powers, flags); ValueError naming the op otherwise.
double scalar_input(const Tensor& t, const char* op, const char* name) {
  KILN_CHECK(t.numel() == 1, Value, "For '", op, "', '", name,
             "' must be a 0-d or 1-element tensor, but got shape ", shape_str(t.shape()), ".");
  return t.item();
}

void check_float_param(const Tensor& p, const char* op, const char* name) {
  KILN_CHECK(is_floating(p.dtype()), Type, "For '", op, "', '", name,
             "' must be a float tensor (Float16, BFloat16, Float32 or Float64), but got ", dtype_name(p.dtype()), ".");
}

// `t` must have exactly param's shape (state tensors also param's dtype).
void check_like(const Tensor& t, const Tensor& param, const char* op, const char* name, bool same_dtype) {
  KILN_CHECK(t.shape() == param.shape(), Value, "For '", op, "', the shape of '", name, "' must be the same as 'var' ",
             shape_str(param.shape()), ", but got ", shape_str(t.shape()), ".");
  if (same_dtype)
    KILN_CHECK(t.dtype() == param.dtype(), Type, "For '", op, "', the dtype of '", name, "' must be the same as 'var' (",
               dtype_name(param.dtype()), "), but got ", dtype_name(t.dtype()), ".");
  else
    KILN_CHECK(is_floating(t.dtype()), Type, "For '", op, "', '", name, "' must be a float tensor, but got ",
               dtype_name(t.dtype()), ".");
}

// In-place state tensors must not overlap each other (each element is read and written once per step).
// (initializer lists, not vectors: no heap allocation per optimizer step)
void check_distinct(std::initializer_list<const Tensor*> ts, std::initializer_list<const char*> names, const char* op) {
  const Tensor* const* t = ts.begin();
  const char* const* nm = names.begin();
  for (size_t i = 0; i < ts.size(); ++i)
    for (size_t j = i + 1; j < ts.size(); ++j)
      KILN_CHECK(t[i]->impl()->storage != t[j]->impl()->storage, Value, "For '", op, "', '", nm[i], "' and '", nm[j],
                 "' must not share storage.");
}

// The gradient in param's dtype (no copy when it already has it).
Tensor grad_as(const Tensor& grad, const Tensor& param) { return ew::as_dtype(grad, param.dtype()); }

// Runs body(ptrs, i, unit, inner_strides) for every element of K tensors of one dtype T (same shape, any strides);
// the body reaches element k with at(ptrs, k, i, unit, inner_strides). A plain pointer loop on unit-stride runs
// (one run for contiguous tensors), strided otherwise. The tensors must not share storage (check_distinct).
template <typename T, size_t K, typename F>
void state_loop(const std::array<Tensor, K>& ts, F&& body) {
  std::array<const int64_t*, K> st;
  std::array<T*, K> base;
  for (size_t k = 0; k < K; ++k) { st[k] = ts[k].strides().data(); base[k] = ts[k].template data<T>(); }
  cpu::strided_loop<K>(ts[0].shape(), st, [&](const int64_t* off, int64_t n, const int64_t* in) {
    std::array<T*, K> p;
    bool unit = true;
    for (size_t k = 0; k < K; ++k) { p[k] = base[k] + off[k]; unit = unit && in[k] == 1; }
    if (unit) {
      // The state tensors were checked not to share storage: no loop-carried dependencies, let it vectorize.
#pragma GCC ivdep
      for (int64_t i = 0; i < n; ++i) body(p, i, std::integral_constant<int, 1>{}, in);
    } else {
      for (int64_t i = 0; i < n; ++i) body(p, i, std::integral_constant<int, 0>{}, in);
    }
  });
}
// Element k of run i: p[k][i] on unit-stride runs, p[k][i * in[k]] otherwise (the flag is a compile-time constant).
template <size_t K, typename T, int U>
inline T& at(const std::array<T*, K>& p, size_t k, int64_t i, std::integral_constant<int, U>, const int64_t* in) {
  if constexpr (U == 1) return p[k][i];
  else return p[k][i * in[k]];
}

std::vector<TensorMeta> infer_first(const TV& in, const Attrs&) { return {{in[0].shape(), in[0].dtype()}}; }

// Calls f(std::true_type{}) or f(std::false_type{}): flags become compile-time constants, so the element loops
// have no branches and vectorize.
template <typename F> void with_flag(bool b, F&& f) {
  if (b) f(std::true_type{});
  else f(std::false_type{});
}

// ---- Assign ----

void check_assign(const Tensor& var, const Tensor& value) {
  bool ok = value.ndim() <= var.ndim();
  for (int64_t i = 0; ok && i < value.ndim(); ++i) {
    int64_t dv = value.shape()[size_t(value.ndim() - 1 - i)], dt = var.shape()[size_t(var.ndim() - 1 - i)];
    ok = dv == dt || dv == 1;
  }
  KILN_CHECK(ok, Value, "For 'Assign', the shape of 'value' ", shape_str(value.shape()),
             " can not be broadcast to the shape of 'variable' ", shape_str(var.shape()), ".");
}

TV assign_direct(const TV& in, const Attrs&) {
  const Tensor& var = in[0];
  Tensor value = in[1];
  check_assign(var, value);
  const TensorImpl *a = var.impl(), *b = value.impl();
  if (a->storage == b->storage) {
    if (a->shape == b->shape && a->strides == b->strides && a->offset == b->offset && a->dtype == b->dtype)
      return {var};  // assigning a tensor to itself
    // Overlapping views (assign(x, x[::-1])): read everything before writing.
    Tensor tmp = Tensor::empty(value.shape(), value.dtype());
    copy_into(value, tmp);
    value = tmp;
  }
  autodiff::note_write(var);  // a tape node that saved var's old value keeps it (kiln/autodiff.h)
  // `value` viewed with the variable's shape (stride 0 on broadcast axes); copy_into converts the dtype and
  // writes through the variable's strides.
  if (value.shape() == var.shape()) {  // nothing to broadcast (the usual case): no view needed
    copy_into(value, var);
    return {var};
  }
  Tensor src = value.view(var.shape(), cpu::broadcast_strides(value.shape(), value.strides(), var.shape()),
                          value.offset());
  copy_into(src, var);
  return {var};
}

// ---- Depend ----

TV depend_direct(const TV& in, const Attrs&) { return {in[0].alias()}; }
TV bp_depend(const TV&, const TV&, const TV& g, const Attrs&) { return {g[0], Tensor()}; }

// ---- Adam: inputs (var, m, v, beta1_power, beta2_power, lr, grad) ----

TV adam_direct(const TV& in, const Attrs& a) {
  const char* op = "Adam";
  const Tensor &var = in[0], &m = in[1], &v = in[2];
  check_float_param(var, op, "var");
  check_like(m, var, op, "m", true);
  check_like(v, var, op, "v", true);
  check_like(in[6], var, op, "gradient", false);
  check_distinct({&var, &m, &v, &in[6]}, {"var", "m", "v", "gradient"}, op);
  const double b1p = scalar_input(in[3], op, "beta1_power"), b2p = scalar_input(in[4], op, "beta2_power");
  const double lr = scalar_input(in[5], op, "lr");
  const double b1 = a.f("beta1"), b2 = a.f("beta2"), eps = a.f("epsilon");
  const bool nesterov = a.b("use_nesterov");
  KILN_CHECK(b1p != 1.0, Value, "For 'Adam', 'beta1_power' must not be 1 (it is beta1^t after this step's "
             "multiplication), but got ", b1p, ".");
  Tensor g = grad_as(in[6], var);
  for (const Tensor* t : {&var, &m, &v}) autodiff::note_write(*t);
  KILN_DISPATCH(var.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      using C = compute_t<T>;
      // α_t = lr·√(1−β2ᵗ)/(1−β1ᵗ), computed once in double.
      const C lr_t = C(lr * std::sqrt(1.0 - b2p) / (1.0 - b1p));
      const C cb1 = C(b1), cb2 = C(b2), c1b1 = C(1.0 - b1), c1b2 = C(1.0 - b2), ceps = C(eps);
      with_flag(nesterov, [&](auto nest) {
        state_loop<T, 4>({var, m, v, g}, [&](const std::array<T*, 4>& p, int64_t i, auto u, const int64_t* st) {
          const C gi = C(at(p, 3, i, u, st));
          const C mi = cb1 * C(at(p, 1, i, u, st)) + c1b1 * gi;
          const C vi = cb2 * C(at(p, 2, i, u, st)) + c1b2 * gi * gi;
          C num = mi;
          if constexpr (decltype(nest)::value) num = cb1 * mi + c1b1 * gi;
          at(p, 1, i, u, st) = T(mi);
          at(p, 2, i, u, st) = T(vi);
          at(p, 0, i, u, st) = T(C(at(p, 0, i, u, st)) - lr_t * num / (std::sqrt(vi) + ceps));
        });
      });
    }
  });
  return {var, m, v};
}

// ---- ApplyMomentum: inputs (var, accum, lr, grad) ----

TV momentum_direct(const TV& in, const Attrs& a) {
  const char* op = "ApplyMomentum";
  const Tensor &var = in[0], &acc = in[1];
  check_float_param(var, op, "variable");
  check_like(acc, var, op, "accumulation", true);
  check_like(in[3], var, op, "gradient", false);
  check_distinct({&var, &acc, &in[3]}, {"variable", "accumulation", "gradient"}, op);
  const double lr = scalar_input(in[2], op, "learning_rate");
  const double mom = a.f("momentum");
  const bool nesterov = a.b("use_nesterov");
  Tensor g = grad_as(in[3], var);
  autodiff::note_write(var);
  autodiff::note_write(acc);
  KILN_DISPATCH(var.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      using C = compute_t<T>;
      const C clr = C(lr), cm = C(mom);
      with_flag(nesterov, [&](auto nest) {
        state_loop<T, 3>({var, acc, g}, [&](const std::array<T*, 3>& p, int64_t i, auto u, const int64_t* st) {
          const C gi = C(at(p, 2, i, u, st));
          const C ai = cm * C(at(p, 1, i, u, st)) + gi;
          C upd = ai;
          if constexpr (decltype(nest)::value) upd = gi + cm * ai;
          at(p, 1, i, u, st) = T(ai);
          at(p, 0, i, u, st) = T(C(at(p, 0, i, u, st)) - clr * upd);
        });
      });
    }
  });
  return {var};
}

// ---- SGD: inputs (var, grad, lr, accum, stat) ----
// `stat` is either one flag (any dtype, > 0 = first step) or, as MindSpore's nn.SGD keeps it, a tensor of var's
// shape and dtype with one flag per element. Either way it is set to 0 by a momentum step. Per-element flags are
// all equal in practice (all 1 before the first step, all 0 after): one read pass finds that, and the update then
// runs the same branch-free loop as a single flag does.

// 1 if every element of `t` is > 0, 0 if none is, -1 if mixed.
int uniform_sign(const Tensor& t) {
  bool any_pos = false, any_nonpos = false;
  KILN_DISPATCH(t.dtype(), [&](auto tag) {
    using S = decltype(tag);
    const S* base = t.data<S>();
    std::array<const int64_t*, 1> st{t.strides().data()};
    cpu::strided_loop<1>(t.shape(), st, [&](const int64_t* off, int64_t n, const int64_t* in) {
      for (int64_t i = 0; i < n; ++i) {
        if (convert_value<double>(base[off[0] + i * in[0]]) > 0) any_pos = true;
        else any_nonpos = true;
      }
    });
  });
  return any_pos && any_nonpos ? -1 : any_pos ? 1 : 0;
}

TV sgd_direct(const TV& in, const Attrs& a) {
  const char* op = "SGD";
  const Tensor &var = in[0], &acc = in[3], &stat = in[4];
  check_float_param(var, op, "parameters");
  check_like(in[1], var, op, "gradient", false);
  const double lr = scalar_input(in[2], op, "learning_rate");
  const double mom = a.f("momentum"), damp = a.f("dampening"), wd = a.f("weight_decay");
  const bool nesterov = a.b("nesterov");
  KILN_CHECK(mom >= 0, Value, "For 'SGD', the 'momentum' must be at least 0.0, but got ", mom, ".");
  KILN_CHECK(!nesterov || (mom > 0 && damp == 0), Value,
             "For 'SGD', the nesterov momentum requires momentum > 0 and zero dampening, but got momentum ", mom,
             " and dampening ", damp, ".");
  Tensor g = grad_as(in[1], var);
  const bool use_mom = mom > 0;
  if (!use_mom) check_distinct({&var, &in[1]}, {"parameters", "gradient"}, op);
  bool flag_stat = false, first = false;
  if (use_mom) {
    check_like(acc, var, op, "accum", true);
    check_distinct({&var, &in[1], &acc, &stat}, {"parameters", "gradient", "accum", "stat"}, op);
    if (stat.numel() == 1) {
      flag_stat = true;
      first = stat.item() > 0;
    } else {
      KILN_CHECK(stat.shape() == var.shape() && stat.dtype() == var.dtype(), Value,
                 "For 'SGD', 'stat' must be a 1-element flag or have the shape and dtype of 'parameters' (",
                 shape_str(var.shape()), ", ", dtype_name(var.dtype()), "), but got ", shape_str(stat.shape()), ", ",
                 dtype_name(stat.dtype()), ".");
      const int sign = uniform_sign(stat);
      flag_stat = sign >= 0;
      first = sign == 1;
    }
  }
  autodiff::note_write(var);
  if (use_mom) {
    autodiff::note_write(acc);
    autodiff::note_write(stat);
  }
  KILN_DISPATCH(var.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      using C = compute_t<T>;
      const C clr = C(lr), cm = C(mom), c1d = C(1.0 - damp), cwd = C(wd);
      with_flag(wd != 0, [&](auto decay) {
        constexpr bool kDecay = decltype(decay)::value;
        if (!use_mom) {
          state_loop<T, 2>({var, g}, [&](const std::array<T*, 2>& p, int64_t i, auto u, const int64_t* st) {
            const C w = C(at(p, 0, i, u, st));
            C gi = C(at(p, 1, i, u, st));
            if constexpr (kDecay) gi += cwd * w;
            at(p, 0, i, u, st) = T(w - clr * gi);
          });
          return;
        }
        with_flag(nesterov, [&](auto nest) {
          constexpr bool kNest = decltype(nest)::value;
          if (flag_stat) {
            with_flag(first, [&](auto is_first) {
              state_loop<T, 3>({var, g, acc}, [&](const std::array<T*, 3>& p, int64_t i, auto u, const int64_t* st) {
                const C w = C(at(p, 0, i, u, st));
                C gi = C(at(p, 1, i, u, st));
                if constexpr (kDecay) gi += cwd * w;
                C ai = gi;
                if constexpr (!decltype(is_first)::value) ai = cm * C(at(p, 2, i, u, st)) + c1d * gi;
                C upd = ai;
                if constexpr (kNest) upd = gi + cm * ai;
                at(p, 2, i, u, st) = T(ai);
                at(p, 0, i, u, st) = T(w - clr * upd);
              });
            });
          } else {
            state_loop<T, 4>({var, g, acc, stat}, [&](const std::array<T*, 4>& p, int64_t i, auto u, const int64_t* st) {
              const C w = C(at(p, 0, i, u, st));
              C gi = C(at(p, 1, i, u, st));
              if constexpr (kDecay) gi += cwd * w;
              const C si = C(at(p, 3, i, u, st));
              const bool f = si > C(0);
              const C ai = f ? gi : cm * C(at(p, 2, i, u, st)) + c1d * gi;
              C upd = ai;
              if constexpr (kNest) upd = gi + cm * ai;
              at(p, 3, i, u, st) = T(f ? C(0) : si);
              at(p, 2, i, u, st) = T(ai);
              at(p, 0, i, u, st) = T(w - clr * upd);
            });
          }
        });
      });
    }
  });
  if (flag_stat && first) {  // clear the flag(s)
    Tensor zero = Tensor::scalar(0.0, stat.dtype());
    copy_into(zero.view(stat.shape(), Strides(stat.shape().size(), 0), 0), stat);
  }
  return {var};
}

void reg_state(OpId id, TV (*direct)(const TV&, const Attrs&), BpropFn bprop = nullptr) {
  OpDef d;
  d.id = id;
  d.infer = infer_first;
  d.direct = direct;
  d.bprop = bprop;
  d.differentiable = bprop != nullptr;
  register_op(d);
}

}  // namespace

namespace ops_impl {
void register_state() {
  // (the inputs each in-place kernel writes are its `writes` in src/ops/schema/ops.yaml: autodiff::written_inputs)
  reg_state(OpId::Assign, assign_direct);
  reg_state(OpId::Depend, depend_direct, bp_depend);
  reg_state(OpId::Adam, adam_direct);
  reg_state(OpId::ApplyMomentum, momentum_direct);
  reg_state(OpId::SGD, sgd_direct);
}
}  // namespace ops_impl

namespace ops {
Tensor assign(const Tensor& variable, const Tensor& value) { return apply1(OpId::Assign, {variable, value}); }

Tensor depend(const Tensor& value, const Tensor& expr) { return apply1(OpId::Depend, {value, expr}); }

void adam(const Tensor& param, const Tensor& m, const Tensor& v, const Tensor& beta1_power, const Tensor& beta2_power,
          const Tensor& lr, double beta1, double beta2, double eps, const Tensor& grad, bool use_nesterov) {
  apply(OpId::Adam, {param, m, v, beta1_power, beta2_power, lr, grad},
        {{"beta1", beta1}, {"beta2", beta2}, {"epsilon", eps}, {"use_nesterov", use_nesterov}});
}

void apply_momentum(const Tensor& param, const Tensor& accum, const Tensor& lr, const Tensor& grad, double momentum,
                    bool use_nesterov) {
  apply(OpId::ApplyMomentum, {param, accum, lr, grad}, {{"momentum", momentum}, {"use_nesterov", use_nesterov}});
}

void sgd(const Tensor& param, const Tensor& grad, const Tensor& lr, const Tensor& accum, const Tensor& stat,
         double momentum, double dampening, double weight_decay, bool nesterov) {
  apply(OpId::SGD, {param, grad, lr, accum, stat},
        {{"momentum", momentum}, {"dampening", dampening}, {"weight_decay", weight_decay}, {"nesterov", nesterov}});
}
}  // namespace ops
}  // namespace kiln

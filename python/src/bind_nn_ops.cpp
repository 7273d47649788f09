// State ops (in place): assign, depend and the fused optimizer kernels adam / apply_momentum / sgd.
// Thin: argument conversion only. In-place targets are `Tensor&` (only a kiln Tensor can be written); values,
// learning rates and beta powers are TensorLike (Python scalars become weak 0-d tensors).
#include "bindings.h"

namespace kiln::ops {
void set_print_text_sink(void (*sink)(const std::string&, const std::vector<Tensor>&));  // src/ops/print.cpp
}  // namespace kiln::ops

namespace kiln::py {

void bind_nn_ops(nb::module_& m) {
  using TL = const TensorLike&;
  m.def("assign",
        [](nb::object variable, TL value) {
          KILN_CHECK(nb::isinstance<Tensor>(variable), Type, "For 'Assign', 'variable' must be a Tensor, but got '",
                     nb::inst_name(variable).c_str(), "'.");
          with_op_name("assign", [&] { ops::assign(nb::cast<const Tensor&>(variable), value); });
          return variable;
        },
        nb::arg("variable"), nb::arg("value"),
        "Writes `value` (broadcast to variable's shape, cast to its dtype) into `variable` in place, through its "
        "strides. Returns `variable` itself. ValueError if the shapes do not broadcast.");
  m.def("depend", [](TL value, TL expr) { return ops::depend(value, expr); }, nb::arg("value"), nb::arg("expr"),
        "Returns `value` (an alias; the gradient flows to `value` only). In a graph, `value` waits for `expr`.");
  m.def("adam",
        [](Tensor& param, Tensor& m_, Tensor& v, TL beta1_power, TL beta2_power, TL lr, double beta1, double beta2,
           double eps, TL grad, bool use_nesterov) {
          ops::adam(param, m_, v, beta1_power, beta2_power, lr, beta1, beta2, eps, grad, use_nesterov);
        },
        nb::arg("param"), nb::arg("m"), nb::arg("v"), nb::arg("beta1_power"), nb::arg("beta2_power"), nb::arg("lr"),
        nb::arg("beta1"), nb::arg("beta2"), nb::arg("eps"), nb::arg("grad"), nb::arg("use_nesterov") = false,
        "MindSpore's Adam kernel, in place on param, m, v. beta1_power/beta2_power: β^t after this step's "
        "multiplication. m ← β1·m + (1−β1)·g; v ← β2·v + (1−β2)·g²; α = lr·√(1−β2ᵗ)/(1−β1ᵗ); "
        "param ← param − α·m/(√v + eps) (nesterov: β1·m + (1−β1)·g in place of m).");
  m.def("apply_momentum",
        [](Tensor& param, Tensor& accum, TL lr, TL grad, double momentum, bool use_nesterov) {
          ops::apply_momentum(param, accum, lr, grad, momentum, use_nesterov);
        },
        nb::arg("param"), nb::arg("accum"), nb::arg("lr"), nb::arg("grad"), nb::arg("momentum"),
        nb::arg("use_nesterov") = false,
        "MindSpore's ApplyMomentum, in place: accum ← momentum·accum + grad; param ← param − lr·accum "
        "(nesterov: param ← param − lr·(grad + momentum·accum)).");
  m.def("sgd",
        [](Tensor& param, TL grad, TL lr, Tensor& accum, Tensor& stat, double momentum, double dampening,
           double weight_decay, bool nesterov) {
          ops::sgd(param, grad, lr, accum, stat, momentum, dampening, weight_decay, nesterov);
        },
        nb::arg("param"), nb::arg("grad"), nb::arg("lr"), nb::arg("accum"), nb::arg("stat"), nb::arg("momentum") = 0.0,
        nb::arg("dampening") = 0.0, nb::arg("weight_decay") = 0.0, nb::arg("nesterov") = false,
        "MindSpore's SGD kernel (nn.SGD), in place: g ← grad + weight_decay·param; with momentum > 0: accum ← g on "
        "the first step (stat > 0, then stat ← 0), else accum ← momentum·accum + (1−dampening)·g; update = "
        "nesterov ? g + momentum·accum : accum; without momentum update = g; param ← param − lr·update. `stat` is "
        "one flag or one flag per element (param's shape and dtype).");
  m.def("print_", [](const std::string& text, const std::vector<Tensor>& tensors) { return ops::print(text, tensors); },
        nb::arg("text"), nb::arg("tensors"),
        "Prints text with each '\\x1f' replaced by the next tensor (MindSpore graph-print format); a side effect "
        "that also runs inside compiled graphs, in program order. Returns a 0-d Int32 0.");
  // Class-index and sequence losses (src/ops/loss.cpp); argument checks and reductions' defaults live in kiln.ops.
  m.def("nll_loss",
        [](TL x, TL target, const std::optional<TensorLike>& weight, int64_t ignore_index, const std::string& reduction,
           const std::string& op) {
          std::vector<Tensor> in{x, target};
          if (weight) in.push_back(weight->t);
          return apply(OpId::NLLLoss, in,
                       {{"reduction", reduction}, {"ignore_index", ignore_index}, {"op", op}});
        },
        nb::arg("x"), nb::arg("target"), nb::arg("weight").none(), nb::arg("ignore_index"), nb::arg("reduction"),
        nb::arg("op") = "NLLLoss",
        "[loss, total_weight] of NLLLoss (MindSpore's primitive) for log-probabilities x (classes on axis 1, or 0 "
        "for 1-D), class indices target and an optional weight (C,) of x's dtype; `op` names the caller in errors.");
  m.def("cross_entropy_indices",
        [](TL x, TL target, const std::optional<TensorLike>& weight, int64_t ignore_index, const std::string& reduction,
           const std::string& op) {
          std::vector<Tensor> in{ops::log_softmax(x, x.t.ndim() == 1 ? 0 : 1), target};
          if (weight) in.push_back(weight->t);
          return apply(OpId::NLLLoss, in, {{"reduction", reduction}, {"ignore_index", ignore_index}, {"op", op}})[0];
        },
        nb::arg("x"), nb::arg("target"), nb::arg("weight").none(), nb::arg("ignore_index"), nb::arg("reduction"),
        nb::arg("op") = "CrossEntropyLoss",
        "The loss of NLLLoss(LogSoftmax(x, class axis), target, weight): cross entropy of logits x against class "
        "indices (two ops, one call).");
  m.def("ctc_loss",
        [](TL log_probs, TL targets, TL input_lengths, TL target_lengths, int64_t blank, const std::string& reduction,
           bool zero_infinity, const std::string& op) {
          return apply(OpId::CTCLossV2, {log_probs, targets, input_lengths, target_lengths},
                       {{"blank", blank}, {"reduction", reduction}, {"zero_infinity", zero_infinity}, {"op", op}});
        },
        nb::arg("log_probs"), nb::arg("targets"), nb::arg("input_lengths"), nb::arg("target_lengths"),
        nb::arg("blank"), nb::arg("reduction"), nb::arg("zero_infinity"), nb::arg("op") = "ctc_loss",
        "[loss, log_alpha] of CTCLossV2 (the reduction applied in the kernel; see src/ops/loss.cpp).");
  m.def("multi_margin_loss",
        [](TL x, TL target, const std::optional<TensorLike>& weight, int64_t p, double margin,
           const std::string& reduction, const std::string& op) {
          std::vector<Tensor> in{x, target};
          if (weight) in.push_back(weight->t);
          return apply1(OpId::MultiMarginLoss, in,
                        {{"p", p}, {"margin", margin}, {"reduction", reduction}, {"op", op}});
        },
        nb::arg("x"), nb::arg("target"), nb::arg("weight").none(), nb::arg("p"), nb::arg("margin"),
        nb::arg("reduction"), nb::arg("op") = "multi_margin_loss", "The loss of MultiMarginLoss (src/ops/loss.cpp).");
  m.def("multilabel_margin_loss",
        [](TL x, TL target, const std::string& reduction, const std::string& op) {
          return apply(OpId::MultilabelMarginLoss, {x, target}, {{"reduction", reduction}, {"op", op}});
        },
        nb::arg("x"), nb::arg("target"), nb::arg("reduction"), nb::arg("op") = "multilabel_margin_loss",
        "[loss, is_target] of MultilabelMarginLoss (src/ops/loss.cpp).");
  // Printed text goes to Python's sys.stdout, so that it interleaves correctly with Python's own prints.
  ops::set_print_sink([](const std::string& text) {
    nb::gil_scoped_acquire gil;
    nb::module_::import_("sys").attr("stdout").attr("write")(text);
  });
  // '\x1e' slots (f-strings / str.format of tensors in compiled code) are str(tensor), formatted in Python.
  ops::set_print_text_sink([](const std::string& text, const std::vector<Tensor>& tensors) {
    nb::gil_scoped_acquire gil;
    nb::module_::import_("kiln._compiler.graph_builtins").attr("write_text_slots")(text, tensors);
  });
}

}  // namespace kiln::py

// Control flow with sub-graphs: If, While (and its reverse pass, Scan: scan.cpp) (see kiln/graph.h, "control flow").
//
// Note [control-flow nodes]
// * Representation. A control-flow node holds its sub-graphs as SubGraph attributes; every tensor a sub-graph reads
//   is an explicit input of the node (the lifting Trace made it so), so the enclosing graph's passes, liveness plan
//   and tape see all dependencies, and a sub-graph is a closed function that its own Executable runs (own static
//   memory plan, reused at every trip). The node is a barrier for the enclosing graph's passes (has_side_effect):
//   they never fold, merge, remove or move across it; its sub-graphs are optimized on their own (make_subgraph).
// * Outputs are fresh. The executor treats a direct op's outputs as possibly aliasing its first input only; a branch
//   that returns its argument (or a constant) unchanged would hand out a planned buffer of the enclosing graph, so
//   such outputs are copied (`unalias`).
// * Gradients. If: an If over the two branches' vjp graphs (each returns zeros for the other branch's inputs), so
//   the taken branch's gradient flows and grad-of-grad works the same way again. While: the forward node, made
//   while a grad transform is active, saves the carried values at the start of every trip (save_history); its
//   reverse pass is a Scan (OpId::WhileGrad, Note [Scan]) over that history in reverse trip order, running the
//   body's vjp graph (the chain rule over the trips actually run) and summing the cotangents of the loop-invariant
//   inputs. A Scan's own bprop is a Scan again, so second- and higher-order gradients go through loops.
#include <algorithm>
#include <sstream>

#include "../ops/families.h"
#include "kiln/autodiff.h"
#include "kiln/graph.h"
#include "kiln/ops.h"
#include "control_flow_util.h"

namespace kiln::autodiff {
// Defined in src/autodiff/tape.cpp: records a tape node if some input is watched.
void record(const OpDef& def, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
            const Attrs& attrs);
}  // namespace kiln::autodiff

namespace kiln::graph {

namespace cf {

// eval_graph, where the values of g's outputs are given (`known`, one per output): a node all of whose outputs are
// known is not applied again — only recorded on the tape with the known tensors as its outputs — so a vjp graph whose
// bprops need only those outputs (tanh, sigmoid, exp...) does not recompute the forward (DCE drops what is left).
TV eval_graph_known(const Graph& g, const TV& inputs, const TV& known) {
  TV vals(g.values.size());
  for (size_t i = 0; i < inputs.size(); ++i) vals[size_t(g.inputs[i])] = inputs[i];
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].kind == ValueKind::Capture || g.values[v].kind == ValueKind::Constant) vals[v] = g.values[v].tensor;
  std::vector<int> known_of(g.values.size(), -1);
  for (size_t k = 0; k < g.outputs.size(); ++k)
    if (g.values[size_t(g.outputs[k])].kind == ValueKind::Node) known_of[size_t(g.outputs[k])] = int(k);
  for (const Node& n : g.nodes) {
    TV in;
    for (int v : n.inputs) in.push_back(vals[size_t(v)]);
    bool all_known = !n.outputs.empty();
    for (int o : n.outputs) all_known = all_known && known_of[size_t(o)] >= 0;
    if (all_known) {
      TV out;
      for (int o : n.outputs) out.push_back(known[size_t(known_of[size_t(o)])]);
      if (autodiff::grad_level() > 0) autodiff::record(get_op(n.op), in, out, n.attrs);
      for (size_t k = 0; k < n.outputs.size(); ++k) vals[size_t(n.outputs[k])] = out[k];
      continue;
    }
    TV out = apply(n.op, in, n.attrs);
    for (size_t k = 0; k < n.outputs.size(); ++k) vals[size_t(n.outputs[k])] = out[k];
  }
  TV r;
  for (int v : g.outputs) r.push_back(vals[size_t(v)]);
  return r;
}

TV slice(const TV& v, size_t begin, size_t end) { return TV(v.begin() + long(begin), v.begin() + long(end)); }
TV cat(TV a, const TV& b) { a.insert(a.end(), b.begin(), b.end()); return a; }

std::vector<TensorMeta> metas_of(const Graph& g, const std::vector<int>& ids) {
  std::vector<TensorMeta> r;
  for (int v : ids) r.push_back(g.values[size_t(v)].meta);
  return r;
}
std::string meta_str(const TensorMeta& m) { return std::string(dtype_name(m.dtype)) + shape_str(m.shape); }

bool truthy(const Tensor& p, const char* op) {
  KILN_CHECK(numel(p.shape()) == 1, Value, "For '", op, "', the condition must be a tensor with one element, but got ",
             dtype_name(p.dtype()), shape_str(p.shape()), ".");
  return p.item() != 0.0;  // NaN is true, as bool(float('nan')) is
}

void check_args(const SubGraph& sg, const TV& args, const char* op, const char* which) {
  const Graph& g = *sg.graph;
  KILN_CHECK(args.size() == g.inputs.size(), Value, "For '", op, "', the ", which, " graph '", g.name, "' takes ",
             g.inputs.size(), " inputs, but the node passes ", args.size(), ".");
  for (size_t i = 0; i < args.size(); ++i) {
    const TensorMeta& m = g.values[size_t(g.inputs[i])].meta;
    KILN_CHECK(args[i].shape() == m.shape && args[i].dtype() == m.dtype, Value, "For '", op, "', input ", i,
               " of the ", which, " graph must be ", meta_str(m), ", but got ", dtype_name(args[i].dtype()),
               shape_str(args[i].shape()), ".");
  }
}

// Copies outputs that share storage with an input or that are constants of the sub-graph (see the note).
void unalias(TV& outs, const TV& ins, const Graph* g) {
  for (size_t k = 0; k < outs.size(); ++k) {
    bool copy = g && g->values[size_t(g->outputs[k])].kind != ValueKind::Node;
    for (size_t i = 0; !copy && i < ins.size(); ++i)
      copy = ins[i].impl()->storage && outs[k].impl()->storage == ins[i].impl()->storage;
    if (copy) {
      Tensor c = outs[k].contiguous();
      outs[k] = Tensor::from_data(c.raw_data(), c.shape(), c.dtype());
    }
  }
}

// The vjp graph of `g`: inputs (g's inputs..., cotangents of g's outputs..., g's outputs (their values, see
// eval_graph_known)...), outputs (zeros of `pre`..., the
// cotangent of each of g's inputs with keep[i] (all when `keep` is empty; zeros for non-float ones)..., zeros of
// `post`...). Inputs left out are not differentiated (their bprops are skipped by the reverse pass).
// With known=false there are no output-value inputs (the forward is recomputed inside: the form that is itself
// differentiated for higher-order gradients, see Scan).
std::shared_ptr<Graph> vjp_graph(const Graph& g, const std::vector<bool>& keep, const std::vector<TensorMeta>& pre,
                                 const std::vector<TensorMeta>& post, bool known) {
  autodiff::IsolatedTape iso;  // a closed differentiation, whatever transforms are active around it
  Trace tr(g.name + "_grad");
  TV xs, gs;
  for (int v : g.inputs) xs.push_back(tr.input(g.values[size_t(v)].meta.shape, g.values[size_t(v)].meta.dtype));
  for (int v : g.outputs) gs.push_back(tr.input(g.values[size_t(v)].meta.shape, g.values[size_t(v)].meta.dtype));
  TV ys_known;
  if (known)
    for (int v : g.outputs)
      ys_known.push_back(tr.input(g.values[size_t(v)].meta.shape, g.values[size_t(v)].meta.dtype));
  auto kept = [&](size_t i) { return keep.empty() || keep[i]; };
  TV outs;
  for (auto& m : pre) outs.push_back(ops::zeros(m.shape, m.dtype));
  {
    autodiff::GradScope scope;
    TV leaves, fleaves;
    for (size_t i = 0; i < xs.size(); ++i) {
      bool diff = kept(i) && is_floating(xs[i].dtype());
      leaves.push_back(diff ? scope.watch_input(xs[i]) : xs[i]);
      if (diff) fleaves.push_back(leaves.back());
    }
    TV ys = known ? eval_graph_known(g, leaves, ys_known) : eval_graph(g, leaves);
    TV fys, fgs;
    for (size_t k = 0; k < ys.size(); ++k)
      if (is_floating(ys[k].dtype())) { fys.push_back(ys[k]); fgs.push_back(gs[k]); }
    TV grads;
    if (!fys.empty() && !fleaves.empty()) grads = autodiff::gradient(fys, fgs, fleaves);
    size_t j = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      if (!kept(i)) continue;
      if (is_floating(xs[i].dtype())) outs.push_back(grads.empty() ? ops::zeros(xs[i].shape(), xs[i].dtype()) : grads[j++]);
      else outs.push_back(ops::zeros(xs[i].shape(), xs[i].dtype()));
    }
  }
  for (auto& m : post) outs.push_back(ops::zeros(m.shape, m.dtype));
  return tr.finish(outs);
}

// Which inputs of the node being differentiated need a cotangent (autodiff::input_needs_grad), from `begin`.
std::vector<bool> needed(size_t begin, size_t count) {
  std::vector<bool> r(count);
  for (size_t i = 0; i < count; ++i) r[i] = autodiff::input_needs_grad(begin + i);
  return r;
}

}  // namespace cf

namespace {
using namespace cf;

// ---- If ----
std::vector<TensorMeta> if_infer(const TV& in, const Attrs& a) {
  const SubGraph& t = a.graph("then_branch");
  const SubGraph& e = a.graph("else_branch");
  KILN_CHECK(!in.empty() && numel(in[0].shape()) == 1, Value,
             "For 'If', the condition must be a tensor with one element, but got ",
             in.empty() ? std::string("nothing") : std::string(dtype_name(in[0].dtype())) + shape_str(in[0].shape()), ".");
  size_t nt = size_t(a.i("n_then"));
  KILN_CHECK(in.size() >= 1 + nt, Value, "For 'If', n_then=", nt, " but only ", in.size() - 1, " branch inputs.");
  check_args(t, slice(in, 1, 1 + nt), "If", "then");
  check_args(e, slice(in, 1 + nt, in.size()), "If", "else");
  auto mt = metas_of(*t.graph, t.graph->outputs);
  auto me = metas_of(*e.graph, e.graph->outputs);
  KILN_CHECK(mt.size() == me.size(), Value, "For 'If', the branches must return the same number of tensors, but the "
             "true branch returns ", mt.size(), " and the false branch ", me.size(), ".");
  for (size_t k = 0; k < mt.size(); ++k)
    KILN_CHECK(mt[k].shape == me[k].shape && mt[k].dtype == me[k].dtype, Value, "For 'If', output ", k,
               " of the branches must have the same shape and dtype, but the true branch gives ", meta_str(mt[k]),
               " and the false branch ", meta_str(me[k]), ".");
  return mt;
}

TV if_direct(const TV& in, const Attrs& a) {
  size_t nt = size_t(a.i("n_then"));
  bool p = truthy(in[0], "If");
  const SubGraph& sg = a.graph(p ? "then_branch" : "else_branch");
  TV args = p ? slice(in, 1, 1 + nt) : slice(in, 1 + nt, in.size());
  TV out = sg.exe->run(args);
  unalias(out, in, sg.optimized.get());
  return out;
}

TV if_bprop(const TV& in, const TV& out, const TV& gout, const Attrs& a) {
  size_t nt = size_t(a.i("n_then"));
  TV ti = slice(in, 1, 1 + nt), ei = slice(in, 1 + nt, in.size());
  TV g;
  for (size_t k = 0; k < out.size(); ++k) g.push_back(gout[k].defined() ? gout[k] : ops::zeros_like(out[k]));
  // Only the inputs whose cotangent is used: then-vjp gives (theirs, zeros for the else side's), else-vjp the reverse.
  std::vector<bool> kt = needed(1, nt), ke = needed(1 + nt, ei.size());
  std::vector<TensorMeta> tm, em;
  for (size_t i = 0; i < ti.size(); ++i) if (kt[i]) tm.push_back({ti[i].shape(), ti[i].dtype()});
  for (size_t i = 0; i < ei.size(); ++i) if (ke[i]) em.push_back({ei[i].shape(), ei[i].dtype()});
  auto tv = make_subgraph(vjp_graph(*a.graph("then_branch").graph, kt, {}, em));
  auto ev = make_subgraph(vjp_graph(*a.graph("else_branch").graph, ke, tm, {}));
  TV r = cond(in[0], tv, cat(cat(ti, g), out), ev, cat(cat(ei, g), out));
  TV res(in.size());  // the condition: no gradient
  size_t j = 0;
  for (size_t i = 0; i < ti.size(); ++i) if (kt[i]) res[1 + i] = r[j++];
  for (size_t i = 0; i < ei.size(); ++i) if (ke[i]) res[1 + nt + i] = r[j++];
  return res;
}

// ---- While ----
struct WhileShape {
  size_t n, nc, nb;
};
WhileShape while_shape(const TV& in, const Attrs& a, size_t extra) {
  int64_t n = a.i("n_carried"), nc = a.i("n_cond");
  KILN_CHECK(n >= 1 && nc >= 0 && size_t(n + nc) + extra <= in.size(), Value, "For 'While', bad input counts (",
             in.size(), " inputs, n_carried=", n, ", n_cond=", nc, ").");
  return {size_t(n), size_t(nc), in.size() - extra - size_t(n + nc)};
}

std::vector<TensorMeta> while_infer(const TV& in, const Attrs& a) {
  WhileShape w = while_shape(in, a, 0);
  const SubGraph& c = a.graph("cond");
  const SubGraph& b = a.graph("body");
  TV carried = slice(in, 0, w.n);
  check_args(c, cat(carried, slice(in, w.n, w.n + w.nc)), "While", "cond");
  check_args(b, cat(carried, slice(in, w.n + w.nc, in.size())), "While", "body");
  auto mc = metas_of(*c.graph, c.graph->outputs);
  KILN_CHECK(mc.size() == 1 && numel(mc[0].shape) == 1, Value,
             "For 'While', the condition must be one tensor with one element, but the cond graph returns ", mc.size(),
             " tensors", mc.empty() ? std::string() : " (the first " + meta_str(mc[0]) + ")", ".");
  auto mb = metas_of(*b.graph, b.graph->outputs);
  KILN_CHECK(mb.size() == w.n, Value, "For 'While', the body must return the ", w.n,
             " loop-carried values, but it returns ", mb.size(), ".");
  std::vector<TensorMeta> r;
  for (size_t k = 0; k < w.n; ++k) {
    KILN_CHECK(mb[k].shape == carried[k].shape() && mb[k].dtype == carried[k].dtype(), Value,
               "For 'While', loop-carried value ", k, " enters the loop as ", dtype_name(carried[k].dtype()),
               shape_str(carried[k].shape()), " but the body returns ", meta_str(mb[k]),
               ": a loop variable must keep its shape and dtype.");
    r.push_back(mb[k]);
  }
  if (a.b("save_history"))
    for (size_t k = 0; k < w.n; ++k) {
      Shape s{0};
      s.insert(s.end(), mb[k].shape.begin(), mb[k].shape.end());
      r.push_back({s, mb[k].dtype});  // leading dimension: the trip count, known at run time
    }
  return r;
}

// Runs the loop; appends the state at the start of every trip to `hist` when given.
TV run_loop(const SubGraph& c, const SubGraph& b, TV s, const TV& ce, const TV& be, std::vector<TV>* hist) {
  while (true) {
    TV cv = c.exe->run(cat(s, ce));
    if (!truthy(cv[0], "While")) break;
    if (hist) hist->push_back(s);
    s = b.exe->run(cat(s, be));
  }
  return s;
}

TV while_direct(const TV& in, const Attrs& a) {
  WhileShape w = while_shape(in, a, 0);
  const SubGraph& b = a.graph("body");
  bool save = a.b("save_history");
  std::vector<TV> hist;
  TV s = run_loop(a.graph("cond"), b, slice(in, 0, w.n), slice(in, w.n, w.n + w.nc), slice(in, w.n + w.nc, in.size()),
                  save ? &hist : nullptr);
  unalias(s, in, hist.empty() ? nullptr : b.optimized.get());
  if (save) {
    for (size_t k = 0; k < w.n; ++k) {
      if (hist.empty()) {
        Shape sh{0};
        sh.insert(sh.end(), in[k].shape().begin(), in[k].shape().end());
        s.push_back(Tensor::empty(sh, in[k].dtype()));
      } else {
        TV col;
        for (auto& h : hist) col.push_back(h[k]);
        s.push_back(ops::stack(col, 0));
      }
    }
  }
  return s;
}

TV while_bprop(const TV& in, const TV& out, const TV& gout, const Attrs& a) {
  WhileShape w = while_shape(in, a, 0);
  const SubGraph& b = a.graph("body");
  const size_t n = w.n, nb = w.nb, b0 = w.n + w.nc;
  TV g;
  for (size_t k = 0; k < n; ++k) g.push_back(gout[k].defined() ? gout[k] : ops::zeros_like(out[k]));
  // The body's vjp differentiates the carried values and only the loop-invariant inputs whose cotangent is used (a
  // large tensor indexed per trip, such as a sequence, would otherwise get a full-size zero-filled cotangent a trip).
  std::vector<bool> keep(n, true);
  std::vector<int64_t> need;
  for (size_t k = 0; k < nb; ++k) {
    bool u = autodiff::input_needs_grad(b0 + k) && is_floating(in[b0 + k].dtype());
    keep.push_back(u);
    if (u) need.push_back(int64_t(k));
  }
  // The state at the start of every trip (saved by the forward node, or computed again) and after the last.
  TV fin, hist;
  if (a.b("save_history") && out.size() == 2 * n && autodiff::grad_level() == 0) {  // (see scan_bprop)
    fin = slice(out, 0, n);
    hist = slice(out, n, 2 * n);
  } else {
    Attrs at{{"cond", *a.find("cond")}, {"body", *a.find("body")}, {"n_carried", int64_t(n)},
             {"n_cond", int64_t(w.nc)}, {"save_history", true}};
    TV o = apply(OpId::While, in, at);
    fin = slice(o, 0, n);
    hist = slice(o, n, 2 * n);
  }
  TV ghist;
  std::vector<size_t> gh_idx;
  for (size_t k = 0; k < n; ++k)
    if (out.size() == 2 * n && n + k < gout.size() && gout[n + k].defined()) {
      gh_idx.push_back(k);
      ghist.push_back(gout[n + k]);
    }
  std::vector<TensorMeta> em;
  for (int64_t k : need) em.push_back({in[b0 + size_t(k)].shape(), in[b0 + size_t(k)].dtype()});
  // The reverse body (Note [Scan]): (g (n), acc (em), s rows (n), ghist rows, [next rows (n)], body extras (nb)) ->
  // (g', acc'): g' = d(body)/d(state)ᵀ g (+ the history's cotangent), acc' = acc + d(body)/d(extras)ᵀ g.
  auto reverse_body = [&](bool known) {
    autodiff::IsolatedTape iso;
    Trace tr(b.graph->name + (known ? "_rev" : "_rev_diff"));
    TV gv, acc, st, gh, nx, be;
    for (size_t k = 0; k < n; ++k) gv.push_back(tr.input(in[k].shape(), in[k].dtype()));
    for (auto& m : em) acc.push_back(tr.input(m.shape, m.dtype));
    for (size_t k = 0; k < n; ++k) st.push_back(tr.input(in[k].shape(), in[k].dtype()));
    for (size_t k : gh_idx) gh.push_back(tr.input(in[k].shape(), in[k].dtype()));
    if (known)
      for (size_t k = 0; k < n; ++k) nx.push_back(tr.input(in[k].shape(), in[k].dtype()));
    for (size_t k = 0; k < nb; ++k) be.push_back(tr.input(in[b0 + k].shape(), in[b0 + k].dtype()));
    auto vjp = vjp_graph(*b.graph, keep, {}, {}, known);
    TV r = eval_graph(*vjp, known ? cat(cat(cat(st, be), gv), nx) : cat(cat(st, be), gv));
    TV outs;
    for (size_t k = 0; k < n; ++k) {
      Tensor d = r[k];
      auto it = std::find(gh_idx.begin(), gh_idx.end(), k);
      if (it != gh_idx.end()) d = ops::add(d, gh[size_t(it - gh_idx.begin())]);
      outs.push_back(d);
    }
    for (size_t k = 0; k < em.size(); ++k) outs.push_back(ops::add(acc[k], r[n + k]));
    return make_subgraph(tr.finish(outs));
  };
  auto body_known = reverse_body(true);
  // The form without next rows is only needed when this reverse pass is itself differentiated.
  auto body_diff = autodiff::grad_level() > 0 ? reverse_body(false) : nullptr;
  TV init = g;
  for (auto& m : em) init.push_back(ops::zeros(m.shape, m.dtype));
  TV r = scan(body_known, body_diff, init.size(), n + ghist.size(), n, nb, true,
              cat(cat(cat(cat(init, hist), ghist), fin), slice(in, b0, in.size())));
  TV res(in.size());
  for (size_t k = 0; k < n; ++k) res[k] = r[k];
  for (size_t k = 0; k < need.size(); ++k) res[b0 + size_t(need[k])] = r[n + k];
  return res;
}
}  // namespace

std::shared_ptr<const SubGraph> make_subgraph(std::shared_ptr<const Graph> g) {
  g->verify();
  TraceSuspend no_trace;        // the passes evaluate constants eagerly (also while an enclosing trace is active)
  autodiff::IsolatedTape no_tape;
  auto sg = std::make_shared<SubGraph>();
  sg->graph = g;
  auto opt = std::make_shared<Graph>(*g);
  optimize(*opt);
  sg->optimized = opt;
  sg->exe = std::make_shared<Executable>(opt);
  return sg;
}

std::string subgraph_label(const SubGraph& sg) {
  std::ostringstream s;
  s << "<graph " << sg.graph->name << ": " << sg.graph->nodes.size() << " nodes>";
  return s.str();
}

std::vector<Tensor> eval_graph(const Graph& g, const std::vector<Tensor>& inputs) {
  KILN_CHECK(inputs.size() == g.inputs.size(), Value, "Kiln eval_graph: graph '", g.name, "' takes ", g.inputs.size(),
             " inputs, but got ", inputs.size(), ".");
  TV vals(g.values.size());
  for (size_t i = 0; i < inputs.size(); ++i) vals[size_t(g.inputs[i])] = inputs[i];
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].kind == ValueKind::Capture || g.values[v].kind == ValueKind::Constant) vals[v] = g.values[v].tensor;
  for (const Node& n : g.nodes) {
    TV in;
    for (int v : n.inputs) in.push_back(vals[size_t(v)]);
    TV out = apply(n.op, in, n.attrs);
    for (size_t k = 0; k < n.outputs.size(); ++k) vals[size_t(n.outputs[k])] = out[k];
  }
  TV r;
  for (int v : g.outputs) r.push_back(vals[size_t(v)]);
  return r;
}

std::vector<Tensor> cond(const Tensor& pred, const std::shared_ptr<const SubGraph>& then_branch,
                         const std::vector<Tensor>& then_inputs, const std::shared_ptr<const SubGraph>& else_branch,
                         const std::vector<Tensor>& else_inputs) {
  Attrs at{{"then_branch", AttrValue(then_branch)},
           {"else_branch", AttrValue(else_branch)},
           {"n_then", int64_t(then_inputs.size())}};
  return apply(OpId::If, cat(cat({pred}, then_inputs), else_inputs), at);
}

std::vector<Tensor> while_loop(const std::shared_ptr<const SubGraph>& cond, const std::shared_ptr<const SubGraph>& body,
                               const std::vector<Tensor>& carried, const std::vector<Tensor>& cond_extra,
                               const std::vector<Tensor>& body_extra, bool save_history) {
  KILN_CHECK(!carried.empty(), Value, "For 'While', a loop needs at least one loop-carried tensor.");
  Attrs at{{"cond", AttrValue(cond)},
           {"body", AttrValue(body)},
           {"n_carried", int64_t(carried.size())},
           {"n_cond", int64_t(cond_extra.size())},
           {"save_history", save_history}};
  return apply(OpId::While, cat(cat(carried, cond_extra), body_extra), at);
}

}  // namespace kiln::graph

namespace kiln::ops_impl {
void register_control_flow() {
  using namespace kiln::graph;
  OpDef d{};
  d.id = OpId::If;
  d.infer = if_infer;
  d.direct = if_direct;
  d.bprop = if_bprop;
  register_op(d);
  d = OpDef{};
  d.id = OpId::While;
  d.infer = while_infer;
  d.direct = while_direct;
  d.bprop = while_bprop;
  register_op(d);
  d = OpDef{};
  d.id = OpId::WhileGrad;
  d.infer = cf::scan_infer;
  d.direct = cf::scan_direct;
  d.bprop = cf::scan_bprop;
  register_op(d);
}
}  // namespace kiln::ops_impl

// Control flow with sub-graphs: If, While and WhileGrad (see kiln/graph.h, "control flow").
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

namespace kiln::autodiff {
// Defined in src/autodiff/tape.cpp: records a tape node if some input is watched.
void record(const OpDef& def, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
            const Attrs& attrs);
}  // namespace kiln::autodiff

namespace kiln::graph {

namespace {
using TV = std::vector<Tensor>;

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
                                 const std::vector<TensorMeta>& post, bool known = true) {
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

// Element `i` along the leading dimension of `h` (a view).
Tensor row(const Tensor& h, int64_t i) {
  Shape s(h.shape().begin() + 1, h.shape().end());
  Tensor c = h.contiguous();
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = c.impl()->storage;
  impl->dtype = c.dtype();
  impl->shape = s;
  impl->strides = contiguous_strides(s);
  impl->offset = c.impl()->offset + i * numel(s);
  return Tensor(std::move(impl));
}

// ---- Scan (OpId::WhileGrad): the reverse pass of a While, and of itself ----
// Note [Scan]. A loop over the T rows of its sequences (T = the first sequence's leading size, known at run time),
// in index order or reversed. Attrs: body, n_carried (nc), n_seq (ns), n_next (nn), n_inv (ni), reverse,
// save_history, and optionally body_diff. Inputs: carried init (nc), sequences (ns), tails (nn), loop-invariant
// inputs (ni). Trip t runs body(carried, seq rows t (ns), next rows (nn), invariants) -> (carried (nc), ys (ny));
// the next rows are rows t+1 of the first nn sequences (the tails on the last index): a While's reverse pass reads
// the state after each trip there instead of recomputing it. Outputs: the final carried values, the ys stacked by
// index t (leading size T), and with save_history the carried values at the start of each trip, stacked by t.
// Its bprop is a Scan in the other direction over the vjp of `body_diff` (the same function as body without the
// next rows: the forward is recomputed inside), carrying the carried values' cotangents and the sums of the
// invariants' ones, with the sequences' cotangents as its ys; so gradients of any order go through While loops.
struct ScanShape {
  size_t nc, ns, nn, ni;
};
ScanShape scan_shape(const TV& in, const Attrs& a) {
  ScanShape w{size_t(a.i("n_carried")), size_t(a.i("n_seq")), size_t(a.i("n_next")), size_t(a.i("n_inv"))};
  KILN_CHECK(w.ns >= 1 && w.nn <= w.ns && w.nc + w.ns + w.nn + w.ni == in.size(), Value, "For 'Scan', bad input "
             "counts (", in.size(), " inputs, n_carried=", w.nc, ", n_seq=", w.ns, ", n_next=", w.nn, ", n_inv=", w.ni,
             ").");
  return w;
}

Shape row_shape(const Tensor& t) { return Shape(t.shape().begin() + 1, t.shape().end()); }
Shape stacked_shape(int64_t n, const Shape& s) {
  Shape r{n};
  r.insert(r.end(), s.begin(), s.end());
  return r;
}

std::vector<TensorMeta> scan_infer(const TV& in, const Attrs& a) {
  ScanShape w = scan_shape(in, a);
  const Graph& b = *a.graph("body").graph;
  KILN_CHECK(b.inputs.size() == w.nc + w.ns + w.nn + w.ni, Value, "For 'Scan', the body takes ", b.inputs.size(),
             " inputs, but the node passes ", w.nc + w.ns + w.nn + w.ni, ".");
  auto meta_in = [&](size_t k) { return b.values[size_t(b.inputs[k])].meta; };
  for (size_t k = 0; k < w.nc; ++k)
    KILN_CHECK(meta_in(k).shape == in[k].shape() && meta_in(k).dtype == in[k].dtype(), Value, "For 'Scan', carried "
               "value ", k, " must be ", meta_str(meta_in(k)), ".");
  for (size_t k = 0; k < w.ns; ++k) {
    const Tensor& x = in[w.nc + k];
    KILN_CHECK(x.ndim() >= 1 && row_shape(x) == meta_in(w.nc + k).shape && x.dtype() == meta_in(w.nc + k).dtype,
               Value, "For 'Scan', sequence ", k, " must have rows of ", meta_str(meta_in(w.nc + k)), ".");
  }
  auto mb = metas_of(b, b.outputs);
  KILN_CHECK(mb.size() >= w.nc, Value, "For 'Scan', the body must return the carried values.");
  std::vector<TensorMeta> r;
  for (size_t k = 0; k < w.nc; ++k) {
    KILN_CHECK(mb[k].shape == in[k].shape() && mb[k].dtype == in[k].dtype(), Value, "For 'Scan', the body makes "
               "carried value ", k, " ", meta_str(mb[k]), " but it enters as ", dtype_name(in[k].dtype()),
               shape_str(in[k].shape()), ".");
    r.push_back(mb[k]);
  }
  for (size_t k = w.nc; k < mb.size(); ++k) r.push_back({stacked_shape(0, mb[k].shape), mb[k].dtype});  // T: run time
  if (a.b("save_history"))
    for (size_t k = 0; k < w.nc; ++k) r.push_back({stacked_shape(0, in[k].shape()), in[k].dtype()});
  return r;
}

TV scan_direct(const TV& in, const Attrs& a) {
  ScanShape w = scan_shape(in, a);
  const SubGraph& b = a.graph("body");
  const bool rev = a.b("reverse"), save = a.b("save_history");
  TV c = slice(in, 0, w.nc);
  const size_t s0 = w.nc, t0 = s0 + w.ns, i0 = t0 + w.nn;
  const int64_t T = in[s0].shape()[0];
  for (size_t k = 1; k < w.ns; ++k)
    KILN_CHECK(in[s0 + k].shape()[0] == T, Value, "For 'Scan', every sequence must have ", T, " rows, but sequence ",
               k, " has ", in[s0 + k].shape()[0], ".");
  TV inv = slice(in, i0, in.size());
  auto mb = metas_of(*b.graph, b.graph->outputs);
  const size_t ny = mb.size() - w.nc;
  std::vector<TV> ys(ny, TV(size_t(T))), hist(save ? w.nc : 0, TV(size_t(T)));
  for (int64_t j = 0; j < T; ++j) {
    const int64_t t = rev ? T - 1 - j : j;
    TV args = c;
    for (size_t k = 0; k < w.ns; ++k) args.push_back(row(in[s0 + k], t));
    for (size_t k = 0; k < w.nn; ++k) args.push_back(t + 1 < T ? row(in[s0 + k], t + 1) : in[t0 + k]);
    args = cat(args, inv);
    for (size_t k = 0; k < hist.size(); ++k) hist[k][size_t(t)] = c[k];
    TV o = b.exe->run(args);
    c = slice(o, 0, w.nc);
    for (size_t k = 0; k < ny; ++k) ys[k][size_t(t)] = o[w.nc + k];
  }
  TV out = c;
  for (size_t k = 0; k < ny; ++k)
    out.push_back(T ? ops::stack(ys[k], 0) : Tensor::empty(stacked_shape(0, mb[w.nc + k].shape), mb[w.nc + k].dtype));
  for (size_t k = 0; k < hist.size(); ++k)
    out.push_back(T ? ops::stack(hist[k], 0) : Tensor::empty(stacked_shape(0, in[k].shape()), in[k].dtype()));
  unalias(out, in, nullptr);
  return out;
}

std::shared_ptr<const SubGraph> sg_of(const Attrs& a, const char* name) {
  const AttrValue* v = a.find(name);
  return v ? std::get<std::shared_ptr<const SubGraph>>(*v) : nullptr;
}

TV scan(const std::shared_ptr<const SubGraph>& body, const std::shared_ptr<const SubGraph>& body_diff, size_t nc,
        size_t ns, size_t nn, size_t ni, bool reverse, const TV& inputs) {
  Attrs at{{"body", AttrValue(body)},
           {"n_carried", int64_t(nc)},
           {"n_seq", int64_t(ns)},
           {"n_next", int64_t(nn)},
           {"n_inv", int64_t(ni)},
           {"reverse", reverse},
           {"save_history", autodiff::grad_level() > 0}};
  if (body_diff) at.items.push_back({"body_diff", AttrValue(body_diff)});
  return apply(OpId::WhileGrad, inputs, at);
}

TV scan_bprop(const TV& in, const TV& out, const TV& gout, const Attrs& a) {
  ScanShape w = scan_shape(in, a);
  auto bd = sg_of(a, "body_diff");
  if (!bd) bd = w.nn == 0 ? sg_of(a, "body") : nullptr;
  KILN_CHECK(bd != nullptr, Runtime, "Kiln: this loop's reverse pass was made without its differentiable form; "
             "higher-order gradients through it are not available.");
  // A recorded reverse pass of a Scan is a third (or higher) order gradient. In a compiled graph its cotangents of
  // the history (whose leading size is known only at run time) would be summed by ordinary ops planned for the
  // static size, so it is refused there; it runs in PyNative mode.
  KILN_CHECK(!(autodiff::grad_level() > 0 && tracing()), Runtime, "Kiln: gradients of third or higher order "
             "through a tensor-dependent loop (`while`, `for` over range(tensor), ops.WhileLoop/ForiLoop) are not "
             "supported in Graph mode (second order is); compute them in PyNative mode.");
  const Graph& g = *bd->graph;  // inputs: carried (nc), seq rows (ns), invariants (ni)
  const size_t ny = g.outputs.size() - w.nc;
  const size_t s0 = w.nc, i0 = w.nc + w.ns + w.nn;
  TV hist;
  // The saved history, unless this reverse pass is itself recorded: the history tensors the forward handed out may
  // be gone (only the carried values are kept by the caller), and their recorded stand-ins have no history of
  // their own, so a recorded reverse pass runs the loop again for a history that is connected to its inputs.
  if (a.b("save_history") && out.size() == w.nc + ny + w.nc && autodiff::grad_level() == 0) {
    hist = slice(out, w.nc + ny, out.size());
  } else {  // run it again, keeping the history
    Attrs at = a;
    for (auto& kv : at.items)
      if (std::string(kv.first) == "save_history") kv.second = true;
    TV o = apply(OpId::WhileGrad, in, at);
    hist = slice(o, w.nc + ny, o.size());
  }
  std::vector<size_t> gy_idx, gh_idx;
  TV seqs;
  for (size_t k = 0; k < w.nc; ++k) seqs.push_back(hist[k]);
  for (size_t k = 0; k < w.ns; ++k) seqs.push_back(in[s0 + k]);
  for (size_t k = 0; k < ny; ++k)
    if (w.nc + k < gout.size() && gout[w.nc + k].defined()) { gy_idx.push_back(k); seqs.push_back(gout[w.nc + k]); }
  for (size_t k = 0; k < w.nc; ++k)
    if (w.nc + ny + k < gout.size() && gout[w.nc + ny + k].defined()) {
      gh_idx.push_back(k);
      seqs.push_back(gout[w.nc + ny + k]);
    }
  std::vector<bool> need_s = needed(s0, w.ns), need_e = needed(i0, w.ni);
  for (size_t k = 0; k < w.ns; ++k) need_s[k] = need_s[k] && is_floating(in[s0 + k].dtype());
  for (size_t k = 0; k < w.ni; ++k) need_e[k] = need_e[k] && is_floating(in[i0 + k].dtype());
  std::vector<bool> keep(w.nc, true);
  keep.insert(keep.end(), need_s.begin(), need_s.end());
  keep.insert(keep.end(), need_e.begin(), need_e.end());
  std::vector<TensorMeta> em;
  for (size_t k = 0; k < w.ni; ++k) if (need_e[k]) em.push_back({in[i0 + k].shape(), in[i0 + k].dtype()});
  // The reverse body: (gc (nc), ge (em), h rows (nc), x rows (ns), gy rows, gh rows, invariants) ->
  // (gc', ge', dx rows of the needed sequences).
  std::shared_ptr<Graph> rg;
  {
    autodiff::IsolatedTape iso;
    Trace tr(g.name + "_rev");
    auto in_meta = [&](size_t k) { return g.values[size_t(g.inputs[k])].meta; };
    TV gc, ge, h, x, gy, gh, e;
    for (size_t k = 0; k < w.nc; ++k) gc.push_back(tr.input(in_meta(k).shape, in_meta(k).dtype));
    for (auto& m : em) ge.push_back(tr.input(m.shape, m.dtype));
    for (size_t k = 0; k < w.nc; ++k) h.push_back(tr.input(in_meta(k).shape, in_meta(k).dtype));
    for (size_t k = 0; k < w.ns; ++k) x.push_back(tr.input(in_meta(w.nc + k).shape, in_meta(w.nc + k).dtype));
    auto mo = metas_of(g, g.outputs);
    for (size_t k : gy_idx) gy.push_back(tr.input(mo[w.nc + k].shape, mo[w.nc + k].dtype));
    for (size_t k : gh_idx) gh.push_back(tr.input(in_meta(k).shape, in_meta(k).dtype));
    for (size_t k = 0; k < w.ni; ++k) e.push_back(tr.input(in_meta(w.nc + w.ns + k).shape,
                                                           in_meta(w.nc + w.ns + k).dtype));
    auto vjp = vjp_graph(g, keep, {}, {}, false);
    TV cot = gc;
    for (size_t k = 0; k < ny; ++k) {
      auto it = std::find(gy_idx.begin(), gy_idx.end(), k);
      cot.push_back(it != gy_idx.end() ? gy[size_t(it - gy_idx.begin())]
                                       : ops::zeros(mo[w.nc + k].shape, mo[w.nc + k].dtype));
    }
    TV r = eval_graph(*vjp, cat(cat(cat(h, x), e), cot));
    TV outs;
    for (size_t k = 0; k < w.nc; ++k) {
      Tensor d = r[k];
      auto it = std::find(gh_idx.begin(), gh_idx.end(), k);
      if (it != gh_idx.end()) d = ops::add(d, gh[size_t(it - gh_idx.begin())]);
      outs.push_back(d);
    }
    size_t j = w.nc;
    TV dx;
    for (size_t k = 0; k < w.ns; ++k) if (need_s[k]) dx.push_back(r[j++]);
    for (size_t k = 0; k < em.size(); ++k) outs.push_back(ops::add(ge[k], r[j++]));
    outs = cat(outs, dx);
    rg = tr.finish(outs);
  }
  auto body = make_subgraph(rg);
  TV init;
  for (size_t k = 0; k < w.nc; ++k)
    init.push_back(k < gout.size() && gout[k].defined() ? gout[k] : ops::zeros_like(out[k]));
  for (auto& m : em) init.push_back(ops::zeros(m.shape, m.dtype));
  TV r = scan(body, nullptr, init.size(), seqs.size(), 0, w.ni, !a.b("reverse"),
              cat(cat(init, seqs), slice(in, i0, in.size())));
  TV res(in.size());
  for (size_t k = 0; k < w.nc; ++k) res[k] = r[k];
  size_t j = w.nc;
  for (size_t k = 0; k < w.ni; ++k) if (need_e[k]) res[i0 + k] = r[j++];
  for (size_t k = 0; k < w.ns; ++k) if (need_s[k]) res[s0 + k] = r[j++];
  return res;
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
  d.infer = scan_infer;
  d.direct = scan_direct;
  d.bprop = scan_bprop;
  register_op(d);
}
}  // namespace kiln::ops_impl

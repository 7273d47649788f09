// Scan: the reverse pass of a While loop, and of itself (registered as OpId::WhileGrad in control_flow.cpp; see
// Note [Scan] below and Note [control-flow nodes] there).
#include <algorithm>

#include "control_flow_util.h"
#include "kiln/autodiff.h"
#include "kiln/graph.h"
#include "kiln/ops.h"

namespace kiln::graph::cf {

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
namespace {
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

std::shared_ptr<const SubGraph> sg_of(const Attrs& a, const char* name) {
  const AttrValue* v = a.find(name);
  return v ? std::get<std::shared_ptr<const SubGraph>>(*v) : nullptr;
}
}  // namespace

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

}  // namespace kiln::graph::cf

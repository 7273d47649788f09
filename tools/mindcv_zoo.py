"""Model zoo as a test: every mindcv model on Kiln (through kiln.compat) against MindSpore 2.10, same checkpoint.

For each model name (mindcv.list_models(), or --only NAME ...):

1. A MindSpore subprocess (--ms-python, a real MindSpore 2.10) builds `mindcv.create_model(name, num_classes=10,
   pretrained=False)` with fixed seeds, puts it in eval mode (set_train(False): BatchNorm uses its moving statistics,
   dropout and drop-path are off), writes its Parameters with mindspore.save_checkpoint, and records, for a fixed
   input x of shape (2, 3, S, S), the logits y = net(x) and the gradients of loss = sum(y * w) (w a fixed random
   (2, 10) array) w.r.t. every trainable parameter. S is the smallest of --sizes (default 64, 96, 128, 160, 224)
   for which the MindSpore forward runs, else the model's configured input size (its default_cfg "input_size").
2. A Kiln subprocess (`python -m kiln.compat`, so `import mindspore` is Kiln) builds the same model, loads the
   checkpoint with load_checkpoint + load_param_into_net (a parameter of the net not loaded, or a checkpoint entry
   left unused, is a failure), then computes the forward and the gradients in PyNative mode and in Graph mode
   (set_context(mode=GRAPH_MODE), the gradient function wrapped in mindspore.jit).
3. Comparison: forward error = max|y_kiln - y_ms| / max|y_ms| (pass: <= 1e-4); gradient error = max over parameters
   p of ||g_kiln[p] - g_ms[p]||_2 / (||g_ms[p]||_2 + 1e-4 * ||g_ms||_2) (pass: <= 1e-3), where ||g_ms||_2 is the
   norm of all gradients together: a parameter whose gradient is below 1e-4 of the total (e.g. the token-mixing
   biases of MLP-Mixer, whose gradient is mathematically 0 because every later LayerNorm removes a per-token
   offset; both sides then return float32 rounding, ~1e-7 of the total) is held to 1e-7 of the total norm.
4. After a gradient mismatch, a MindSpore subprocess arbitrates: for the (up to 3) worst parameters, central finite
   differences of MindSpore's own float32 loss along d = (g_kiln - g_ms) / ||g_kiln - g_ms|| (steps 0.01 and 0.003)
   against <g_ms, d> and <g_kiln, d>. When every slope sides with Kiln (fd_verdict), the stage is 'ms_off' (shown
   "ok (FD)": MindSpore's autodiff gradient is the one that is off); when a slope sides with MindSpore, it stays a
   mismatch.
5. When no finite-difference verdict sides with MindSpore and not every one sides with Kiln (undecided: the slope
   depends on the step, the loss has a kink there, e.g. a ReLU input within float32 rounding of 0 that the two
   frameworks round to different sides; a float32 slope across a kink may side with Kiln for one parameter by
   chance, as on inception_v4, whose float64 slopes were all undecided; see kink_retry_wanted), both sides are run
   again on the same checkpoint at up to --kink-retries other inputs (seeds 1..K of
   _inputs). A mode whose gradients then match within 1e-3 at one of them (with the forward within 1e-4) is 'kink'
   (shown "ok (kink)"; the note names the input and its errors): the same code paths give MindSpore's gradients
   at a nearby input, so the difference at x is the kink, not Kiln. A systematic error (a wrong formula, a wrong
   tie rule) fails at every input and stays a mismatch.
6. A mismatch left after steps 4-5 is arbitrated in float64 on Kiln (worker_f64): the same checkpoint and input,
   every Parameter and the input cast to float64, give the gradient of the exact function up to ~1e-16 (g64), and
   central finite differences of that float64 loss along each d of step 4 (steps 1e-4 and 1e-6: noise ~1e-12,
   independent of any autodiff formula) decide between <g_ms, d> and <g_kiln, d>. When every float64 slope sides
   with Kiln and Kiln's float32 gradient is within 1e-3 of g64 (the error of step 3 with g64 as the reference) while
   MindSpore's is not, the stage is 'f64' (shown "ok (f64)"; the note gives both errors): Kiln's float32 gradient
   is the exact one to the table's tolerance and MindSpore's float32 is further from it (rounding at a kink or an
   ill-conditioned layer, or MindSpore's formula). Anything else stays a mismatch.

Results accumulate in a JSON file (--results, default docs/mindcv_zoo.json: a run updates the entries of the models
it ran and keeps the others), and the Markdown table (--table, default docs/mindcv_zoo.md) lists every model of
mindcv, with "not run" for the models that have no result. --json prints this run's results as JSON on stdout.
Exit status: 1 when a model that runs on MindSpore fails a stage on Kiln, else 0.

Usage (mindcv sources on --mindcv; they are put on PYTHONPATH of both subprocesses, nothing is installed):

    .venv/bin/python tools/mindcv_zoo.py --only resnet18 mobilenet_v3_small_100 --timeout 900
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

FWD_TOL = 1e-4
GRAD_TOL = 1e-3
GRAD_FLOOR = 1e-4  # relative to the norm of all gradients (see grad_error); results before it was set used 1e-6
NUM_CLASSES = 10
BATCH = 2
DEFAULT_SIZES = (64, 96, 128, 160, 224)
FD_PARAMS = 3  # parameters (the worst) checked by finite differences after a gradient mismatch
# finite-difference steps along a unit direction (float32 forward: a loss noise of ~1e-6)
FD_STEPS = tuple(float(v) for v in os.environ.get("MINDCV_ZOO_FD_STEPS", "0.01,0.003").split(","))
STAGES = ("build", "load", "pynative_fwd", "pynative_grad", "graph_fwd", "graph_grad")
FD64_STEPS = (1e-4, 1e-6)  # float64 central differences (step 6): loss noise ~1e-16 relative
PASSING = ("ok", "ms_off", "kink", "f64")  # stage results that count as a pass (see kiln_failed)
KINK_RETRIES = 3  # other inputs tried after a gradient mismatch that finite differences cannot decide
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


# ---------------------------------------------------------------------------------------------------------------
# comparison and table (pure NumPy: tested by tests/python/test_mindcv_zoo_tool.py)
# ---------------------------------------------------------------------------------------------------------------
def forward_error(got, ref):
    """Scale-relative max error of a forward result: max|got - ref| / max|ref| (0 when both are all zeros).

    got, ref: arrays of the same shape. Raises ValueError when the shapes differ. NaN/inf in `got` give inf.
    """
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape:
        raise ValueError(f"forward_error: shapes differ, got {got.shape}, expected {ref.shape}")
    if not np.all(np.isfinite(got)):
        return math.inf
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    diff = float(np.max(np.abs(got - ref))) if ref.size else 0.0
    if scale == 0.0:
        return 0.0 if diff == 0.0 else math.inf
    return diff / scale


def grad_errors(got, ref, floor=GRAD_FLOOR):
    """Per-parameter relative gradient errors: name -> ||got[p] - ref[p]||_2 / (||ref[p]||_2 + floor * ||ref||_2).

    got, ref: dicts name -> array; ||ref||_2 is the norm of all reference gradients together. A non-finite value in
    got gives inf. Raises ValueError when the names or a shape differ.
    """
    if set(got) != set(ref):
        missing = sorted(set(ref) - set(got))[:5]
        extra = sorted(set(got) - set(ref))[:5]
        raise ValueError(f"grad_error: parameter names differ: missing {missing}, unexpected {extra}")
    total = math.sqrt(sum(float(np.sum(np.asarray(r, np.float64) ** 2)) for r in ref.values()))
    errs = {}
    for name in sorted(ref):
        r = np.asarray(ref[name], dtype=np.float64)
        g = np.asarray(got[name], dtype=np.float64)
        if g.shape != r.shape:
            raise ValueError(f"grad_error: gradient of {name!r} has shape {g.shape}, expected {r.shape}")
        if not np.all(np.isfinite(g)):
            errs[name] = math.inf
            continue
        den = float(np.linalg.norm(r.ravel())) + floor * total
        num = float(np.linalg.norm((g - r).ravel()))
        errs[name] = 0.0 if num == 0.0 else (num / den if den > 0 else math.inf)
    return errs


def grad_error(got, ref, floor=GRAD_FLOOR):
    """Worst per-parameter relative gradient error (see grad_errors) and the parameter that has it.

    Returns (max error, name of the worst parameter; the first name in sorted order on a tie); (0.0, None) for
    empty dicts. Raises ValueError when the names or a shape differ.
    """
    errs = grad_errors(got, ref, floor)
    worst, worst_name = 0.0, None
    for name, err in errs.items():
        if err > worst or worst_name is None:
            worst, worst_name = err, name
    return worst, worst_name


def kiln_failed(result):
    """True when MindSpore ran the model (result['ms'] == 'ok') and some Kiln stage is not 'ok'.

    'ms_off' (a gradient mismatch where finite differences of MindSpore's own loss support Kiln's gradient, see
    worker_fd) and 'kink' (a mismatch that finite differences cannot decide and that is gone at another input, see
    kink_retry_passes) and 'f64' (Kiln's float32 gradient is the float64 one within the tolerance and the float64
    finite differences side with it, see f64_passes) are not Kiln failures."""
    if result.get("ms") != "ok":
        return False
    return any(result.get("stages", {}).get(s) not in PASSING for s in STAGES)


def _fmt_err(x):
    if x is None:
        return ""
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return f"{x:.1e}"


def _cell(status):
    if status is None:
        return "-"
    if status == "ms_off":
        return "ok (FD)"
    if status == "kink":
        return "ok (kink)"
    if status == "f64":
        return "ok (f64)"
    return "ok" if status == "ok" else "**" + status.split(":")[0] + "**"


def render_table(all_names, results, header=""):
    """Markdown table of the zoo results: one row per name in all_names, "not run" where results has none.

    results: dict name -> result dict as written by run_model (keys ms, size, params, stages, fwd_err, grad_err,
    seconds, note). Returns the Markdown text.
    """
    lines = [header] if header else []
    ran = [n for n in all_names if n in results]
    passed = [n for n in ran if results[n].get("ms") == "ok" and not kiln_failed(results[n])]
    failed = [n for n in ran if kiln_failed(results[n])]
    ms_only = [n for n in ran if results[n].get("ms") != "ok"]
    fd = [n for n in passed if "ms_off" in results[n].get("stages", {}).values()]
    kink = [n for n in passed if "kink" in results[n].get("stages", {}).values()]
    f64 = [n for n in passed if "f64" in results[n].get("stages", {}).values()]
    lines.append(f"{len(all_names)} models in mindcv; {len(ran)} run: {len(passed)} pass every stage ({len(fd)} of "
                 "them with a gradient where MindSpore's own finite differences side with Kiln, 'ok (FD)'; "
                 f"{len(kink)} with a kink at the first input that is gone at another, 'ok (kink)'; "
                 f"{len(f64)} whose float32 gradient is float64's where MindSpore's is not, 'ok (f64)'), "
                 f"{len(failed)} fail on Kiln, {len(ms_only)} did not run on MindSpore 2.10 CPU (or timed out "
                 f"there); {len(all_names) - len(ran)} not run.")
    lines.append("")
    lines.append("| model | input | params | MindSpore | build | load | PyNative fwd | PyNative grad | Graph fwd "
                 "| Graph grad | fwd err (PyN/Graph) | grad err (PyN/Graph) | seconds (MS/Kiln) | note |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in all_names:
        r = results.get(n)
        if r is None:
            lines.append(f"| {n} | | | not run | | | | | | | | | | |")
            continue
        st = r.get("stages", {})
        ms = "ok" if r.get("ms") == "ok" else "**" + str(r.get("ms")).split(":")[0] + "**"
        size = r.get("size")
        size_s = f"{BATCH}x3x{size}x{size}" if size else ""
        params = r.get("params")
        params_s = f"{params / 1e6:.2f}M" if params else ""
        fe = r.get("fwd_err", {})
        ge = r.get("grad_err", {})
        errs_f = "/".join(_fmt_err(fe.get(m)) for m in ("pynative", "graph")) if fe else ""
        errs_g = "/".join(_fmt_err(ge.get(m)) for m in ("pynative", "graph")) if ge else ""
        if ge and r.get("grad_floor", GRAD_FLOOR) != GRAD_FLOOR:
            errs_g += f" (floor {r['grad_floor']:g})"
        secs = r.get("seconds", {})
        secs_s = f"{secs.get('ms', 0):.0f}/{secs.get('kiln', 0):.0f}" if secs else ""
        note = str(r.get("note", "")).replace("|", "\\|").replace("\n", " ")[:300]
        if r.get("calibrated"):
            note = f"calib {r['calibrated']}; " + note
        cells = [_cell(st.get(s)) if r.get("ms") == "ok" else "" for s in STAGES]
        lines.append(f"| {n} | {size_s} | {params_s} | {ms} | " + " | ".join(cells)
                     + f" | {errs_f} | {errs_g} | {secs_s} | {note} |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------------------------
# workers (run in subprocesses; `mindspore` is the real MindSpore in the ms worker, Kiln in the kiln worker)
# ---------------------------------------------------------------------------------------------------------------
def _inputs(size, seed=0):
    """The fixed input x (BATCH, 3, size, size) and loss weights w (BATCH, NUM_CLASSES), float32; seed 0 is the
    input of the table, seeds 1.. the other inputs of the kink retries."""
    rng = np.random.RandomState(1234 + seed)
    x = rng.standard_normal((BATCH, 3, size, size)).astype(np.float32)
    w = rng.standard_normal((BATCH, NUM_CLASSES)).astype(np.float32)
    return x, w


def _logits(out):
    if isinstance(out, (tuple, list)):  # a few models return (logits, aux)
        out = out[0]
    return out


def _make_grad_fn(ms, net, w_t):
    params = net.trainable_params()

    def loss_fn(x):
        y = _logits(net(x))
        return (y * w_t).sum(), y

    return ms.value_and_grad(loss_fn, None, params, has_aux=True), params


def _write(path, obj, pretty=False):
    """Writes `obj` as JSON to `path` atomically; `pretty`: indented with sorted keys (the committed results file,
    so that a rerun's diff shows only what changed)."""
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f, indent=1 if pretty else None, sort_keys=pretty)
    os.replace(path + ".tmp", path)


def _sfx(input_seed):
    return f"_s{input_seed}" if input_seed else ""


def worker_ms(name, workdir, sizes, calibrate=0, input_seed=0):
    """MindSpore side: checkpoint, reference forward and gradients -> workdir/{ref.ckpt, ref.npz, ms.json}.

    With input_seed > 0 (a kink retry) the model loads workdir/ref.ckpt instead of writing it, sizes holds the one
    size of the first run, and the results go to ref_s<seed>.npz and ms_s<seed>.json."""
    import mindspore as ms
    import mindcv
    from mindcv.models.registry import get_pretrained_cfg_value

    out = {"ms": "error", "note": ""}
    js = os.path.join(workdir, f"ms{_sfx(input_seed)}.json")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    np.random.seed(0)
    try:
        net = mindcv.create_model(name, num_classes=NUM_CLASSES, pretrained=False)
        net.set_train(False)
    except Exception as e:  # noqa: BLE001 (any build error is the result being recorded)
        out.update(ms="build error", note=f"{type(e).__name__}: {e}"[:300])
        _write(js, out)
        return
    out["params"] = int(sum(int(np.prod(p.shape)) for p in net.get_parameters()))
    cfg = get_pretrained_cfg_value(name, "input_size")
    cfg_size = int(cfg[-1]) if cfg else 224
    candidates = [s for s in sizes if s < cfg_size] + [cfg_size] + [s for s in (256, 384) if s > cfg_size]
    last_err = ""
    if input_seed:
        ms.load_param_into_net(net, ms.load_checkpoint(os.path.join(workdir, "ref.ckpt")))
        candidates = list(sizes)
    for size in candidates:
        x, w = _inputs(size, input_seed)
        try:
            y = _logits(net(ms.Tensor(x))).asnumpy()
            if y.shape != (BATCH, NUM_CLASSES) or not np.all(np.isfinite(y)):
                raise ValueError(f"output shape {y.shape} or non-finite values")
            break
        except Exception as e:  # noqa: BLE001 (a size the model refuses: try the next)
            last_err = f"{type(e).__name__}: {e}"[:300]
            size = None
    if size is None:
        out.update(ms="forward error", note=last_err)
        _write(js, out)
        return
    out["size"] = size
    if calibrate and not input_seed:
        # BatchNorm moving statistics from training-mode passes (a fixed batch of 8): with the initial statistics
        # (mean 0, variance 1) activations grow through the residual stages, and the float32 gradients of early
        # layers are dominated by rounding on both sides
        xc = np.random.RandomState(99).standard_normal((8, 3, size, size)).astype(np.float32)
        net.set_train(True)
        for _ in range(calibrate):
            net(ms.Tensor(xc))
        net.set_train(False)
        out["calibrated"] = calibrate
    if not input_seed:
        ms.save_checkpoint(net, os.path.join(workdir, "ref.ckpt"))
    grad_fn, params = _make_grad_fn(ms, net, ms.Tensor(w))
    (_, y), grads = grad_fn(ms.Tensor(x))
    arrays = {"x": x, "w": w, "y": y.asnumpy()}
    names = []
    for p, g in zip(params, grads):
        arrays["g:" + p.name] = g.asnumpy()
        names.append(p.name)
    np.savez(os.path.join(workdir, f"ref{_sfx(input_seed)}.npz"), **arrays)
    out.update(ms="ok", trainable=names)
    _write(js, out)


def fd_verdict(fd_slopes, s_ms, s_kiln):
    """Which gradient a finite-difference slope supports, along d = (g_kiln - g_ms) / ||g_kiln - g_ms||.

    fd_slopes: central-difference slopes of the MindSpore loss along d (one per step size); s_ms, s_kiln: the
    directional derivatives <g_ms, d> and <g_kiln, d>. Returns "kiln" when every slope is within 20% of the gap
    |s_kiln - s_ms| of s_kiln, "mindspore" when every slope is that close to s_ms, else "undecided".
    """
    gap = abs(s_kiln - s_ms)
    if gap == 0.0 or not fd_slopes:
        return "undecided"
    if all(abs(f - s_kiln) <= 0.2 * gap for f in fd_slopes):
        return "kiln"
    if all(abs(f - s_ms) <= 0.2 * gap for f in fd_slopes):
        return "mindspore"
    return "undecided"


def kink_retry_passes(retry_stages, mode):
    """True when a kink retry's Kiln results (its stages dict, as kiln_s<seed>.json holds it) pass `mode`
    ('pynative' or 'graph'): the forward within FWD_TOL and the gradients within GRAD_TOL at that input."""
    return retry_stages.get(mode + "_fwd") == "ok" and retry_stages.get(mode + "_grad") == "ok"


def kink_retry_wanted(verdicts):
    """True when the finite-difference verdicts of one mode's gradient mismatch (worker_fd, one per checked
    parameter: "kiln", "mindspore" or "undecided") leave it to the kink retry of step 5: some verdict is
    "undecided" and none is "mindspore" (every verdict "kiln" is 'ms_off' already; a "mindspore" verdict keeps the
    mismatch)."""
    verdicts = set(verdicts)
    return "undecided" in verdicts and "mindspore" not in verdicts


def f64_passes(f64):
    """True when the float64 arbitration of one mode (the dict worker_f64 writes: err_kiln, err_ms, fd) clears
    Kiln: every float64 finite-difference verdict is "kiln", Kiln's float32 gradient is within GRAD_TOL of the
    float64 gradient (grad_error with it as the reference) and MindSpore's float32 gradient is further from it."""
    if not f64 or not f64.get("fd"):
        return False
    if any(v.get("verdict") != "kiln" for v in f64["fd"].values()):
        return False
    ek, em = f64.get("err_kiln"), f64.get("err_ms")
    return ek is not None and em is not None and ek <= GRAD_TOL and em > ek


def worker_fd(name, workdir, mode):
    """MindSpore side, after a gradient mismatch: finite differences of MindSpore's own loss (float32 forward,
    float64 sum) along the direction in which Kiln's and MindSpore's gradients of a parameter differ, to tell which
    of the two gradients is right. Writes workdir/fd_<mode>.json: name -> {fd, s_ms, s_kiln, verdict}."""
    import mindspore as ms
    import mindcv

    ms.set_context(mode=ms.PYNATIVE_MODE)
    net = mindcv.create_model(name, num_classes=NUM_CLASSES, pretrained=False)
    net.set_train(False)
    ms.load_param_into_net(net, ms.load_checkpoint(os.path.join(workdir, "ref.ckpt")))
    ref = np.load(os.path.join(workdir, "ref.npz"))
    kg = np.load(os.path.join(workdir, f"kiln_grads_{mode}.npz"))
    x = ms.Tensor(ref["x"])
    w = ref["w"].astype(np.float64)
    params = {p.name: p for p in net.get_parameters()}

    def loss():
        return float(np.sum(_logits(net(x)).asnumpy().astype(np.float64) * w))

    out = {}
    for pname in kg.files:
        g_ms = ref["g:" + pname].astype(np.float64)
        g_k = kg[pname].astype(np.float64)
        d = g_k - g_ms
        d /= np.linalg.norm(d)
        p = params[pname]
        base = p.asnumpy().copy()
        slopes = []
        for eps in FD_STEPS:
            scale = eps
            vals = []
            for sign in (1.0, -1.0):
                p.set_data(ms.Tensor((base + sign * scale * d).astype(np.float32)))
                vals.append(loss())
            slopes.append((vals[0] - vals[1]) / (2 * scale))
        p.set_data(ms.Tensor(base))
        s_ms, s_k = float(np.sum(g_ms * d)), float(np.sum(g_k * d))
        out[pname] = {"fd": slopes, "s_ms": s_ms, "s_kiln": s_k, "verdict": fd_verdict(slopes, s_ms, s_k)}
    _write(os.path.join(workdir, f"fd_{mode}.json"), out)


def worker_f64(name, workdir, mode):
    """Kiln side (under kiln.compat), step 6 after a gradient mismatch that steps 4-5 left: the model of ref.ckpt
    with every Parameter and the input in float64, in `mode` ('pynative' or 'graph'). Computes Kiln's float32
    gradients (all trainable parameters) and the float64 ones (g64), the errors of Kiln's and MindSpore's float32
    gradients with g64 as the reference (grad_error), and, for each parameter of kiln_grads_<mode>.npz, central
    differences of the float64 loss along d = (g_kiln - g_ms) / ||g_kiln - g_ms|| (FD64_STEPS) with fd_verdict.
    Writes workdir/f64_<mode>.json: {err_kiln, err_ms, worst_kiln, worst_ms, fd: name -> {fd, s_ms, s_kiln,
    verdict}}, or {error: message} when the model does not run in float64."""
    import mindspore as ms
    import mindcv

    out_path = os.path.join(workdir, f"f64_{mode}.json")
    ref = np.load(os.path.join(workdir, "ref.npz"))
    kg = np.load(os.path.join(workdir, f"kiln_grads_{mode}.npz"))
    g_ms = {k[2:]: ref[k] for k in ref.files if k.startswith("g:")}
    ms.set_context(mode=ms.PYNATIVE_MODE if mode == "pynative" else ms.GRAPH_MODE)
    ms.set_seed(0)
    net = mindcv.create_model(name, num_classes=NUM_CLASSES, pretrained=False)
    net.set_train(False)
    ms.load_param_into_net(net, ms.load_checkpoint(os.path.join(workdir, "ref.ckpt")))

    def grads(dtype):
        grad_fn, params = _make_grad_fn(ms, net, ms.Tensor(ref["w"].astype(dtype)))
        if mode == "graph":
            grad_fn = ms.jit(grad_fn)
        _, gs = grad_fn(ms.Tensor(ref["x"].astype(dtype)))
        return {p.name: g.asnumpy().astype(np.float64) for p, g in zip(params, gs)}

    try:
        g32 = grads(np.float32)
        base32 = {p.name: p.asnumpy() for p in net.get_parameters()}
        for p in net.get_parameters():
            p.set_dtype(ms.float64)
            p.set_data(ms.Tensor(base32[p.name].astype(np.float64)))
        g64 = grads(np.float64)
        params = {p.name: p for p in net.get_parameters()}
        x64 = ms.Tensor(ref["x"].astype(np.float64))
        w64 = ref["w"].astype(np.float64)

        def loss():
            return float(np.sum(_logits(net(x64)).asnumpy().astype(np.float64) * w64))

        res = {}
        res["err_kiln"], res["worst_kiln"] = grad_error(g32, g64)
        res["err_ms"], res["worst_ms"] = grad_error(g_ms, g64)
        res["fd"] = {}
        for pname in kg.files:
            gm = g_ms[pname].astype(np.float64)
            gk = kg[pname].astype(np.float64)
            d = gk - gm
            d /= np.linalg.norm(d)
            p = params[pname]
            base = base32[pname].astype(np.float64)
            slopes = []
            for eps in FD64_STEPS:
                vals = []
                for sign in (1.0, -1.0):
                    p.set_data(ms.Tensor(base + sign * eps * d))
                    vals.append(loss())
                slopes.append((vals[0] - vals[1]) / (2 * eps))
            p.set_data(ms.Tensor(base))
            s_ms, s_k = float(np.sum(gm * d)), float(np.sum(gk * d))
            res["fd"][pname] = {"fd": slopes, "s_ms": s_ms, "s_kiln": s_k, "verdict": fd_verdict(slopes, s_ms, s_k)}
    except Exception as e:  # noqa: BLE001 (recorded: the model does not run in float64 on Kiln)
        res = {"error": f"{type(e).__name__}: {e}"[:300]}
    _write(out_path, res)


def worker_kiln(name, workdir, input_seed=0):
    """Kiln side (under kiln.compat): build, load ref.ckpt, forward + grads in both modes -> workdir/kiln.json
    (kiln_s<seed>.json against ref_s<seed>.npz for a kink retry)."""
    import mindspore as ms
    import mindcv

    sfx = _sfx(input_seed)
    js = os.path.join(workdir, f"kiln{sfx}.json")
    ref = np.load(os.path.join(workdir, f"ref{sfx}.npz"))
    x, w, y_ref = ref["x"], ref["w"], ref["y"]
    g_ref = {k[2:]: ref[k] for k in ref.files if k.startswith("g:")}
    res = {"stages": {}, "fwd_err": {}, "grad_err": {}, "grad_floor": GRAD_FLOOR, "note": ""}

    def fail(stage, e):
        res["stages"][stage] = "error"
        msg = f"{stage}: {type(e).__name__}: {e}"[:300]
        res["note"] = (res["note"] + "; " if res["note"] else "") + msg
        _write(js, res)

    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    try:
        net = mindcv.create_model(name, num_classes=NUM_CLASSES, pretrained=False)
        net.set_train(False)
        res["stages"]["build"] = "ok"
    except Exception as e:  # noqa: BLE001 (recorded as the stage's failure)
        return fail("build", e)
    _write(js, res)
    try:
        pd = ms.load_checkpoint(os.path.join(workdir, "ref.ckpt"))
        not_loaded, unused = ms.load_param_into_net(net, pd)
        if not_loaded or unused:
            raise RuntimeError(f"{len(not_loaded)} net parameters not loaded {list(not_loaded)[:4]}, "
                               f"{len(unused)} checkpoint entries unused {list(unused)[:4]}")
        res["stages"]["load"] = "ok"
    except Exception as e:  # noqa: BLE001 (recorded as the stage's failure)
        return fail("load", e)
    _write(js, res)
    for mode in ("pynative", "graph"):
        ms.set_context(mode=ms.PYNATIVE_MODE if mode == "pynative" else ms.GRAPH_MODE)
        try:
            y = _logits(net(ms.Tensor(x))).asnumpy()
            err = forward_error(y, y_ref)
            res["fwd_err"][mode] = err
            res["stages"][mode + "_fwd"] = "ok" if err <= FWD_TOL else "mismatch"
        except Exception as e:  # noqa: BLE001 (recorded as the stage's failure)
            fail(mode + "_fwd", e)
        _write(js, res)
        try:
            grad_fn, params = _make_grad_fn(ms, net, ms.Tensor(w))
            if mode == "graph":
                grad_fn = ms.jit(grad_fn)
            (_, y), grads = grad_fn(ms.Tensor(x))
            got = {p.name: g.asnumpy() for p, g in zip(params, grads)}
            err, worst = grad_error(got, g_ref)
            res["grad_err"][mode] = err
            res["stages"][mode + "_grad"] = "ok" if err <= GRAD_TOL else "mismatch"
            if err > GRAD_TOL:
                res["note"] = (res["note"] + "; " if res["note"] else "") + f"{mode} worst grad: {worst}"
                bad = sorted(((e, n) for n, e in grad_errors(got, g_ref).items()), reverse=True)[:FD_PARAMS]
                np.savez(os.path.join(workdir, f"kiln_grads_{mode}{sfx}.npz"),
                         **{n: got[n] for e, n in bad if e > GRAD_TOL})
        except Exception as e:  # noqa: BLE001 (recorded as the stage's failure)
            fail(mode + "_grad", e)
        _write(js, res)


# ---------------------------------------------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------------------------------------------
def _env(mindcv_path, extra=()):
    env = dict(os.environ)
    parts = [mindcv_path, *extra]
    if env.get("PYTHONPATH"):
        parts.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(parts)
    env.setdefault("GLOG_v", "3")  # MindSpore: errors only
    return env


def _run(cmd, env, timeout):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, env=env, timeout=timeout, capture_output=True, text=True)
        return p.returncode, (p.stderr or "")[-600:], time.time() - t0
    except subprocess.TimeoutExpired:
        return "timeout", "", time.time() - t0


def _read(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def run_model(name, args):
    """Runs both sides for one model; returns its result dict (see render_table)."""
    wd = tempfile.mkdtemp(prefix=f"mindcv_zoo_{name}_")
    me = os.path.abspath(__file__)
    sizes = ",".join(str(s) for s in args.sizes)
    ms_env = _env(args.mindcv, _ms_extra(args))
    rc, err, t_ms = _run([args.ms_python, me, "--worker", "ms", "--model", name, "--workdir", wd, "--sizes", sizes,
                          "--calibrate", str(args.calibrate)], ms_env, args.timeout)
    r = _read(os.path.join(wd, "ms.json")) or {}
    tail = "" if rc in (0, "timeout") else (err.strip().splitlines() or [""])[-1]
    result = {"ms": r.get("ms", "timeout" if rc == "timeout" else "crash"), "size": r.get("size"),
              "params": r.get("params"), "calibrated": r.get("calibrated", 0), "stages": {}, "seconds": {"ms": t_ms, "kiln": 0.0},
              "note": r.get("note") or tail}
    if result["ms"] != "ok":
        return result
    kiln_env = _env(args.mindcv, [os.path.join(ROOT, "python")])
    rc, err, t_k = _run([args.kiln_python, "-m", "kiln.compat", me, "--worker", "kiln", "--model", name,
                         "--workdir", wd], kiln_env, args.timeout)
    k = _read(os.path.join(wd, "kiln.json")) or {"stages": {}, "note": ""}
    result["seconds"]["kiln"] = t_k
    result["stages"] = k.get("stages", {})
    result["fwd_err"] = k.get("fwd_err", {})
    result["grad_err"] = k.get("grad_err", {})
    result["grad_floor"] = k.get("grad_floor")
    note = k.get("note", "")
    missing = [s for s in STAGES if s not in result["stages"]]
    if missing:
        why = "timeout" if rc == "timeout" else "crash"
        for s in missing:
            result["stages"][s] = why
        tail = "" if rc == "timeout" else (err.strip().splitlines() or [""])[-1]
        note = (note + "; " if note else "") + f"{why} at {missing[0]} {tail}".strip()
    for mode in ("pynative", "graph"):
        if result["stages"].get(mode + "_grad") != "mismatch" or not os.path.exists(
                os.path.join(wd, f"kiln_grads_{mode}.npz")):
            continue
        _run([args.ms_python, me, "--worker", "fd", "--model", name, "--workdir", wd, "--mode", mode], ms_env,
             args.timeout)
        fd = _read(os.path.join(wd, f"fd_{mode}.json"))
        if not fd:
            continue
        result.setdefault("fd", {})[mode] = fd
        verdicts = {v["verdict"] for v in fd.values()}
        if verdicts == {"kiln"}:
            result["stages"][mode + "_grad"] = "ms_off"
        note = (note + "; " if note else "") + f"{mode} FD: " + ", ".join(
            f"{k} {v['verdict']} (fd {v['fd'][-1]:.4g}, ms {v['s_ms']:.4g}, kiln {v['s_kiln']:.4g})"
            for k, v in fd.items())
    # Step 5 of the method: mismatches that finite differences cannot decide get other inputs.
    undecided = [m for m in ("pynative", "graph") if result["stages"].get(m + "_grad") == "mismatch"
                 and kink_retry_wanted(v["verdict"] for v in result.get("fd", {}).get(m, {}).values())]
    for seed in range(1, args.kink_retries + 1):
        if not undecided:
            break
        _run([args.ms_python, me, "--worker", "ms", "--model", name, "--workdir", wd, "--sizes",
              str(result["size"]), "--input-seed", str(seed)], ms_env, args.timeout)
        if (_read(os.path.join(wd, f"ms_s{seed}.json")) or {}).get("ms") != "ok":
            continue
        _run([args.kiln_python, "-m", "kiln.compat", me, "--worker", "kiln", "--model", name, "--workdir", wd,
              "--input-seed", str(seed)], kiln_env, args.timeout)
        k = _read(os.path.join(wd, f"kiln_s{seed}.json")) or {}
        result.setdefault("kink", {})[str(seed)] = k.get("grad_err", {})
        for m in list(undecided):
            if kink_retry_passes(k.get("stages", {}), m):
                result["stages"][m + "_grad"] = "kink"
                undecided.remove(m)
                note = (note + "; " if note else "") + (
                    f"{m}: at input seed {seed} fwd err {k['fwd_err'][m]:.1e}, grad err {k['grad_err'][m]:.1e}")
    # Step 6: what is still a mismatch is arbitrated in float64 on Kiln.
    for m in ("pynative", "graph"):
        if result["stages"].get(m + "_grad") != "mismatch" or not os.path.exists(
                os.path.join(wd, f"kiln_grads_{m}.npz")):
            continue
        _run([args.kiln_python, "-m", "kiln.compat", me, "--worker", "f64", "--model", name, "--workdir", wd,
              "--mode", m], kiln_env, args.timeout)
        f64 = _read(os.path.join(wd, f"f64_{m}.json"))
        if not f64:
            continue
        result.setdefault("f64", {})[m] = f64
        if "error" in f64:
            note = (note + "; " if note else "") + f"{m} f64: {f64['error']}"
            continue
        if f64_passes(f64):
            result["stages"][m + "_grad"] = "f64"
        note = (note + "; " if note else "") + (
            f"{m} f64: kiln32 {f64['err_kiln']:.1e}, ms32 {f64['err_ms']:.1e} from float64; fd64 " + ", ".join(
                f"{k} {v['verdict']}" for k, v in f64["fd"].items()))
    result["note"] = note
    if not args.keep:
        shutil.rmtree(wd, ignore_errors=True)
    else:
        result["workdir"] = wd
    return result


def _ms_extra(args):
    """PYTHONPATH entries for the MindSpore side: --ms-extra-path, plus a folder that links this interpreter's
    tqdm (mindcv imports tqdm; the MindSpore venv may lack it and must not be installed into)."""
    extra = list(args.ms_extra_path)
    if getattr(args, "_shim", None) is None:
        args._shim = ""
        import importlib.util
        spec = importlib.util.find_spec("tqdm")
        if spec is not None and spec.submodule_search_locations:
            shim = tempfile.mkdtemp(prefix="mindcv_zoo_shim_")
            os.symlink(list(spec.submodule_search_locations)[0], os.path.join(shim, "tqdm"))
            args._shim = shim
    if args._shim:
        extra.append(args._shim)
    return extra


NOTES_MARK = "\n## Notes\n"


def _kept_notes(path):
    """The hand-written '## Notes' section at the end of an existing table file ('' when there is none): it
    survives the regeneration of the table."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return ""
    i = text.find(NOTES_MARK)
    return text[i:] if i >= 0 else ""


def _list_models(args):
    code = "import mindcv, json; print(json.dumps(mindcv.list_models()))"
    p = subprocess.run([args.ms_python, "-c", code], env=_env(args.mindcv, _ms_extra(args)), capture_output=True,
                       text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"mindcv.list_models() failed on MindSpore: {p.stderr[-500:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


HEADER = """# mindcv model zoo on Kiln

Generated by `tools/mindcv_zoo.py` (see its docstring for the method): each model of
[mindcv](https://github.com/mindspore-lab/mindcv) (sources at commit {commit}) is built with `num_classes=10,
pretrained=False` on MindSpore 2.10 (CPU), which writes its checkpoint, logits and gradients of
`sum(logits * w)` for a fixed input (batch 2, eval mode: BatchNorm uses moving statistics). Kiln (through
`kiln.compat`) builds the same model, loads that checkpoint (every parameter, none skipped) and must match the
forward within {fwd} (max abs error / max abs logit) and every parameter's gradient within {grad}
(||diff|| / ||ref||), in PyNative and in Graph mode. "ok (FD)": Kiln's gradient differs from MindSpore's, and
central finite differences of MindSpore's own loss (float32, along the direction of the difference, steps 0.01 and
0.003) agree with Kiln's gradient, not MindSpore's (the note gives the slopes: MindSpore's autodiff is off there).
"ok (kink)": the gradients differ at the table's input, finite differences cannot decide (their slope depends on
the step: a kink of the loss, such as a ReLU input within float32 rounding of 0 that the two frameworks round to
different sides), and at another input (the note names its seed; same checkpoint) forward and gradients match
within the limits above. "ok (f64)": a mismatch that neither decides, arbitrated in float64 on Kiln (same
checkpoint and input, every Parameter in float64): finite differences of the float64 loss side with Kiln's
gradient, and Kiln's float32 gradient is within {grad} of the float64 one while MindSpore's is further (the note
gives both errors). "input" is the smallest of 64, 96, 128, 160, 224 (or the
model's configured size) that MindSpore's forward accepts. BatchNorm keeps its initial moving statistics (mean 0,
variance 1; `--calibrate N` sets them from N training-mode passes first; "calib" in the note when used). "not run" means no result yet (the machine this table
was made on has 2 shared cores: the large models were not run); nothing is marked "ok" that was not run.
Regenerate: `.venv/bin/python tools/mindcv_zoo.py --only NAME ...` (results accumulate in docs/mindcv_zoo.json).

"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", help="model names (default: every model of mindcv.list_models())")
    ap.add_argument("--mindcv", default=os.environ.get("MINDCV_SRC", "/tmp/mindcv_src"),
                    help="mindcv source checkout (put on PYTHONPATH)")
    ap.add_argument("--ms-python", default="/work/ms-venv/bin/python", help="Python with MindSpore 2.10")
    ap.add_argument("--ms-extra-path", nargs="*", default=[],
                    help="extra PYTHONPATH entries for the MindSpore side (e.g. a folder holding tqdm)")
    ap.add_argument("--kiln-python", default=sys.executable, help="Python with Kiln's dependencies")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per model and side")
    ap.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="image sizes tried, ascending")
    ap.add_argument("--kink-retries", type=int, default=KINK_RETRIES,
                    help="other inputs tried after a gradient mismatch that finite differences cannot decide "
                         "(step 5 of the method; 0: none)")
    ap.add_argument("--input-seed", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--calibrate", type=int, default=0,
                    help="training-mode passes on MindSpore that set BatchNorm's moving statistics before the "
                         "checkpoint is written (0: the initial statistics)")
    ap.add_argument("--results", default=os.path.join(ROOT, "docs", "mindcv_zoo.json"))
    ap.add_argument("--table", default=os.path.join(ROOT, "docs", "mindcv_zoo.md"))
    ap.add_argument("--no-table", action="store_true", help="do not update --results and --table")
    ap.add_argument("--table-only", action="store_true", help="only rewrite --table from the stored --results")
    ap.add_argument("--json", action="store_true", help="print this run's results as JSON")
    ap.add_argument("--keep", action="store_true", help="keep each model's work folder")
    ap.add_argument("--worker", choices=("ms", "kiln", "fd", "f64"), help=argparse.SUPPRESS)
    ap.add_argument("--mode", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--workdir", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if isinstance(args.sizes, str):
        args.sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.worker == "ms":
        worker_ms(args.model, args.workdir, args.sizes, args.calibrate, args.input_seed)
        return 0
    if args.worker == "kiln":
        worker_kiln(args.model, args.workdir, args.input_seed)
        return 0
    if args.worker == "fd":
        worker_fd(args.model, args.workdir, args.mode)
        return 0
    if args.worker == "f64":
        worker_f64(args.model, args.workdir, args.mode)
        return 0

    all_names = _list_models(args)
    names = [] if args.table_only else (args.only if args.only else all_names)
    unknown = [n for n in names if n not in all_names]
    if unknown:
        ap.error(f"not mindcv models: {unknown}")
    results = {}
    for n in names:
        r = run_model(n, args)
        results[n] = r
        st = " ".join(f"{s}={r['stages'].get(s, '-')}" for s in STAGES) if r["ms"] == "ok" else ""
        print(f"{n}: ms={r['ms']} size={r.get('size')} {st} fwd={r.get('fwd_err')} grad={r.get('grad_err')} "
              f"t={r['seconds']['ms']:.0f}+{r['seconds']['kiln']:.0f}s {r.get('note', '')}", file=sys.stderr,
              flush=True)
        if not args.no_table:
            stored = _read(args.results) or {}
            stored[n] = r
            _write(args.results, stored, pretty=True)
    if not args.no_table or args.table_only:
        stored = _read(args.results) or {}
        commit = subprocess.run(["git", "-C", args.mindcv, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip() or "unknown"
        header = HEADER.format(commit=commit, fwd=FWD_TOL, grad=GRAD_TOL)
        notes = _kept_notes(args.table)  # (read before the file is truncated)
        with open(args.table, "w") as f:
            f.write(render_table(all_names, stored, header) + notes)
    if args.json:
        print(json.dumps(results, indent=1))
    return 1 if any(kiln_failed(r) for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())

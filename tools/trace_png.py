"""Draws a window of a kiln.profiler trace (trace_view.json) as a PNG timeline, one band per track, the nested
slices of a thread stacked by depth: a picture of what a trace viewer (https://ui.perfetto.dev) shows, for docs.

    .venv/bin/python tools/trace_png.py TRACE.json OUT.png [--steps 1 3]

--steps A B: the window from the start of ProfilerStep#A to the end of ProfilerStep#B (default: the whole trace).
Needs matplotlib. Raises SystemExit with a message when the trace holds no such steps.
"""
import argparse
import json
import zlib


def _depths(events):
    """The nesting depth of each "X" event of one track (the events sorted by start)."""
    stack, out = [], []
    for e in events:
        while stack and stack[-1] <= e["ts"] + 1e-3:  # the file keeps 3 decimals of µs
            stack.pop()
        out.append(len(stack))
        stack.append(e["ts"] + e["dur"])
    return out


def render(trace_path, png_path, steps=None):
    """Writes png_path from trace_path (see the module docstring). Returns the number of slices drawn."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    with open(trace_path) as fh:
        events = json.load(fh)["traceEvents"]
    names = {}
    for e in events:
        if e["ph"] == "M" and e["name"] in ("process_name", "thread_name"):
            names[(e["name"], e["pid"], e["tid"] if e["name"] == "thread_name" else None)] = e["args"]["name"]
    xs = [e for e in events if e["ph"] == "X"]
    t0, t1 = min(e["ts"] for e in xs), max(e["ts"] + e["dur"] for e in xs)
    if steps is not None:
        by = {e["name"]: e for e in xs if e.get("cat") == "step"}
        a, b = by.get(f"ProfilerStep#{steps[0]}"), by.get(f"ProfilerStep#{steps[1]}")
        if a is None or b is None:
            raise SystemExit(f"trace_png: the trace has no ProfilerStep#{steps[0]} .. #{steps[1]}")
        t0, t1 = a["ts"], b["ts"] + b["dur"]
    xs = [e for e in xs if e["ts"] < t1 and e["ts"] + e["dur"] > t0]
    tracks = {}
    for e in xs:
        tracks.setdefault((e["pid"], e["tid"]), []).append(e)
    order = sorted(tracks, key=lambda k: ({"step": 0, "mstx": 1, "kernel": 3}.get(tracks[k][0].get("cat"), 2), k))
    rows, y, labels = [], 0, []
    for key in order:
        evs = sorted(tracks[key], key=lambda e: (e["ts"], -e["dur"]))
        depth = _depths(evs)
        n = max(depth) + 1
        label = names.get(("thread_name", key[0], key[1])) or names.get(("process_name", key[0], None), str(key))
        labels.append((y + n / 2, f"{names.get(('process_name', key[0], None), '')}\n{label}"))
        rows.extend((e, y + d) for e, d in zip(evs, depth))
        y += n + 0.5
    colours = plt.get_cmap("tab20")
    fig, ax = plt.subplots(figsize=(16, 0.45 * y + 1.5))
    scale = 1e3  # µs -> ms
    for e, row in rows:
        s, w = (max(e["ts"], t0) - t0) / scale, (min(e["ts"] + e["dur"], t1) - max(e["ts"], t0)) / scale
        ax.broken_barh([(s, w)], (row, 0.9), facecolors=colours(zlib.crc32(e["name"].encode()) % 20), edgecolor="white",
                       linewidth=0.3)
        if w > (t1 - t0) / scale / 40:
            ax.text(s + w / 2, row + 0.45, e["name"], ha="center", va="center", fontsize=6, clip_on=True)
    ax.set_ylim(y, -0.5)
    ax.set_yticks([p for p, _ in labels], [t for _, t in labels], fontsize=7)
    ax.set_xlim(0, (t1 - t0) / scale)
    ax.set_xlabel("ms")
    ax.set_title(f"{trace_path.split('/')[-1]}: {len(rows)} slices")
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    plt.close(fig)
    return len(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("png")
    ap.add_argument("--steps", type=int, nargs=2, default=None, metavar=("FIRST", "LAST"))
    args = ap.parse_args()
    print(f"{render(args.trace, args.png, args.steps)} slices -> {args.png}")


if __name__ == "__main__":
    main()

"""Plots drawn from real runs, for the notebooks (who ran where, when, is
minicb.tools.course.schedule's, which minicb demo draws too)."""
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator


# ANCHOR: occupancy
def plot_occupancy(run, title, ax=None):
    """Batch rows (y) against decode steps (x): dark = the row produced a
    token for a live request, white = the row was computed for nothing."""
    grid = run.occupancy_grid("decode")
    if ax is None:
        _, ax = plt.subplots(figsize=(min(14, 2 + grid.shape[0] * 0.12),
                                      0.5 + grid.shape[1] * 0.3))
    shown = np.ma.masked_invalid(grid.T)
    ax.imshow(shown, aspect="auto", cmap="Blues", vmin=0, vmax=1.2,
              interpolation="nearest")
    ax.set_xlabel("decode step")
    ax.set_ylabel("batch row")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))     # a row is a whole row
    for step in batch_starts(run)[1:]:
        ax.axvline(step - 0.5, color="black", linewidth=1)
    wasted = int((grid == 0).sum())
    ax.set_title(f"{title}: {wasted} of {int(np.isfinite(grid).sum())} "
                 "row-steps wasted")
    return ax
# ANCHOR_END: occupancy


def batch_starts(run):
    """Decode-step indices at which a new batch began (right after a prefill)."""
    starts, decode_index, after_prefill = [], 0, False
    for step in run.steps:
        if step.kind == "prefill":
            after_prefill = True
            continue
        if after_prefill:
            starts.append(decode_index)
        decode_index, after_prefill = decode_index + 1, False
    return starts




def plot_decode_roofline(measurements: dict, context: int):
    """The paged engine's decode step against its roofline, a panel per model
    shape, from {"shape | mode": rows of decode_step.decode_roofline}, the form
    the figure's sidecar keeps them in: so the figure can be redrawn from it."""
    shapes = list(dict.fromkeys(key.split(" | ")[0] for key in measurements))
    fig, axes = plt.subplots(len(shapes), 1, figsize=(6, 3.6 * len(shapes)), squeeze=False)
    for ax, shape in zip(axes[:, 0], shapes):
        plain = measurements[f"{shape} | paged"]
        batches = [r["batch"] for r in plain]
        ax.plot(batches, [r["step_ms"] for r in plain], "o-", label="decode step, stage 5")
        # The other modes (async scheduling, fused ops) can lie on top of each other: each
        # gets its own marker and dash, and open markers, so that one never hides another.
        others = [key for key in measurements if key.startswith(f"{shape} | paged, ")]
        styles = [("s", "--", "tab:orange"), ("D", "-.", "tab:green"), ("v", ":", "tab:purple"),
                  ("P", "--", "tab:olive")]
        for key, (marker, dash, color) in zip(others, styles):
            mode = key.removeprefix(f"{shape} | paged, ")
            ax.plot(batches, [r["step_ms"] for r in measurements[key]], marker=marker, linestyle=dash,
                    color=color, markerfacecolor="none", label=f"decode step, {mode}")
        ax.plot(batches, [r["roofline_ms"] for r in plain], "k--", label="(weights + K/V) / copy bandwidth")
        ax.plot(batches, [r["forward_ms"] for r in plain], "^-", color="tab:cyan", label="forward pass on the device")
        ax.plot(batches, [r["host_ms"] for r in plain], "s:", color="tab:red", label="host: schedule + inputs")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("running requests (batch)")
        ax.set_ylabel("ms")
        ax.set_title(f"{shape}, context {context}")
    fig.tight_layout(h_pad=1.5)
    # The key under the last panel, after the layout is set: above it, it would cover the next panel.
    axes[-1, 0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize=8.5)
    return fig


def plot_throughput_vs_spread(measurements: list, engines: list, full: bool):
    """Output and total tokens per second against the output cap: for each engine and
    each peer, the median and range of the rounds, from the form the figure's sidecar
    keeps them in (a round: {cap: {name: RunMetrics.summary()}}), so the figure can be
    redrawn from it. On a log scale: the peers run at a hundredth of the engines'
    rate, and on a linear one they would lie on top of each other at zero."""
    rounds = [{int(cap): runs for cap, runs in r.items()} for r in measurements]
    caps = sorted(rounds[0])
    fig, axes = plt.subplots(2, 1, figsize=(6.5, 6.5))
    for ax, metric, label in [(axes[0], "output_tok_s", "output tok/s"),
                              (axes[1], "total_tok_s", "total tok/s (prompt + output)")]:
        for name in rounds[0][caps[0]]:
            values = np.array([[r[cap][name][metric] for cap in caps] for r in rounds])
            middle = np.median(values, axis=0)
            ax.errorbar(caps, middle, yerr=[middle - values.min(axis=0), values.max(axis=0) - middle],
                        capsize=3, fmt="o-" if name in engines else "s--", label=name)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(caps, [str(c) for c in caps])
        ax.set_xlabel("output length cap (before scaling)")
        ax.set_ylabel(label)
    axes[0].legend(loc="upper left", bbox_to_anchor=(1, 1))
    budget = "OPT-13B's KV budget on an A100 40 GB" if full else "one KV budget"
    runs = "one run" if len(rounds) == 1 else f"median and range of {len(rounds)} runs"
    fig.suptitle(f"Throughput as output lengths spread (Anyscale workload, {budget},\n"
                 f"everything waiting; {runs})")
    return fig


def plot_kv_use(kv_utilization: dict):
    """Chapter 2: the share of reserved KV slots that held a token, both counts summed
    over steps, for each engine; the legend under the axis, which the bars fill."""
    fig, ax = plt.subplots(figsize=(6, 3))
    names, used = list(kv_utilization), list(kv_utilization.values())
    ax.barh(names, used, label="holding a token")
    ax.barh(names, [1 - u for u in used], left=used, color="lightgray", label="reserved, empty")
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of reserved KV slots, summed over steps")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=2)
    return fig


def plot_kv_bytes(traffic: list, batch: int, context: int):
    """Chapter 8: the bytes a paged decode step's grid reads, one head per program and
    packed, against what must move, for 32, 8 and 4 KV heads; computed, not measured."""
    by = {(t["kv_heads"], t["layout"]): t for t in traffic}
    kv_heads = sorted({t["kv_heads"] for t in traffic}, reverse=True)
    layouts = list(dict.fromkeys(t["layout"] for t in traffic))         # one head per program, then packed
    fig, ax = plt.subplots(figsize=(7, 3.8))
    x = np.arange(len(kv_heads))
    for offset, layout in zip((-0.2, 0.2), layouts):
        kind = "one head per program" if "one head per program" in layout else "packed"
        ax.bar(x + offset, [by[kv, layout]["grid_gb"] for kv in kv_heads], width=0.4, label=f"grid reads: {kind}")
    ax.plot(x, [by[kv, layouts[-1]]["required_gb"] for kv in kv_heads], "k_", markersize=40, label="must move")
    ax.set_xticks(x, [f"{kv} KV heads (GQA {32 // kv})" for kv in kv_heads])
    ax.set_ylabel("GB per layer")
    ax.set_title(f"Paged decode, 32 query heads x 128, bf16, batch {batch} x {context} tokens, blocks of 16\n"
                 "(computed from the kernels' tiles: arithmetic, no machine involved)", fontsize=9)
    # the marker drawn at a third of its size in the legend, so it stays beside its label
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3, markerscale=0.35)
    return fig

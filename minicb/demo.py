"""``python -m minicb demo``: every stage on one small workload, side by side."""
from pathlib import Path

import matplotlib

matplotlib.use("Agg")    # the demo only writes files; it never opens a window

from .checkpoint import make_tiny_checkpoint  # noqa: E402
from .figures import full_scale, save_figure  # noqa: E402
from .llm import LLM  # noqa: E402
from .metrics import format_table  # noqa: E402
from .plots import plot_schedule  # noqa: E402
from .stages import STAGES  # noqa: E402
from .workload import synthetic_workload  # noqa: E402


# ANCHOR: demo
ENGINES = list(STAGES)


def run_demo(checkpoint_dir="scratch/tiny-llama", num_requests=16, max_batch_size=8, seed=0):
    """Returns {engine name: RunMetrics} and the path of the figure it wrote."""
    import matplotlib.pyplot as plt

    path = make_tiny_checkpoint(checkpoint_dir, arch="llama", seed=seed)
    workload = synthetic_workload(num_requests, prompt_len=(4, 48), output_len=(4, 64), seed=seed)
    runs = {}
    for engine in ENGINES:
        # The same KV memory for stages 4 and 5: max_batch_size slots of 256 tokens, or as many
        # blocks of 16; stage 5 may run as many requests as fit in it.
        seqs = num_requests if engine == "paged" else max_batch_size
        llm = LLM(path, engine=engine, max_batch_size=max_batch_size, max_num_seqs=seqs, max_model_len=256,
                  num_blocks=max_batch_size * 256 // 16)
        llm.generate(workload.prompts, workload.params, use_tqdm=True)
        runs[engine] = llm.last_run
    fig, axes = plt.subplots(2, 1, figsize=(12, 2 + 0.6 * max_batch_size))
    plot_schedule(runs["static"], f"static batching, max_batch_size={max_batch_size}", ax=axes[0])
    plot_schedule(runs["continuous"], f"continuous batching, max_num_seqs={max_batch_size}", ax=axes[1])
    fig.tight_layout()
    figure = save_figure(fig, "demo_schedules",
                         dict(model="tiny llama (random weights)", checkpoint=str(path),
                              workload=workload.description, max_batch_size=max_batch_size))
    return runs, figure
# ANCHOR_END: demo


def main(args):
    runs, figure = run_demo(args.checkpoint_dir, args.requests, args.max_batch_size, args.seed)
    print()
    print(format_table(runs))
    single, static, continuous, paged = runs["single"], runs["static"], runs["continuous"], runs["paged"]
    print(f"\nstatic batching: {static.num_steps} forward steps instead of {single.num_steps}, but "
          f"{1 - static.occupancy:.0%} of its batch rows were computed for requests that had already finished.")
    print(f"continuous batching: {continuous.num_steps} steps, {continuous.occupancy:.0%} of its slots busy, "
          f"{continuous.output_throughput / static.output_throughput:.1f}x static's output tok/s; "
          f"yet only {continuous.kv_utilization:.0%} of the KV slots it reserves hold a token.")
    print(f"paged: the same KV memory in blocks of 16 holds up to {paged.max_running()} requests at once "
          f"(continuous: {continuous.max_running()}), {paged.kv_utilization:.0%} of its reserved slots holding a token.")
    where = "figures/" if full_scale() else "scratch/ (a CPU-scale run; figures/ is for GPU runs)"
    print(f"\nfigure: {Path(figure).resolve()}\n  written to {where}")

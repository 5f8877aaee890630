"""``python -m minicb demo``: stages 1 and 2 on one small workload, side by side."""
from pathlib import Path

import matplotlib

matplotlib.use("Agg")    # the demo only writes files; it never opens a window

from .checkpoint import make_tiny_checkpoint  # noqa: E402
from .figures import full_scale, save_figure  # noqa: E402
from .llm import LLM  # noqa: E402
from .metrics import format_table  # noqa: E402
from .plots import plot_occupancy  # noqa: E402
from .workload import synthetic_workload  # noqa: E402


# ANCHOR: demo
def run_demo(checkpoint_dir="scratch/tiny-llama", num_requests=16, max_batch_size=8, seed=0):
    """Returns {engine name: RunMetrics} and the path of the figure it wrote."""
    path = make_tiny_checkpoint(checkpoint_dir, arch="llama", seed=seed)
    workload = synthetic_workload(num_requests, prompt_len=(4, 48), output_len=(4, 64), seed=seed)
    runs = {}
    for engine in ["single", "static"]:
        llm = LLM(path, engine=engine, max_batch_size=max_batch_size)
        llm.generate(workload.prompts, workload.params, use_tqdm=True)
        runs[engine] = llm.last_run
    ax = plot_occupancy(runs["static"], f"static batching, max_batch_size={max_batch_size}")
    figure = save_figure(ax.figure, "demo_static_occupancy",
                         dict(model="tiny llama (random weights)", checkpoint=str(path),
                              workload=workload.description, max_batch_size=max_batch_size))
    return runs, figure
# ANCHOR_END: demo


def main(args):
    runs, figure = run_demo(args.checkpoint_dir, args.requests, args.max_batch_size, args.seed)
    print()
    print(format_table(runs))
    single, static = runs["single"], runs["static"]
    print(f"\nstatic batching: {static.output_throughput / single.output_throughput:.1f}x the output "
          f"tok/s of one-at-a-time, in {static.num_steps} forward steps instead of {single.num_steps};")
    print(f"{1 - static.occupancy:.0%} of its batch rows were computed for requests that had already "
          f"finished, and {1 - static.kv_utilization:.0%} of its reserved KV slots held no token.")
    where = "figures/" if full_scale() else "scratch/ (a CPU-scale run; figures/ is for GPU runs)"
    print(f"\nfigure: {Path(figure).resolve()}\n  written to {where}")

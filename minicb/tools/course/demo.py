"""``python -m minicb demo``: a real model answers through every stage, side by side,
and a figure of who ran where, when, in static and continuous batching."""
import json
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")    # the demo only writes files; it never opens a window

import matplotlib.pyplot as plt  # noqa: E402

from ...llm import LLM, chat_prompt  # noqa: E402
from ...metrics import format_table  # noqa: E402
from ...sampling_params import SamplingParams  # noqa: E402
from ...stages import STAGES  # noqa: E402
from ..bench.run_record import environment, machine, project_root, this_run  # noqa: E402
from .schedule import plot_schedule  # noqa: E402

QUESTIONS = [          # answers of different lengths, as a server's requests have
    "What is the capital of France?",
    "Give me one tip for learning to code.",
    "Name three primary colors.",
    "Write a haiku about the sea.",
    "What is the capital of Japan?",
    "What language is spoken in Brazil?",
    "Write a short greeting for a friend.",
    "What is the boiling point of water in Celsius?",
]


# ANCHOR: demo
def run_demo(model="smollm2", questions=QUESTIONS, max_batch_size=4, max_tokens=48, *, save=None):
    """Every stage answers the same questions, greedily. Returns {stage: RunMetrics},
    {stage: RequestOutputs} and the path of the figure it wrote with ``save(fig,
    meta)`` (save_demo_figure unless given)."""
    runs, outputs = {}, {}
    for engine in STAGES:
        # The same KV memory for stages 4 and 5: max_batch_size slots of 256 tokens, or as many
        # blocks of 16; stage 5 may run as many requests as fit in it.
        seqs = len(questions) if engine == "paged" else max_batch_size
        llm = LLM(model, engine=engine, max_batch_size=max_batch_size, max_num_seqs=seqs, max_model_len=256,
                  num_blocks=max_batch_size * 256 // 16)
        prompts = [chat_prompt(llm.tokenizer, q) for q in questions]
        outputs[engine] = llm.generate(prompts, SamplingParams(max_tokens=max_tokens), use_tqdm=True)
        runs[engine] = llm.last_run
    fig, axes = plt.subplots(2, 1, figsize=(7.5, 2 + 0.6 * max_batch_size))   # the book's column
    plot_schedule(runs["static"], f"static batching, max_batch_size={max_batch_size}", ax=axes[0])
    plot_schedule(runs["continuous"], f"continuous batching, max_num_seqs={max_batch_size}", ax=axes[1])
    fig.tight_layout()
    stages = {name: dict(run.summary(), max_running=run.max_running()) for name, run in runs.items()}
    meta = dict(model=str(model), questions=len(questions), max_tokens=max_tokens,
                max_batch_size=max_batch_size, stages=stages)
    figure = (save or save_demo_figure)(fig, meta)
    return runs, outputs, figure
# ANCHOR_END: demo




def save_demo_figure(fig, meta: dict) -> Path:
    """demo_schedules.png, stamped with the machine and model, and its sidecar
    demo_schedules.json (versions, machine, run, and what the demo ran), in
    MINICB_FIGURES_DIR or scratch/figures/."""
    out = project_root() / os.environ.get("MINICB_FIGURES_DIR", "scratch/figures")
    out.mkdir(parents=True, exist_ok=True)
    env = dict(environment(), machine=machine())
    fig.text(0.01, 0.005, f"{env['machine']} | {meta['model']} | {env['date']}", fontsize=7, color="0.35")
    png = out / "demo_schedules.png"
    fig.savefig(png, dpi=110)
    sidecar = dict(figure=png.name, **env, run=this_run(), **meta)
    (out / "demo_schedules.json").write_text(json.dumps(sidecar, indent=2, default=str) + "\n")
    return png


def main(args, save=None):
    runs, outputs, figure = run_demo(args.model, max_batch_size=args.max_batch_size, max_tokens=args.max_tokens,
                                     save=save)
    first = next(iter(outputs.values()))
    print(f"\n{args.model}: {len(QUESTIONS)} questions, greedy, up to {args.max_tokens} tokens each\n")
    for question, out in zip(QUESTIONS, first):
        print(f"Q: {question}\nA: {out.text.strip()}\n")
    differ = [name for name, outs in outputs.items()
              if [o.output_token_ids for o in outs] != [o.output_token_ids for o in first]]
    if differ:
        print(f"These stages gave other tokens than {next(iter(outputs))}: {differ}")
    else:
        print(f"Every stage ({', '.join(outputs)}) gave exactly these tokens: they differ only in when "
              f"the work runs.\n")
    print(format_table(runs))
    single, static, continuous, paged = runs["single"], runs["static"], runs["continuous"], runs["paged"]
    print(f"\nstatic batching: {static.num_steps} forward steps instead of {single.num_steps}, but "
          f"{1 - static.occupancy:.0%} of its batch rows were computed for requests that had already finished.")
    print(f"continuous batching: {continuous.num_steps} steps, {continuous.occupancy:.0%} of its slots busy, "
          f"{continuous.output_throughput / static.output_throughput:.1f}x static's output tok/s; "
          f"yet only {continuous.kv_utilization:.0%} of the KV slots it reserves hold a token.")
    print(f"paged: the same KV memory in blocks of 16 holds up to {paged.max_running()} requests at once "
          f"(continuous: {continuous.max_running()}), {paged.kv_utilization:.0%} of its reserved slots holding a token.")
    print(f"\nfigure: {Path(figure).resolve()}")
    return 1 if differ else 0

"""Where a decode step's time goes, kernel by kernel.

Notebook 08 times the paged engine's decode step against its roofline, and the
ratio says how far off it is, not where. This profiles the same step with
torch.profiler: ``batch`` requests decoding together at ``context`` tokens, the
engine as a GPU runs it by default (CUDA graphs, fused ops) and with async
scheduling, and lists each kernel's time per step, most first, beside the
bytes a step must read. On a CPU the profiler sees operators instead of
kernels: the rehearsal checks the plumbing, not the numbers.

    python -m minicb.tools.step_profile --out FOLDER     # the kernels part of a GPU run
"""
import argparse
import json
import math
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

from ..llm import LLMEngine
from ..sampling import SamplingParams
from .benchmarks import decode_weight_bytes
from .scale import run_scale

TOP_KERNELS = 25          # the rest of a step's kernels summed as one row


# ANCHOR: step_profile
def profile_decode(engine: LLMEngine, batch: int, context: int, num_steps=8) -> dict:
    """Run ``batch`` requests of ``context`` tokens until all decode together,
    then profile ``num_steps`` decode steps: each kernel's (on a CPU, each
    operator's) milliseconds a step, most first."""
    admitting = batch * math.ceil(context / engine.config.max_num_batched_tokens) + 1
    params = SamplingParams(max_tokens=admitting + 2 * num_steps + 2, ignore_eos=True)
    for i in range(batch):
        engine.add_request([3 + (i + j) % 200 for j in range(context)], params)
    def all_decoding(steps):
        return steps and steps[-1].kind == "decode" and steps[-1].useful_rows == batch
    with engine.stage.measuring() as steps:
        while not all_decoding(steps):
            engine.step()
    cuda = torch.device(engine.config.device).type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as profiled:
        for _ in range(num_steps):
            engine.step()
        if cuda:
            torch.cuda.synchronize()
    for request_id in list(engine.stage.unfinished):
        engine.abort(request_id)
    return dict(batch=batch, context=context, steps=num_steps,
                kernels=per_step(profiled.key_averages(), num_steps, cuda))


def per_step(events, num_steps: int, cuda: bool) -> list[dict]:
    """[{name, ms, calls}] a step, most first: on a GPU the kernels (events that
    ran on the device), on a CPU every operator's own time."""
    rows = []
    for event in events:
        if cuda and event.device_type.name != "CUDA":
            continue
        micros = event.self_device_time_total if cuda else event.self_cpu_time_total
        if micros > 0:
            rows.append(dict(name=event.key, ms=micros / 1e3 / num_steps,
                             calls=event.count / num_steps))
    rows.sort(key=lambda row: -row["ms"])
    rest = rows[TOP_KERNELS:]
    if rest:
        rows = rows[:TOP_KERNELS] + [dict(name=f"{len(rest)} others",
                                          ms=sum(r["ms"] for r in rest),
                                          calls=sum(r["calls"] for r in rest))]
    return rows
# ANCHOR_END: step_profile


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)
    scale = run_scale()
    sizes = scale.sizes("08_kernels")["roofline"]          # notebook 08's decode steps
    runs = []
    for shape, batches in sizes["shapes"].items():
        if scale.name == "full" and not scale.fits(shape):
            continue
        model, batch = scale.model(shape), min(64, max(batches))
        for async_scheduling in (False, True):
            with LLMEngine(scale.checkpoint(model), engine="paged", dtype=model["dtype"],
                           max_num_seqs=batch, max_model_len=sizes["max_model_len"],
                           async_scheduling=async_scheduling) as engine:
                run = profile_decode(engine, batch, sizes["context"])
                cfg = engine.config
                run.update(shape=model["shape"], async_scheduling=async_scheduling,
                           cuda_graphs=cfg.cuda_graphs, fused_ops=cfg.fused_ops,
                           weight_bytes=decode_weight_bytes(engine.executor.model))
            runs.append(run)
            print_run(run)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "decode_profile.json").write_text(json.dumps(dict(
        device=torch.cuda.get_device_name() if scale.device == "cuda" else "cpu",
        torch=torch.__version__, scale=scale.name, runs=runs), indent=1) + "\n")


def print_run(run):
    total = sum(k["ms"] for k in run["kernels"])
    print(f"{run['shape']}, batch {run['batch']}, context {run['context']}, async scheduling "
          f"{run['async_scheduling']}: {total:.3f} ms of kernels a step", flush=True)
    for k in run["kernels"]:
        print(f"  {k['ms']:8.3f} ms {k['calls']:6.1f}x  {k['name'][:90]}", flush=True)


if __name__ == "__main__":
    main()

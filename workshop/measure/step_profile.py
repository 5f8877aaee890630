"""Where a decode step's time goes, kernel by kernel.

Notebook 08 times the paged engine's decode step against its roofline, and the
ratio says how far off it is, not where. This profiles the same step with
torch.profiler: ``batch`` requests decoding together at ``context`` tokens, the
engine as a GPU runs it by default (CUDA graphs, fused ops), with async
scheduling, and with CUDA graphs off (every kernel launched from Python, as a
step that carries a prompt runs), and lists each kernel's time a step and each
host operator's, most first. On a CPU there are no kernels: the rehearsal
checks the plumbing, not the numbers.

    python -m workshop.measure.step_profile --out FOLDER     # the kernels part of a GPU run
"""
import argparse
import json
import math
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

from minicb.llm import LLMEngine
from minicb.sampling_params import SamplingParams
from workshop.measure.decode_step import decode_weight_bytes
from workshop.report.scale import run_scale

TOP_KERNELS = 25          # the rest of a step's kernels summed as one row


# ANCHOR: step_profile
def profile_decode(engine: LLMEngine, batch: int, context: int, num_steps=8) -> dict:
    """Run ``batch`` requests of ``context`` tokens until all decode together,
    then profile ``num_steps`` decode steps: each GPU kernel's milliseconds a
    step, and each operator's on the host (its own time, in Python and torch),
    most first."""
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
        started = time.perf_counter()
        for _ in range(num_steps):
            engine.step()
        if cuda:
            torch.cuda.synchronize()
        wall = (time.perf_counter() - started) / num_steps   # profiler included
    for request_id in list(engine.stage.unfinished):
        engine.abort(request_id)
    events = profiled.key_averages()
    return dict(batch=batch, context=context, steps=num_steps, wall_ms=1e3 * wall,
                kernels=per_step(events, num_steps, on_device=True) if cuda else [],
                host=per_step(events, num_steps, on_device=False))

# The batch the profile takes (or the largest a shape's sizes give, if smaller): a
# decode step full enough that the GPU, not the host, sets its pace.
PROFILE_BATCH = 64


def per_step(events, num_steps: int, on_device: bool) -> list[dict]:
    """[{name, ms, calls}] a step, most first: the kernels that ran on the GPU,
    or the operators' own time on the host."""
    rows = []
    for event in events:
        if (event.device_type.name == "CUDA") != on_device:
            continue
        micros = (event.self_device_time_total if on_device
                  else event.self_cpu_time_total)
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
        model, batch = scale.model(shape), min(PROFILE_BATCH, max(batches))
        # as a GPU runs it, with the host a step ahead, and eager (each kernel launched)
        for mode in (dict(async_scheduling=False), dict(async_scheduling=True), dict(cuda_graphs=False)):
            with LLMEngine(scale.checkpoint(model), engine="paged", dtype=model["dtype"],
                           max_num_seqs=batch, max_model_len=sizes["max_model_len"], **mode) as engine:
                run = profile_decode(engine, batch, sizes["context"])
                cfg = engine.config
                run.update(shape=model["shape"], async_scheduling=cfg.async_scheduling,
                           cuda_graphs=cfg.cuda_graphs, fused_ops=cfg.fused_ops,
                           weight_bytes=decode_weight_bytes(engine.executor.model))
            runs.append(run)
            print_run(run)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "decode_profile.json").write_text(json.dumps(dict(
        device=torch.cuda.get_device_name() if scale.device == "cuda" else "cpu",
        torch=torch.__version__, scale=scale.name, runs=runs), indent=1) + "\n")


def print_run(run):
    print(f"{run['shape']}, batch {run['batch']}, context {run['context']}, CUDA graphs "
          f"{run['cuda_graphs']}, async scheduling {run['async_scheduling']}: "
          f"{run['wall_ms']:.3f} ms a step under the profiler", flush=True)
    for where in ("kernels", "host"):
        rows = run[where]
        print(f"  {where}: {sum(k['ms'] for k in rows):.3f} ms a step", flush=True)
        for k in rows:
            print(f"  {k['ms']:8.3f} ms {k['calls']:6.1f}x  {k['name'][:90]}", flush=True)


if __name__ == "__main__":
    main()

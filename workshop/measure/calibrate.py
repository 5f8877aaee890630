"""A profile of this machine for the simulated executor: measured, not assumed.

The GPU profiles in minicb.costmodel are datasheet peaks and assumed
fractions. This machine's can be measured instead. Two microbenchmarks give
its copy bandwidth and matmul rate: the roofline. A short run of the real
engine then gives what the roofline leaves out, which on a CPU running a tiny
model is most of a step: Python's scheduling and launches, and the cost of
many small operations per sequence, per new token and per cached token that
attention reads. Each step's measured time, less the roofline's, is fitted to
those four costs. Each stage gets its own fit, because each runs different
Python per step.

The fit sees one workload. Chapter 11's notebook predicts other workloads
with it and puts the predictions beside real runs of them.
"""
import argparse
import dataclasses
import datetime
import json
import math
import os
import re
import statistics
import subprocess
from pathlib import Path

import numpy as np
import torch

from minicb.costmodel import HARDWARE, MODEL_SHAPES, PROFILES, Hardware, save_profile, step_seconds
from minicb.executor_contract import ExecutorWrapper
from minicb.executors.simulated import split_sequences
from minicb.llm import LLMEngine
from workshop.measure.benchmarks import measured_rates
from workshop.measure.decode_step import simulated_decode_roofline
from minicb.tools.bench.driver import replay
from workshop.report.scale import rehearsed, run_scale
from minicb.tools.bench.workload import preset_workload, synthetic_workload

# The Hardware fields a calibration fits, in the order of step_features.
OVERHEADS = ("step_overhead", "sequence_overhead", "token_overhead", "cached_token_overhead")
COMPARED = {"output tok/s": lambda run: run.output_throughput,
            "TTFT p50": lambda run: run.ttft["p50"], "TPOT p50": lambda run: run.tpot["p50"]}


def this_machine(rates: dict, device="cpu", dtype="float32") -> Hardware:
    """This machine's roofline, as measured on ``device`` (a CPU, or a GPU and its
    memory): no overheads yet, and fractions of 1 (a measured rate is an achieved one)."""
    if torch.device(device).type == "cuda":
        name = torch.cuda.get_device_name(device)
        memory = torch.cuda.get_device_properties(device).total_memory
    else:
        name, memory = "this machine", os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return Hardware(name, memory, rates["copy_gb_s"] * 1e9, rates["matmul_tflops"] * 1e12,
                    f"measured on {name}: copy {rates['copy_gb_s']} GB/s, "
                    f"{rates['matmul_dtype']} matmul {rates['matmul_tflops']} TFLOP/s",
                    bandwidth_fraction=1.0, flops_fraction=1.0, step_overhead=0.0,
                    dtype=dtype)


def step_features(sequences) -> list[int]:
    """What each overhead is paid per: the step, its sequences, its new tokens,
    and the cached tokens its attention reads."""
    return [1, len(sequences), sum(n for n, _ in sequences),
            sum(context - n for n, context in sequences)]


class SequenceLog(ExecutorWrapper):
    """An executor, with each forward pass's sequences noted as the simulated
    executor sees them: (new tokens, context) each, and the rows sampled."""

    def __init__(self, executor):
        super().__init__(executor)
        self.passes = []

    def execute(self, input_ids, positions, attn, sample_rows):
        rows = torch.as_tensor(sample_rows).tolist()
        self.passes.append((split_sequences(positions.tolist(), rows), len(rows)))
        return self.executor.execute(input_ids, positions, attn, sample_rows)


# ANCHOR: calibrate
def calibrate(checkpoint, shape: str, engine: str, workload, rates=None,
              **options) -> Hardware:
    """This machine's profile for one stage: the roofline from ``rates``
    (measured now, at the engine's thread count, if not given) and the
    overheads fitted to a real run of ``workload`` on ``checkpoint``, a
    checkpoint of the model shape ``shape``."""
    # closed at the end: its KV cache holds most of the GPU, which the next shape needs
    with LLMEngine(checkpoint, engine=engine, **options) as real:
        replay(real, workload)                  # warm: the first run pays for setup
        device = real.config.device
        dtype = str(real.executor.dtype).removeprefix("torch.")
        base = this_machine(rates or measured_rates(device), device, dtype)
        timed = real.stage.executor        # the step log's timer, around the executor
        timed.executor = passes = SequenceLog(timed.executor)
        steps = replay(real, workload).steps
        assert len(steps) == len(passes.passes), "a step with no forward pass, or two"
        bytes_per_value = real.executor.dtype.itemsize
        features, left_over, measured = [], [], []
        for step, (sequences, sampled) in zip(steps, passes.passes):
            roofline = step_seconds(base, MODEL_SHAPES[shape], bytes_per_value,
                                    sequences, sampled)
            features.append(step_features(sequences))
            left_over.append(step.duration - roofline)
            measured.append(step.duration)
    costs = fit_costs(np.array(features, float), np.array(left_over),
                      np.array(measured))
    return dataclasses.replace(base, name=f"{base.name}, {engine}",
                               **dict(zip(OVERHEADS, costs.tolist())))


def fit_costs(features, left_over, measured, trim=0.05) -> np.ndarray:
    """Costs c >= 0 with features @ c close to ``left_over``, in relative terms
    (so the many short decode steps weigh as much as a long prefill). Fitted
    twice: the second time without the ``trim`` share of steps fitted worst
    (steps the operating system interrupted)."""
    weight = 1 / measured
    costs = fit_nonnegative(features * weight[:, None], left_over * weight)
    error = np.abs(features @ costs - left_over) * weight
    kept = error <= np.quantile(error, 1 - trim)
    return fit_nonnegative(features[kept] * weight[kept, None],
                           left_over[kept] * weight[kept])
# ANCHOR_END: calibrate


def fit_nonnegative(a, b) -> np.ndarray:
    """Least squares with no cost below 0: a term the fit makes negative
    explains nothing here, so it is dropped and the rest fitted again."""
    terms = list(range(a.shape[1]))
    while True:
        costs, *_ = np.linalg.lstsq(a[:, terms], b, rcond=None)
        if (costs >= 0).all():
            break
        terms.pop(int(np.argmin(costs)))
    full = np.zeros(a.shape[1])
    full[terms] = costs
    return full


def predicted_and_measured(checkpoint, shape: str, profiles: dict, workloads: dict,
                           repeats=3) -> dict:
    """{(workload, stage): {metric: (predicted, [measured, one per repeat])}} for
    each profile {stage: Hardware} on each workload: the prediction from one
    simulated run, the measurements from ``repeats`` real ones, interleaved
    (every workload and stage once, then again)."""
    keys = [(name, stage) for name in workloads for stage in profiles]
    predicted = {(name, stage): replay(LLMEngine(shape, engine=stage, executor="simulated",
                                                 hardware=profiles[stage]), workloads[name])
                 for name, stage in keys}
    real = [{(name, stage): replay(LLMEngine(checkpoint, engine=stage), workloads[name])
             for name, stage in keys} for _ in range(repeats)]
    return {key: {metric: (value(predicted[key]), [value(runs[key]) for runs in real])
                  for metric, value in COMPARED.items()} for key in keys}


# ---------------------------------------------------------------- a GPU's decode steps
# ANCHOR: decode_profile
DECODE_STEPS = 16        # notebook 08's decode_roofline times this many steps a batch


def decode_profile(base: Hardware, runs: dict, name: str, measured: dict) -> Hardware:
    """A profile fitted to a GPU's measured decode steps: ``runs`` is {shape:
    rows of decode_step.decode_roofline}. A decode step streams its bytes, so
    each is fitted as those bytes over ``base``'s peak bandwidth times a
    fraction, plus a cost per step and one per sequence. Every row reads
    contexts of one length, so a cost per cached token cannot be told from one
    per sequence: it stays 0. Decode steps say nothing of a prefill's terms
    (flops_fraction, token_overhead): they stay ``base``'s assumptions, and
    ``measured`` says so."""
    streaming = dataclasses.replace(base, bandwidth_fraction=1.0, flops=math.inf,
                                    step_overhead=0.0)
    features, seconds = [], []
    for shape, rows in runs.items():
        for row in rows:
            sequences = [(1, row["context"] + DECODE_STEPS // 2)] * row["batch"]
            memory = step_seconds(streaming, MODEL_SHAPES[shape], 2, sequences,
                                  row["batch"])
            features.append([memory, 1.0, row["batch"]])
            seconds.append(row["step_ms"] / 1e3)
    # relative errors: a 3 ms step counts as much as a 12 ms one
    weight = 1 / np.array(seconds)
    slowdown, per_step, per_sequence = fit_nonnegative(
        np.array(features) * weight[:, None], np.ones(len(seconds)))
    if slowdown <= 0:
        raise ValueError("the steps do not grow with the bytes they read")
    fitted = ["bandwidth_fraction", "step_overhead", "sequence_overhead"]
    assumed = ["flops_fraction", "token_overhead (prefill: no prefill was timed)"]
    return dataclasses.replace(
        base, name=name, bandwidth_fraction=1 / slowdown, step_overhead=per_step,
        sequence_overhead=per_sequence, token_overhead=0.0, cached_token_overhead=0.0,
        measured=dict(measured, fitted=fitted, assumed=assumed))


def decode_errors(profile: Hardware, runs: dict, max_model_len=2048) -> dict:
    """{shape: [{batch, measured_ms, predicted_ms, error}]}: the simulated
    executor with ``profile`` runs each measured batch as notebook 08 ran it."""
    errors = {}
    for shape, rows in runs.items():
        predicted = simulated_decode_roofline(
            shape, profile, [r["batch"] for r in rows], rows[0]["context"],
            max_model_len, DECODE_STEPS)
        errors[shape] = [dict(batch=r["batch"], measured_ms=r["step_ms"],
                              predicted_ms=p["step_ms"],
                              error=p["step_ms"] / r["step_ms"] - 1)
                         for r, p in zip(rows, predicted)]
    return errors
# ANCHOR_END: decode_profile


def decode_runs(sidecar: dict, mode: str) -> dict:
    """{shape: rows} of one mode ("paged", "paged, fused ops, async scheduling") of an
    08_decode_roofline sidecar."""
    runs = {key.split(" | ")[0]: rows for key, rows in sidecar["measurements"].items()
            if key.split(" | ")[1] == mode}
    if not runs:
        modes = sorted({key.split(" | ")[1] for key in sidecar["measurements"]})
        raise ValueError(f"mode {mode!r}: the sidecar has {modes}")
    return runs


# ANCHOR: prompt_steps
def launch_cost(spread: dict) -> float:
    """What a step pays for launching its kernels from Python instead of replaying
    a CUDA graph, from a 07_throughput_vs_spread sidecar: its launch line ran the
    same steps with graphs on and with graphs off, and static batching's steps are
    decodes alone, so its median step off less on is that cost."""
    def median_step(graphs):
        runs = spread["launches"]["measurements"][graphs]
        return statistics.median(run["static"]["median_step_s"] for run in runs)
    return median_step("off") - median_step("on")


def spread_errors(profile: Hardware, spread: dict, engines=None, **more) -> dict:
    """{cap: {engine: (predicted, measured)}} of steps and output tokens per second:
    the simulated executor with ``profile`` runs the spread experiment of a
    07_throughput_vs_spread sidecar, each engine with the options it ran with
    (and ``more``: what if it had run with them); ``engines``: only these."""
    sizes, shape, errors = spread["sizes"], spread["model"]["shape"], {}
    for cap, setup in spread["setup"].items():
        workload = preset_workload("anyscale", num_requests=sizes["num_requests"],
                                   cap=int(cap), scale=sizes["scale"],
                                   seed=spread["workload"]["seed"])
        measured = spread["measurements"][0][cap]
        errors[cap] = {}
        for engine, options in setup["options"].items():
            # dynamic batching is not measured there (static's batches)
            if engine not in measured or (engines and engine not in engines):
                continue
            simulated = LLMEngine(shape, engine=engine, executor="simulated",
                                  hardware=profile, **options | more)
            run = replay(simulated, workload).summary()
            errors[cap][engine] = dict(
                steps=(run["steps"], measured[engine]["steps"]),
                output_tok_s=(run["output_tok_s"], measured[engine]["output_tok_s"]))
    return errors
# ANCHOR_END: prompt_steps


def fit_decode_sidecar(path, datasheet: str, mode: str, commit: str, launches=None) -> tuple:
    """The profile of one mode of a GPU run's 08_decode_roofline sidecar, with
    its provenance; and its errors at every measured batch. ``launches``: a
    07_throughput_vs_spread sidecar of the same GPU, for what a step that carries
    a prompt pays (launch_cost)."""
    sidecar = json.loads(Path(path).read_text())
    runs = decode_runs(sidecar, mode)
    measured = dict(gpu=sidecar["gpu"], torch=sidecar["torch"], triton=sidecar["triton"],
                    date=sidecar["date"], commit=commit,
                    runs=f"{Path(path).name}: notebook 08's decode steps, stage 5 ({mode}), "
                         f"bf16, contexts of {sidecar['context']}, CUDA graphs on")
    profile = decode_profile(HARDWARE[datasheet], runs, f"{HARDWARE[datasheet].name}, measured: {mode}",
                             measured)
    errors = decode_errors(profile, runs)
    worst = max(abs(e["error"]) for rows in errors.values() for e in rows)
    profile = dataclasses.replace(profile, measured=dict(profile.measured, worst_error=round(worst, 4)))
    if launches is not None:
        profile = dataclasses.replace(
            profile, prompt_step_overhead=launch_cost(json.loads(Path(launches).read_text())),
            measured=dict(profile.measured, fitted=[
                *profile.measured["fitted"], f"prompt_step_overhead ({Path(launches).name}: static "
                "batching's median step with CUDA graphs off less on)"]))
    return profile, errors


# ---------------------------------------------------------------- on this machine, by command
def commit() -> str:
    """The commit this code is at: git's answer, else MINICB_COMMIT (a copy of the
    tree without its history), else "unknown"."""
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True, cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return os.environ.get("MINICB_COMMIT", "unknown")


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


# The GPU run's calibration: stage 5 on a mixed workload, so that both prefill
# chunks and decode steps are timed, for each shape the GPU holds.
MEASURE = dict(num_requests=64, prompt_len=(64, 512), output_len=(16, 128), batch=64,
               max_model_len=2048, shapes=["llama-3.2-1b", "llama-3.1-8b"])


def measure(out: Path, scale) -> list[Path]:
    """Calibrate stage 5 here for each model shape of the GPU run that this GPU
    holds (the tiny model stands in for each in a rehearsal), into ``out``."""
    sizes = MEASURE if scale.name == "full" else {k: rehearsed(k, v) for k, v in MEASURE.items()}
    written = []
    workload = synthetic_workload(sizes["num_requests"], prompt_len=sizes["prompt_len"],
                                  output_len=sizes["output_len"], seed=1)
    for shape in sizes["shapes"]:
        if scale.name == "full" and not scale.fits(shape):
            continue
        model = scale.model(shape)
        profile = calibrate(scale.checkpoint(model), model["shape"] if model["shape"] in MODEL_SHAPES
                            else "tiny-llama", "paged", workload, dtype=model["dtype"],
                            max_num_seqs=sizes["batch"], max_model_len=sizes["max_model_len"])
        profile = dataclasses.replace(profile, measured=dict(
            gpu=profile.name.rsplit(",", 1)[0], torch=torch.__version__, commit=commit(),
            date=datetime.date.today().isoformat(), scale=scale.name,
            runs=f"stage 5 on {model['shape']}, {sizes['num_requests']} requests "
                 f"(prompts {sizes['prompt_len']}, outputs {sizes['output_len']})",
            fitted=["roofline (copy and matmul rates)", *OVERHEADS], assumed=[]))
        written.append(save_profile(profile, out / f"{slug(profile.name)}-{shape}.json"))
        print(f"{shape}: {profile.name}, bandwidth {profile.bandwidth / 1e9:.0f} GB/s, step "
              f"{1e3 * profile.step_overhead:.3f} ms, sequence {1e6 * profile.sequence_overhead:.1f} us, "
              f"token {1e6 * profile.token_overhead:.2f} us -> {written[-1]}", flush=True)
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(description="Profiles for the simulated executor.")
    commands = parser.add_subparsers(dest="command", required=True)
    fit = commands.add_parser("fit-decode", help="fit a profile to a GPU run's decode steps")
    fit.add_argument("sidecar", help="an 08_decode_roofline.json of a GPU run")
    fit.add_argument("--datasheet", required=True, choices=sorted(HARDWARE), help="the GPU's peaks")
    fit.add_argument("--mode", default="paged, fused ops",
                     help='one of the sidecar\'s modes: "paged, fused ops", "paged", ...')
    fit.add_argument("--name", required=True, help="the profile's name: its file in minicb/profiles/")
    fit.add_argument("--commit", required=True, help="the commit the GPU run ran at")
    fit.add_argument("--launches", help="a 07_throughput_vs_spread.json of the same GPU: what a "
                     "step that carries a prompt pays")
    run = commands.add_parser("measure", help="calibrate stage 5 on this machine (a GPU run's part)")
    run.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)
    if args.command == "fit-decode":
        profile, errors = fit_decode_sidecar(args.sidecar, args.datasheet, args.mode, args.commit,
                                             args.launches)
        path = save_profile(profile, PROFILES / f"{args.name}.json")
        print(f"{path}: bandwidth {profile.bandwidth_fraction:.1%} of {profile.bandwidth / 1e12:.2f} TB/s, "
              f"{1e3 * profile.step_overhead:.3f} ms a step, {1e6 * profile.sequence_overhead:.1f} us a sequence")
        for shape, rows in errors.items():
            print(shape + ": " + ", ".join(f"batch {e['batch']} {e['error']:+.1%}" for e in rows))
    else:
        measure(args.out, run_scale())


if __name__ == "__main__":
    main()

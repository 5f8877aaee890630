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
import dataclasses
import os

import numpy as np
import torch

from ..costmodel import MODEL_SHAPES, Hardware, step_seconds
from ..executors.simulated import split_sequences
from ..llm import LLMEngine
from .benchmarks import measured_rates
from .driver import replay

# The Hardware fields a calibration fits, in the order of step_features.
OVERHEADS = ("step_overhead", "sequence_overhead", "token_overhead", "cached_token_overhead")
COMPARED = {"output tok/s": lambda run: run.output_throughput,
            "TTFT p50": lambda run: run.ttft["p50"], "TPOT p50": lambda run: run.tpot["p50"]}


def this_machine(rates: dict) -> Hardware:
    """This machine's roofline, as measured: no overheads yet, and fractions of 1
    (a measured rate is an achieved one)."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return Hardware("this machine", memory, rates["copy_gb_s"] * 1e9,
                    rates["matmul_tflops"] * 1e12,
                    f"measured here: copy {rates['copy_gb_s']} GB/s, "
                    f"{rates['matmul_dtype']} matmul {rates['matmul_tflops']} TFLOP/s",
                    bandwidth_fraction=1.0, flops_fraction=1.0, step_overhead=0.0,
                    dtype="float32")


def step_features(sequences) -> list[int]:
    """What each overhead is paid per: the step, its sequences, its new tokens,
    and the cached tokens its attention reads."""
    return [1, len(sequences), sum(n for n, _ in sequences),
            sum(context - n for n, context in sequences)]


class SequenceLog:
    """An executor, with each forward pass's sequences noted as the simulated
    executor sees them: (new tokens, context) each, and the rows sampled."""

    def __init__(self, executor):
        self.executor, self.passes = executor, []

    def execute(self, input_ids, positions, attn, sample_rows):
        rows = torch.as_tensor(sample_rows).tolist()
        self.passes.append((split_sequences(positions.tolist(), rows), len(rows)))
        return self.executor.execute(input_ids, positions, attn, sample_rows)

    def __getattr__(self, name):
        return getattr(self.executor, name)


# ANCHOR: calibrate
def calibrate(checkpoint, shape: str, engine: str, workload, rates=None,
              **options) -> Hardware:
    """This machine's profile for one stage: the roofline from ``rates``
    (measured now, at the engine's thread count, if not given) and the
    overheads fitted to a real run of ``workload`` on ``checkpoint``, a
    checkpoint of the model shape ``shape``."""
    real = LLMEngine(checkpoint, engine=engine, **options)
    replay(real, workload)                  # warm: the first run pays for setup
    base = this_machine(rates or measured_rates("cpu"))
    timed = real.stage.executor             # the step log's timer, around the executor
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
    return dataclasses.replace(base, name=f"this machine, {engine}",
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

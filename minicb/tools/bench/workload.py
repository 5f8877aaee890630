"""Seeded synthetic workloads: prompts, output lengths and arrival times.

Lengths and arrivals come from a seeded generator, so a workload is the same
on every machine. ``ignore_eos`` makes each request generate exactly its
drawn length, as in the Anyscale study of continuous batching.

A length is an int (fixed), a (low, high) range (uniform, inclusive), or
("exponential", mean, cap): exponentially distributed with that mean,
capped at ``cap`` (the study's way to spread output lengths).
"""
import math
import numbers
from dataclasses import dataclass

import numpy as np

from ...sampling_params import SamplingParams, as_integer, is_real


@dataclass
class Workload:
    prompts: list[list[int]]
    params: list[SamplingParams]
    arrival_times: list[float]      # seconds after the start; all 0 for "all at once"
    description: dict

    @property
    def output_lens(self) -> list[int]:
        return [p.max_tokens for p in self.params]

    @property
    def prompt_lens(self) -> list[int]:
        return [len(p) for p in self.prompts]


# ANCHOR: synthetic
def synthetic_workload(num_requests, prompt_len=(8, 64), output_len=(4, 64), qps=math.inf,
                       vocab_size=256, seed=0):
    """qps: Poisson arrivals at that mean rate; inf sends everything at once."""
    check_count_and_rate(num_requests, qps, seed)
    rng = np.random.default_rng(seed)
    prompt_lens, output_lens = draw_lengths(rng, prompt_len, num_requests), draw_lengths(rng, output_len,
                                                                                         num_requests)
    prompts = [rng.integers(3, vocab_size, size=int(n)).tolist() for n in prompt_lens]
    params = [SamplingParams(max_tokens=int(n), ignore_eos=True) for n in output_lens]
    if math.isinf(qps):
        arrivals = np.zeros(num_requests)
    else:
        arrivals = np.cumsum(rng.exponential(1.0 / qps, size=num_requests))   # Poisson process
    description = dict(num_requests=num_requests, prompt_len=prompt_len, output_len=output_len,
                       qps=qps, seed=seed)
    return Workload(prompts, params, arrivals.tolist(), description)


def draw_lengths(rng, spec, n):
    if isinstance(spec, int):
        return np.full(n, spec)
    if spec[0] == "exponential":
        _, mean, cap = spec
        return np.clip(np.round(rng.exponential(mean, size=n)), 1, cap).astype(int)
    low, high = spec
    return rng.integers(low, high + 1, size=n)
# ANCHOR_END: synthetic


# ANCHOR: presets
# Named workloads. "anyscale" is the study's: 512-token prompts, outputs
# exponential with mean 128 capped at `cap` (32 to 1536 there). The other
# three are the scenarios of the source articles: reading comprehension (long prompt,
# short answer), chat (short, short) and writing (short prompt, long output).
PRESETS = {
    "anyscale": lambda cap: dict(prompt_len=512, output_len=("exponential", 128, cap)),
    "reading": lambda cap: dict(prompt_len=(512, 1024), output_len=(8, 32)),
    "chat": lambda cap: dict(prompt_len=(16, 64), output_len=(16, 64)),
    "writing": lambda cap: dict(prompt_len=(16, 64), output_len=(256, 512)),
}


def preset_workload(name, num_requests=64, cap=512, qps=math.inf, vocab_size=256, seed=0, scale=1.0):
    """A preset, with every length multiplied by ``scale`` (e.g. 1/8 on a CPU)."""
    if name not in PRESETS:
        raise ValueError(f"unknown workload {name!r}; choose one of {list(PRESETS)}")
    check_cap_and_scale(cap, scale)
    lengths = {key: scale_spec(spec, scale) for key, spec in PRESETS[name](cap).items()}
    workload = synthetic_workload(num_requests, qps=qps, vocab_size=vocab_size, seed=seed, **lengths)
    workload.description.update(name=name, cap=cap, scale=scale)
    return workload
# ANCHOR_END: presets


def scale_spec(spec, scale):
    def s(n):
        return max(1, int(round(n * scale)))
    if isinstance(spec, int):
        return s(spec)
    if spec[0] == "exponential":
        return ("exponential", spec[1] * scale, s(spec[2]))
    return (s(spec[0]), s(spec[1]))


def check_count_and_rate(num_requests, qps, seed=0):
    """At least one request; a rate above 0 (inf: all at once). A rate of 0 would
    divide by zero, a nan one give arrivals at no time at all. A seed >= 0."""
    if as_integer(num_requests) is None or num_requests < 1:
        raise ValueError(f"num_requests must be an integer >= 1, got {num_requests!r}")
    if not isinstance(qps, numbers.Real) or isinstance(qps, bool) or not qps > 0:
        raise ValueError(f"qps must be a number above 0 (inf: all at once), got {qps!r}")
    if as_integer(seed) is None or seed < 0:       # numpy's generator takes no other seed
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")


def check_cap_and_scale(cap, scale):
    if as_integer(cap) is None or cap < 1:
        raise ValueError(f"cap must be an integer >= 1, got {cap!r}")
    if not is_real(scale) or not scale > 0:
        raise ValueError(f"scale must be a finite number above 0, got {scale!r}")

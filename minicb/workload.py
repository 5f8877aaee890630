"""Seeded synthetic workloads: prompts of random tokens and their SamplingParams.

Lengths are drawn from a seeded generator, so a workload is the same on every
machine; ignore_eos makes each request generate exactly its drawn length.
"""
from dataclasses import dataclass

import numpy as np

from .sampling import SamplingParams


@dataclass
class Workload:
    prompts: list[list[int]]
    params: list[SamplingParams]
    description: dict

    @property
    def output_lens(self) -> list[int]:
        return [p.max_tokens for p in self.params]

    @property
    def prompt_lens(self) -> list[int]:
        return [len(p) for p in self.prompts]


# ANCHOR: synthetic
def synthetic_workload(num_requests, prompt_len=(8, 64), output_len=(4, 64), vocab_size=256, seed=0):
    """prompt_len / output_len: an int (fixed) or an inclusive (low, high) range."""
    rng = np.random.default_rng(seed)

    def draw(spec):
        if isinstance(spec, int):
            return np.full(num_requests, spec)
        low, high = spec
        return rng.integers(low, high + 1, size=num_requests)

    prompt_lens, output_lens = draw(prompt_len), draw(output_len)
    prompts = [rng.integers(3, vocab_size, size=int(n)).tolist() for n in prompt_lens]
    params = [SamplingParams(max_tokens=int(n), ignore_eos=True) for n in output_lens]
    description = dict(num_requests=num_requests, prompt_len=prompt_len, output_len=output_len, seed=seed)
    return Workload(prompts, params, description)
# ANCHOR_END: synthetic

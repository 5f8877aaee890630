"""Stage 1: one request at a time. Its run metrics equal what the request lengths
imply: one useful row per step, a prefill per request."""
import pytest

from minicb import LLM, SamplingParams

from ..conftest import MAX_TOKENS, PROMPTS

GREEDY = [SamplingParams(max_tokens=n, ignore_eos=True) for n in MAX_TOKENS]


def test_single_runs_one_useful_row_per_step(llama):
    llm = LLM(llama, engine="single")
    llm.generate(PROMPTS, GREEDY)
    run = llm.last_run
    assert run.num_steps == sum(MAX_TOKENS) and run.occupancy == 1.0
    assert [s.kind for s in run.steps].count("prefill") == len(PROMPTS)
    assert run.kv_peak_reserved == max(len(p) + n for p, n in zip(PROMPTS, MAX_TOKENS))
    assert run.output_tokens == sum(MAX_TOKENS)
    assert run.prompt_tokens == sum(len(p) for p in PROMPTS)
    assert run.output_throughput == pytest.approx(run.output_tokens / run.wall_time)

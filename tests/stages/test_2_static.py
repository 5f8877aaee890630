"""Stage 2: a fixed batch runs until its longest request finishes. The rows it
wastes and the KV cache it reserves up front are exactly what the lengths imply;
bucketing by length groups similar lengths and keeps the prompts' order."""
import numpy as np
import pytest

from minicb import LLM, SamplingParams

from ..conftest import MAX_TOKENS, PROMPTS

GREEDY = [SamplingParams(max_tokens=n, ignore_eos=True) for n in MAX_TOKENS]


def test_static_batch_wastes_exactly_the_white_squares(llama):
    llm = LLM(llama, engine="static", max_batch_size=len(PROMPTS))
    llm.generate(PROMPTS, GREEDY)
    run = llm.last_run
    longest, batch = max(MAX_TOKENS), len(PROMPTS)
    assert run.num_steps == longest                              # 1 prefill + (longest - 1) decodes
    assert run.row_steps == batch * longest
    assert run.useful_row_steps == sum(MAX_TOKENS)
    grid = run.occupancy_grid("decode")
    assert grid.shape == (longest - 1, batch)
    assert int((grid == 0).sum()) == sum(longest - n for n in MAX_TOKENS)   # wasted row-steps
    # Rows fall idle in order of their lengths and never come back.
    assert (np.diff(grid, axis=0) <= 0).all()


def test_static_kv_reserved_up_front_and_used_as_tokens_arrive(llama):
    llm = LLM(llama, engine="static", max_batch_size=len(PROMPTS))
    llm.generate(PROMPTS, GREEDY)
    prompt_lens = [len(p) for p in PROMPTS]
    reserved = len(PROMPTS) * (max(prompt_lens) + max(MAX_TOKENS))
    assert [s.kv_reserved for s in llm.last_run.steps] == [reserved] * max(MAX_TOKENS)
    # Step s (0 = prefill) holds each prompt plus the s tokens fed back so far.
    used = [sum(p + min(s, n) for p, n in zip(prompt_lens, MAX_TOKENS)) for s in range(max(MAX_TOKENS))]
    assert [s.kv_used for s in llm.last_run.steps] == used
    assert llm.last_run.kv_utilization == pytest.approx(sum(used) / (reserved * len(used)))


def test_bucket_by_length_groups_similar_lengths_and_keeps_prompt_order(llama):
    llm = LLM(llama, engine="static", max_batch_size=2, bucket_by_length=True)
    params = [SamplingParams(max_tokens=n, ignore_eos=True) for n in [9, 1, 8, 2]]
    outputs = llm.generate([[1, 2], [3], [4, 5, 6], [7]], params)
    assert [len(o.output_token_ids) for o in outputs] == [9, 1, 8, 2]
    prefills = [s for s in llm.last_run.steps if s.kind == "prefill"]
    by_id = {o.request_id: len(o.output_token_ids) for o in outputs}
    assert [sorted(by_id[r] for r in s.rows) for s in prefills] == [[1, 2], [8, 9]]

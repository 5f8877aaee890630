"""Correctness contract: every engine, greedy and fp32, produces token for token
what transformers' generate produces, and the engines agree with each other."""
import pytest

from minicb import LLM, SamplingParams
from minicb.stages import STAGES

from ..conftest import ARCHS, MAX_TOKENS, PROMPTS

GREEDY = [SamplingParams(max_tokens=n, ignore_eos=True) for n in MAX_TOKENS]


ENGINES = {
    "single": dict(engine="single"),
    "static": dict(engine="static", max_batch_size=3),
    "dynamic": dict(engine="dynamic", max_batch_size=3, max_wait_ms=5),
    "continuous-mixed": dict(engine="continuous", max_num_seqs=3, scheduling_policy="mixed"),
    "continuous-prefill_first": dict(engine="continuous", max_num_seqs=3, scheduling_policy="prefill_first"),
}


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("backend", ["sdpa", "reference", "triton"])
@pytest.mark.parametrize("engine", list(ENGINES))
def test_engine_matches_transformers(checkpoints, hf_greedy, arch, backend, engine):
    llm = LLM(checkpoints[arch], attention_backend=backend, **ENGINES[engine])
    outputs = llm.generate(PROMPTS, GREEDY)
    assert [o.prompt_token_ids for o in outputs] == PROMPTS          # prompt order kept
    assert [o.output_token_ids for o in outputs] == hf_greedy[arch]
    assert all(o.finish_reason == "length" for o in outputs)


@pytest.mark.parametrize("options", [
    dict(engine="static", max_batch_size=5),               # one batch of everything
    dict(engine="static", max_batch_size=2),               # a ragged last batch
    dict(engine="static", max_batch_size=2, bucket_by_length=True),
    dict(engine="dynamic", max_batch_size=4, max_wait_ms=0),
    dict(engine="continuous", max_num_seqs=2),             # requests wait for slots
    dict(engine="continuous", max_num_seqs=5, max_num_batched_tokens=40),   # prompts wait for budget
    dict(engine="continuous", max_num_seqs=2, schedule_interval=4, waiting_served_ratio=1.5),
    dict(engine="continuous", max_num_seqs=5, kv_reservation="pow2"),
    dict(engine="continuous", max_num_seqs=5, kv_reservation="oracle"),
])
def test_engines_agree(llama, options):
    single = LLM(llama, engine="single").generate(PROMPTS, GREEDY)
    other = LLM(llama, **options).generate(PROMPTS, GREEDY)
    assert [o.output_token_ids for o in other] == [o.output_token_ids for o in single]


@pytest.mark.parametrize("engine", list(STAGES))
def test_the_step_log_counts_the_tokens_each_step_fed(llama, engine):
    # A request's token list grows as tokens are handed out: a step must count what it fed.
    llm = LLM(llama, engine=engine)
    llm.generate([list(range(3, 40))], SamplingParams(max_tokens=4, ignore_eos=True))
    assert [(s.kind, s.num_tokens) for s in llm.last_run.steps] == [("prefill", 37)] + [("decode", 1)] * 3

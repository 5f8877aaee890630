"""Async scheduling: stage 5 with the host one step ahead of the device. It
must give the same tokens as stage 5, free every block, and lose no step on
requests that finish by length."""
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from minicb import LLM, LLMEngine, SamplingParams
from minicb.config import EngineConfig
from minicb.executors import Executor
from minicb.stages import engine_class
from minicb.stages.overlap import AsyncPagedEngine

from ..conftest import MAX_TOKENS, PROMPTS
from .test_4_continuous import FakeModel, drive, request
from .test_5_paged import check_blocks

GREEDY = [SamplingParams(max_tokens=n, ignore_eos=True) for n in MAX_TOKENS]


def run_both(model, prompts, params, **options):
    """{async_scheduling: (LLM, outputs)} for the same requests, each run leaving every block free."""
    runs = {}
    for overlap in (False, True):
        llm = LLM(model, engine="paged", async_scheduling=overlap, **options)
        outputs = llm.generate(prompts, params)
        kv = llm.stage.kv
        assert len(kv.free_blocks) == kv.num_blocks and not kv.block_tables       # nothing leaked
        runs[overlap] = llm, outputs
    return runs


def tokens_and_reasons(outputs):
    return [(o.output_token_ids, o.finish_reason) for o in outputs]


@pytest.mark.parametrize("options", [
    dict(max_num_seqs=3),                                                  # requests wait for room
    dict(max_num_seqs=5, scheduling_policy="prefill_first"),
    dict(max_num_seqs=5, enable_chunked_prefill=True, max_num_batched_tokens=8, enable_prefix_caching=True,
         block_size=4),
])
def test_same_tokens_as_stage_5(llama, options):
    runs = run_both(llama, PROMPTS, GREEDY, **options)
    assert tokens_and_reasons(runs[True][1]) == tokens_and_reasons(runs[False][1])
    assert isinstance(runs[True][0].stage, AsyncPagedEngine)


def test_preemption_with_tokens_in_flight(llama):
    prompts = [list(range(3 + i, 11 + i)) for i in range(4)]      # 4 x 28 tokens need 28 blocks of 4; 16 exist
    params = [SamplingParams(max_tokens=20, ignore_eos=True)] * 4
    runs = run_both(llama, prompts, params, block_size=4, num_blocks=16, max_num_seqs=4)
    assert tokens_and_reasons(runs[True][1]) == tokens_and_reasons(runs[False][1])
    assert runs[True][0].last_run.num_preemptions > 0


def test_a_stop_token_is_found_one_step_late_and_its_extra_token_dropped(llama):
    plain = LLM(llama, engine="paged").generate(PROMPTS, [SamplingParams(max_tokens=8, ignore_eos=True)] * 5)
    stop = plain[0].output_token_ids[2]                           # request 0 stops at its third token
    params = [SamplingParams(max_tokens=8, stop_token_ids=[stop])] * 5
    runs = run_both(llama, PROMPTS, params, max_num_seqs=5)
    overlapped = tokens_and_reasons(runs[True][1])
    assert overlapped == tokens_and_reasons(runs[False][1])
    assert overlapped[0] == (plain[0].output_token_ids[:3], "stop")
    stopped_early = sum(reason == "stop" for _, reason in overlapped)
    extra_steps = len(runs[True][0].last_run.steps) - len(runs[False][0].last_run.steps)
    assert 0 <= extra_steps <= stopped_early                     # at most one wasted step per early stop


def test_seeded_sampling_gives_the_same_tokens(llama):
    params = [SamplingParams(max_tokens=n, temperature=0.8, top_k=20, seed=i, ignore_eos=True)
              for i, n in enumerate(MAX_TOKENS)]
    runs = run_both(llama, PROMPTS, params, max_num_seqs=5)
    assert tokens_and_reasons(runs[True][1]) == tokens_and_reasons(runs[False][1])


def test_finishing_by_length_costs_no_extra_step(llama):
    runs = run_both(llama, PROMPTS, GREEDY, max_num_seqs=5)      # all admitted at once
    steps = {overlap: [(s.kind, s.num_tokens) for s in llm.last_run.steps] for overlap, (llm, _) in runs.items()}
    assert steps[True] == steps[False]


def test_abort_while_its_token_is_in_flight(llama):
    engine = LLMEngine(llama, engine="paged", async_scheduling=True, max_num_seqs=3)
    requests = [engine.requests[engine.add_request(PROMPTS[i], SamplingParams(max_tokens=6, ignore_eos=True))]
                for i in range(3)]
    engine.step()
    engine.step()
    victim = engine.stage.in_flight[0].sampled[1]                 # its next token is on the device now
    engine.abort(victim.request_id)
    seen = set()
    while engine.has_unfinished_requests():
        seen |= {out.request_id for out in engine.step()}
    assert victim.request_id not in seen and victim.finish_reason == "abort"
    others = [i for i in range(3) if requests[i] is not victim]
    expected = LLM(llama, engine="paged").generate([PROMPTS[i] for i in others],
                                                   SamplingParams(max_tokens=6, ignore_eos=True))
    assert [requests[i].output_token_ids for i in others] == [o.output_token_ids for o in expected]
    kv = engine.stage.kv
    assert len(kv.free_blocks) == kv.num_blocks and engine.stage.in_flight is None


def test_async_scheduling_needs_the_paged_engine():
    with pytest.raises(ValueError, match="async_scheduling=True needs engine 'paged', got engine 'continuous'"):
        EngineConfig(engine="continuous", async_scheduling=True)


# --- random workloads through the fake model: EOS, aborts, preemption, chunks, shared prefixes ---

def fake_engine(async_scheduling, **options):
    """Stage 5, with async scheduling or without, on the fake model."""
    config = EngineConfig(engine="paged", device="cpu", attention_backend="sdpa", max_model_len=64,
                          async_scheduling=async_scheduling, **options)
    config.settle_max_model_len(64)
    return engine_class(config)(Executor(FakeModel()), config)


@settings(max_examples=80, deadline=None)
@given(workload=st.lists(st.tuples(st.integers(1, 16), st.integers(1, 10), st.booleans(), st.integers(0, 20),
                                   st.one_of(st.none(), st.integers(0, 30))), min_size=1, max_size=10),
       block_size=st.sampled_from([1, 2, 4]), spare_blocks=st.integers(0, 8), chunked=st.booleans(),
       prefix=st.booleans(), max_num_seqs=st.integers(1, 5))
def test_random_workloads_match_stage_5(workload, block_size, spare_blocks, chunked, prefix, max_num_seqs):
    """Requests that are never aborted get the same tokens, each finishes once, and no block leaks."""
    needed = max(-(-(p + n) // block_size) for p, n, *_ in workload)
    options = dict(block_size=block_size, num_blocks=needed + spare_blocks, max_num_seqs=max_num_seqs,
                   enable_chunked_prefill=chunked, max_num_batched_tokens=12 if chunked else 24,
                   enable_prefix_caching=prefix)
    timing = [(arrival, abort_at) for *_, arrival, abort_at in workload]
    outputs = {}
    for overlap in (False, True):
        engine = fake_engine(overlap, **options)
        requests = [request(p, n, ignore_eos) for p, n, ignore_eos, _, _ in workload]
        finished = drive(engine, requests, timing, lambda e: check_blocks(e.kv), max_steps=2000)
        assert len(engine.kv.free_blocks) == engine.kv.num_blocks and not engine.kv.block_tables
        assert all(finished[r.request_id] == (r.finish_reason != "abort") for r in requests)
        outputs[overlap] = [(r.output_token_ids, r.finish_reason) for r, (_, abort_at) in zip(requests, timing)
                                 if abort_at is None]
    assert outputs[True] == outputs[False]


# --- on a GPU: the host never waits for the device during decode steps ---

@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU: on a CPU every operation is synchronous")
def test_decode_steps_never_make_the_host_wait(llama):
    waited = {}
    for overlap in (False, True):
        engine = LLMEngine(llama, engine="paged", async_scheduling=overlap, max_num_seqs=4)
        for i in range(4):
            engine.add_request(PROMPTS[i], SamplingParams(max_tokens=12, ignore_eos=True))
        for _ in range(3):                                      # the prefill and the first decodes
            engine.step()
        torch.cuda.set_sync_debug_mode("error")                 # any call that waits for the GPU raises
        try:
            engine.step()
            engine.step()
            waited[overlap] = False
        except RuntimeError:
            waited[overlap] = True
        finally:
            torch.cuda.set_sync_debug_mode(0)
    assert waited == {False: True, True: False}                 # stage 5 waits to read its tokens

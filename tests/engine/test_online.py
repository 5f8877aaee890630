"""The online API (LLMEngine): requests that arrive while others run, streaming,
aborts, and bad input in the middle of a run."""
import gc
import weakref

import pytest

from minicb import LLM, LLMEngine, SamplingParams
from minicb import observer

from ..conftest import MAX_TOKENS, PROMPTS
from ..executors.test_cuda_graphs import use_decode_graphs

ONLINE_ENGINES = {
    "static": dict(engine="static", max_batch_size=2),
    "dynamic": dict(engine="dynamic", max_batch_size=2, max_wait_ms=1),
    "continuous": dict(engine="continuous", max_num_seqs=2),
    "paged-async": dict(engine="paged", max_num_seqs=2, async_scheduling=True),
}


def params(n):
    return SamplingParams(max_tokens=n, ignore_eos=True)


def run_all(engine):
    """Step until done; return {request_id: output_token_ids} and the step count."""
    outputs, steps = {}, 0
    while engine.has_unfinished_requests():
        for out in engine.step():
            outputs[out.request_id] = out.output_token_ids
        steps += 1
    return outputs, steps


@pytest.mark.parametrize("name", list(ONLINE_ENGINES))
def test_requests_arriving_mid_run_match_transformers(llama, hf_greedy, name):
    engine = LLMEngine(llama, **ONLINE_ENGINES[name])
    ids = [engine.add_request(PROMPTS[i], params(MAX_TOKENS[i])) for i in (0, 2)]
    outputs = {}
    for _ in range(3):                       # run a little, then more requests arrive
        for out in engine.step():
            outputs[out.request_id] = out.output_token_ids
    ids += [engine.add_request(PROMPTS[i], params(MAX_TOKENS[i])) for i in (1, 3, 4)]
    rest, _ = run_all(engine)
    outputs.update(rest)
    order = [0, 2, 1, 3, 4]
    assert [outputs[rid] for rid in ids] == [hf_greedy["llama"][i] for i in order]


def test_step_outputs_carry_each_new_token(llama):
    engine = LLMEngine(llama, engine="continuous")
    rid = engine.add_request([5, 6, 7], params(4), request_id="mine")
    assert rid == "mine"
    seen = []
    while engine.has_unfinished_requests():
        [out] = engine.step()
        assert out.request_id == "mine" and out.new_token_ids == out.output_token_ids[-1:]
        seen.append(out)
    assert [o.finished for o in seen] == [False, False, False, True]
    assert seen[-1].finish_reason == "length" and len(seen[-1].output_token_ids) == 4


@pytest.mark.parametrize("name", list(ONLINE_ENGINES))
def test_stream_yields_one_delta_per_token(llama, name):
    engine = LLMEngine(llama, **ONLINE_ENGINES[name])
    other = engine.requests[engine.add_request([1, 2, 3], params(9))]   # shares the steps
    deltas = list(engine.stream([5, 6, 7], params(5)))
    assert [len(d.output_token_ids) for d in deltas] == [1, 2, 3, 4, 5]
    assert [t for d in deltas for t in d.new_token_ids] == deltas[-1].output_token_ids
    assert deltas[-1].finished and other.output_token_ids        # the other advanced too


def test_abort_frees_the_slot_at_once_and_is_idempotent(llama):
    engine = LLMEngine(llama, engine="continuous", max_num_seqs=1)
    first = engine.add_request([5, 6, 7], params(50))
    second = engine.add_request([8, 9], params(3))
    engine.step()
    assert not engine.stage.kv.holes                            # first holds the only slot
    held = engine.requests[first]
    engine.abort(first)
    assert engine.stage.kv.holes == [range(engine.stage.kv.capacity)]
    assert held.finish_reason == "abort" and first not in engine.requests
    engine.abort(first)                                          # again: no-op
    engine.abort("no-such-request")                              # unknown: no-op
    outputs, _ = run_all(engine)
    assert len(outputs[second]) == 3
    assert engine.stage.kv.holes == [range(engine.stage.kv.capacity)] and not engine.has_unfinished_requests()


@pytest.mark.parametrize("name", list(ONLINE_ENGINES))
def test_bad_request_mid_run_leaves_the_others_untouched(llama, hf_greedy, name):
    engine = LLMEngine(llama, max_model_len=64, **ONLINE_ENGINES[name])
    ids = [engine.add_request(PROMPTS[i], params(MAX_TOKENS[i])) for i in range(3)]
    first = {out.request_id: out.output_token_ids for out in engine.step()}
    for bad, message in [([], "the prompt is empty"), ([3, 10_000], "token id 10000 is outside"),
                         ([1] * 62, "prompt of 62 tokens \\+ max_tokens 5 exceeds max_model_len 64")]:
        with pytest.raises(ValueError, match=message):
            engine.add_request(bad, params(5))
    with pytest.raises(ValueError, match="request_id '.*' is already in use"):
        engine.add_request([1], params(1), request_id=ids[0])
    outputs, _ = run_all(engine)
    assert [outputs.get(r, first.get(r)) for r in ids] == hf_greedy["llama"][:3]


@pytest.mark.parametrize("name", list(ONLINE_ENGINES))
def test_a_finished_request_is_let_go_with_its_metrics(llama, name):
    # A server runs for days: the engine must not keep every request it ever saw.
    engine = LLMEngine(llama, **ONLINE_ENGINES[name])
    done = engine.add_request([5, 6, 7], params(3), request_id="a")
    aborted = engine.add_request([8, 9], params(9), request_id="b")
    engine.step()
    engine.abort(aborted)
    last = {}
    while engine.has_unfinished_requests():
        last.update((out.request_id, out) for out in engine.step())
    assert last[done].finished and last[done].metrics.num_output_tokens == 3
    assert last[done].metrics.ttft > 0 and engine.requests == {}
    again = engine.add_request([5, 6, 7], params(3), request_id="a")   # a finished id may be used again
    outputs, _ = run_all(engine)
    assert outputs[again] == last[done].output_token_ids and engine.requests == {}


def test_the_step_log_is_bounded_outside_a_measured_run(llama, monkeypatch):
    monkeypatch.setattr(observer, "RECENT_STEPS", 5)
    llm = LLM(llama, engine="continuous")
    llm.generate([[5, 6, 7]], params(12))
    assert llm.last_run.num_steps == 12 and len(llm.last_run.steps) == 12   # a measured run keeps every step
    engine = llm.llm_engine
    engine.add_request([5, 6, 7], params(12))
    run_all(engine)
    assert len(engine.stage.steps) == 5 and engine.stage.steps[-1].useful_rows == 1   # the latest five


def test_a_prompt_over_the_token_budget_is_refused(llama):
    engine = LLMEngine(llama, engine="continuous", max_num_seqs=2, max_num_batched_tokens=16)
    with pytest.raises(ValueError, match="prompt of 17 tokens exceeds max_num_batched_tokens 16"):
        engine.add_request([3] * 17, params(2))
    engine.add_request([3] * 16, params(2))
    run_all(engine)


@pytest.mark.parametrize("name", ["single", "static", "dynamic", "continuous", "paged", "paged-async"])
def test_a_dropped_engine_frees_its_kv_cache_at_once(llama, name):
    # GPU memory comes back when the last reference to a tensor goes. A reference
    # cycle would keep a dropped engine's KV cache until the garbage collector
    # happened to run, and the next engine would find less memory free.
    engine = LLMEngine(llama, engine=name.removesuffix("-async"), max_wait_ms=1,
                       async_scheduling=name.endswith("-async"))
    if name.startswith("paged"):         # the CUDA-graph runner a GPU would have, minus the capture
        use_decode_graphs(engine)
    engine.add_request([3, 4, 5], params(3))
    while engine.has_unfinished_requests():
        engine.step()
    # Stages 1-3: the finished batch, and the cache it ran on, are already let go.
    assert getattr(engine.stage, "running", None) is None
    gc.disable()
    try:
        stage = weakref.ref(engine.stage)
        del engine
        assert stage() is None
    finally:
        gc.enable()

"""What a careless or hostile caller of LLMEngine and LLM can hand over, and
what it costs: a ValueError naming the argument, or a clamped value whose rule
the docstring gives, and nothing else. The engine keeps its steps, its other
requests finish, and no KV block or slot stays held."""
import math
import time

import numpy as np
import pytest
import torch

from minicb import LLM, LLMEngine, SamplingParams

GREEDY = SamplingParams(max_tokens=4, ignore_eos=True)
ENGINES = {
    "single": dict(engine="single"),
    "dynamic": dict(engine="dynamic", max_batch_size=4, max_wait_ms=50),
    "paged": dict(engine="paged", max_num_seqs=4, block_size=4),
    "paged-async": dict(engine="paged", max_num_seqs=4, block_size=4, async_scheduling=True),
}


@pytest.fixture(scope="module", params=list(ENGINES))
def engine(request, llama):
    return LLMEngine(llama, **ENGINES[request.param])


@pytest.fixture(scope="module")
def greedy_tokens(llama):
    llm = LLM(llama, engine="single")
    return lambda prompt, n=4: llm.generate([prompt], SamplingParams(max_tokens=n, ignore_eos=True))[0].output_token_ids


def run_until_idle(engine, timeout_s=60) -> dict:
    """Every request's last StepOutput, by id, once the engine is idle (the
    dynamic engine's steps are empty until its batch window closes)."""
    finished, deadline = {}, time.monotonic() + timeout_s
    while engine.has_unfinished_requests():
        if time.monotonic() > deadline:
            pytest.fail(f"still unfinished after {timeout_s} s: {sorted(engine.stage.unfinished)}")
        outputs = engine.step()
        finished.update((o.request_id, o) for o in outputs if o.finished)
        if not outputs:
            time.sleep(1e-3)
    return finished


def assert_nothing_held(engine):
    stage = engine.stage
    assert not engine.requests and not stage.unfinished and not stage.waiting
    kv = getattr(stage, "kv", None)
    if kv is not None:
        assert not (kv.block_tables if hasattr(kv, "block_tables") else kv.slot_of)


def test_a_lone_surrogate_in_a_prompt_is_named(engine, greedy_tokens):
    with pytest.raises(ValueError, match=r"prompt: character 1 is '\\ud800', a lone surrogate"):
        engine.add_request("a\ud800b", GREEDY)
    assert_nothing_held(engine)
    rid = engine.add_request([5, 6, 7], GREEDY)
    assert run_until_idle(engine)[rid].output_token_ids == greedy_tokens([5, 6, 7])


@pytest.mark.parametrize("params", [
    dict(temperature=1e-300), dict(temperature=5e-324), dict(temperature=1e-6),
    dict(temperature=1.0, top_p=1e-300), dict(temperature=1.0, top_p=5e-324),
], ids=str)
def test_a_temperature_or_top_p_that_underflows_samples_the_best_token(engine, greedy_tokens, params):
    """Below 1e-5 a temperature samples greedily; a top_p that rounds to 0 keeps the best token."""
    rid = engine.add_request([5, 6, 7], SamplingParams(max_tokens=4, ignore_eos=True, seed=1, **params))
    out = run_until_idle(engine)[rid]
    assert out.finish_reason == "length" and out.output_token_ids == greedy_tokens([5, 6, 7])
    assert_nothing_held(engine)


def leave_a_stream(engine, leave) -> str:
    """Read one output of a stream, then leave it as a caller would; its request id."""
    if leave == "break":                    # the loop holds the only reference: it goes
        for out in engine.stream([5, 6, 7], SamplingParams(max_tokens=100, ignore_eos=True)):
            break
        return out.request_id
    stream = engine.stream([5, 6, 7], SamplingParams(max_tokens=100, ignore_eos=True))
    out = next(stream)
    if leave == "close":
        stream.close()
    else:
        del stream                          # dropped: garbage collection closes it
    return out.request_id


@pytest.mark.parametrize("leave", ["break", "close", "drop"])
def test_a_stream_left_early_aborts_its_request(engine, greedy_tokens, leave):
    other = engine.requests[engine.add_request([8, 9], SamplingParams(max_tokens=12, ignore_eos=True))]
    left = leave_a_stream(engine, leave)
    assert left not in engine.requests and left not in engine.stage.unfinished
    outputs = [o for _ in range(40) for o in engine.step()]
    assert all(o.request_id != left for o in outputs)
    run_until_idle(engine)      # the stream may have stepped the other one to its end
    assert other.finish_reason == "length" and other.output_token_ids == greedy_tokens([8, 9], 12)
    assert_nothing_held(engine)


def test_a_stream_read_to_its_end_keeps_its_tokens(engine, greedy_tokens):
    outputs = list(engine.stream([5, 6, 7], GREEDY))
    assert outputs[-1].finished and outputs[-1].output_token_ids == greedy_tokens([5, 6, 7])
    assert_nothing_held(engine)


@pytest.mark.parametrize("change", [
    dict(stop_token_ids=None), dict(max_tokens=0), dict(temperature=float("nan")), dict(top_p=0.0),
], ids=str)
def test_sampling_params_changed_after_add_request_do_not_reach_a_step(engine, greedy_tokens, change):
    params = SamplingParams(max_tokens=4, ignore_eos=True)
    bad, good = engine.add_request([5, 6, 7], params), engine.add_request([8, 9], GREEDY)
    for name, value in change.items():
        setattr(params, name, value)
    finished = run_until_idle(engine)
    assert finished[bad].output_token_ids == greedy_tokens([5, 6, 7])
    assert finished[good].output_token_ids == greedy_tokens([8, 9])
    assert_nothing_held(engine)
    with pytest.raises(ValueError, match=list(change)[0]):    # and checked again when used again
        engine.add_request([5], params)
    assert_nothing_held(engine)


@pytest.mark.parametrize("arrival_time", [math.nan, math.inf, -math.inf, "x", True, None, 1e18])
def test_a_bad_arrival_time_is_named(engine, greedy_tokens, arrival_time):
    if arrival_time is None:
        arrival_time = time.perf_counter() + 3600              # an hour from now
    with pytest.raises(ValueError, match="arrival_time must be a reading of the engine.s clock"):
        engine.add_request([5, 6, 7], GREEDY, arrival_time=arrival_time)
    assert_nothing_held(engine)
    rid = engine.add_request([5, 6, 7], GREEDY, arrival_time=time.perf_counter() - 0.01)
    assert run_until_idle(engine)[rid].output_token_ids == greedy_tokens([5, 6, 7])


@pytest.mark.parametrize("prompt,message", [
    (None, "prompt must be text or a list of token ids, got None"),
    (5, "prompt must be text or a list of token ids, got 5"),
    (np.array(5), r"prompt must be text or a list of token ids, got array\(5\)"),
    (torch.tensor(5), r"prompt must be text or a list of token ids, got tensor\(5\)"),
    (np.zeros((2, 2), dtype=int), "prompt must be text or a list of token ids"),
    (b"ab", "prompt must be text or a list of token ids, got b'ab'"),
    ({5: 6}, "prompt must be text or a list of token ids"),
    ([None], "token id None is not an integer"),
    ([True, 5], "token id True is not an integer"),
    (torch.tensor([True, False]), r"token id tensor\(True\) is not an integer"),
    ([5, 2.0], "token id 2.0 is not an integer"),
    (torch.tensor([5, 6], device="meta"), "the prompt's tensor has no values to read .device 'meta'"),
    ([5, torch.tensor(6, device="meta")], r"token id tensor\(\.\.\., device='meta'.* is not an integer"),
])
def test_a_prompt_that_is_not_one_is_a_value_error(engine, prompt, message):
    with pytest.raises(ValueError, match=message):
        engine.add_request(prompt, GREEDY)
    assert_nothing_held(engine)


@pytest.mark.parametrize("kwargs,message", [
    (dict(params=SamplingParams(stop_token_ids=[3, 10**6])),
     r"^request: stop token id 1000000 is outside the vocabulary \[0, 259\)$"),
    (dict(params=dict(max_tokens=3)), "sampling params must be SamplingParams"),
    (dict(request_id=[1]), r"request_id must be a string or an integer, got \[1\]"),
    (dict(request_id=True), "request_id must be a string or an integer, got True"),
])
def test_every_other_argument_of_add_request_is_checked(engine, kwargs, message):
    with pytest.raises(ValueError, match=message):
        engine.add_request([5, 6], **kwargs)
    assert_nothing_held(engine)


@pytest.mark.parametrize("stop", [True, torch.tensor(True), np.array([True])[0], -1, 2.0,
                                  torch.tensor(3, device="meta")])
def test_a_stop_token_id_that_is_not_one_is_refused(stop):
    with pytest.raises(ValueError, match="stop_token_ids: .* is not a token id"):
        SamplingParams(stop_token_ids=[stop])


def test_a_prompt_too_long_is_refused_before_its_ids_are_checked(engine):
    """A million ids cost one length check, not a million id checks: the bad id
    at the end is never looked at."""
    with pytest.raises(ValueError, match="prompt of 1000001 tokens"):
        engine.add_request([5] * 10**6 + ["x"], GREEDY)


def test_an_error_names_a_huge_value_without_repeating_it(engine):
    with pytest.raises(ValueError) as error:
        engine.add_request([5, "x" * 10**6], GREEDY)
    assert len(str(error.value)) < 200


@pytest.mark.parametrize("prompts,message", [
    (None, "prompts must be text, a list of token ids, or a list of those; got None"),
    (5, "got 5"), (np.array(5), r"got array\(5\)"), (torch.tensor(5), r"got tensor\(5\)"),
    ({"a": 1}, r"got \{'a': 1\}"),
    ([None], "request 0: prompt must be text or a list of token ids, got None"),
    ([[5, 6], b"ab"], "request 1: prompt must be text or a list of token ids, got b'ab'"),
])
def test_generate_names_prompts_that_are_not_prompts(llama, prompts, message):
    llm = LLM(llama, engine="static")
    with pytest.raises(ValueError, match=message):
        llm.generate(prompts, GREEDY)
    assert llm.last_run is None and not llm.stage.unfinished
    with pytest.raises(ValueError, match="sampling_params must be SamplingParams or a list of them, got 4"):
        llm.generate([[5]], 4)
    with pytest.raises(ValueError, match="use_tqdm must be True or False, got 'yes'"):
        llm.generate([[5]], GREEDY, use_tqdm="yes")

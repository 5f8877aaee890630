"""No step strands a request. Ids cannot collide, state that outlives a step
in flight belongs to the request object, a request whose sampling fails
fails alone, a step that raises leaves nothing half-counted, and values that
cannot work are refused before any work runs."""
import random

import numpy as np
import pytest
import torch

from minicb import LLM, LLMEngine, SamplingParams
from minicb.sampling import Sampler

GREEDY = SamplingParams(max_tokens=4, ignore_eos=True)
ENGINES = {
    "single": dict(engine="single"),
    "static": dict(engine="static", max_batch_size=4),
    "continuous": dict(engine="continuous", max_num_seqs=4),
    "paged": dict(engine="paged", max_num_seqs=4, block_size=4),
    "paged-async": dict(engine="paged", max_num_seqs=4, block_size=4, async_scheduling=True),
}


MAX_STEPS = 1000       # far more than any test here needs: a stranded request fails, not hangs


def steps_until_idle(engine):
    """Every StepOutput until the engine is idle; fails if it never gets there."""
    for _ in range(MAX_STEPS):
        if not engine.has_unfinished_requests():
            return
        yield from engine.step()
    pytest.fail(f"still unfinished after {MAX_STEPS} steps: {sorted(engine.stage.unfinished)}")


def drain(engine) -> dict:
    """Step until idle; the last StepOutput of each finished request, by id."""
    finished = {}
    for out in steps_until_idle(engine):
        if out.finished:
            assert out.request_id not in finished, f"{out.request_id} finished twice"
            finished[out.request_id] = out
    return finished


def assert_nothing_held(engine):
    inner = engine.stage
    assert not inner.unfinished and not inner.waiting
    if hasattr(inner, "kv"):
        held = inner.kv.block_tables if hasattr(inner.kv, "block_tables") else inner.kv.slot_of
        assert not held


def greedy_tokens(llama, prompts, max_tokens=4):
    params = SamplingParams(max_tokens=max_tokens, ignore_eos=True)
    return [o.output_token_ids for o in LLM(llama, engine="single").generate(prompts, params)]


@pytest.mark.parametrize("name", ENGINES)
def test_an_integer_id_and_its_string_are_one_id(llama, name):
    engine = LLMEngine(llama, **ENGINES[name])
    assert engine.add_request([5, 6, 7], GREEDY, request_id=7) == "7"
    for same in (7, "7"):
        with pytest.raises(ValueError, match="request_id .* is already in use"):
            engine.add_request([8, 9], GREEDY, request_id=same)
    engine.add_request([8, 9], GREEDY, request_id=8)
    engine.abort(8)                                          # an integer id aborts its request
    finished = drain(engine)
    assert list(finished) == ["7"] and finished["7"].output_token_ids == greedy_tokens(llama, [[5, 6, 7]])[0]
    assert_nothing_held(engine)


@pytest.mark.parametrize("name", ENGINES)
def test_an_automatic_id_skips_an_id_a_live_request_was_given(llama, name):
    engine = LLMEngine(llama, **ENGINES[name])
    first = engine.add_request([5, 6, 7], GREEDY)
    # Users take the automatic ids two and three ahead; two automatic ids follow.
    ids = [first] + [engine.add_request([8, 9 + i], GREEDY, request_id=str(int(first) + 2 + i)) for i in range(2)]
    ids += [engine.add_request([10, 11 + i], GREEDY) for i in range(2)]
    assert len(set(ids)) == 5
    finished = drain(engine)
    expected = greedy_tokens(llama, [[5, 6, 7], [8, 9], [8, 10], [10, 11], [10, 12]])
    assert [finished[rid].output_token_ids for rid in ids] == expected
    assert_nothing_held(engine)


PREFIX = list(range(30, 55))          # 25 tokens: 6 full blocks of 4, and one token more


def prefix_after_id_reuse(llama, async_scheduling):
    """Request A (id "x") stops on its third token. The moment it finishes, B
    takes the id "x" and A's freed blocks. Then C arrives, sharing A's prompt
    and output."""
    first_three = greedy_tokens(llama, [PREFIX], max_tokens=3)[0]
    assert len(set(first_three)) == 3                       # A stops on its third token, not before
    # 9 blocks of 4: B's 25 tokens (7 blocks, with room for its 3 more) take the 2 never
    # used and A's freed blocks 6..2, which leave the cache; A's blocks 0 and 1 stay.
    engine = LLMEngine(llama, engine="paged", block_size=4, num_blocks=9, enable_prefix_caching=True,
                       async_scheduling=async_scheduling)
    engine.add_request(PREFIX, SamplingParams(max_tokens=8, stop_token_ids=[first_three[2]]), request_id="x")
    outputs, reused = [], False
    for out in steps_until_idle(engine):
        if out.finished:
            outputs.append(out.output_token_ids)
        if out.request_id == "x" and out.finished and not reused:
            engine.add_request(list(range(100, 125)), GREEDY, request_id="x")
            reused = True
    engine.add_request(PREFIX + first_three + [60, 61], GREEDY, request_id="c")
    outputs += [out.output_token_ids for out in drain(engine).values()]
    assert_nothing_held(engine)
    return outputs


def test_reusing_an_id_while_its_step_is_in_flight_keeps_the_prefix_cache_right(llama):
    """With async scheduling, A's last step is still in flight when B takes its
    id. Publishing that step's full blocks must use A's block table, not B's;
    otherwise B's blocks are cached under A's tokens, and C, which shares A's
    prefix, reads B's K/V."""
    assert prefix_after_id_reuse(llama, async_scheduling=True) == prefix_after_id_reuse(llama, False)


def test_a_request_preempted_while_its_token_is_in_flight_recomputes_right(llama):
    # Four requests grow in 10 blocks of 4 until one is preempted. It may be admitted
    # again in the same step, its last token still in flight, and its recompute then
    # runs in chunks of at most 4 tokens: the first chunk must not take that token.
    prompts = [list(range(3 + i, 13 + i)) for i in range(4)]
    params = SamplingParams(max_tokens=14, ignore_eos=True)
    expected = greedy_tokens(llama, prompts, max_tokens=14)
    engine = LLMEngine(llama, engine="paged", block_size=4, num_blocks=10, max_num_seqs=4,
                       enable_chunked_prefill=True, max_num_batched_tokens=4, async_scheduling=True)
    ids = [engine.add_request(p, params) for p in prompts]
    requests = [engine.requests[rid] for rid in ids]
    finished = drain(engine)
    assert sum(r.num_preemptions for r in requests) > 0
    assert [finished[rid].output_token_ids for rid in ids] == expected
    assert_nothing_held(engine)


def fail_sampling_for_seed(monkeypatch, seed):
    """The rows of requests with this seed get logits that are not finite."""
    original = Sampler.__call__

    def call(self, logits, params, generators):
        logits = logits.clone()
        logits[[i for i, p in enumerate(params) if p.seed == seed]] = float("nan")
        return original(self, logits, params, generators)

    monkeypatch.setattr(Sampler, "__call__", call)


@pytest.mark.parametrize("name", ENGINES)
def test_a_request_whose_sampling_fails_fails_alone(llama, monkeypatch, name):
    fail_sampling_for_seed(monkeypatch, seed=13)
    engine = LLMEngine(llama, **ENGINES[name])
    bad = engine.add_request([9, 9, 9], SamplingParams(max_tokens=4, temperature=1.0, seed=13))
    good = engine.add_request([5, 6, 7], GREEDY)
    finished = drain(engine)
    assert finished[bad].finish_reason == "error" and "logits are not finite" in finished[bad].error
    assert finished[bad].output_token_ids == [] and finished[bad].new_token_ids == []
    assert finished[good].output_token_ids == greedy_tokens(llama, [[5, 6, 7]])[0]
    assert_nothing_held(engine)
    again = engine.add_request([5, 6, 7], GREEDY)                      # and it keeps serving
    assert drain(engine)[again].output_token_ids == finished[good].output_token_ids


def drain_through_errors(engine) -> tuple[dict, int]:
    """Step until idle, counting the steps that raised; the last StepOutput of
    each finished request, by id, and that count."""
    finished, raised = {}, 0
    for _ in range(MAX_STEPS):
        if not engine.has_unfinished_requests():
            break
        try:
            outputs = engine.step()
        except RuntimeError:
            raised += 1
            continue
        finished.update((o.request_id, o) for o in outputs if o.finished)
    return finished, raised


@pytest.mark.parametrize("name", ENGINES)
def test_a_step_that_raises_leaves_every_request_to_run_again(llama, monkeypatch, name):
    engine = LLMEngine(llama, **ENGINES[name])
    prompts = [[5, 6, 7], [8, 9], list(range(10, 30))]
    ids = [engine.add_request(p, GREEDY) for p in prompts]
    # The logits come after the forward pass, when the step's tokens already count as computed.
    calls, compute_logits = [0], type(engine.executor.model).compute_logits

    def logits_that_fail_once(model, hidden):
        calls[0] += 1
        if calls[0] == 3:
            raise RuntimeError("the device is gone for a moment")
        return compute_logits(model, hidden)

    monkeypatch.setattr(type(engine.executor.model), "compute_logits", logits_that_fail_once)
    finished, raised = drain_through_errors(engine)
    assert raised == 1
    assert [finished[rid].output_token_ids for rid in ids] == greedy_tokens(llama, prompts)
    assert_nothing_held(engine)


@pytest.mark.parametrize("name", ENGINES)
def test_a_step_that_raises_after_its_forward_pass_is_never_logged(llama, monkeypatch, name):
    engine = LLMEngine(llama, **ENGINES[name])
    prompts = [[5, 6, 7], [8, 9], list(range(10, 30))]
    ids = [engine.add_request(p, GREEDY) for p in prompts]
    # Sampling comes after the forward pass: the step log has seen it launched.
    calls, sample = [0], Sampler.__call__

    def sampling_that_fails_once(sampler, *args):
        calls[0] += 1
        if calls[0] == 3:
            raise RuntimeError("the device is gone for a moment")
        return sample(sampler, *args)

    monkeypatch.setattr(Sampler, "__call__", sampling_that_fails_once)
    finished, raised = drain_through_errors(engine)
    log = engine.stage.log
    # One record per forward pass whose tokens came out, none for the one undone.
    assert raised == 1 and not log.launches and len(log.records) == calls[0] - 1
    assert [finished[rid].output_token_ids for rid in ids] == greedy_tokens(llama, prompts)
    for record in log.records:
        assert 0 < record.host_time and 0 < record.forward_time
        assert record.host_time + record.forward_time < record.duration


@pytest.mark.parametrize("name", ["single", "paged"])
def test_a_tiny_temperature_samples_the_greedy_token(llama, name):
    llm = LLM(llama, **ENGINES[name])
    params = SamplingParams(max_tokens=4, temperature=1e-40, ignore_eos=True)
    assert llm.generate([[5, 6, 7]], params)[0].output_token_ids == greedy_tokens(llama, [[5, 6, 7]])[0]


@pytest.mark.parametrize("prompt", [np.array([5, 6, 7]), [np.int64(5), np.int32(6), 7], torch.tensor([5, 6, 7])],
                         ids=["numpy-array", "numpy-ints", "tensor"])
def test_one_prompt_of_array_token_ids_is_one_prompt(llama, prompt):
    [output] = LLM(llama, engine="single").generate(prompt, GREEDY)
    assert output.prompt_token_ids == [5, 6, 7] and output.output_token_ids == greedy_tokens(llama, [[5, 6, 7]])[0]


def test_several_prompts_in_one_array_are_several_prompts(llama):
    outputs = LLM(llama, engine="static").generate(np.array([[5, 6, 7], [8, 9, 10]]), GREEDY)
    assert [o.output_token_ids for o in outputs] == greedy_tokens(llama, [[5, 6, 7], [8, 9, 10]])


@pytest.mark.skipif(torch.cuda.is_available(), reason="the interpreter's bf16 arithmetic is a CPU matter")
def test_bf16_triton_on_a_cpu_is_refused(llama):
    with pytest.raises(ValueError, match="dtype 'bfloat16' with attention_backend 'triton' needs a GPU"):
        LLM(llama, dtype="bfloat16", attention_backend="triton", device="cpu")


# ---------------------------------------------------------------- random sessions
def random_options(rng) -> dict:
    name = rng.choice(["static", "dynamic", "continuous", "paged", "paged", "paged-async", "paged-async"])
    if name in ("static", "dynamic"):
        return dict(engine=name, max_batch_size=rng.randint(1, 4), max_wait_ms=0)
    options = dict(engine="continuous" if name == "continuous" else "paged", max_num_seqs=rng.randint(1, 4))
    if name != "continuous":
        options.update(block_size=rng.choice([1, 4, 16]), enable_prefix_caching=rng.random() < 0.5,
                       async_scheduling=name == "paged-async")
        options["num_blocks"] = max(64 // options["block_size"], rng.randint(2, 8) * 64 // options["block_size"])
        if rng.random() < 0.5:
            options.update(enable_chunked_prefill=True, max_num_batched_tokens=rng.choice([8, 16, 64]))
    return options


def random_session(llama, seed):
    """Requests arrive, are aborted, and have their ids used again at random
    while the engine steps. Returns the options, every request that finished
    (prompt, params, output) and every one that was aborted."""
    rng = random.Random(seed)
    options = random_options(rng)
    engine = LLMEngine(llama, max_model_len=64, **options)
    shared = [rng.randrange(3, 250) for _ in range(12)]              # a prefix some prompts share
    live, finished, aborted, used_ids = {}, [], [], []
    for tick in range(60):
        if tick < 40 and rng.random() < 0.4:
            prompt = (shared[:rng.randint(0, 12)] if rng.random() < 0.5 else []) + \
                [rng.randrange(3, 250) for _ in range(rng.randint(1, 20))]
            params = SamplingParams(max_tokens=rng.randint(1, 12), ignore_eos=True,
                                    stop_token_ids=[rng.randrange(3, 250)] if rng.random() < 0.3 else [])
            reuse = [i for i in used_ids if i not in live]
            request_id = rng.choice(reuse) if reuse and rng.random() < 0.5 else rng.choice([None, len(used_ids)])
            if request_id is not None and str(request_id) in live:
                with pytest.raises(ValueError, match="already in use"):
                    engine.add_request(prompt, params, request_id=request_id)
            else:
                rid = engine.add_request(prompt, params, request_id=request_id)
                live[rid] = (prompt, params)
                used_ids.append(rid)
        if live and rng.random() < 0.1:
            rid = rng.choice(list(live))
            engine.abort(int(rid) if rid.isdigit() and rng.random() < 0.5 else rid)
            aborted.append(live.pop(rid))
        for out in engine.step():
            assert out.request_id in live, f"output for {out.request_id}, which is not live"
            if out.finished:
                finished.append((*live.pop(out.request_id), out.output_token_ids))
    for out in steps_until_idle(engine):
        if out.finished:
            finished.append((*live.pop(out.request_id), out.output_token_ids))
    assert not live, f"never finished: {sorted(live)}"
    assert_nothing_held(engine)
    return options, finished, aborted


@pytest.mark.parametrize("seed", range(40))
def test_random_sessions_give_the_single_engine_tokens(llama, seed):
    options, finished, aborted = random_session(llama, seed)
    prompts, params, outputs = zip(*finished) if finished else ((), (), ())
    reference = LLM(llama, engine="single", max_model_len=64).generate(list(prompts), list(params))
    assert list(outputs) == [o.output_token_ids for o in reference], options

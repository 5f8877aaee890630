"""Stage 6: speculative decoding on stage 5. Greedy tokens equal stage 5's with
every idea it keeps (preemption, chunked prefill, prefix caching); a sampled
token keeps the model's distribution; no KV is held once requests end."""
import pytest
import torch

from minicb import LLM, LLMEngine, SamplingParams
from minicb.config import MAX_SPECULATIVE_TOKENS, EngineConfig
from minicb.kernels import reference
from minicb.kernels.paged_attention import paged_attention, paged_attention_tiles
from minicb.stages.drafting import Draft, PromptLookup
from minicb.stages.speculative import accept, agreed

from ..kernels.test_kernels import DTYPES, TOLERANCE
from .test_5_paged import paged_inputs

# Prompts that repeat themselves, so that prompt lookup finds drafts, and one that
# does not; the tiny random model's greedy answers fall into loops the drafter finds.
PROMPTS = [[5, 6, 7, 8, 9] * 2 + [5, 6, 7], [1, 2, 3, 4] * 2 + [1, 2], list(range(20, 60)), [7, 7, 7, 7], [30, 31]]
MAX_TOKENS = [24, 17, 30, 5, 12]
SPEC = {"num_speculative_tokens": 3}


def lookup(k=3, longest=4, shortest=1):
    config = EngineConfig(engine="paged", speculative_config={
        "num_speculative_tokens": k, "prompt_lookup_max": longest, "prompt_lookup_min": shortest})
    return PromptLookup(config)


def test_prompt_lookup_proposes_what_followed_the_latest_longest_match():
    tokens = [1, 2, 3, 9, 1, 2, 3, 8, 5, 2, 3]
    # "2 3" last occurred before 8 (the longer "5 2 3" never did): 8, 5, 2 followed it
    assert lookup().lookup(tokens, 3) == [8, 5, 2]
    assert lookup().lookup(tokens, 1) == [8]
    assert lookup().lookup(tokens, 0) == []
    assert lookup().lookup([4, 5, 6], 3) == []                  # nothing recurs
    assert lookup(shortest=3).lookup(tokens, 3) == []            # "5 2 3" is new
    assert lookup().lookup([1, 2, 3, 1, 2, 3], 5) == [1, 2, 3]   # no more than there is


def test_a_greedy_request_keeps_the_drafts_the_model_agrees_with_and_its_next_pick():
    assert agreed([4, 5, 6], [4, 5, 6, 7]) == [4, 5, 6, 7]
    assert agreed([4, 5, 6], [4, 9, 6, 7]) == [4, 9]
    assert agreed([4, 5, 6], [1, 5, 6, 7]) == [1]
    assert agreed([], [3]) == [3]


def first_tokens(probs, draft, trials, seed=0):
    """How often each token came first from accept, and the second after an accepted first."""
    generator = torch.Generator().manual_seed(seed)
    first, second = torch.zeros(probs.shape[1]), torch.zeros(probs.shape[1])
    for _ in range(trials):
        kept = accept(Draft(draft), probs, generator)
        first[kept[0]] += 1
        if kept[0] == draft[0]:
            second[kept[1]] += 1
    return first / first.sum(), second / second.sum()


def test_a_sampled_token_keeps_the_models_distribution_with_a_draft_it_disagrees_with():
    """Drafts the model finds unlikely (token 0 at 10% first, token 4 at 5% after it):
    the first token kept is distributed as the model's p, and so is the one after an
    accepted draft. 20,000 trials: each frequency is within 0.004 of its p at one
    standard deviation; the bound is five of those. Planted: keeping every draft
    (q taken as p) gives token 0 a frequency of 1 and fails."""
    probs = torch.tensor([[0.10, 0.50, 0.20, 0.15, 0.05],
                          [0.30, 0.25, 0.25, 0.15, 0.05],
                          [0.20, 0.20, 0.20, 0.20, 0.20]])
    first, second = first_tokens(probs, [0, 4], trials=20_000)
    assert (first - probs[0]).abs().max() < 0.02, first
    assert (second - probs[1]).abs().max() < 0.07, second     # about 2,000 of them


def greedy_runs(llama, max_num_seqs=4, **options):
    params = [SamplingParams(max_tokens=n, ignore_eos=True) for n in MAX_TOKENS]
    base = dict(engine="paged", block_size=4, max_num_seqs=max_num_seqs, **options)
    plain = LLM(llama, **base).generate(PROMPTS, params)
    speculative = LLM(llama, **base, speculative_config=SPEC)
    return plain, speculative, speculative.generate(PROMPTS, params)


@pytest.mark.parametrize("options", [{}, dict(num_blocks=20), dict(enable_chunked_prefill=True,
                                                                   max_num_batched_tokens=8),
                                     dict(enable_prefix_caching=True)],
                         ids=["paged", "preempted", "chunked", "prefix-cached"])
def test_greedy_tokens_equal_stage_5s_and_no_block_is_kept(llama, options):
    plain, llm, outputs = greedy_runs(llama, **options)
    assert [o.output_token_ids for o in outputs] == [o.output_token_ids for o in plain]
    drafted = sum(o.metrics.num_draft_tokens for o in outputs)
    accepted = sum(o.metrics.num_accepted_tokens for o in outputs)
    assert 0 < accepted < drafted                        # drafts were kept, and rejected
    run = llm.last_run
    assert (run.num_draft_tokens, run.num_accepted_tokens) == (drafted, accepted)
    assert run.acceptance_rate == accepted / drafted
    assert len(llm.last_run.steps) < sum(MAX_TOKENS)     # fewer steps than tokens
    kv = llm.stage.kv
    assert kv.block_tables == {} and len(kv.free_blocks) == kv.num_blocks
    if "num_blocks" in options:
        assert llm.last_run.num_preemptions > 0
    if "enable_prefix_caching" in options:
        assert not any(kv.ref_counts)


def test_a_request_gets_no_more_tokens_than_max_tokens_and_stops_at_a_stop_token(llama):
    """Drafts never reach past max_tokens; a stop token among a step's kept tokens
    ends the request there, the tokens after it dropped."""
    _, _, outputs = greedy_runs(llama)
    assert [len(o.output_token_ids) for o in outputs] == MAX_TOKENS
    answer = outputs[0].output_token_ids
    stop = answer[len(answer) // 2]
    llm = LLM(llama, engine="paged", block_size=4, speculative_config=SPEC)
    [out] = llm.generate([PROMPTS[0]], SamplingParams(max_tokens=24, stop_token_ids=[stop]))
    assert out.output_token_ids == answer[:answer.index(stop) + 1] and out.finish_reason == "stop"
    assert llm.stage.kv.block_tables == {}


def test_a_step_hands_out_every_token_it_kept_and_holds_no_block_past_them(llama):
    """LLMEngine.step's new_token_ids, joined, are the answer; some step gave more
    than one. After every step a request holds the blocks of its computed tokens
    and no more: a rejected draft's block went back (planted: no trim fails)."""
    engine = LLMEngine(llama, engine="paged", block_size=4, speculative_config=SPEC)
    rid = engine.add_request(PROMPTS[0], SamplingParams(max_tokens=24, ignore_eos=True))
    for prompt in PROMPTS[1:]:
        engine.add_request(prompt, SamplingParams(max_tokens=24, ignore_eos=True))
    pieces, last, kv = [], None, engine.stage.kv
    while engine.has_unfinished_requests():
        for out in engine.step():
            if out.request_id == rid:
                pieces.append(out.new_token_ids)
                last = out
        assert all(len(table) == kv.blocks_for(request.num_computed_tokens)
                   for request, table in kv.block_tables.items())
    assert last.request_id == rid and sum(pieces, []) == last.output_token_ids
    assert max(map(len, pieces)) > 1 and len(last.output_token_ids) == 24


def test_sampled_requests_finish_and_give_back_their_blocks_and_an_abort_does_too(llama):
    llm = LLM(llama, engine="paged", block_size=4, num_blocks=24, speculative_config=SPEC)
    params = [SamplingParams(max_tokens=n, temperature=0.8, top_k=20, seed=i) for i, n in enumerate(MAX_TOKENS)]
    outputs = llm.generate(PROMPTS, params)
    assert all(len(o.output_token_ids) <= n for o, n in zip(outputs, MAX_TOKENS))
    assert sum(o.metrics.num_draft_tokens for o in outputs) > 0
    again = llm.generate(PROMPTS, params)                   # seeded: the same tokens
    assert [o.output_token_ids for o in again] == [o.output_token_ids for o in outputs]
    engine = llm.llm_engine
    rid = engine.add_request(PROMPTS[0], SamplingParams(max_tokens=24, ignore_eos=True))
    for _ in range(4):
        engine.step()
    engine.abort(rid)
    assert llm.stage.kv.block_tables == {} and len(llm.stage.kv.free_blocks) == 24


@pytest.mark.parametrize("spec,message", [
    ({"num_speculative_tokens": 0}, "num_speculative_tokens must be an integer in \\[1, 16\\], got 0"),
    ({"num_speculative_tokens": 2, "k": 1}, "unknown key 'k'"),
    ({}, "needs num_speculative_tokens"),
    ({"num_speculative_tokens": 2, "method": "eagle"}, "unknown method 'eagle'"),
    ({"num_speculative_tokens": 2, "prompt_lookup_min": 5}, "prompt_lookup_min 5 is above prompt_lookup_max 4"),
    ("3", "speculative_config must be a dict or None, got '3'"),
])
def test_a_bad_speculative_config_is_named_at_the_door(spec, message):
    with pytest.raises(ValueError, match=message):
        EngineConfig(engine="paged", speculative_config=spec)


def test_speculation_needs_stage_5_without_async_scheduling():
    for options in (dict(engine="continuous"), dict(engine="paged", async_scheduling=True)):
        with pytest.raises(ValueError, match="speculative_config needs engine 'paged' without async_scheduling"):
            EngineConfig(**options, speculative_config=SPEC)
    mine = dict(SPEC)
    EngineConfig(engine="paged", speculative_config=mine).speculative_config["method"] = "x"
    assert mine == SPEC                                     # the caller's dict is not kept


def test_the_benchmark_runs_every_engine_in_turns_and_checks_they_agree(llama, monkeypatch):
    """workshop.measure.speculative on the tiny model: every task at every batch, a
    ratio per round for each drafter, the verdict of its rounds; an answer that
    differs from plain decoding's is an error."""
    from workshop.measure import speculative

    drafters = {"prompt lookup": {"num_speculative_tokens": 3},
                "draft model": {"method": "draft", "num_speculative_tokens": 2, "draft_layers": 1}}
    result = speculative.measure(llama, drafters, batches=[1, 2], rounds=1, max_tokens=8)
    for task in speculative.TASKS:
        for batch in ("1", "2"):
            run = result["tasks"][task][batch]
            names = list(run)
            assert names == ["plain", *drafters]
            assert run["plain"]["tokens_per_step"] == 1.0 and run["plain"]["acceptance"] is None
            assert run["plain"]["tokens"] == 8 * int(batch)
            for name in names[1:]:
                assert len(run[name]["ratios"]) == 1 and run[name]["ratios"][0] > 0
                assert run[name]["faster"] is None and "repeat" in run[name]["undecided_because"]
                assert run[name]["drafted"] >= run[name]["accepted"] >= 0
    real = speculative.one_run
    monkeypatch.setattr(speculative, "one_run", lambda llm, *rest: {
        **real(llm, *rest), **({"answers": [[0]]} if llm.config.speculative_config else {})})
    with pytest.raises(AssertionError, match="prompt lookup changed the greedy answer"):
        speculative.measure(llama, {"prompt lookup": {"num_speculative_tokens": 3}}, rounds=1, max_tokens=4)


def test_bench_prints_the_drafts_and_their_acceptance(llama, capsys):
    from minicb.cli import main

    main(["bench", "--model", llama, "--engine", "paged", "--num-requests", "4", "--scale", "0.0625",
          "--speculative-config", '{"num_speculative_tokens": 3}'])
    printed = capsys.readouterr().out
    header = next(line for line in printed.splitlines() if line.startswith("engine  drafted"))
    assert header.split() == ["engine", "drafted", "accepted", "acceptance", "out", "tokens/step"]
    [row] = [line.split() for line in printed.splitlines()[printed.splitlines().index(header) + 2:][:1]]
    assert row[0] == "paged" and int(row[1]) >= int(row[2]) >= 0


def test_a_draft_with_its_own_distribution_keeps_the_models():
    """A draft model's q, far from p (token 1: q 0.6, p 0.1; p's favourite, token 2:
    q 0.05), each draft drawn from q. The first token kept is distributed as p.
    Planted: keeping a draft with probability p(x) alone (q taken as one-hot) fails."""
    probs = torch.tensor([[0.30, 0.10, 0.40, 0.15, 0.05], [0.2] * 5])
    q = torch.tensor([[0.05, 0.60, 0.05, 0.10, 0.20]])
    generator, counts = torch.Generator().manual_seed(1), torch.zeros(5)
    for _ in range(20_000):
        drafted = int(torch.multinomial(q[0], 1, generator=generator))
        counts[accept(Draft([drafted], q), probs, generator)[0]] += 1
    assert (counts / counts.sum() - probs[0]).abs().max() < 0.02, counts / counts.sum()


@pytest.fixture(scope="module")
def other_llama(tmp_path_factory):
    """Another tiny Llama: the same vocabulary, other weights."""
    from minicb import make_tiny_checkpoint

    return make_tiny_checkpoint(tmp_path_factory.mktemp("draft") / "other", arch="llama", seed=1)


@pytest.mark.parametrize("draft,options", [
    ({"draft_layers": 1}, {}),                              # the target's first layer
    ({}, dict(enable_prefix_caching=True)),                 # the whole target: every draft kept
    ("other", dict(num_blocks=20)),                         # another checkpoint, preempted
], ids=["first-layer", "itself", "other-preempted"])
def test_a_draft_model_gives_stage_5s_greedy_tokens(llama, other_llama, draft, options):
    spec = {"num_speculative_tokens": 3, "method": "draft",
            **({"model": other_llama} if draft == "other" else draft)}
    params = [SamplingParams(max_tokens=n, ignore_eos=True) for n in MAX_TOKENS]
    base = dict(engine="paged", block_size=4, max_num_seqs=4, **options)
    plain = LLM(llama, **base).generate(PROMPTS, params)
    llm = LLM(llama, **base, speculative_config=spec)
    outputs = llm.generate(PROMPTS, params)
    assert [o.output_token_ids for o in outputs] == [o.output_token_ids for o in plain]
    run = llm.last_run
    assert run.num_draft_tokens > 0
    if draft == {}:              # the model drafting for itself agrees with itself
        assert run.num_accepted_tokens == run.num_draft_tokens
    assert llm.stage.drafter.slots == {} and llm.stage.kv.block_tables == {}
    assert sorted(llm.stage.drafter.free_slots) == list(range(4))     # every slot back


def test_a_draft_model_s_sampled_drafts_finish_and_an_abort_drops_its_cache(llama):
    llm = LLM(llama, engine="paged", block_size=4, speculative_config={
        "num_speculative_tokens": 2, "method": "draft", "draft_layers": 1})
    params = [SamplingParams(max_tokens=n, temperature=1.0, seed=i) for i, n in enumerate(MAX_TOKENS)]
    outputs = llm.generate(PROMPTS, params)
    assert all(len(o.output_token_ids) <= n for o, n in zip(outputs, MAX_TOKENS))
    engine = llm.llm_engine
    rid = engine.add_request(PROMPTS[0], SamplingParams(max_tokens=24, ignore_eos=True))
    for _ in range(3):
        engine.step()
    assert llm.stage.drafter.slots
    engine.abort(rid)
    assert llm.stage.drafter.slots == {} and llm.stage.kv.block_tables == {}


def test_a_draft_model_needs_the_targets_vocabulary(llama):
    from minicb.stages.drafting import DraftModel

    llm = LLM(llama, engine="paged", speculative_config={"num_speculative_tokens": 2, "method": "draft"})
    with pytest.raises(ValueError, match="the draft model's vocabulary has 259 tokens, the target's 7"):
        DraftModel(llm.stage, 7)


@pytest.mark.parametrize("spec,options,message", [
    ({"model": "x"}, {}, "model needs method 'draft', got method 'ngram'"),
    ({"method": "draft", "draft_layers": 0}, {}, "draft_layers must be an integer >= 1, got 0"),
    ({"method": "draft"}, dict(executor="simulated"), "the simulated executor runs none"),
])
def test_a_bad_draft_model_option_is_named(spec, options, message):
    with pytest.raises(ValueError, match=message):
        EngineConfig(engine="paged", speculative_config={"num_speculative_tokens": 2, **spec}, **options)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("k", [1, 2, 3, 4, 7, 8, MAX_SPECULATIVE_TOKENS])
def test_the_paged_kernel_verifies_k_drafts_a_sequence_as_the_reference_does(dtype, k):
    """A verify step: each sequence's last token and k drafts (fewer where drafts ran
    out: one sequence plain decodes), over contexts on and off block boundaries, in
    the paged kernel and in its fixed-grid variant (the graph executor's), at every
    k up to the most speculative_config allows."""
    torch.manual_seed(k)
    queries = [k + 1, k + 1, 1, max(1, k // 2) + 1]
    contexts = [40 + k + 1, 16 + k + 1, 33, 5 + queries[3]]
    args = paged_inputs(queries, contexts, 8, 2, 64, dtype, 16)
    expected = reference.paged_attention(*args)
    torch.testing.assert_close(paged_attention(*args), expected, **TOLERANCE[dtype])
    torch.testing.assert_close(paged_attention_tiles(*args, max_query_len=k + 1), expected, **TOLERANCE[dtype])


def test_the_gpu_part_times_verify_steps_beside_decode_steps(tmp_path, monkeypatch):
    """workshop.measure.speculative steps, rehearsed on the tiny model: each shape's
    decode and verify steps at each batch, the speedup a drafter of each acceptance
    would give (its expected tokens over the two steps' times) and the cost
    model's prediction at the same batches."""
    import json

    from minicb.costmodel import HARDWARE, MODEL_SHAPES, expected_tokens, speculative_speedup
    from workshop.measure import speculative
    from workshop.report.scale import run_scale

    monkeypatch.setenv("MINICB_SCALE", "rehearsal")
    result = json.loads(speculative.measure_steps(tmp_path, run_scale()).read_text())
    sizes = speculative.REHEARSAL_STEPS
    for shape in sizes["shapes"]:
        found = result["shapes"][shape]
        assert set(found["answers"]) == set(speculative.TASKS)      # batch 1, with and without
        assert all(len(run["prompt lookup"]["ratios"]) == sizes["rounds"] for run in found["answers"].values())
        assert [r["batch"] for r in found["rows"]] == sizes["batches"]
        first = found["rows"][0]
        assert first["decode_ms"] > 0 and first["verify_ms"] > 0
        assert found["measured"]["0.5"]["speedup"][0] == pytest.approx(
            expected_tokens(0.5, sizes["k"]) * first["decode_ms"] / first["verify_ms"])
        assert found["predicted"]["h200"]["0.7"][-1] == pytest.approx(speculative_speedup(
            HARDWARE["h200"], MODEL_SHAPES[shape], 2, sizes["batches"][-1], sizes["context"], sizes["k"], 0.7))

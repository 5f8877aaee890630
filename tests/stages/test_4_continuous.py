"""Stage 4: continuous batching. The scheduler and slot bookkeeping, driven through
the real ContinuousEngine with a fast fake model, on random workloads (hypothesis);
and a finished request's slot, given to a waiting one in the very next step."""
from collections import Counter
from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from minicb import LLM, LLMEngine
from minicb.config import KV_RESERVATIONS, EngineConfig
from minicb.executors import Executor
from minicb.request import Request
from minicb.sampling_params import SamplingParams
from minicb.stages.continuous import ContinuousEngine, SlotManager

from ..engine.test_online import params

VOCAB, EOS, MAX_MODEL_LEN = 11, 1, 64


class FakeModel:
    """Next token = a function of the position, EOS now and then. No weights."""
    config = SimpleNamespace(num_hidden_layers=1, num_key_value_heads=1, head_dim=1, vocab_size=VOCAB)
    dtype = torch.float32

    def new_kv_cache(self, *leading):
        shape = (1, *leading, 1, 1)
        return torch.zeros(shape), torch.zeros(shape)

    def __call__(self, ids, positions, attn):
        return positions.float()[:, None]                        # hidden [N, 1]

    def compute_logits(self, hidden):
        tokens = (hidden[:, 0].long() * 7 + 3) % VOCAB           # position 5 -> EOS, ...
        return torch.nn.functional.one_hot(tokens, VOCAB).float()


def fake_engine(**options):
    config = EngineConfig(engine="continuous", device="cpu", attention_backend="sdpa",
                          max_model_len=MAX_MODEL_LEN, **options)
    config.settle_max_model_len(MAX_MODEL_LEN)
    return ContinuousEngine(Executor(FakeModel()), config)


def request(prompt_len, max_tokens, ignore_eos=True):
    return Request([2] * prompt_len, SamplingParams(max_tokens=max_tokens, ignore_eos=ignore_eos), (EOS,))


def check_bookkeeping(engine):
    kv, running = engine.kv, engine.scheduler.running
    cfg = engine.config
    assert len(running) <= cfg.max_num_seqs
    assert set(kv.slot_of) == set(running)            # a slot per running request
    assert all(len(kv.slot_of[r]) == kv.slot_size(r) for r in running)
    runs = sorted(kv.holes + list(kv.slot_of.values()), key=lambda rows: rows.start)
    # Slots and holes tile the cache: no row held twice, none lost.
    assert [rows.start for rows in runs] == [0] + [rows.stop for rows in runs[:-1]]
    assert runs[-1].stop == kv.capacity
    assert all(a.stop < b.start for a, b in zip(kv.holes, kv.holes[1:]))   # holes that touch are one
    if engine.steps:
        assert engine.steps[-1].num_tokens <= cfg.max_num_batched_tokens


def drive(engine, requests, timing, check, max_steps):
    """Step the engine: request i arrives at step timing[i][0] and, if
    timing[i][1] is not None, is aborted at that step. ``check(engine)`` runs
    after every step. Returns how many times each request was reported finished."""
    finished, step = Counter(), 0
    last_arrival = max(arrival for arrival, _ in timing)
    while step <= last_arrival or engine.has_unfinished_requests():
        for r, (arrival, abort_at) in zip(requests, timing):
            if arrival == step:
                engine.add_request(r)
            if abort_at == step and arrival <= step:
                engine.abort(r.request_id)
        for r in engine.step():
            finished[r.request_id] += r.finished
        check(engine)
        step += 1
        assert step <= max_steps, "a request waited forever"
    return finished


workloads = st.lists(st.tuples(st.integers(1, 20),          # prompt length
                               st.integers(1, 12),          # max_tokens
                               st.booleans(),               # ignore_eos
                               st.integers(0, 30),          # arrival step
                               st.one_of(st.none(), st.integers(0, 40))),   # abort step
                     min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(workload=workloads, max_num_seqs=st.integers(1, 5), budget=st.integers(20, 60),
       policy=st.sampled_from(["mixed", "prefill_first"]), interval=st.integers(1, 4),
       ratio=st.sampled_from([0.0, 0.5, 2.0]), reservation=st.sampled_from(KV_RESERVATIONS))
def test_every_request_finishes_exactly_once_and_nothing_leaks(workload, max_num_seqs, budget, policy,
                                                               interval, ratio, reservation):
    engine = fake_engine(max_num_seqs=max_num_seqs, max_num_batched_tokens=max(budget, max_num_seqs),
                         scheduling_policy=policy, schedule_interval=interval, waiting_served_ratio=ratio,
                         kv_reservation=reservation)
    requests = [request(p, n, eos) for p, n, eos, _, _ in workload]
    bound = len(workload) + sum(n for _, n, *_ in workload) + max(a for *_, a, _ in workload) + 2
    timing = [(arrival, abort_at) for *_, arrival, abort_at in workload]
    finished = drive(engine, requests, timing, check_bookkeeping, max_steps=bound)
    assert not engine.scheduler.running and not engine.waiting
    assert engine.kv.holes == [range(engine.kv.capacity)]                   # every row is free
    for r in requests:
        assert r.all_token_ids == r.prompt_token_ids + r.output_token_ids    # the model's view agrees
        if r.finish_reason == "abort":
            assert finished[r.request_id] == 0 and len(r.output_token_ids) <= r.params.max_tokens
            continue
        assert finished[r.request_id] == 1                                   # finished exactly once
        out = r.output_token_ids
        if r.params.ignore_eos or EOS not in out:
            assert len(out) == r.params.max_tokens and r.finish_reason == "length"
        else:
            assert out.index(EOS) == len(out) - 1 and r.finish_reason == "eos"


def test_prefill_first_never_mixes_and_mixed_does():
    kinds = {}
    for policy in ["prefill_first", "mixed"]:
        engine = fake_engine(max_num_seqs=4, scheduling_policy=policy)
        engine.add_request(request(4, 6))
        engine.step()
        engine.add_request(request(4, 6))
        while engine.has_unfinished_requests():
            engine.step()
        kinds[policy] = [s.kind for s in engine.steps]
    assert kinds["prefill_first"][:3] == ["prefill", "prefill", "decode"]    # the decode sat out a step
    assert kinds["mixed"][:2] == ["prefill", "mixed"]


@pytest.mark.parametrize("interval", [1, 4])
def test_schedule_interval_delays_admission(interval):
    engine = fake_engine(max_num_seqs=4, schedule_interval=interval)
    engine.add_request(request(3, 10))
    engine.step()                                                    # admitted at once: nothing ran
    late = request(3, 2)
    engine.add_request(late)
    steps_waited = 0
    while late in engine.waiting:
        engine.step()
        steps_waited += 1
    assert steps_waited == interval


def test_waiting_served_ratio_admits_only_when_enough_wait():
    engine = fake_engine(max_num_seqs=8, waiting_served_ratio=2.0)
    for _ in range(2):
        engine.add_request(request(3, 20))
    engine.step()                                                    # 2 running
    first = [request(3, 2) for _ in range(3)]
    for r in first:
        engine.add_request(r)
    engine.step()
    assert len(engine.scheduler.running) == 2                        # 3 waiting < 2.0 x 2 running
    engine.add_request(request(3, 2))
    engine.step()
    assert len(engine.scheduler.running) == 6                        # 4 waiting >= 4: all admitted


def test_slots_are_first_fit_and_free_rows_that_fit_no_one_stay_free():
    """A contiguous slot needs one hole big enough: 4 rows free in two holes of
    2 do not hold a 4-row slot (the vLLM paper's external fragmentation)."""
    sizes = dict(a=2, b=3, c=2, d=3, e=4)
    kv = SlotManager(capacity=10, max_model_len=10, reservation="oracle")
    kv.slot_size = lambda r: sizes[r]
    for r in "abcd":
        kv.allocate(r, 1)
    assert [kv.slot_of[r] for r in "abcd"] == [range(0, 2), range(2, 5), range(5, 7), range(7, 10)]
    kv.free("a")
    kv.free("c")
    assert kv.holes == [range(0, 2), range(5, 7)] and not kv.can_allocate("e", 1)
    kv.free("b")                                  # joins its neighbours: one hole of 7
    assert kv.holes == [range(0, 7)] and kv.can_allocate("e", 1)
    kv.allocate("e", 1)
    assert kv.slot_of["e"] == range(0, 4) and kv.cache_rows("e", 1, 2) == range(1, 3)


@pytest.mark.parametrize("reservation,sizes", [
    ("max", [64, 64, 64]), ("pow2", [16, 2, 64]), ("oracle", [12, 2, 40])])
def test_a_slot_reserves_what_the_policy_says(reservation, sizes):
    # prompt + max_tokens - 1: the last token is sampled, never fed back.
    kv = SlotManager(capacity=256, max_model_len=MAX_MODEL_LEN, reservation=reservation)
    assert [kv.slot_size(request(p, n)) for p, n in [(10, 3), (1, 2), (33, 8)]] == sizes


def test_a_request_whose_slot_cannot_fit_is_refused_and_the_rest_are_served(llama):
    probe = LLM(llama, engine="continuous")
    kv_bytes = probe.executor.config.kv_bytes_per_token(probe.executor.dtype.itemsize)
    llm = LLM(llama, engine="continuous", kv_reservation="oracle", max_num_seqs=4,
              kv_cache_memory_bytes=24 * kv_bytes)
    assert llm.llm_engine.stage.kv.capacity == 24
    good = SamplingParams(max_tokens=4, ignore_eos=True)
    with pytest.raises(ValueError, match="request 1: a slot of 30 tokens \\(kv_reservation 'oracle'\\) "
                                         "does not fit the KV cache's 24 tokens"):
        llm.generate([[5, 6, 7], [3] * 27], good)
    outputs = llm.generate([[5, 6, 7], [3] * 20, [8]], good)   # 23 rows, then the rest
    expected = probe.generate([[5, 6, 7], [3] * 20, [8]], good)
    assert [o.output_token_ids for o in outputs] == [o.output_token_ids for o in expected]
    assert llm.llm_engine.stage.kv.holes == [range(24)]


def test_a_finished_request_frees_its_slot_for_the_next_step(llama):
    """max_num_seqs=2: the 1-token request finishes at its prefill step; the
    waiting request is admitted in the very next step."""
    engine = LLMEngine(llama, engine="continuous", max_num_seqs=2)
    short = engine.add_request([9], params(1))
    long = engine.add_request([5, 6, 7], params(6))
    waiting = engine.add_request([4, 4], params(2))
    first = engine.step()
    assert {o.request_id for o in first} == {short, long}
    assert [o.finished for o in first if o.request_id == short] == [True]
    assert engine.stage.kv.holes and waiting in engine.stage.unfinished
    second = engine.step()
    assert {o.request_id for o in second} == {long, waiting}      # admitted at once
    assert engine.stage.steps[1].kind == "mixed"

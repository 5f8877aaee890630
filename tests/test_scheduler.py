"""The scheduler and slot bookkeeping of stage 4, driven through the real
ContinuousEngine with a fast fake model, on random workloads (hypothesis)."""
from collections import Counter
from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from minicb.config import EngineConfig
from minicb.executors import Executor
from minicb.request import Request
from minicb.sampling import SamplingParams
from minicb.stages.continuous import ContinuousEngine

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
    used = list(kv.slot_of.values())
    assert len(set(used)) == len(used)                                    # no slot owned twice
    assert sorted(used + list(kv.free_slots)) == list(range(cfg.max_num_seqs))   # free + used == all
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
       ratio=st.sampled_from([0.0, 0.5, 2.0]))
def test_every_request_finishes_exactly_once_and_nothing_leaks(workload, max_num_seqs, budget, policy,
                                                               interval, ratio):
    engine = fake_engine(max_num_seqs=max_num_seqs, max_num_batched_tokens=max(budget, max_num_seqs),
                         scheduling_policy=policy, schedule_interval=interval, waiting_served_ratio=ratio)
    requests = [request(p, n, eos) for p, n, eos, _, _ in workload]
    bound = len(workload) + sum(n for _, n, *_ in workload) + max(a for *_, a, _ in workload) + 2
    timing = [(arrival, abort_at) for *_, arrival, abort_at in workload]
    finished = drive(engine, requests, timing, check_bookkeeping, max_steps=bound)
    assert not engine.scheduler.running and not engine.waiting
    assert len(engine.kv.free_slots) == max_num_seqs                         # every slot is free
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

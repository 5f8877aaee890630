"""The inputs each engine method of the course may meet, drawn whole: the static
and dynamic batch cuts, the scheduler's admission, chunking and trigger, stage
4's first fit, stage 5's allocate, cache rows and preemption, stage 6's roll back.

A method gets its engine, scheduler or KV manager as ``self``: the real class
with the state drawn, or, where it would need a model, a stand-in holding only
what the exercise's contract names (``StandIn``), whose methods do what the
engine's do and log each call that has an effect. What the method returns, the
state it leaves and those calls are compared with the engine's own.
"""
from collections import deque
from types import SimpleNamespace

from hypothesis import strategies as st

from ...request import Request, RequestMetrics
from ...sampling_params import SamplingParams
from ...stages.continuous import SlotManager
from ...stages.dynamic import DynamicEngine
from ...stages.drafting import Draft
from ...stages.paged import BlockManager, PagedScheduler
from ...stages.speculative import TrimmedBlocks, TrimmedPrefixBlocks
from ...stages.static import StaticEngine
from .differential import Observed, Space, attempt, observe


class StandIn(SimpleNamespace):
    """Only what an exercise's contract gives a student; anything else is named as such."""
    def __getattr__(self, name):
        raise AttributeError(f"{name!r}: this check's stand-in has only "
                             f"{', '.join(vars(self))}, as the exercise's contract says")


def request(i, prompt_len=4, max_tokens=4, arrival=0.0, output=0) -> Request:
    """A request of the check's, named by its index."""
    return Request([3] * prompt_len, SamplingParams(max_tokens=max_tokens), (2,), str(i),
                   output_token_ids=[5] * output, metrics=RequestMetrics(arrival))


def ids(requests) -> list:
    return [r.request_id for r in requests]


def returned_ids(seen: Observed) -> Observed:
    """A list of requests compared by their ids (a list of pairs: ids and counts)."""
    if seen.raised is None and isinstance(seen.returned, (list, tuple)):
        seen.returned = [(x[0].request_id, *x[1:]) if isinstance(x, tuple) and x and hasattr(x[0], "request_id")
                         else getattr(x, "request_id", x) for x in seen.returned]
    return seen


# ---------------------------------------------------------------- chapter 2 and 3
def static_batches_space() -> Space:
    """Requests named in no order (a request's id is the caller's choice): ties in
    max_tokens keep arrival order, not their names' order."""
    inputs = st.lists(st.integers(1, 4), max_size=12).flatmap(lambda m: st.builds(
        dict, max_tokens=st.just(m), names=st.permutations(range(len(m))), size=st.integers(1, 5),
        bucket=st.booleans(), outputs=st.lists(st.integers(0, 3), min_size=len(m), max_size=len(m))))

    def call(function, d):
        self = object.__new__(StaticEngine)
        names = d.get("names") or range(len(d["max_tokens"]))
        outputs = d.get("outputs") or [0] * len(d["max_tokens"])   # requeued after a failed step
        vars(self).update(waiting=deque(request(n, max_tokens=m, output=min(o, m - 1)) for n, m, o
                                        in zip(names, d["max_tokens"], outputs)),
                          config=StandIn(max_batch_size=d["size"], bucket_by_length=d["bucket"]))
        seen = returned_ids(attempt(function, self))
        seen.state = {"self.waiting": ids(self.waiting), "self.waiting's type": type(self.waiting).__name__}
        return seen
    examples = {"ties in max_tokens, bucketed": dict(max_tokens=[3, 1, 3, 1, 2], size=2, bucket=True),
                "ties among requests 9 and 10, bucketed": dict(max_tokens=[2] * 11 + [1], names=list(range(12)),
                                                                size=2, bucket=True),
                "a request requeued with output, bucketed": dict(max_tokens=[4, 3], outputs=[3, 0], size=1,
                                                                  bucket=True),
                "fewer waiting than a batch": dict(max_tokens=[2, 1], size=4, bucket=False)}
    return Space(inputs, call, examples, describe=lambda d: (
        f"waiting requests (id: max_tokens) "
        f"{dict(zip(map(str, d.get('names') or range(len(d['max_tokens']))), d['max_tokens']))}, outputs so "
        f"far {d.get('outputs')}, "
        f"max_batch_size {d['size']}, bucket_by_length {d['bucket']}"))


def dynamic_window_space() -> Space:
    tick = st.integers(0, 40).map(lambda t: t / 64)           # seconds, exact in binary
    inputs = st.builds(dict, arrivals=st.lists(tick, max_size=6), now=st.one_of(tick, st.just("at the edge")),
                       size=st.integers(1, 5), wait_ms=st.integers(0, 40).map(lambda t: t * 1000 / 64),
                       bucket=st.booleans())

    def call(function, d):
        now = the_time(d)
        self = object.__new__(DynamicEngine)
        vars(self).update(waiting=deque(request(i, max_tokens=1 + i % 3, arrival=a)
                                        for i, a in enumerate(d["arrivals"])), clock=lambda: now,
                          config=StandIn(max_batch_size=d["size"], max_wait_ms=d["wait_ms"],
                                         bucket_by_length=d["bucket"]))
        seen = returned_ids(attempt(function, self))
        seen.state = {"self.waiting": ids(self.waiting)}
        return seen
    examples = {"the oldest waited exactly the window": dict(arrivals=[0.25, 0.3125], now=0.375, size=3,
                                                             wait_ms=125.0, bucket=False),
                "the oldest a moment short of the window": dict(arrivals=[0.25, 0.3125], now=0.359375, size=3,
                                                                wait_ms=125.0, bucket=False),
                "the oldest not first in the queue": dict(arrivals=[0.3125, 0.25], now=0.375, size=3,
                                                          wait_ms=125.0, bucket=False),
                "a window of 15.625 ms, met exactly": dict(arrivals=[0.25], now=0.265625, size=3,
                                                            wait_ms=15.625, bucket=False),
                "a full batch at once": dict(arrivals=[0.25] * 4, now=0.25, size=3, wait_ms=125.0, bucket=False),
                "nothing waiting": dict(arrivals=[], now=1.0, size=3, wait_ms=125.0, bucket=False)}
    return Space(inputs, call, examples, describe=lambda d: (
        f"arrivals {d['arrivals']} s, now {the_time(d)} s, max_batch_size {d['size']}, "
        f"max_wait_ms {d['wait_ms']}"))


def the_time(d) -> float:
    """Now: a drawn time no earlier than any arrival, or the moment the oldest
    request has waited exactly the window."""
    if d["now"] == "at the edge":
        return min(d["arrivals"], default=0.0) + d["wait_ms"] / 1000
    return max([d["now"], *d["arrivals"]])


# ---------------------------------------------------------------- chapters 4 and 6: the scheduler
def scheduler(d, log) -> StandIn:
    """A stand-in scheduler: its queues, its config, and the two methods admit is
    given, which log each call that has an effect (admission_open counts a step;
    reserve holds KV memory for what it grants)."""
    running = [request(f"r{i}") for i in range(d.get("running", 0))]
    waiting = deque(request(i) for i in range(len(d.get("fits", []))))
    fits = dict(zip(waiting, d.get("fits", [])))

    def admission_open():
        log["admission_open"].append(())
        return d.get("open", True)

    def reserve(r, budget):
        granted = min(fits.get(r, 0), budget)
        if granted:
            log["reserve (what it held KV memory for)"].append((r.request_id, granted))
        return granted
    return StandIn(running=running, waiting=waiting, steps_since_admission=d.get("steps", 0),
                   config=StandIn(**d.get("config", {})), admission_open=admission_open, reserve=reserve)


def queues(self) -> dict:
    return {"self.running": ids(self.running), "self.waiting": ids(self.waiting)}


def admission_space() -> Space:
    inputs = st.builds(dict, running=st.integers(0, 4), fits=st.lists(st.integers(0, 8), max_size=6),
                       open=st.booleans(), config=st.builds(dict, max_num_seqs=st.integers(1, 6)),
                       budget=st.integers(0, 20))

    def call(function, d):
        log = {"admission_open": [], "reserve (what it held KV memory for)": []}
        self = scheduler(d, log)
        seen = returned_ids(observe(lambda: function(self, d["budget"]), {}, lambda: queues(self), log))
        return seen
    example = lambda running, fits, seats, budget, is_open=True: dict(  # noqa: E731
        running=running, fits=fits, open=is_open, config=dict(max_num_seqs=seats), budget=budget)
    examples = {"admission closed": example(0, [4, 4], 4, 16, False), "one seat left": example(2, [4, 4, 4], 3, 16),
                "a head that does not fit": example(0, [0, 4], 4, 16),
                "a budget shared out": example(0, [6, 6, 6], 4, 13)}
    return Space(inputs, call, examples, describe=lambda d: (
        f"{d['running']} running, waiting requests that fit {d['fits']} tokens, admission "
        f"{'open' if d['open'] else 'closed'}, max_num_seqs {d['config']['max_num_seqs']}, budget {d['budget']}"))


def chunking_space() -> Space:
    inputs = st.builds(dict, remaining=st.integers(1, 40), budget=st.integers(0, 40),
                       config=st.builds(dict, enable_chunked_prefill=st.booleans(),
                                        max_num_batched_tokens=st.integers(1, 32)))

    def call(function, d):
        self = StandIn(config=StandIn(**d["config"]))
        return attempt(function, self, d["remaining"], d["budget"])
    examples = {f"{r} remaining, {b} left, chunked prefill {'on' if c else 'off'}": dict(
        remaining=r, budget=b, config=dict(enable_chunked_prefill=c, max_num_batched_tokens=16))
        for c in (False, True) for r, b in ((16, 16), (16, 15), (17, 16), (17, 17), (5, 16), (16, 0))}
    return Space(inputs, call, examples, describe=lambda d: (
        f"{d['remaining']} remaining, {d['budget']} left, chunked prefill "
        f"{'on' if d['config']['enable_chunked_prefill'] else 'off'}, max_num_batched_tokens "
        f"{d['config']['max_num_batched_tokens']}"))


def admission_trigger_space() -> Space:
    """Several steps in a row, each one call: the count carries from step to step."""
    step = st.tuples(st.integers(0, 4), st.integers(0, 6))         # (running, waiting)
    inputs = st.builds(dict, steps=st.lists(step, min_size=1, max_size=6),
                       config=st.builds(dict, schedule_interval=st.integers(1, 4),
                                        waiting_served_ratio=st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0])))

    def call(function, d):
        self = StandIn(running=[], waiting=deque(), steps_since_admission=0, config=StandIn(**d["config"]))
        answers = []
        for running, waiting in d["steps"]:
            self.running, self.waiting = [request(f"r{i}") for i in range(running)], deque(
                request(i) for i in range(waiting))
            seen = attempt(function, self)
            if seen.raised:
                return seen
            answers.append((seen.returned, self.steps_since_admission))
        return Observed(returned=answers, state=queues(self))
    cfg = dict(schedule_interval=3, waiting_served_ratio=1.5)
    examples = {"the interval reached exactly, the ratio met exactly": dict(steps=[(2, 3)] * 3, config=cfg),
                "one request short of the ratio": dict(steps=[(2, 2)] * 4, config=cfg),
                "nothing running": dict(steps=[(0, 1), (2, 3)], config=cfg)}
    return Space(inputs, call, examples, describe=lambda d: (
        f"steps of (running, waiting) {d['steps']}, schedule_interval {d['config']['schedule_interval']}, "
        f"waiting_served_ratio {d['config']['waiting_served_ratio']} (each step's answer and "
        f"steps_since_admission compared)"))


# ---------------------------------------------------------------- chapter 4: first fit
def first_fit_space() -> Space:
    """Several requests in turn, asking one manager: an answer may not depend on the
    calls before it."""
    inputs = st.builds(dict, holes=st.lists(st.integers(1, 12), max_size=6),
                       sizes=st.lists(st.integers(1, 14), min_size=1, max_size=4))

    def call(function, d):
        kv = SlotManager(capacity=200, max_model_len=64)
        start, holes = 0, []
        for length in d["holes"]:
            holes.append(range(start, start + length))
            start += length + 3                  # a slot between each two holes
        kv.holes = holes
        answers = []
        for size in d["sizes"]:
            kv.slot_size = lambda r, size=size: size
            seen = observe(lambda: function(kv, request(0)), dict(holes=kv.holes))
            if seen.raised or seen.arguments:
                return seen
            answers.append(seen.returned)
        return Observed(returned=answers)
    examples = {"a hole exactly the slot's size": dict(holes=[3, 5, 8], sizes=[5]),
                "no hole fits": dict(holes=[2, 3], sizes=[4]), "no holes": dict(holes=[], sizes=[1]),
                "a large slot, then a small one": dict(holes=[4, 8], sizes=[8, 4])}
    return Space(inputs, call, examples, describe=lambda d: (
        f"holes of {d['holes']} rows, slots of {d['sizes']} asked for in turn (each answer compared)"))


# ---------------------------------------------------------------- chapter 5: blocks
def block_space():
    """A block manager part way through a run: its free list shuffled, other
    requests' tables, and request 0's own (none, or some blocks)."""
    return st.integers(1, 8).flatmap(lambda size: st.builds(
        dict, block_size=st.just(size), order=st.permutations(range(12)), others=st.integers(0, 4),
        held=st.integers(0, 3), tokens=st.integers(0, 6 * size)))


def blocks(d):
    kv = BlockManager(num_blocks=12, block_size=d["block_size"])
    kv.free_blocks = deque(d["order"])
    mine = request(0)
    for i in range(d["others"]):
        kv.block_tables[request(f"o{i}")] = [kv.free_blocks.popleft()]
    if d["held"]:
        kv.block_tables[mine] = [kv.free_blocks.popleft() for _ in range(d["held"])]
    return kv, mine


def tables(kv) -> dict:
    return {"self.block_tables": {r.request_id: list(t) for r, t in kv.block_tables.items()},
            "self.free_blocks": list(kv.free_blocks), "self.free_blocks's type": type(kv.free_blocks).__name__}


def block_allocation_space() -> Space:
    def call(function, d):
        kv, mine = blocks(d)
        if kv.blocks_for(d["tokens"]) - d["held"] > len(kv.free_blocks):
            return Observed(returned="too few free blocks: the scheduler never asks")
        seen = attempt(function, kv, mine, d["tokens"])
        seen.returned = None                          # the contract fixes what it leaves, not returns
        seen.state = tables(kv)
        return seen
    example = lambda size, held, tokens: dict(block_size=size, order=list(range(12)), others=1,  # noqa: E731
                                              held=held, tokens=tokens)
    examples = {"a first table": example(4, 0, 9), "tokens exactly filling a block": example(4, 1, 8),
                "already covered": example(4, 2, 5), "several blocks in one call": example(2, 1, 11)}
    return Space(block_space(), call, examples, describe=lambda d: (
        f"blocks of {d['block_size']}, free list {list(d['order'])[d['others'] + d['held']:]}, the request "
        f"holding {d['held']} blocks, num_tokens {d['tokens']}"))


def slot_mapping_space() -> Space:
    inputs = block_space().flatmap(lambda d: st.builds(
        dict, d=st.just({**d, "held": max(1, d["held"])}), start=st.integers(0, 3 * d["block_size"]),
        count=st.integers(0, 3 * d["block_size"])))

    def call(function, e):
        kv, mine = blocks(e["d"])
        start = min(e["start"], len(kv.block_tables[mine]) * kv.block_size - 1)
        count = min(e["count"], len(kv.block_tables[mine]) * kv.block_size - start)
        seen = attempt(function, kv, mine, start, count)
        seen.state = tables(kv)
        return seen
    example = lambda size, held, start, count: dict(d=dict(block_size=size, order=list(range(11, -1, -1)),  # noqa: E731
                                                           others=1, held=held, tokens=0), start=start, count=count)
    examples = {"one token at a block's last row": example(4, 2, 7, 1), "two blocks' rows": example(4, 2, 2, 5),
                "blocks of one": example(1, 3, 0, 3), "no tokens": example(4, 1, 0, 0)}
    return Space(inputs, call, examples, describe=lambda e: (
        f"blocks of {e['d']['block_size']}, the request's table "
        f"{list(e['d']['order'])[e['d']['others']:e['d']['others'] + max(1, e['d']['held'])]}, start {e['start']}, "
        f"count {e['count']} (each cut to the table)"))


# ---------------------------------------------------------------- chapter 6: preemption
def preemption_space() -> Space:
    inputs = st.builds(dict, running=st.lists(st.integers(1, 3), min_size=1, max_size=4),
                       waiting=st.integers(0, 3), victim=st.integers(0, 3), preempted=st.booleans(),
                       count=st.integers(0, 5))

    def call(function, d):
        kv = BlockManager(num_blocks=16, block_size=4)
        self = PagedScheduler(SimpleNamespace(), kv)
        self.running = [request(f"r{i}", output=2) for i in range(len(d["running"]))]
        self.waiting.extend(request(f"w{i}") for i in range(d["waiting"]))
        for r, held in zip(self.running, d["running"]):
            kv.allocate(r, 4 * held)
            r.num_computed_tokens = 4 * held - 1
        self.preempted, self.num_preemptions = d["preempted"], d["count"]
        victim = self.running[d["victim"] % len(self.running)]
        seen = attempt(function, self, victim)
        seen.state = {**queues(self), **tables(kv), "self.num_preemptions": self.num_preemptions,
                      "self.preempted": self.preempted,
                      "the request's tokens": list(victim.all_token_ids),
                      "the request's output_token_ids": list(victim.output_token_ids),
                      "the request's num_computed_tokens": victim.num_computed_tokens,
                      "the request's num_preemptions": victim.num_preemptions}
        seen.returned = None                          # what it leaves is the contract, not what it returns
        return seen
    examples = {"the newest of three": dict(running=[2, 1, 3], waiting=2, victim=2, preempted=False, count=0),
                "the oldest, twice in a step": dict(running=[1, 1], waiting=0, victim=0, preempted=True, count=4)}
    return Space(inputs, call, examples, describe=lambda d: (
        f"running requests holding {d['running']} blocks, {d['waiting']} waiting, preempting running "
        f"request {d['victim'] % len(d['running'])}, preempted already {d['preempted']}, "
        f"num_preemptions {d['count']}"))


# ---------------------------------------------------------------- chapter 12: rejected drafts
ROLLBACK_BLOCKS = 64         # enough for four requests of 14 tokens in blocks of 1


def verified(d):
    """A KV manager just after a verify step: each request (tokens it has, drafts
    it sent, drafts drawn to be accepted, what the step gave it) counting its last
    token and its drafts as computed, and holding the blocks they fill."""
    kv = (TrimmedPrefixBlocks if d["prefix"] else TrimmedBlocks)(ROLLBACK_BLOCKS, d["block_size"])
    order = [(b + d["rotate"]) % ROLLBACK_BLOCKS for b in range(ROLLBACK_BLOCKS)]
    kv.free_blocks = type(kv.free_blocks)(dict.fromkeys(order) if d["prefix"] else order)
    requests, tokens, drafts = [], [], {}
    for i, (length, size, accepted, outcome) in enumerate(d["requests"]):
        r = request(i, prompt_len=length)
        size = 0 if outcome == "no draft" else size
        r.num_computed_tokens = length + size
        kv.allocate(r, r.num_computed_tokens)
        if d["prefix"]:                    # its full blocks of known tokens are published
            kv.filled[r] = [None] * (length // d["block_size"])
        if outcome != "no draft":
            drafts[r] = Draft([9] * size)
        tokens.append(RuntimeError("its logits are not finite") if outcome == "failed"
                      else [7] * (1 + accepted % (size + 1)))
        requests.append(r)
    return kv, requests, tokens, drafts


def given(requests, tokens, drafts) -> dict:
    """roll_back's arguments as plain data: what a call must leave as it was."""
    return {"requests": ids(requests),
            "tokens": [list(t) if isinstance(t, list) else f"{type(t).__name__}: {t}" for t in tokens],
            "drafts": {r.request_id: list(draft.tokens) for r, draft in drafts.items()}}


def kv_rollback_space() -> Space:
    entry = st.tuples(st.integers(1, 10), st.integers(0, 4), st.integers(0, 4),
                      st.sampled_from(["kept", "kept", "failed", "no draft"]))
    inputs = st.builds(dict, block_size=st.integers(1, 8), requests=st.lists(entry, min_size=1, max_size=4),
                       prefix=st.booleans(), rotate=st.integers(0, ROLLBACK_BLOCKS - 1))

    def call(function, d):
        kv, requests, tokens, drafts = verified(d)
        before = given(requests, tokens, drafts)
        seen = attempt(function, StandIn(kv=kv), requests, tokens, drafts)
        after = given(requests, tokens, drafts)
        seen.arguments = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
        seen.returned = None                          # what it leaves is the contract, not what it returns
        seen.state = {"each request's num_computed_tokens": {r.request_id: r.num_computed_tokens for r in requests},
                      "self.kv.block_tables": {r.request_id: list(t) for r, t in kv.block_tables.items()},
                      "self.kv.free_blocks": list(kv.free_blocks)}
        if d["prefix"]:
            seen.state["self.kv.ref_counts (of the blocks owned)"] = {
                b: n for b, n in enumerate(kv.ref_counts) if n}
        return seen
    example = lambda size, *requests, prefix=False: dict(  # noqa: E731
        block_size=size, requests=list(requests), prefix=prefix, rotate=0)
    examples = {"every draft rejected: a block of drafts goes back": example(4, (4, 3, 0, "kept")),
                "every draft kept": example(4, (4, 3, 3, "kept")),
                "one draft of three kept": example(2, (5, 3, 1, "kept")),
                "a draft the token budget cut to nothing": example(4, (5, 0, 0, "kept")),
                "a failed request, one with no draft, one rolled back": example(
                    2, (5, 2, 0, "failed"), (3, 0, 0, "no draft"), (6, 4, 1, "kept")),
                "blocks go back in the requests' order": example(1, (2, 3, 0, "kept"), (2, 3, 0, "kept")),
                "prefix caching's blocks": example(2, (4, 4, 1, "kept"), (3, 2, 0, "kept"), prefix=True)}
    return Space(inputs, call, examples, describe=lambda d: (
        f"blocks of {d['block_size']}{', prefix caching' if d['prefix'] else ''}, the free list from "
        f"block {d['rotate']}, requests {'; '.join(map(step_of, d['requests']))}"))


def step_of(entry) -> str:
    """A request of the check's, and what its verify step gave it, in words."""
    length, size, accepted, outcome = entry
    if outcome == "no draft":
        return f"{length} tokens, no draft"
    gave = "the step failed it" if outcome == "failed" else f"{accepted % (size + 1)} of them kept"
    return f"{length} tokens, {size} drafts, {gave}"

"""The cases a function exercise is checked on: calls of one engine function
that does not run in a stage's step (a claim's verdict, a metric, the server's
stop-string holdback, a tensor-parallel share, the cost model), each made
once with the student's function swapped in and once with the engine's own.
An exercise checked in a stage's run may have cases too, for what a run seldom
reaches (an eos token, a boundary met exactly, admission closed); a scheduler's
method gets a stand-in scheduler with only what its contract names.

Each case is (label, call, what to compare): ``call`` reaches the function
through its module or class at call time, so the swap takes effect, and the
comparison takes what the exercise's contract promises (a verdict's outcome
and numbers, not its wording).
"""
import dataclasses
import importlib
import math
from collections import deque
from types import SimpleNamespace

import torch

from ...checkpoint import SHAPES
from ...costmodel import HARDWARE, MODEL_SHAPES
from ...model import ModelConfig
from ...request import Request, RequestMetrics
from ...sampling import SamplingParams


def module(name: str):
    return importlib.import_module(name)


def judge_cases():
    """Claims about time: holds, fails, too close to call, too few repeats, a busy
    machine, and a side that is a fixed bound."""
    judge = lambda *args: module("minicb.tools.report.claims").judge(*args)        # noqa: E731
    outcome = lambda v: (v.holds, v.left, v.right, v.margin)                # noqa: E731
    cases = [("clearly faster", ([1.0, 1.1, 1.05], "<", [2.0, 2.2, 2.1])),
             ("clearly slower", ([3.0, 3.1, 2.9], "<", [1.0, 1.2, 1.1])),
             ("within the spread", ([1.0, 1.6, 1.2], "<", [1.3, 1.9, 1.5])),
             ("one repeat a side", ([1.0], ">", [2.0])),
             ("one repeat against three", ([1.0], "<", [2.0, 2.1, 2.2])),
             ("a busy machine", ([1.0, 1.1], "<", [2.0, 2.1], 1.5)),
             ("against a fixed bound", ([0.8, 0.9, 0.85], "<", 1.0)),
             ("greater than", ([5.0, 5.5, 5.2], ">", [1.0, 1.5, 1.2])),
             # The contract's two boundaries, met exactly (every value exact in binary): a
             # gap no larger than the margin is not decided; a machine is busy only over
             # MAX_OTHERS_CORES.
             ("medians apart by exactly the spread", ([1.0, 2.0], "<", [3.0, 4.0])),
             ("others' cores exactly at the limit", ([1.0, 1.1], "<", [2.0, 2.1], 0.5))]
    return [(label, lambda args=args: judge(*args), outcome) for label, args in cases]


def percentile_cases():
    """A run's summary statistics: few values, many, ties, none."""
    percentiles = lambda values: module("minicb.metrics").percentiles(values)   # noqa: E731
    series = {"one value": [2.5], "two values": [1.0, 3.0], "ties": [1, 1, 1, 2, 9],
              "a hundred": [(7 * i) % 101 / 10 for i in range(100)], "none": []}
    return [(label, lambda v=values: percentiles(v), lambda d: d) for label, values in series.items()]


def text_stream_cases():
    """A stream cut at stop strings: pieces that split a stop string, a stop
    inside a piece, two stops, none at all; each piece taken as it arrives."""
    def stream(stops, pieces):
        text = module("minicb.tools.serve.protocol").TextStream(stops)
        sent = []
        for piece in pieces:
            stopped = text.add(piece)
            sent.append(text.take(final=False))
            if stopped:
                break
        return sent + [text.take(final=True)]
    scenarios = {"no stop strings": ([], ["Hel", "lo", " world"]),
                 "a stop split across pieces": (["END"], ["abc E", "N", "D tail"]),
                 "a false start": (["END"], ["abc EN", "x END"]),
                 "the stop inside one piece": (["\n\n"], ["one\n\ntwo"]),
                 "two stops, the earlier wins": (["xyz", "b"], ["aaxy", "zab"]),
                 "no stop ever comes": (["STOP"], ["ST", "O", "P?", "!"])}
    return [(label, lambda s=stops, p=pieces: stream(s, p), lambda sent: sent)
            for label, (stops, pieces) in scenarios.items()]


def vocab_share_cases():
    """Each rank's share of an embedding table's rows, vocabularies that divide
    evenly and ones that do not."""
    def share(vocab, n, rank, dtype):
        weight = torch.arange(vocab * 3, dtype=dtype).view(vocab, 3)
        start, end, rows = module("minicb.executors.parallel").vocab_share(weight, rank, n)
        return (start, end, tuple(rows.shape), rows.tolist(), type(rows).__name__, rows.dtype,
                rows.requires_grad)
    return [(f"{vocab} tokens, rank {rank} of {n}{', float16' if dtype == torch.float16 else ''}",
             lambda a=(vocab, n, rank, dtype): share(*a), lambda s: s)
            for vocab, n, dtype in [(12, 3, torch.float32), (10, 3, torch.float32),
                                    (7, 4, torch.float32), (5, 8, torch.float32),
                                    (10, 3, torch.float16)] for rank in range(n)]


def collective_cases():
    """What a tensor-parallel forward pass hands its collectives."""
    cfg = ModelConfig.from_hf(dict(model_type="llama", **SHAPES["llama-3.1-8b"], rms_norm_eps=1e-5))
    volume = lambda *args: module("minicb.executors.parallel").collective_bytes(cfg, *args)  # noqa: E731
    cases = [(1, 1, 2, 2), (16, 16, 2, 2), (512, 1, 4, 2), (64, 8, 3, 4)]
    return [(f"{t} tokens, {s} sampled, {n} ranks, {b}-byte values", lambda a=(t, s, n, b): volume(*a),
             lambda d: d) for t, s, n, b in cases]


def step_cases():
    """The cost model's step: a decode batch, a long prefill, a chunked mix, a
    profile with overheads."""
    step_seconds = lambda *args: module("minicb.costmodel").step_seconds(*args)   # noqa: E731
    h100, shape = HARDWARE["h100-sxm"], MODEL_SHAPES["llama-3.1-8b"]
    measured = HARDWARE["h200-measured"]
    cases = {"one decode": (h100, shape, 2, [(1, 512)], 1),
             "64 decodes": (h100, shape, 2, [(1, 1024)] * 64, 64),
             "a 4,096-token prefill": (h100, shape, 2, [(4096, 4096)], 1),
             "a chunk beside decodes": (h100, MODEL_SHAPES["llama-3.2-1b"], 2,
                                        [(256, 768)] + [(1, 300)] * 8, 9),
             "a measured profile": (measured, shape, 2, [(1, 2048)] * 16, 16),
             "a measured profile, a prompt beside decodes": (measured, shape, 2,
                                                             [(300, 300)] + [(1, 900)] * 7, 8),
             # every overhead at work, each its own size, and the shortest prompt step
             "every overhead, a two-token prompt": (dataclasses.replace(
                 measured, step_overhead=1e-3, sequence_overhead=2e-5, token_overhead=3e-6,
                 cached_token_overhead=4e-8, prompt_step_overhead=5e-4), shape, 2,
                 [(2, 40)] + [(1, 900)] * 3, 4)}
    return [(label, lambda a=args: step_seconds(*a), lambda s: s) for label, args in cases.items()]


def budget_cases():
    """The KV memory a GPU leaves once the weights are in."""
    kv_budget = lambda *args: module("minicb.costmodel").kv_budget(*args)   # noqa: E731
    cases = {"OPT-13B on an A100 40 GB": ("a100-40gb", "opt-13b", 2, 0.9),
             "Llama 3.1 8B on an H100": ("h100-sxm", "llama-3.1-8b", 2, 0.9),
             "in fp32, at 0.5": ("h200", "llama-3.2-1b", 4, 0.5),
             "weights larger than the share: below 0": ("a100-40gb", "opt-13b", 4, 0.5)}
    return [(label, lambda h=hw, m=shape, b=bpv, u=util: kv_budget(HARDWARE[h], MODEL_SHAPES[m], b, u),
             lambda s: s) for label, (hw, shape, bpv, util) in cases.items()]


def stop_reason_cases():
    """Why a request ends, where the engine's run seldom goes: an eos token (the tiny
    model rarely samples one), with ignore_eos or not, one that is also a stop token,
    and the max_tokens-th token against the one before it."""
    def call(token, output, ignore_eos=False, stops=(7,)):
        params = SamplingParams(max_tokens=4, ignore_eos=ignore_eos, stop_token_ids=list(stops))
        request = Request([1, 1], params, (2,), output_token_ids=list(output))
        return module("minicb.stages.base").stop_reason(request, token)
    cases = {"an eos token": (2, [5, 2]), "an eos token, ignore_eos": (2, [5, 2], True),
             "an eos token that is also a stop token": (2, [5, 2], False, (7, 2)),
             "a stop token": (7, [5, 7]), "the max_tokens-th token": (5, [1, 1, 1, 5]),
             "one before max_tokens": (5, [1, 1, 5]),
             "eos as the max_tokens-th token": (2, [1, 1, 1, 2]),
             "eos as the max_tokens-th token, ignore_eos": (2, [1, 1, 1, 2], True)}
    return [(label, lambda a=a: call(*a), lambda r: r) for label, a in cases.items()]


def top_p_cases():
    """What nucleus sampling keeps, compared as the returned probabilities (so a row
    left unnormalised shows): a mass exactly at top_p, a top_p that rounds to 0, ties,
    and a batch whose rows differ (every value exact in binary)."""
    keep = lambda probs, top_p: module("minicb.sampling").keep_top_p(  # noqa: E731
        torch.tensor(probs), torch.tensor(top_p))
    cases = {"a mass exactly at top_p": ([[0.5, 0.25, 0.25]], [0.5]),
             "top_p 0: the best token stays": ([[0.25, 0.5, 0.25]], [0.0]),
             "ties at the edge": ([[0.25, 0.25, 0.25, 0.25]], [0.5]),
             "top_p 1: every token": ([[0.125, 0.5, 0.375]], [1.0]),
             "two rows, two top_p": ([[0.5, 0.25, 0.25], [0.125, 0.125, 0.75]], [0.75, 0.8])}
    return [(label, lambda a=a: keep(*a), lambda t: t) for label, a in cases.items()]


def tpot_cases():
    """TPOT where the run may not go: one output token, two, many."""
    def tpot(tokens, first, finish):
        metrics = module("minicb.request").RequestMetrics(0.0, 0.0, first, finish, 3, tokens)
        return metrics.tpot
    cases = {"one token": (1, 0.5, 0.5), "two tokens": (2, 0.5, 0.75), "five tokens": (5, 0.5, 1.5)}
    return [(label, lambda a=a: tpot(*a), lambda t: t) for label, a in cases.items()]


def left_padding_cases():
    """What left padding returns, compared whole: the pad token (0) and the padding's
    positions (0) too, which attention masks and a run's tokens never show."""
    pad = lambda lists: module("minicb.stages.static").left_padded(lists)   # noqa: E731
    cases = {"one long, one short": [[5, 6, 7], [8]], "equal lengths": [[1, 2], [3, 4]],
             "three rows": [[4, 4, 4, 4], [9, 9], [7]]}
    return [(label, lambda lists=lists: pad(lists), lambda r: r) for label, lists in cases.items()]


class StandIn(SimpleNamespace):
    """A stand-in scheduler: only what the contracts of admit, fit and admission_open
    give a student; anything else is named as such."""
    def __getattr__(self, name):
        raise AttributeError(f"{name!r}: this check's stand-in has only "
                             f"{', '.join(vars(self))}, as the exercise's contract says")


def dynamic_window_cases():
    """The window at its edges: the oldest request waited exactly max_wait_ms (every
    time exact in binary), a moment less, a batch full at once, nothing waiting."""
    next_batch = lambda self: module("minicb.stages.dynamic").DynamicEngine.next_batch(self)  # noqa: E731

    def call(arrivals, now):
        waiting = deque(Request([1], SamplingParams(max_tokens=4), (2,), request_id=str(i),
                                metrics=RequestMetrics(arrival)) for i, arrival in enumerate(arrivals))
        # a stage 3 engine with nothing but the contract's fields (stage 2's batch cut is its
        # parent's, which the student's calls)
        self = object.__new__(module("minicb.stages.dynamic").DynamicEngine)
        vars(self).update(waiting=waiting, clock=lambda: now, config=StandIn(
            max_batch_size=3, max_wait_ms=125, bucket_by_length=False))
        batch = next_batch(self)
        return [r.request_id for r in batch], [r.request_id for r in self.waiting]
    cases = {"the oldest waited exactly the window": ([0.25, 0.3], 0.375),
             "the oldest a moment short of the window": ([0.25, 0.3], 0.37),
             "a full batch at once": ([0.25, 0.25, 0.25, 0.25], 0.25), "nothing waiting": ([], 1.0)}
    return [(label, lambda a=a: call(*a), lambda r: r) for label, a in cases.items()]


def scheduler(running=(), waiting=(), fits=None, is_open=True, **config):
    """A stand-in scheduler for the three methods students write: its queues, its
    config, and (for admit) whether admission is open and how much of each request
    fits (``fits``: request -> tokens; absent: none)."""
    fits = fits or {}
    return StandIn(running=list(running), waiting=deque(waiting), steps_since_admission=0,
                   config=StandIn(**config), admission_open=lambda: is_open,
                   reserve=lambda request, budget: min(fits.get(request, 0), budget))


def state(self) -> tuple:
    """What a scheduler method may change: its queues and its count of steps."""
    return list(self.running), list(self.waiting), self.steps_since_admission


def admission_cases():
    """Admission where a run seldom goes: closed, max_num_seqs reached exactly, a head
    that does not fit before one that would, a budget shared out."""
    admit = lambda self, budget: module("minicb.stages.iteration").Scheduler.admit(  # noqa: E731
        self, budget)
    def call(running, waiting, fits, is_open, seats, budget):
        self = scheduler(running, waiting, fits, is_open, max_num_seqs=seats)   # a fresh one a call
        return admit(self, budget), state(self)
    cases = {"admission closed": ([], "ab", dict(a=4, b=4), False, 4, 16),
             "one seat left": (["x", "y"], "abc", dict(a=4, b=4, c=4), True, 3, 16),
             "a head that does not fit": ([], "ab", dict(b=4), True, 4, 16),
             "a budget shared out": ([], "abc", dict(a=6, b=6, c=6), True, 4, 13)}
    return [(label, lambda a=a: call(*a), lambda r: r) for label, a in cases.items()]


def chunking_cases():
    """How much of a request fits, at each boundary: remaining equal to the step's
    budget, to max_num_batched_tokens, one over; chunked prefill on and off."""
    fit = lambda self, remaining, budget: module("minicb.stages.iteration").Scheduler.fit(  # noqa: E731
        self, remaining, budget)
    cases = {}
    for chunked in (False, True):
        for remaining, budget in ((16, 16), (16, 15), (17, 16), (5, 16), (16, 0)):
            cases[f"{remaining} remaining, {budget} left, chunked prefill {'on' if chunked else 'off'}"] = (
                scheduler(enable_chunked_prefill=chunked, max_num_batched_tokens=16), remaining, budget)
    return [(label, lambda a=a: fit(*a), lambda r: r) for label, a in cases.items()]


def admission_trigger_cases():
    """The rescheduling knobs at their boundaries: the interval reached exactly, the
    waiting-to-running ratio met exactly, nothing running."""
    is_open = lambda self: module("minicb.stages.iteration").Scheduler.admission_open(self)  # noqa: E731

    def call(steps, running, waiting):
        self = scheduler(running, waiting, schedule_interval=3, waiting_served_ratio=1.5)
        self.steps_since_admission = steps
        return is_open(self), state(self)
    cases = {"the interval reached exactly, the ratio met exactly": (2, "xy", "abc"),
             "one step short of the interval": (1, "xy", "abcd"),
             "one request short of the ratio": (2, "xy", "ab"),
             "nothing running": (0, "", "a")}
    return [(label, lambda a=a: call(*a), lambda r: r) for label, a in cases.items()]


CASES = {"stop_reason": stop_reason_cases, "left_padding": left_padding_cases,
         "dynamic_window": dynamic_window_cases,
         "admission": admission_cases,
         "chunking": chunking_cases, "admission_trigger": admission_trigger_cases, "top_p": top_p_cases, "tpot": tpot_cases,
         "judge": judge_cases, "percentiles": percentile_cases, "text_stream": text_stream_cases,
         "vocab_share": vocab_share_cases, "collectives": collective_cases, "step": step_cases,
         "budget": budget_cases}


def same(a, b) -> bool:
    """Equal, floats within a relative 1e-9 (the order of a sum may differ), nan
    equal to nan; tensors of one shape and dtype, within float32's rounding."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and (
            math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15) or (math.isnan(a) and math.isnan(b)))
    if torch.is_tensor(a) or torch.is_tensor(b):
        return (torch.is_tensor(a) and torch.is_tensor(b) and a.shape == b.shape
                and a.dtype == b.dtype and torch.allclose(a, b, rtol=1e-6, atol=1e-7))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b

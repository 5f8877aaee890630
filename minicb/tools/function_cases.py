"""The cases a function exercise is checked on: calls of one engine function
that does not run in a stage's step (a claim's verdict, a metric, the server's
stop-string holdback, a tensor-parallel share, the cost model), each made
once with the student's function swapped in and once with the engine's own.

Each case is (label, call, what to compare): ``call`` reaches the function
through its module or class at call time, so the swap takes effect, and the
comparison takes what the exercise's contract promises (a verdict's outcome
and numbers, not its wording).
"""
import importlib
import math

import torch

from ..checkpoint import SHAPES
from ..costmodel import HARDWARE, MODEL_SHAPES
from ..model import ModelConfig


def module(name: str):
    return importlib.import_module(name)


def judge_cases():
    """Claims about time: holds, fails, too close to call, too few repeats, a busy
    machine, and a side that is a fixed bound."""
    judge = lambda *args: module("minicb.tools.claims").judge(*args)        # noqa: E731
    outcome = lambda v: (v.holds, v.left, v.right, v.margin)                # noqa: E731
    cases = [("clearly faster", ([1.0, 1.1, 1.05], "<", [2.0, 2.2, 2.1])),
             ("clearly slower", ([3.0, 3.1, 2.9], "<", [1.0, 1.2, 1.1])),
             ("within the spread", ([1.0, 1.6, 1.2], "<", [1.3, 1.9, 1.5])),
             ("one repeat a side", ([1.0], ">", [2.0])),
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
        text = module("minicb.tools.server").TextStream(stops)
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
    def share(vocab, n, rank):
        weight = torch.arange(vocab * 3, dtype=torch.float32).view(vocab, 3)
        start, end, rows = module("minicb.executors.parallel").vocab_share(weight, rank, n)
        return start, end, tuple(rows.shape), rows.tolist()
    return [(f"{vocab} tokens, rank {rank} of {n}", lambda a=(vocab, n, rank): share(*a), lambda s: s)
            for vocab, n in [(12, 3), (10, 3), (7, 4), (5, 8)] for rank in range(n)]


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
                                                             [(300, 300)] + [(1, 900)] * 7, 8)}
    return [(label, lambda a=args: step_seconds(*a), lambda s: s) for label, args in cases.items()]


def budget_cases():
    """The KV memory a GPU leaves once the weights are in."""
    kv_budget = lambda *args: module("minicb.costmodel").kv_budget(*args)   # noqa: E731
    cases = {"OPT-13B on an A100 40 GB": ("a100-40gb", "opt-13b", 2, 0.9),
             "Llama 3.1 8B on an H100": ("h100-sxm", "llama-3.1-8b", 2, 0.9),
             "in fp32, at 0.5": ("h200", "llama-3.2-1b", 4, 0.5)}
    return [(label, lambda h=hw, m=shape, b=bpv, u=util: kv_budget(HARDWARE[h], MODEL_SHAPES[m], b, u),
             lambda s: s) for label, (hw, shape, bpv, util) in cases.items()]


CASES = {"judge": judge_cases, "percentiles": percentile_cases, "text_stream": text_stream_cases,
         "vocab_share": vocab_share_cases, "collectives": collective_cases, "step": step_cases,
         "budget": budget_cases}


def same(a, b) -> bool:
    """Equal, floats within a relative 1e-9 (the order of a sum may differ), nan
    equal to nan."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and (
            math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15) or (math.isnan(a) and math.isnan(b)))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b

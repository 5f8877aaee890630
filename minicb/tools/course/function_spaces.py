"""The inputs each plain function of the course may meet, drawn whole: a
request's end, nucleus sampling, left padding, TPOT, percentiles, a claim's
verdict, the stream's holdback, a vocabulary share, collective bytes, the cost
model's step and KV budget, the acceptance rule of speculative decoding
(``differential.py`` says how a space is used).

Where a boundary matters, the draws meet it exactly: values are small integers
or binary fractions, so a sum, a median or a mass lands on its threshold with
no rounding, whichever order a student adds in.
"""
import math
import re
from types import SimpleNamespace

import torch
from hypothesis import strategies as st

from ...costmodel import HARDWARE, MODEL_SHAPES
from ...request import Request, RequestMetrics
from ...sampling_params import SamplingParams
from ...stages.drafting import Draft
from ..bench import claims
from ..serve.protocol import TextStream
from .differential import Observed, Space, attempt, observe, same

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
small_ids = st.integers(0, 6)             # few token ids: eos, stop and output tokens collide


# ---------------------------------------------------------------- chapter 1
def stop_reason_space() -> Space:
    # "once the request has max_tokens": at that count and past it (async scheduling's
    # last step may carry a token the request will drop)
    inputs = st.builds(dict, max_tokens=st.integers(1, 6), output=st.lists(small_ids, min_size=1, max_size=8),
                       stops=st.lists(small_ids, max_size=3), eos=st.lists(small_ids, max_size=3),
                       ignore_eos=st.booleans()).filter(lambda d: len(d["output"]) <= d["max_tokens"] + 2)

    def call(function, d):
        params = SamplingParams(max_tokens=d["max_tokens"], ignore_eos=d["ignore_eos"],
                                stop_token_ids=d["stops"])
        request = Request([1, 1], params, tuple(d["eos"]), "r", output_token_ids=list(d["output"]))
        return observe(lambda: function(request, d["output"][-1]), dict(request=request))
    example = lambda output, eos=(2,), stops=(7,), ignore_eos=False, max_tokens=4: dict(  # noqa: E731
        max_tokens=max_tokens, output=output, stops=list(stops), eos=list(eos), ignore_eos=ignore_eos)
    examples = {"an eos token": example([5, 2]), "an eos token, ignore_eos": example([5, 2], ignore_eos=True),
                "an eos token that is also a stop token": example([5, 2], stops=(7, 2)),
                "the second of several eos tokens": example([5, 3], eos=(2, 3, 4)),
                "a stop token, ignore_eos": example([5, 7], ignore_eos=True),
                "the max_tokens-th token": example([1, 1, 1, 5]), "one before max_tokens": example([1, 1, 5]),
                "one past max_tokens": example([1, 1, 1, 1, 5]),
                "eos as the max_tokens-th token, ignore_eos": example([1, 1, 1, 2], ignore_eos=True)}
    return Space(inputs, call, examples, describe=lambda d: (
        f"output {d['output']} of max_tokens {d['max_tokens']}, eos ids {d['eos']}, stop token ids "
        f"{d['stops']}, ignore_eos {d['ignore_eos']}"))


def exact_probabilities(draw_weights):
    """A row of probabilities that are binary fractions summing to exactly 1: small
    integer weights, the last one topping the sum up to a power of two."""
    total = 1 << max(1, sum(draw_weights)).bit_length()
    return [w / total for w in draw_weights] + [(total - sum(draw_weights)) / total]


def top_p_space() -> Space:
    row = st.lists(st.integers(0, 6), min_size=0, max_size=9).map(exact_probabilities)
    inputs = st.integers(1, 3).flatmap(lambda rows: st.builds(
        dict, probs=st.lists(row, min_size=rows, max_size=rows).filter(lambda r: len({len(x) for x in r}) == 1),
        top_p=st.lists(st.one_of(st.integers(1, 16).map(lambda t: t / 16), st.sampled_from([2 ** -30, 1e-50])),
                       min_size=rows, max_size=rows),
        dtype=st.sampled_from(["float32", "float16", "float64"])))

    def call(function, d):
        probs = torch.tensor(d["probs"], dtype=getattr(torch, d["dtype"]))
        top_p = torch.tensor(d["top_p"], dtype=torch.float32)
        return observe(lambda: function(probs, top_p), dict(probs=probs, top_p=top_p))
    examples = {"a mass exactly at top_p": dict(probs=[[0.5, 0.25, 0.25]], top_p=[0.5], dtype="float32"),
                "top_p 0: the best token stays": dict(probs=[[0.25, 0.5, 0.25]], top_p=[2 ** -30], dtype="float32"),
                "top_p 1e-50, which is 0 in float32": dict(probs=[[0.25, 0.5, 0.25]], top_p=[1e-50], dtype="float32"),
                "ties at the edge": dict(probs=[[0.25, 0.25, 0.25, 0.25]], top_p=[0.5], dtype="float32"),
                "top_p 1: every token": dict(probs=[[0.125, 0.5, 0.375]], top_p=[1.0], dtype="float32"),
                "two rows, two top_p": dict(probs=[[0.5, 0.25, 0.25], [0.125, 0.125, 0.75]],
                                            top_p=[0.75, 0.8], dtype="float32")}
    return Space(inputs, call, examples, same=same_nucleus,
                 describe=lambda d: f"probs {d['probs']} in {d['dtype']}, top_p {d['top_p']}")


def same_nucleus(got, want) -> bool:
    """Both keep nuclei of the same size and the same probabilities: where tokens tie
    at the nucleus's edge, the contract leaves which of them stay to the sort, so any
    choice among them passes."""
    if not (torch.is_tensor(got) and got.shape == want.shape and got.dtype == want.dtype
            and got.device == want.device):
        return False
    if not torch.allclose(got.double().sum(-1), torch.ones(len(got), dtype=torch.double), atol=2e-3):
        return False
    kept = lambda probs: probs.double().sort(dim=-1).values  # noqa: E731  (the row's kept values, in order)
    return torch.allclose(kept(got), kept(want), rtol=2e-3, atol=1e-6)


# ---------------------------------------------------------------- chapter 2
def left_padding_space() -> Space:
    token = st.one_of(st.just(0), st.integers(0, 300))      # 0, the pad token, is a token too
    inputs = st.lists(st.lists(token, min_size=1, max_size=9), min_size=1, max_size=5)

    def call(function, token_lists):
        seen = observe(lambda: function(token_lists), dict(token_lists=token_lists))
        if seen.raised is None and isinstance(seen.returned, tuple) and seen.returned:
            rows = [row for part in seen.returned for row in (part if isinstance(part, list) else [])]
            seen.state = {"rows returned that are the caller's own lists":
                          sum(any(row is mine for mine in token_lists) for row in rows)}
        return seen
    examples = {"one long, one short": [[5, 6, 7], [8]], "equal lengths": [[1, 2], [3, 4]],
                "three rows": [[4, 4, 4, 4], [9, 9], [7]], "one row": [[3, 1, 4]],
                "a prompt that starts with token 0": [[0, 5, 6], [7]]}
    return Space(inputs, call, examples, describe=lambda lists: f"token_lists {lists}")


# ---------------------------------------------------------------- chapter 3
def tpot_space() -> Space:
    times = st.integers(0, 4096).map(lambda t: t / 64)
    inputs = st.builds(dict, tokens=st.integers(0, 300), first=times, later=times)

    def call(function, d):
        first = d["first"] if d["tokens"] else None      # no token: it never had a first one
        metrics = RequestMetrics(0.0, 0.0, first, d["first"] + d["later"], 3, d["tokens"])
        return observe(lambda: function(metrics), dict(metrics=metrics))
    examples = {"one token": dict(tokens=1, first=0.5, later=0.0),
                "two tokens": dict(tokens=2, first=0.5, later=0.25),
                "five tokens": dict(tokens=5, first=0.5, later=1.0),
                "no token at all (failed before its first)": dict(tokens=0, first=0.5, later=0.25)}
    return Space(inputs, call, examples, describe=lambda d: (
        f"{d['tokens']} output tokens, the first at {d['first'] if d['tokens'] else None} s, finished at "
        f"{d['first'] + d['later']} s"))


# ---------------------------------------------------------------- chapter 7
def percentiles_space() -> Space:
    # nan too: numpy's percentile and mean carry it through, as the contract's "as numpy does"
    number = st.one_of(st.integers(0, 10**6), st.floats(0, 1e6, allow_nan=False), st.just(float("nan")))
    inputs = st.lists(number, max_size=40)

    def call(function, values):
        return observe(lambda: function(values), dict(values=values))
    examples = {"one value": [2.5], "two values": [1.0, 3.0], "ties": [1, 1, 1, 2, 9], "a nan": [1.0, float("nan")],
                "a hundred": [(7 * i) % 101 / 10 for i in range(100)], "none": []}
    return Space(inputs, call, examples, describe=lambda values: f"values {values}")


def judge_space() -> Space:
    value = st.integers(0, 8).map(lambda v: v / 2)            # halves: medians and gaps exact
    side = st.one_of(st.lists(value, max_size=5), value)
    inputs = st.builds(dict, left=side, op=st.sampled_from(["<", ">", "<", ">", "<="]), right=side,
                       others_cores=st.sampled_from([None, 0.0, 0.25, 0.5, 0.75, 1.5]))

    def call(function, d):
        return attempt(function, d["left"], d["op"], d["right"], d["others_cores"])
    example = lambda left, op, right, cores=None: dict(left=left, op=op, right=right, others_cores=cores)  # noqa: E731
    examples = {"clearly faster": example([1.0, 1.1, 1.05], "<", [2.0, 2.2, 2.1]),
                "within the spread": example([1.0, 1.6, 1.2], "<", [1.3, 1.9, 1.5]),
                "one repeat against three": example([1.0], "<", [2.0, 2.1, 2.2]),
                "against a fixed bound": example([0.8, 0.9, 0.85], "<", 1.0),
                "medians apart by exactly the spread": example([1.0, 2.0], "<", [3.0, 4.0]),
                "others' cores exactly at the limit": example([1.0, 1.1], "<", [2.0, 2.1], 0.5)}
    return Space(inputs, call, examples, same=same_verdict, describe=lambda d: (
        f"left {d['left']} {d['op']} right {d['right']}, others' cores {d['others_cores']}"))


NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


def same_verdict(got, want) -> bool:
    """The same outcome and numbers; and where the claim is not decided, a reason
    that names the numbers that decided it, as the engine's does (the fewest repeats,
    the busy cores, the gap and the margin), to at least one significant digit."""
    if not isinstance(got, claims.Verdict):
        return False
    if not same((got.holds, got.left, got.right, got.margin), (want.holds, want.left, want.right, want.margin)):
        return False
    if want.holds is not None:
        return True
    named = [float(x) for x in NUMBER.findall(got.reason or "")]
    return all(any(names(y, x) for y in named) for x in map(float, NUMBER.findall(want.reason)))


def names(y: float, x: float) -> bool:
    """Whether ``y``, as a student printed it, stands for ``x`` (as the engine
    printed it): equal once either is rounded to one significant digit."""
    if x == 0 or y == 0:
        return abs(x - y) < 1e-9
    return abs(x - y) <= 0.6 * 10 ** math.floor(math.log10(abs(x)))


# ---------------------------------------------------------------- chapter 9
def text_stream_space() -> Space:
    text = lambda size: st.text("ab\n", min_size=size, max_size=5)  # noqa: E731
    inputs = st.builds(dict, stops=st.lists(text(1).filter(lambda s: len(s) <= 4), max_size=3),
                       pieces=st.lists(text(0), min_size=1, max_size=7))

    def call(function, d):
        stream, sent = TextStream(d["stops"]), []
        for piece in d["pieces"]:
            stopped = stream.add(piece)
            seen = attempt(function, stream, False)
            if seen.raised:
                return seen
            sent.append(seen.returned)
            if stopped:
                break
        last = attempt(function, stream, True)
        return Observed(returned=sent + [last.returned], raised=last.raised,
                        state=dict(pending=stream.pending))
    examples = {"no stop strings": dict(stops=[], pieces=["Hel", "lo", " world"]),
                "a stop split across pieces": dict(stops=["END"], pieces=["abc E", "N", "D tail"]),
                "a stop split across three pieces": dict(stops=["STOP"], pieces=["xS", "T", "O", "Py"]),
                "a false start": dict(stops=["END"], pieces=["abc EN", "x END"]),
                "the stop inside one piece": dict(stops=["\n\n"], pieces=["one\n\ntwo"]),
                "two stops, the earlier wins": dict(stops=["xyz", "b"], pieces=["aaxy", "zab"])}
    return Space(inputs, call, examples, describe=lambda d: f"stop strings {d['stops']}, pieces {d['pieces']}")


# ---------------------------------------------------------------- chapter 10
def vocab_share_space() -> Space:
    inputs = st.integers(1, 8).flatmap(lambda n: st.builds(
        dict, vocab=st.integers(1, 40), hidden=st.integers(1, 4), n=st.just(n), rank=st.integers(0, n - 1),
        dtype=st.sampled_from(list(DTYPES))))

    def call(function, d):
        weight = torch.arange(d["vocab"] * d["hidden"], dtype=DTYPES[d["dtype"]]).view(d["vocab"], d["hidden"])
        seen = observe(lambda: function(weight, d["rank"], d["n"]), dict(weight=weight))
        if seen.raised is None:
            seen.returned = share_as_returned(seen.returned)
        return seen
    examples = {f"{v} tokens, rank {r} of {n}": dict(vocab=v, hidden=3, n=n, rank=r, dtype="float32")
                for v, n, r in [(12, 3, 2), (10, 3, 2), (7, 4, 3), (5, 8, 6)]}
    return Space(inputs, call, examples, describe=lambda d: (
        f"{d['vocab']} tokens of {d['hidden']} values in {d['dtype']}, rank {d['rank']} of {d['n']}"))


def share_as_returned(returned):
    """What the contract fixes of a share: its range, its rows (a frozen parameter),
    and the memory the rows keep alive (only the share's own, never the whole table)."""
    if not (isinstance(returned, tuple) and len(returned) == 3 and torch.is_tensor(returned[2])):
        return returned
    start, end, rows = returned
    return dict(start=start, end=end, rows=rows.detach(), type=type(rows).__name__,
                requires_grad=rows.requires_grad, bytes_held=rows.untyped_storage().nbytes())


def collectives_space() -> Space:
    inputs = st.builds(dict, hidden=st.integers(1, 8192), layers=st.integers(1, 80),
                       vocab=st.integers(1, 200_000), tokens=st.integers(1, 4096),
                       sampled=st.integers(0, 64), n=st.integers(1, 8), bytes=st.sampled_from([1, 2, 4]))

    def call(function, d):
        cfg = SimpleNamespace(hidden_size=d["hidden"], num_hidden_layers=d["layers"], vocab_size=d["vocab"])
        return attempt(function, cfg, d["tokens"], min(d["sampled"], d["tokens"]), d["n"], d["bytes"])
    example = lambda tokens, sampled, n, b: dict(hidden=4096, layers=32, vocab=128256,  # noqa: E731
                                                 tokens=tokens, sampled=sampled, n=n, bytes=b)
    examples = {"1 token, 1 sampled, 2 ranks": example(1, 1, 2, 2),
                "64 tokens, 8 sampled, 3 ranks": example(64, 8, 3, 4)}
    return Space(inputs, call, examples, describe=lambda d: (
        f"hidden {d['hidden']}, {d['layers']} layers, vocabulary {d['vocab']}, {d['tokens']} tokens, "
        f"{min(d['sampled'], d['tokens'])} sampled, {d['n']} ranks, {d['bytes']}-byte values"))


# ---------------------------------------------------------------- chapter 11
OVERHEADS = ("step_overhead", "sequence_overhead", "token_overhead", "cached_token_overhead",
             "prompt_step_overhead")


def hardware(d):
    """A profile from the table, its overheads replaced by the drawn ones."""
    hw = HARDWARE[d["hardware"]]
    return type(hw)(**{**vars(hw), **dict(zip(OVERHEADS, d["overheads"]))})


def step_space() -> Space:
    sequence = st.integers(1, 600).flatmap(lambda context: st.tuples(
        st.one_of(st.just(1), st.integers(1, context)), st.just(context)))
    inputs = st.builds(dict, hardware=st.sampled_from(sorted(HARDWARE)), shape=st.sampled_from(sorted(MODEL_SHAPES)),
                       bytes=st.sampled_from([1, 2, 4]), sequences=st.lists(sequence, min_size=1, max_size=8),
                       sampled=st.integers(0, 8), overheads=st.tuples(*[st.sampled_from([0.0, 1e-3, 2e-5, 3e-6])
                                                                        for _ in OVERHEADS]))

    def call(function, d):
        return attempt(function, hardware(d), MODEL_SHAPES[d["shape"]], d["bytes"], list(d["sequences"]),
                       min(d["sampled"], len(d["sequences"])))
    none = (0.0,) * len(OVERHEADS)
    examples = {"one decode": dict(hardware="h100-sxm", shape="llama-3.1-8b", bytes=2, sequences=[(1, 512)],
                                   sampled=1, overheads=none),
                "a 4,096-token prefill": dict(hardware="h100-sxm", shape="llama-3.1-8b", bytes=2,
                                              sequences=[(4096, 4096)], sampled=1, overheads=none),
                "every overhead, a two-token prompt": dict(
                    hardware="h200-measured", shape="llama-3.1-8b", bytes=2, sequences=[(2, 40)] + [(1, 900)] * 3,
                    sampled=4, overheads=(1e-3, 2e-5, 3e-6, 4e-8, 5e-4))}
    return Space(inputs, call, examples, describe=lambda d: (
        f"{d['hardware']} with overheads {dict(zip(OVERHEADS, d['overheads']))}, {d['shape']} in "
        f"{d['bytes']}-byte values, sequences (new, context) {d['sequences']}, "
        f"{min(d['sampled'], len(d['sequences']))} sampled"))


def budget_space() -> Space:
    inputs = st.builds(dict, hardware=st.sampled_from(sorted(HARDWARE)), shape=st.sampled_from(sorted(MODEL_SHAPES)),
                       bytes=st.sampled_from([1, 2, 4]),
                       utilization=st.one_of(st.integers(1, 20).map(lambda u: u / 20),
                                             st.floats(0.01, 1.0, allow_nan=False)))

    def call(function, d):
        return attempt(function, HARDWARE[d["hardware"]], MODEL_SHAPES[d["shape"]], d["bytes"], d["utilization"])
    examples = {"OPT-13B on an A100 40 GB": dict(hardware="a100-40gb", shape="opt-13b", bytes=2, utilization=0.9),
                "a utilization of 0.29 (not a whole percent in binary)": dict(
                    hardware="h100-sxm", shape="llama-3.2-1b", bytes=2, utilization=0.29),
                "weights larger than the share: below 0": dict(hardware="a100-40gb", shape="opt-13b", bytes=4,
                                                                utilization=0.5)}
    return Space(inputs, call, examples, describe=lambda d: (
        f"{d['shape']} in {d['bytes']}-byte values on {d['hardware']} at utilization {d['utilization']}"))


# ---------------------------------------------------------------- chapter 12
def distribution(vocab: int):
    """A row of exact probabilities over ``vocab`` tokens, zeros among them (what
    top-k and top-p cut), the top-up token anywhere."""
    weights = st.lists(st.integers(0, 6), min_size=vocab - 1, max_size=vocab - 1)
    return st.tuples(weights, st.integers(0, vocab - 1)).map(
        lambda d: (lambda row: row[d[1]:] + row[:d[1]])(exact_probabilities(d[0])))


def one_hot_row(token: int, vocab: int) -> list:
    return [float(t == token) for t in range(vocab)]


def verify_position(vocab: int, sampled: bool):
    """One draft: its q (None: prompt lookup's), which token of q's support, and
    the model's p there: drawn, equal to q, all on the draft, or off q's support."""
    return st.builds(dict, q=distribution(vocab) if sampled else st.none(), pick=st.integers(0, 63),
                     p=distribution(vocab), kind=st.sampled_from(["drawn", "drawn", "q", "certain", "disjoint"]))


def verify_case(vocab: int, positions: list, last: list, seed: int) -> dict:
    """A verify step's inputs, as plain data: the draft's tokens, q (or None), p at
    each draft and one past them, and the generator's seed."""
    tokens, qs, ps = [], [], []
    for pos in positions:
        support = [t for t in range(vocab) if pos["q"] is None or pos["q"][t] > 0]
        token = support[pos["pick"] % len(support)]        # a draft is drawn where q is not 0
        q = pos["q"] or one_hot_row(token, vocab)
        outside = [t for t in range(vocab) if q[t] == 0]
        ps.append({"drawn": pos["p"], "q": q, "certain": one_hot_row(token, vocab),
                   "disjoint": one_hot_row(outside[0], vocab) if outside else pos["p"]}[pos["kind"]])
        tokens.append(token)
        qs.append(q)
    return dict(tokens=tokens, q=qs if positions and positions[0]["q"] is not None else None,
                p=ps + [last], seed=seed)


def draws(seed: int, n: int) -> list[float]:
    """The first n torch.rand() draws of a generator with this seed."""
    generator = torch.Generator().manual_seed(seed)
    return [float(torch.rand((), generator=generator)) for _ in range(n)]


def acceptance_examples() -> dict:
    """The rule's cases by name: each seed found here, so that its draws do what the
    name says (a first draw of at least 1 - 2**-13 comes a few thousand seeds in)."""
    u = draws(3, 1)[0]                        # a multiple of 2**-24: exact as a probability
    late = next(s for s in range(1 << 20) if draws(s, 1)[0] >= 1 - 2 ** -13)
    two = next(s for s in range(1000) if [d < 0.5 for d in draws(s, 2)] == [True, True]
               and draws(s, 3)[2] >= 0.875)
    quarter = [[0.25, 0.5, 0.25], [0.25, 0.25, 0.5], [0.5, 0.25, 0.25], [0.125, 0.125, 0.75]]
    favoured = quarter[:2] + [[0.875, 0.125, 0.0], quarter[3]]     # the third draft, rejected
    case = lambda tokens, q, p, seed: dict(tokens=tokens, q=q, p=p, seed=seed)  # noqa: E731
    return {
        "no draft: one draw from p": case([], None, [[0.25, 0.5, 0.25]], 0),
        "a prompt-lookup draft top-k cut from p: never kept": case([1], None, [[0.5, 0.0, 0.5], quarter[0]], 0),
        "p certain of a prompt-lookup draft: kept, then a draw from the next p":
            case([2], None, [[0.0, 0.0, 1.0], [0.5, 0.5, 0.0]], 0),
        "three prompt-lookup drafts: two kept, the third rejected though p favours it":
            case([1, 2, 0], None, favoured, two),
        "p equal to q: every draft kept, then one more":
            case([0, 2], quarter[1:3], quarter[1:], 1),
        "p and q disjoint: the first draft rejected": case(
            [0, 1], [[0.75, 0.25, 0.0], [0.5, 0.5, 0.0]], [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], quarter[0]], 0),
        "u times q(x) exactly p(x), prompt lookup: rejected": case([0], None, [[u, 1 - u], [0.5, 0.5]], 3),
        "u times q(x) exactly p(x), a sampled draft: rejected":
            case([0], [[0.5, 0.5]], [[u / 2, 1 - u / 2], [0.5, 0.5]], 3),
        "p a rounding below q at the draft and nowhere above: nothing left of p - q": case(
            [0], [[2 ** -10, 1 - 2 ** -10]], [[2 ** -10 - 2 ** -23, 1 - 2 ** -10], [0.5, 0.5]], late)}


NEXT_DRAW = "the generator's next draw (each draw made moves it on)"


def acceptance_space() -> Space:
    inputs = st.tuples(st.integers(2, 6), st.integers(0, 4), st.booleans()).flatmap(
        lambda d: st.builds(verify_case, st.just(d[0]), st.lists(verify_position(d[0], d[2]), min_size=d[1],
                                                                 max_size=d[1]),
                            distribution(d[0]), st.integers(0, 2 ** 32 - 1)))

    def call(function, d):
        probs = torch.tensor(d["p"], dtype=torch.float32)
        q = None if d["q"] is None else torch.tensor(d["q"], dtype=torch.float32)
        draft, generator = Draft(list(d["tokens"]), q), torch.Generator().manual_seed(d["seed"])
        seen = observe(lambda: function(draft, probs, generator),
                       {"probs": probs, "draft.tokens": draft.tokens, "draft.probs": q})
        seen.state = {NEXT_DRAW: float(torch.rand((), generator=generator))}
        return seen
    return Space(inputs, call, acceptance_examples(), describe=lambda d: (
        f"draft {d['tokens']}, q {d['q'] if d['q'] is not None else 'None (all on each draft)'}, "
        f"p {d['p']}, a generator seeded {d['seed']}"))

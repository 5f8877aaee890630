"""Right, by a signed distance: the gap is measured in the claim's direction (sign +1 for "<", -1 for ">"),
medians come from a hand-rolled sorted middle (mean of the two middles when even), sides are told apart
by numbers.Real, and the checks run as a table of (undecided?, reason) rules in the contract's order.
"""
import numbers

from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict


def _side(side):
    """(sorted values, measured?): a single number is a bound with no spread."""
    if isinstance(side, numbers.Real):
        return [float(side)], False
    values = sorted(float(v) for v in side)
    if not values:
        raise ValueError("a measured side needs at least one value")
    return values, True


def _median(ordered):
    half, odd = divmod(len(ordered), 2)
    return ordered[half] if odd else (ordered[half - 1] + ordered[half]) / 2


def judge(left, op, right, others_cores=None) -> Verdict:
    """Whether ``left op right`` holds, op "<" or ">": Verdict(holds, median of
    left, median of right, margin, reason), holds None when not decided."""
    direction = {"<": 1.0, ">": -1.0}.get(op)
    if direction is None:
        raise ValueError(f"op must be '<' or '>', got {op!r}")
    (lv, l_measured), (rv, r_measured) = _side(left), _side(right)
    left_median, right_median = _median(lv), _median(rv)
    margin = (lv[-1] - lv[0]) + (rv[-1] - rv[0])
    # positive when the medians lie the way the claim says
    toward_claim = direction * (right_median - left_median)
    counts = [len(v) for v, measured in ((lv, l_measured), (rv, r_measured)) if measured]
    fewest = min(counts) if counts else None
    rules = [
        (fewest is not None and fewest < MIN_REPEATS,
         lambda: f"only {fewest} repeat(s) on a measured side, {MIN_REPEATS} needed for a spread"),
        (others_cores is not None and others_cores > MAX_OTHERS_CORES,
         lambda: f"other processes kept {others_cores:.3g} cores busy"),
        (abs(toward_claim) <= margin,
         lambda: f"medians {abs(toward_claim):.3g} apart, not more than the margin {margin:.3g}"),
    ]
    for undecided, reason in rules:
        if undecided:
            return Verdict(None, left_median, right_median, margin, reason())
    return Verdict(toward_claim > 0, left_median, right_median, margin)

"""Misconception: a list with a single value is "a single number", a fixed bound needing no repeats.
Agrees whenever lists have 2+ values; decides judge([1.0], "<", [2.0, 2.1, 2.2]) as True instead of
not decided (1 repeat, 2 needed).
"""
from statistics import median

from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict


def as_values(side):
    """(values, measured): a number, or a list of one, is a bound; a longer list is repeats."""
    values = [float(side)] if isinstance(side, (int, float)) else [float(v) for v in side]
    if not values:
        raise ValueError("a measured side needs values")
    return values, len(values) > 1


def judge(left, op, right, others_cores=None) -> Verdict:
    """See the stub: Verdict(holds, median left, median right, margin, reason)."""
    if op not in ("<", ">"):
        raise ValueError(f"op must be '<' or '>', not {op!r}")
    (lv, lm), (rv, rm) = as_values(left), as_values(right)
    margin = (max(lv) - min(lv)) + (max(rv) - min(rv))
    ml, mr = median(lv), median(rv)
    counts = [len(v) for v, measured in ((lv, lm), (rv, rm)) if measured]
    if counts and min(counts) < MIN_REPEATS:
        return Verdict(None, ml, mr, margin, f"{min(counts)} repeat(s): a spread takes {MIN_REPEATS}")
    if others_cores is not None and others_cores > MAX_OTHERS_CORES:
        return Verdict(None, ml, mr, margin, f"other processes kept {others_cores:.1f} cores busy")
    gap = (mr - ml) if op == "<" else (ml - mr)
    if abs(gap) <= margin:
        return Verdict(None, ml, mr, margin,
                       f"the medians differ by {abs(gap):.2g}, within the spread {margin:.2g}")
    return Verdict(gap > 0, ml, mr, margin)

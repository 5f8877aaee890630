"""Misconception: "a side with a single value has no spread, so it is a fixed
bound": any side of length one, a one-element list included, is treated as
a bound and needs no repeats. The contract's bound is a single *number*; a
list is a measured side, one value per repeat, and a measured side with one
repeat must leave the claim undecided (its spread is unknown, not zero).

Concrete input: judge([1.0], "<", [5.0, 5.1]): the contract returns
holds=None with a reason naming 1 repeat against MIN_REPEATS (2); this
version decides holds=True.
"""
from statistics import median

from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict


def judge(left, op, right, others_cores=None) -> Verdict:
    if op not in ("<", ">"):
        raise ValueError(f"op must be '<' or '>', got {op!r}")
    sides = []
    for side in (left, right):
        values = [float(side)] if isinstance(side, (int, float)) else [float(v) for v in side]
        if not values:
            raise ValueError("a time claim needs at least one value on each side")
        sides.append(values)
    left, right = sides
    margin = (max(left) - min(left)) + (max(right) - min(right))
    l_med, r_med = median(left), median(right)
    measured = [len(s) for s in (left, right) if len(s) > 1]   # one value: a bound
    if measured and min(measured) < MIN_REPEATS:
        return Verdict(None, l_med, r_med, margin,
                       f"{min(measured)} repeat(s): a spread takes {MIN_REPEATS}")
    if others_cores is not None and others_cores > MAX_OTHERS_CORES:
        return Verdict(None, l_med, r_med, margin,
                       f"other processes kept {others_cores:.1f} cores busy")
    gap = (r_med - l_med) if op == "<" else (l_med - r_med)
    if abs(gap) <= margin:
        return Verdict(None, l_med, r_med, margin,
                       f"the medians differ by {abs(gap):.2g}, within the spread {margin:.2g}")
    return Verdict(gap > 0, l_med, r_med, margin)

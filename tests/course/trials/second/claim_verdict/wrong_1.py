"""Misconception: "differ by more than the spread" read as "the two ranges of repeats do not overlap".
Agrees on clear wins and ties, but decides lows [1, 2, 3] < highs [3.5, 4, 10] (True) where the medians'
gap 2 is within the margin 2 + 6.5 = 8.5 (not decided).
"""
from statistics import median

from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict


def judge(left, op, right, others_cores=None) -> Verdict:
    """See the stub: Verdict(holds, median left, median right, margin, reason)."""
    if op not in ("<", ">"):
        raise ValueError(f"op must be '<' or '>', not {op!r}")
    sides = []
    for side in (left, right):
        if isinstance(side, (int, float)):
            sides.append(([float(side)], False))
        else:
            values = [float(v) for v in side]
            if not values:
                raise ValueError("a measured side needs values")
            sides.append((values, True))
    (lv, _), (rv, _) = sides
    margin = (max(lv) - min(lv)) + (max(rv) - min(rv))
    verdict = lambda holds, reason="": Verdict(holds, median(lv), median(rv), margin, reason)
    counts = [len(v) for v, measured in sides if measured]
    if counts and min(counts) < MIN_REPEATS:
        return verdict(None, f"{min(counts)} repeat(s): a spread takes {MIN_REPEATS}")
    if others_cores is not None and others_cores > MAX_OTHERS_CORES:
        return verdict(None, f"other processes kept {others_cores:.1f} cores busy")
    low, high = (lv, rv) if op == "<" else (rv, lv)
    if max(low) < min(high):          # every low repeat under every high one
        return verdict(True)
    if max(high) < min(low):
        return verdict(False)
    gap = abs(median(high) - median(low))
    return verdict(None, f"the medians differ by {gap:.2g}, within the spread {margin:.2g}")

"""Misconception: a side with one value is "a single number", a bound that needs no repeats.
judge([1.0], "<", [2.0, 2.1]) decides True; a measured side of 1 repeat (< MIN_REPEATS) must be not decided.
"""
from statistics import median

from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict


def judge(left, op, right, others_cores=None) -> Verdict:
    """Whether ``left op right`` holds, op "<" or ">"."""
    if op not in ("<", ">"):
        raise ValueError(f"op must be '<' or '>', got {op!r}")
    sides = []
    for side in (left, right):
        values = [float(side)] if isinstance(side, (int, float)) else [float(v) for v in side]
        if not values:
            raise ValueError("a time claim needs at least one measured value on each side")
        sides.append(values)
    lv, rv = sides
    lm, rm = median(lv), median(rv)
    margin = (max(lv) - min(lv)) + (max(rv) - min(rv))
    # One value is a fixed number: only a side with several values is a set of repeats.
    repeats = [len(v) for v in sides if len(v) > 1]
    if repeats and min(repeats) < MIN_REPEATS:
        return Verdict(None, lm, rm, margin,
                       f"{min(repeats)} repeats: a measured side needs {MIN_REPEATS}")
    if others_cores is not None and others_cores > MAX_OTHERS_CORES:
        return Verdict(None, lm, rm, margin,
                       f"other processes kept {others_cores:.2f} cores busy (more than {MAX_OTHERS_CORES})")
    gap = abs(lm - rm)
    if gap <= margin:
        return Verdict(None, lm, rm, margin,
                       f"the medians differ by {gap:.4g}, within the margin {margin:.4g}")
    return Verdict(lm < rm if op == "<" else lm > rm, lm, rm, margin)

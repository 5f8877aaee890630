"""Misconception (copied from judge_steps): a claim short of repeats has no medians or margin
to report, so they are nan. judge([1.0], "<", [2.0, 2.2]) gives Verdict(None, nan, nan, nan, ...), not (1.0, 2.1, 0.2).
"""
import math
from statistics import median

from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict


def judge(left, op, right, others_cores=None) -> Verdict:
    """Whether ``left op right`` holds, op "<" or ">"."""
    if op not in ("<", ">"):
        raise ValueError(f"op must be '<' or '>', got {op!r}")
    sides, fewest = [], None
    for side in (left, right):
        if isinstance(side, (int, float)):
            sides.append([float(side)])              # a bound: no repeats needed
            continue
        values = [float(v) for v in side]
        if not values:
            raise ValueError("a time claim needs at least one measured value on each side")
        fewest = len(values) if fewest is None else min(fewest, len(values))
        sides.append(values)
    if fewest is not None and fewest < MIN_REPEATS:
        return Verdict(None, math.nan, math.nan, math.nan,
                       f"{fewest} repeats: a measured side needs {MIN_REPEATS}")
    lv, rv = sides
    lm, rm = median(lv), median(rv)
    margin = (max(lv) - min(lv)) + (max(rv) - min(rv))
    if others_cores is not None and others_cores > MAX_OTHERS_CORES:
        return Verdict(None, lm, rm, margin,
                       f"other processes kept {others_cores:.2f} cores busy (more than {MAX_OTHERS_CORES})")
    if abs(lm - rm) <= margin:
        return Verdict(None, lm, rm, margin,
                       f"the medians differ by {abs(lm - rm):.4g}, within the margin {margin:.4g}")
    return Verdict(lm < rm if op == "<" else lm > rm, lm, rm, margin)

"""Misconception: "more than the spread" read as "at least the spread", so medians that
differ by exactly the margin are decided: judge(3, "<", 3) says False (two equal bounds),
judge([1, 2], "<", [3, 4]) says True; both should be None.
"""
from statistics import median

from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict


def judge(left, op, right, others_cores=None) -> Verdict:
    """Whether ``left op right`` holds, op "<" or ">". Each side is a list of
    measurements (one per repeat) or a single number, a fixed bound with no
    spread (it needs no repeats). Return Verdict(holds, median of left, median
    of right, margin, reason), where margin is the two sides' spreads (largest
    less smallest) added, and holds is:

    - None (not decided, with a reason) if a measured side has fewer than
      MIN_REPEATS values, or if others_cores (cores other processes kept busy)
      is over MAX_OTHERS_CORES, or if the medians differ by no more than the margin;
    - otherwise True when the medians differ in the claim's direction, else False.

    The reason, when holds is None, says why with the numbers that decided it,
    which notebooks print: the fewest repeats a measured side has and the fewest
    it needs; the cores other processes kept busy; or the gap between the
    medians and the margin. Raise ValueError for an op other than "<" and ">".
    """
    if op not in ("<", ">"):
        raise ValueError(f"op must be '<' or '>', not {op!r}")
    l_measured, r_measured = not isinstance(left, (int, float)), not isinstance(right, (int, float))
    lv = [float(v) for v in left] if l_measured else [float(left)]
    rv = [float(v) for v in right] if r_measured else [float(right)]
    lm, rm = median(lv), median(rv)
    margin = (max(lv) - min(lv)) + (max(rv) - min(rv))
    gap = abs(lm - rm)
    short = [len(v) for v, m in ((lv, l_measured), (rv, r_measured)) if m and len(v) < MIN_REPEATS]
    if short:
        return Verdict(None, lm, rm, margin, f"{min(short)} repeat(s): a spread takes {MIN_REPEATS}")
    if others_cores is not None and others_cores > MAX_OTHERS_CORES:
        return Verdict(None, lm, rm, margin, f"other processes kept {others_cores:.1f} cores busy")
    if gap < margin:
        return Verdict(None, lm, rm, margin, f"the medians differ by {gap:.2g}, within the spread {margin:.2g}")
    return Verdict(lm < rm if op == "<" else lm > rm, lm, rm, margin)

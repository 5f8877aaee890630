"""Misconception: the median is the middle element of the sorted repeats, sorted[n // 2], for any n.
With an even count it takes the upper one: judge([1, 3], "<", [2.9, 3.1]) reports left median 3, not 2.
"""
from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict


def judge(left, op, right, others_cores=None) -> Verdict:
    """Whether ``left op right`` holds, op "<" or ">"."""
    if op not in ("<", ">"):
        raise ValueError(f"op must be '<' or '>', got {op!r}")
    bound = [isinstance(s, (int, float)) for s in (left, right)]
    lv, rv = ([float(s)] if b else sorted(float(v) for v in s) for s, b in zip((left, right), bound))
    if not lv or not rv:
        raise ValueError("a time claim needs at least one measured value on each side")
    lm, rm = lv[len(lv) // 2], rv[len(rv) // 2]          # the middle repeat
    margin = (lv[-1] - lv[0]) + (rv[-1] - rv[0])
    measured = [len(v) for v, b in zip((lv, rv), bound) if not b]
    if measured and min(measured) < MIN_REPEATS:
        return Verdict(None, lm, rm, margin,
                       f"{min(measured)} repeats: a measured side needs {MIN_REPEATS}")
    if others_cores is not None and others_cores > MAX_OTHERS_CORES:
        return Verdict(None, lm, rm, margin,
                       f"other processes kept {others_cores:.2f} cores busy (more than {MAX_OTHERS_CORES})")
    if abs(lm - rm) <= margin:
        return Verdict(None, lm, rm, margin,
                       f"the medians differ by {abs(lm - rm):.4g}, within the margin {margin:.4g}")
    return Verdict(lm < rm if op == "<" else lm > rm, lm, rm, margin)

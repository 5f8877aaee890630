"""Misconception: each side's range is an error bar centred on its median, so the margin
is the two half-ranges added (spread / 2 each). Decides too often: judge([1, 3], "<",
[4, 6]) gives True with margin 2, where the ranges added are 4 and the gap 3 is not decided."""
from statistics import median

from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict


def judge(left, op, right, others_cores=None) -> Verdict:
    """Whether ``left op right`` holds (see the stub's contract)."""
    if op not in ("<", ">"):
        raise ValueError(f"op must be '<' or '>', got {op!r}")
    bounds = [isinstance(s, (int, float)) for s in (left, right)]
    lv, rv = ([float(s)] if b else [float(v) for v in s] for s, b in zip((left, right), bounds))
    if not lv or not rv:
        raise ValueError("a time claim needs at least one measured value on each side")
    med_l, med_r = median(lv), median(rv)
    # each median is give or take half its side's range
    margin = (max(lv) - min(lv)) / 2 + (max(rv) - min(rv)) / 2
    counts = [len(v) for v, b in zip((lv, rv), bounds) if not b]
    if counts and min(counts) < MIN_REPEATS:
        return Verdict(None, med_l, med_r, margin,
                       f"{min(counts)} repeats: a measured side needs {MIN_REPEATS}")
    if others_cores is not None and others_cores > MAX_OTHERS_CORES:
        return Verdict(None, med_l, med_r, margin,
                       f"other processes kept {others_cores:.2f} cores busy (more than {MAX_OTHERS_CORES})")
    gap = abs(med_l - med_r)
    if gap <= margin:
        return Verdict(None, med_l, med_r, margin, f"medians differ by {gap:.4g}, margin {margin:.4g}")
    return Verdict(med_l < med_r if op == "<" else med_l > med_r, med_l, med_r, margin)

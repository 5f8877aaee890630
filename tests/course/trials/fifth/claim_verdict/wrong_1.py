"""Misconception: any side with a single value is a fixed bound, whether given as a
number or as a one-element list; so [x] needs no repeats and has no spread. Wrong for
judge([1.0], "<", [5.0, 5.1]): decides True, where one repeat on a measured side is None."""
from statistics import median

from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict


def judge(left, op, right, others_cores=None) -> Verdict:
    """Whether ``left op right`` holds (see the stub's contract)."""
    if op not in ("<", ">"):
        raise ValueError(f"op must be '<' or '>', got {op!r}")
    sides = [[float(v) for v in s] if isinstance(s, (list, tuple)) else [float(s)] for s in (left, right)]
    if not all(sides):
        raise ValueError("a time claim needs at least one measured value on each side")
    (lv, rv) = sides
    med_l, med_r = median(lv), median(rv)
    margin = (max(lv) - min(lv)) + (max(rv) - min(rv))
    measured = [len(v) for v in sides if len(v) > 1]        # one value: a bound
    if measured and min(measured) < MIN_REPEATS:
        return Verdict(None, med_l, med_r, margin,
                       f"{min(measured)} repeats: a measured side needs {MIN_REPEATS}")
    if others_cores is not None and others_cores > MAX_OTHERS_CORES:
        return Verdict(None, med_l, med_r, margin,
                       f"other processes kept {others_cores:.2f} cores busy (more than {MAX_OTHERS_CORES})")
    gap = abs(med_l - med_r)
    if gap <= margin:
        return Verdict(None, med_l, med_r, margin, f"medians differ by {gap:.4g}, margin {margin:.4g}")
    return Verdict(med_l < med_r if op == "<" else med_l > med_r, med_l, med_r, margin)

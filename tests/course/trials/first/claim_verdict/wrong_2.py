"""Misconception: a single number is just one measurement, so the repeats rule applies to
it too (a bound is never "measured" enough). Goes wrong on judge([1.0, 1.1], "<", 5.0):
a fixed bound needs no repeats, so the claim holds (True); here it is None."""
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
    a, b = sides
    ma, mb = median(a), median(b)
    margin = (max(a) - min(a)) + (max(b) - min(b))
    fewest = min(len(a), len(b))
    if fewest < MIN_REPEATS:
        return Verdict(None, ma, mb, margin, f"{fewest} repeat(s): a side needs {MIN_REPEATS}")
    if others_cores is not None and others_cores > MAX_OTHERS_CORES:
        return Verdict(None, ma, mb, margin, f"other processes kept {others_cores:.2f} cores busy")
    if abs(ma - mb) <= margin:
        return Verdict(None, ma, mb, margin, "the medians differ by no more than the spread")
    return Verdict(ma < mb if op == "<" else ma > mb, ma, mb, margin)

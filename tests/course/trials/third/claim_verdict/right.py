"""Right: sorts each side once and reads its median and range off the sorted list (no
statistics.median), and decides by the signed gap in the claim's direction; same verdicts and reasons.
"""
import math

from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict


def _side(side):
    """(sorted values, measured?) of one side: a bare number is a bound with no spread."""
    if isinstance(side, (int, float)):
        return [float(side)], False
    values = sorted(float(v) for v in side)
    if not values:
        raise ValueError("a time claim needs at least one measured value on each side")
    return values, True


def _median(ordered):
    half, odd = divmod(len(ordered), 2)
    return ordered[half] if odd else (ordered[half - 1] + ordered[half]) / 2


def judge(left, op, right, others_cores=None) -> Verdict:
    """Whether ``left op right`` holds (see the stub's contract)."""
    if op not in ("<", ">"):
        raise ValueError(f"op must be '<' or '>', got {op!r}")
    (lo, left_measured), (ro, right_measured) = _side(left), _side(right)
    lm, rm = _median(lo), _median(ro)
    margin = (lo[-1] - lo[0]) + (ro[-1] - ro[0])
    counts = [len(v) for v, measured in ((lo, left_measured), (ro, right_measured)) if measured]
    if counts and min(counts) < MIN_REPEATS:
        return Verdict(None, lm, rm, margin,
                       f"{min(counts)} repeats: a measured side needs {MIN_REPEATS}")
    if others_cores is not None and others_cores > MAX_OTHERS_CORES:
        return Verdict(None, lm, rm, margin,
                       f"other processes kept {others_cores:.2f} cores busy "
                       f"(more than {MAX_OTHERS_CORES})")
    # positive when the medians lie the way the claim says
    toward = (rm - lm) if op == "<" else (lm - rm)
    if abs(toward) <= margin:
        return Verdict(None, lm, rm, margin,
                       f"the medians differ by {abs(toward):.4g}, within the margin {margin:.4g}")
    return Verdict(toward > 0, lm, rm, margin)

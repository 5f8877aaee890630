"""Misconception: "the noise is as large as the noisier side's spread", so the
margin is the larger of the two ranges, not the two ranges added. Each side's
median can sit anywhere within its own range, so a gap must beat both ranges
together; with the larger one alone, claims are decided (held or failed) on
gaps that the repeats' noise could produce, and the Verdict's margin is too
small.

Concrete input: judge([1.0, 2.0, 3.0], "<", [4.0, 4.3, 4.6]): spreads 2.0
and 0.6, gap between medians 2.3. The contract's margin is 2.6, so the claim
is not decided (holds None); this version uses 2.0 and says it holds.
"""
from statistics import median

from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict


def judge(left, op, right, others_cores=None) -> Verdict:
    if op not in ("<", ">"):
        raise ValueError(f"op must be '<' or '>', got {op!r}")
    bounds = [isinstance(side, (int, float)) for side in (left, right)]
    left = [float(left)] if bounds[0] else [float(v) for v in left]
    right = [float(right)] if bounds[1] else [float(v) for v in right]
    if not left or not right:
        raise ValueError("a time claim needs at least one value on each side")
    margin = max(max(left) - min(left), max(right) - min(right))
    l_med, r_med = median(left), median(right)
    measured = [len(s) for s, b in zip((left, right), bounds) if not b]
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

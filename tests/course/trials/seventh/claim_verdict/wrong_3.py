"""Misconception: "the median is the middle element of the sorted values":
sorted(values)[len(values) // 2], which for an even number of repeats is the
upper of the two middle values instead of their mean. With the usual three
repeats it is exact; with two or four it is not, in the medians the Verdict
reports and in the decision.

Concrete input: judge([1.0, 1.0, 1.2, 1.2], "<", 1.35) (four repeats against
a fixed bound): the contract's median of the left side is 1.1, the gap 0.25
beats the margin 0.2, and the claim holds; this version takes 1.2 as the
median, the gap 0.15 is within the margin, and it returns holds=None.
"""
from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict


def middle(values):
    return sorted(values)[len(values) // 2]


def judge(left, op, right, others_cores=None) -> Verdict:
    if op not in ("<", ">"):
        raise ValueError(f"op must be '<' or '>', got {op!r}")
    bounds = [isinstance(side, (int, float)) for side in (left, right)]
    left = [float(left)] if bounds[0] else [float(v) for v in left]
    right = [float(right)] if bounds[1] else [float(v) for v in right]
    if not left or not right:
        raise ValueError("a time claim needs at least one value on each side")
    margin = (max(left) - min(left)) + (max(right) - min(right))
    l_med, r_med = middle(left), middle(right)
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

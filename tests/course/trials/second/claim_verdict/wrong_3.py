"""Misconception: the median is the middle element of the sorted repeats, sorted[len // 2], also for an even count.
Agrees for odd repeat counts (3, 5); with 2 or 4 repeats it takes the upper middle, e.g. median [1, 3] is 3, not 2,
which moves the medians, the gap and the verdict.
"""
from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict


def middle(values):
    return sorted(values)[len(values) // 2]


def judge(left, op, right, others_cores=None) -> Verdict:
    """See the stub: Verdict(holds, median left, median right, margin, reason)."""
    if op not in ("<", ">"):
        raise ValueError(f"op must be '<' or '>', not {op!r}")
    bound = {id(left): isinstance(left, (int, float)), id(right): isinstance(right, (int, float))}
    lv = [float(left)] if bound[id(left)] else [float(v) for v in left]
    rv = [float(right)] if bound[id(right)] else [float(v) for v in right]
    if not lv or not rv:
        raise ValueError("a measured side needs values")
    margin = (max(lv) - min(lv)) + (max(rv) - min(rv))
    ml, mr = middle(lv), middle(rv)
    counts = [len(v) for v, side in ((lv, left), (rv, right)) if not bound[id(side)]]
    if counts and min(counts) < MIN_REPEATS:
        return Verdict(None, ml, mr, margin, f"{min(counts)} repeat(s): a spread takes {MIN_REPEATS}")
    if others_cores is not None and others_cores > MAX_OTHERS_CORES:
        return Verdict(None, ml, mr, margin, f"other processes kept {others_cores:.1f} cores busy")
    gap = (mr - ml) if op == "<" else (ml - mr)
    if abs(gap) <= margin:
        return Verdict(None, ml, mr, margin,
                       f"the medians differ by {abs(gap):.2g}, within the spread {margin:.2g}")
    return Verdict(gap > 0, ml, mr, margin)

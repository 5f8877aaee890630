"""Right, written as one signed gap: the medians come from numpy, the claim's direction is
a sign (+1 for "<", -1 for ">") times right-minus-left, and the reasons are gathered in a
list first, so "not decided" is one test at the end instead of a chain of early returns."""
import numpy as np

from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict, samples, is_bound

_SIGN = {"<": 1.0, ">": -1.0}


def judge(left, op, right, others_cores=None) -> Verdict:
    """Whether ``left op right`` holds, op "<" or ">". Each side is a list of
    measurements (one per repeat) or a single number, a fixed bound with no
    spread (it needs no repeats). Return Verdict(holds, median of left, median
    of right, margin, reason), where margin is the two sides' spreads (largest
    less smallest) added, and holds is None when not decided, else whether the
    medians differ in the claim's direction.
    """
    if op not in _SIGN:
        raise ValueError(f"op must be '<' or '>', got {op!r}")
    sides = [samples(left), samples(right)]
    arrays = [np.asarray(values, dtype=float) for values in sides]
    med_left, med_right = (float(np.median(x)) for x in arrays)
    margin = float(sum(np.ptp(x) for x in arrays))
    reasons = [f"{len(values)} repeat(s) on the {name}: a measured side needs {MIN_REPEATS}"
               for name, values in zip(("left", "right"), sides)
               if not is_bound(values) and len(values) < MIN_REPEATS]
    if others_cores is not None and others_cores > MAX_OTHERS_CORES:
        reasons.append(f"other processes kept {others_cores:.2f} cores busy "
                       f"(more than {MAX_OTHERS_CORES})")
    gap = _SIGN[op] * (med_right - med_left)       # > 0: the claim's direction
    if not reasons and abs(gap) <= margin:
        reasons.append(f"the medians differ by {abs(gap):.3g}, no more than the margin {margin:.3g}")
    if reasons:
        return Verdict(None, med_left, med_right, margin, "; ".join(reasons))
    return Verdict(gap > 0, med_left, med_right, margin)

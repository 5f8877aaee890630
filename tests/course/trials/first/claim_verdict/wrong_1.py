"""Misconception: the centre of the repeats is their mean (with two repeats it is the
median anyway). Goes wrong on judge([1.0, 1.1, 4.0], "<", [4.5, 4.5, 4.6]): medians 1.1
vs 4.5 differ by 3.4 > margin 3.1, so it holds; the means (2.03, 4.53) differ by less: None."""
from statistics import fmean

from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict, samples, is_bound, spread


def judge(left, op, right, others_cores=None) -> Verdict:
    """Whether ``left op right`` holds, op "<" or ">"."""
    if op not in ("<", ">"):
        raise ValueError(f"op must be '<' or '>', got {op!r}")
    a, b = samples(left), samples(right)
    centre_a, centre_b = fmean(a), fmean(b)
    margin = spread(a) + spread(b)
    for values in (a, b):
        if not is_bound(values) and len(values) < MIN_REPEATS:
            return Verdict(None, centre_a, centre_b, margin,
                           f"{len(values)} repeat(s): a side needs {MIN_REPEATS}")
    if others_cores is not None and others_cores > MAX_OTHERS_CORES:
        return Verdict(None, centre_a, centre_b, margin,
                       f"other processes kept {others_cores:.2f} cores busy")
    if abs(centre_a - centre_b) <= margin:
        return Verdict(None, centre_a, centre_b, margin, "the centres differ by no more than the spread")
    return Verdict(centre_a < centre_b if op == "<" else centre_a > centre_b, centre_a, centre_b, margin)

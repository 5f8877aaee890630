"""Misconception (copied from judge_steps beside it): a side with too few repeats has no
meaningful median or margin, so that verdict carries nan for both medians and the margin.
Wrong for judge([1.0], "<", [2.0, 2.2]): Verdict(None, nan, nan, nan, ...), not (None, 1.0, 2.1, 0.2, ...)."""
import math
from statistics import median

from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict, is_bound, samples, spread


def judge(left, op, right, others_cores=None) -> Verdict:
    """Whether ``left op right`` holds (see the stub's contract)."""
    if op not in ("<", ">"):
        raise ValueError(f"op must be '<' or '>', got {op!r}")
    lv, rv = samples(left), samples(right)
    counts = [len(v) for v in (lv, rv) if not is_bound(v)]
    if counts and min(counts) < MIN_REPEATS:
        return Verdict(None, math.nan, math.nan, math.nan,
                       f"{min(counts)} repeats: a measured side needs {MIN_REPEATS}")
    med_l, med_r = median(lv), median(rv)
    margin = spread(lv) + spread(rv)
    if others_cores is not None and others_cores > MAX_OTHERS_CORES:
        return Verdict(None, med_l, med_r, margin,
                       f"other processes kept {others_cores:.2f} cores busy (more than {MAX_OTHERS_CORES})")
    gap = abs(med_l - med_r)
    if gap <= margin:
        return Verdict(None, med_l, med_r, margin, f"medians differ by {gap:.4g}, margin {margin:.4g}")
    return Verdict(med_l < med_r if op == "<" else med_l > med_r, med_l, med_r, margin)

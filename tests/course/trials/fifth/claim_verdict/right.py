"""Right: turns every claim into "big > small" (sides swapped for "<") and decides on
that signed lead; medians and ranges are taken by hand from one sort of each side,
not with statistics.median, max and min or the module's samples/spread helpers."""
from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict


def _side(side):
    """(sorted values, measured?) of one side."""
    if isinstance(side, (int, float)) and not isinstance(side, bool):
        return [float(side)], False
    values = sorted(float(v) for v in side)
    if not values:
        raise ValueError("a time claim needs at least one measured value on each side")
    return values, True


def _median(ordered):
    half = len(ordered) // 2
    return ordered[half] if len(ordered) % 2 else (ordered[half - 1] + ordered[half]) / 2


def judge(left, op, right, others_cores=None) -> Verdict:
    """Whether ``left op right`` holds, op "<" or ">". Each side is a list of
    measurements (one per repeat) or a single number, a fixed bound with no
    spread (it needs no repeats). Return Verdict(holds, median of left, median
    of right, margin, reason), where margin is the two sides' spreads (largest
    less smallest) added, and holds is:

    - None (not decided, with a reason) if a measured side has fewer than
      MIN_REPEATS values, or if others_cores (cores other processes kept busy)
      is over MAX_OTHERS_CORES, or if the medians differ by no more than the margin;
    - otherwise True when the medians differ in the claim's direction, else False.

    The reason, when holds is None, says why with the numbers that decided it,
    which notebooks print: the fewest repeats a measured side has and the fewest
    it needs; the cores other processes kept busy; or the gap between the
    medians and the margin. Raise ValueError for an op other than "<" and ">".
    """
    if op not in ("<", ">"):
        raise ValueError(f"op must be '<' or '>', got {op!r}")
    (lv, lm), (rv, rm) = _side(left), _side(right)
    med_l, med_r = _median(lv), _median(rv)
    margin = (lv[-1] - lv[0]) + (rv[-1] - rv[0])
    counts = [len(v) for v, measured in ((lv, lm), (rv, rm)) if measured]
    if counts and min(counts) < MIN_REPEATS:
        return Verdict(None, med_l, med_r, margin,
                       f"{min(counts)} repeats on a measured side: each needs at least {MIN_REPEATS}")
    if others_cores is not None and others_cores > MAX_OTHERS_CORES:
        return Verdict(None, med_l, med_r, margin,
                       f"other processes kept {others_cores:.6g} cores busy, more than {MAX_OTHERS_CORES:g}")
    big, small = (med_l, med_r) if op == ">" else (med_r, med_l)   # the claim: big > small
    lead = big - small
    if -margin <= lead <= margin:
        return Verdict(None, med_l, med_r, margin,
                       f"the medians differ by {abs(lead):.6g}, no more than the margin {margin:.6g}")
    return Verdict(lead > 0, med_l, med_r, margin)

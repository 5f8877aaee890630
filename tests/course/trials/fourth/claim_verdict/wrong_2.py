"""Misconception: the median is the middle element of the sorted repeats, sorted[n // 2]; for an
even count that is the upper middle, not the mean of the two. With MIN_REPEATS = 2 that is the max:
left=[4, 5] < 5.8 gives median 5 and None (gap 0.8, margin 1) instead of 4.5 and True."""


def median(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2]

from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict


def _side(values):
    """(values, measured?): a plain number is a bound, a list holds repeats."""
    if isinstance(values, (int, float)):
        return [float(values)], False
    values = [float(v) for v in values]
    if not values:
        raise ValueError("a time claim needs at least one measured value on each side")
    return values, True


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
        raise ValueError(f"op must be '<' or '>', not {op!r}")
    a, a_measured = _side(left)
    b, b_measured = _side(right)
    left_median, right_median = median(a), median(b)
    margin = (max(a) - min(a)) + (max(b) - min(b))
    low, high = (left_median, right_median) if op == "<" else (right_median, left_median)
    gap = high - low                                 # > 0: the claim's direction

    def undecided(reason):
        return Verdict(None, left_median, right_median, margin, reason)

    counts = [len(v) for v, measured in ((a, a_measured), (b, b_measured)) if measured]
    if counts and min(counts) < MIN_REPEATS:
        return undecided(f"{min(counts)} repeats on a side, {MIN_REPEATS} needed")
    if others_cores is not None and others_cores > MAX_OTHERS_CORES:
        return undecided(f"other processes kept {float(others_cores)!r} cores busy "
                         f"(more than {MAX_OTHERS_CORES!r})")
    if not abs(gap) > margin:
        return undecided(f"the medians differ by {abs(gap)!r}, not more than the margin {margin!r}")
    return Verdict(gap > 0, left_median, right_median, margin, "")

"""Right: turns the claim into one signed lead (how far the medians go the claim's way)
and runs three gates in the contract's order; busy cores are printed with as many digits
as it takes to show them over the limit, so a reason never reads "0.5 over 0.5".
"""
import numbers
from statistics import median

from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict


def _side(side):
    """(values, measured): a bare number is a bound, with no spread and no repeats."""
    if isinstance(side, numbers.Real):
        return [float(side)], False
    values = [float(v) for v in side]
    if not values:
        raise ValueError("a time claim needs at least one measured value on each side")
    return values, True


def _over(value: float, limit: float) -> str:
    """value, with the fewest significant digits (2 at least) that still show it over limit."""
    for digits in range(2, 18):
        text = f"{value:.{digits}g}"
        if float(text) > limit:
            return text
    return repr(value)


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
    (lv, l_measured), (rv, r_measured) = _side(left), _side(right)
    lm, rm = float(median(lv)), float(median(rv))
    margin = (max(lv) - min(lv)) + (max(rv) - min(rv))
    lead = rm - lm if op == "<" else lm - rm          # > 0: the claim's way
    counts = [len(v) for v, measured in ((lv, l_measured), (rv, r_measured)) if measured]
    fewest = min(counts, default=MIN_REPEATS)
    gates = [
        (fewest < MIN_REPEATS, lambda: f"{fewest} repeat(s): a spread takes {MIN_REPEATS}"),
        (others_cores is not None and others_cores > MAX_OTHERS_CORES,
         lambda: f"other processes kept {_over(others_cores, MAX_OTHERS_CORES)} cores busy"),
        (abs(lead) <= margin, lambda: f"the medians differ by {abs(lead):.2g}, within the spread {margin:.2g}"),
    ]
    for undecided, reason in gates:
        if undecided:
            return Verdict(None, lm, rm, margin, reason())
    return Verdict(lead > 0, lm, rm, margin)

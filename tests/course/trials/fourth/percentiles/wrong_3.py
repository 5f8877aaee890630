"""Misconception: `math.nan in values` finds a nan. It matches only the math.nan object itself
(by identity), so a nan made any other way (float('nan'), 0*inf, numpy) slips past into
sorted(): values=[float("nan"), 3.0, 1.0] gives p50 1.0 (mean nan) instead of all nan."""
import math

import numpy as np


def percentiles(values) -> dict:
    """A dict with keys mean, p50, p90 and p99 (floats) of ``values`` (a list of
    numbers), each percentile interpolated linearly between the two nearest
    ranks, as numpy.percentile does by default. No values: every entry nan; a
    nan among the values makes every entry nan too, as numpy's mean and
    percentile do.
    """
    values = [float(v) for v in values]
    if not values or math.nan in values:
        return {"mean": math.nan, "p50": math.nan, "p90": math.nan, "p99": math.nan}
    ordered = sorted(values)
    last = len(ordered) - 1

    def pct(p):
        position = last * (p / 100)
        lo = math.floor(position)
        hi = min(lo + 1, last)
        frac = position - lo
        if frac >= 0.5:       # numpy's lerp, from the upper end
            return ordered[hi] - (ordered[hi] - ordered[lo]) * (1 - frac)
        return ordered[lo] + (ordered[hi] - ordered[lo]) * frac

    return {"mean": float(np.mean(np.asarray(values, dtype=float))),
            "p50": pct(50), "p90": pct(90), "p99": pct(99)}

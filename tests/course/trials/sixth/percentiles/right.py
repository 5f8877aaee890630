"""Right: sorts in Python and interpolates by hand with numpy's own index ((n-1) q) and
lerp (from the upper end when the fraction is at least 1/2), so even infinities come out
as numpy's; nan is found first. Only the mean uses numpy's pairwise sum, to match it.
"""
import math

import numpy as np


def _lerp(a: float, b: float, t: float) -> float:
    diff = b - a
    return b - diff * (1 - t) if t >= 0.5 else a + diff * t


def percentiles(values) -> dict:
    """A dict with keys mean, p50, p90 and p99 (floats) of ``values`` (a list of
    numbers), each percentile interpolated linearly between the two nearest
    ranks, as numpy.percentile does by default. No values: every entry nan; a
    nan among the values makes every entry nan too, as numpy's mean and
    percentile do.
    """
    data = [float(v) for v in values]
    if not data or any(math.isnan(v) for v in data):
        return dict.fromkeys(("mean", "p50", "p90", "p99"), math.nan)
    # the mean in the values' own order (numpy's pairwise sum), before sorting
    out = {"mean": float(np.add.reduce(np.asarray(data, dtype=np.float64)) / len(data))}
    data.sort()
    last = len(data) - 1
    for key, q in (("p50", 50), ("p90", 90), ("p99", 99)):
        index = last * (q / 100)
        below = math.floor(index)
        above = min(below + 1, last)
        out[key] = float(_lerp(data[below], data[above], index - below))
    return out

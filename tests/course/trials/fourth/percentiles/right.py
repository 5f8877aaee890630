"""Right, written differently: no np.percentile. It sorts once and interpolates by hand at
index (n - 1) * p / 100 with numpy's own two-sided lerp (from the lower value below a weight
of 0.5, from the upper one at or above it); the mean is numpy's pairwise-summed mean."""
import math

import numpy as np

_KEYS = (("p50", 50), ("p90", 90), ("p99", 99))


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
    data = np.asarray(list(values), dtype=np.float64).ravel()
    if data.size == 0 or np.isnan(data).any():
        return dict.fromkeys(("mean", "p50", "p90", "p99"), math.nan)
    ordered = sorted(data.tolist())
    last = len(ordered) - 1
    summary = {"mean": float(data.mean())}
    for key, p in _KEYS:
        position = last * (p / 100)
        below = math.floor(position)
        above = min(below + 1, last)
        summary[key] = float(_lerp(ordered[below], ordered[above], position - below))
    return summary

"""Right, but without numpy.percentile: sorts once in plain Python and interpolates
each rank with numpy's own two-sided lerp (a + d*t below t = 0.5, b - d*(1-t) from it),
so the results are bit-for-bit numpy's; the mean is numpy's pairwise sum over the count."""
import math

import numpy as np

_KEYS = {"p50": 50, "p90": 90, "p99": 99}


def _lerp(a: float, b: float, t: float) -> float:
    d = b - a
    return b - d * (1.0 - t) if t >= 0.5 else a + d * t


def percentiles(values) -> dict:
    """A dict with keys mean, p50, p90 and p99 (floats) of ``values`` (a list of
    numbers), each percentile interpolated linearly between the two nearest
    ranks, as numpy.percentile does by default. No values: every entry nan.
    """
    data = np.asarray(list(values), dtype=np.float64)
    n = data.size
    out = {"mean": math.nan, **{k: math.nan for k in _KEYS}}
    if n == 0:
        return out
    out["mean"] = float(np.add.reduce(data) / n)
    ordered = sorted(data.tolist())
    for key, p in _KEYS.items():
        position = (p / 100) * (n - 1)
        below = math.floor(position)
        above = min(below + 1, n - 1)
        out[key] = float(_lerp(ordered[below], ordered[above], position - below))
    return out

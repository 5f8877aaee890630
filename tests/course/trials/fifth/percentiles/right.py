"""Right: no numpy.percentile: sorts once and interpolates by hand, with numpy's own
rank ((n - 1) * q) and its two-sided lerp formula (from the upper neighbour when the
fraction is 0.5 or more), so it matches numpy bit for bit, infinities included."""
import math

import numpy as np


def _lerp(a, b, t):
    d = b - a
    return b - d * (1 - t) if t >= 0.5 else a + d * t


def percentiles(values) -> dict:
    """A dict with keys mean, p50, p90 and p99 (floats) of ``values`` (a list of
    numbers), each percentile interpolated linearly between the two nearest
    ranks, as numpy.percentile does by default. No values: every entry nan; a
    nan among the values makes every entry nan too, as numpy's mean and
    percentile do.
    """
    data = np.asarray(values, dtype=np.float64).ravel()
    keys = ("p50", "p90", "p99")
    if data.size == 0 or np.isnan(data).any():
        return dict(mean=math.nan, **{k: math.nan for k in keys})
    ordered = np.sort(data).tolist()
    n = len(ordered)
    out = {"mean": float(np.mean(data))}
    for key, q in zip(keys, (0.5, 0.9, 0.99)):
        rank = (n - 1) * q
        low = math.floor(rank)
        if rank >= n - 1:
            out[key] = float(_lerp(ordered[-1], ordered[-1], 1.0))   # numpy: the last value (nan if infinite)
        else:
            out[key] = float(_lerp(ordered[low], ordered[low + 1], rank - low))
    return out

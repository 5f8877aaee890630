"""Right: sorts once and interpolates by hand with numpy's own rule (index (n-1)q, and numpy's
two-sided lerp: from below when the fraction is under 0.5, from above otherwise), so each value matches np.percentile bit for bit.
"""
import math

import numpy as np


def _at(ordered, q):
    """numpy.percentile's "linear" method at quantile q (0..1) of sorted floats."""
    n = len(ordered)
    index = (n - 1) * q
    below = math.floor(index)
    if index >= n - 1:                       # the top: numpy reads the last value twice
        below = upper = n - 1
        gamma = index + 1                    # numpy's fraction, measured from index -1
    else:
        upper = below + 1
        gamma = index - below
    a, b = ordered[below], ordered[upper]
    diff = b - a
    return float(b - diff * (1 - gamma)) if gamma >= 0.5 else float(a + diff * gamma)


def percentiles(values) -> dict:
    """mean, p50, p90 and p99 of ``values``, as numpy computes them; nan for no values."""
    values = list(values)
    if not values:
        return {key: math.nan for key in ("mean", "p50", "p90", "p99")}
    mean = float(np.mean(np.asarray(values, dtype=float)))
    if any(math.isnan(v) for v in values):  # numpy: a nan anywhere makes every percentile nan
        return {"mean": mean, "p50": math.nan, "p90": math.nan, "p99": math.nan}
    ordered = sorted(values)
    return {"mean": mean, "p50": _at(ordered, 0.5), "p90": _at(ordered, 0.9),
            "p99": _at(ordered, 0.99)}

"""Right, in pure Python without numpy: sort once, interpolate between the ranks at p/100 * (n - 1) with numpy's
own two-sided lerp formula, an exact mean via math.fsum; any nan makes every entry nan, as numpy does.
"""
import math


def _lerp(low, high, t):
    # numpy's _lerp: from the nearer end, so t = 1 gives `high` exactly
    return high - (high - low) * (1 - t) if t >= 0.5 else low + (high - low) * t


def percentiles(values) -> dict:
    """A dict with keys mean, p50, p90 and p99 (floats) of ``values``, each
    percentile interpolated linearly between the two nearest ranks, as
    numpy.percentile does by default. No values: every entry nan."""
    data = [float(v) for v in values]
    keys = ("mean", "p50", "p90", "p99")
    if not data or any(math.isnan(v) for v in data):
        return dict.fromkeys(keys, math.nan)
    data.sort()
    last = len(data) - 1
    try:
        total = math.fsum(data)                 # exact, then rounded once
    except (OverflowError, ValueError):         # inf, or inf and -inf: as float addition gives
        total = sum(data)
    out = {"mean": total / len(data)}
    for key, q in zip(keys[1:], (50, 90, 99)):
        low, t = divmod(q * last, 100)          # integer rank and the remainder, exact
        high = min(low + 1, last)
        out[key] = _lerp(data[low], data[high], t / 100)
    return out

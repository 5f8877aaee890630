"""Misconception: the standard library's statistics.quantiles is the same percentile as numpy's;
its default method is "exclusive" ((n+1)q ranks). p50 agrees, but for [1, 2, 3, 4] p90 is 4.0, numpy says 3.7.
"""
import math
import statistics


def percentiles(values) -> dict:
    """A dict with keys mean, p50, p90 and p99 of ``values``."""
    values = [float(v) for v in values]
    if not values:
        return dict(mean=math.nan, p50=math.nan, p90=math.nan, p99=math.nan)
    if len(values) == 1:                     # quantiles needs two points
        v = values[0]
        return dict(mean=v, p50=v, p90=v, p99=v)
    cuts = statistics.quantiles(values, n=100)   # cut points 1..99, interpolated
    return dict(mean=statistics.fmean(values), p50=float(cuts[49]),
                p90=float(cuts[89]), p99=float(cuts[98]))

"""Misconception: a nan (a request that failed) is skipped rather than propagated, using numpy's nan-aware versions.
Right without nans; wrong for [1.0, nan, 3.0]: 2.0 everywhere instead of nan, as numpy.percentile and mean give.
"""
import numpy as np


def percentiles(values) -> dict:
    """See the stub: mean, p50, p90, p99 of values, linear between the nearest ranks; nan if empty."""
    data = np.asarray(values, dtype=float)
    if np.isnan(data).all():                 # empty (or nothing usable): no statistics
        return dict.fromkeys(("mean", "p50", "p90", "p99"), float("nan"))
    p50, p90, p99 = np.nanpercentile(data, [50, 90, 99])
    return dict(mean=float(np.nanmean(data)), p50=float(p50), p90=float(p90), p99=float(p99))

"""Misconception: a run with no requests has zero latency, so an empty list gives 0.0 for every entry, not nan.
Right on any non-empty list; wrong for [].
"""
import numpy as np


def percentiles(values) -> dict:
    """See the stub: mean, p50, p90, p99 of values, linear between the nearest ranks."""
    if len(values) == 0:
        return dict(mean=0.0, p50=0.0, p90=0.0, p99=0.0)
    p50, p90, p99 = np.percentile(values, [50, 90, 99])
    return dict(mean=float(np.mean(values)), p50=float(p50), p90=float(p90), p99=float(p99))

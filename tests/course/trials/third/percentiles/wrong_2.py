"""Misconception: a summary of no values is zeros, as other empty totals in metrics.py are 0.0
(kv_utilization, occupancy). percentiles([]) returns 0.0 everywhere; the contract says nan.
"""
import numpy as np


def percentiles(values) -> dict:
    """A dict with keys mean, p50, p90 and p99 of ``values``."""
    if len(values) == 0:
        return {"mean": 0.0, "p50": 0.0, "p90": 0.0, "p99": 0.0}
    arr = np.asarray(values, dtype=float)
    p50, p90, p99 = np.percentile(arr, [50, 90, 99])
    return {"mean": float(arr.mean()), "p50": float(p50), "p90": float(p90), "p99": float(p99)}

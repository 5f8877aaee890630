"""Misconception: sorting and interpolating by hand is numpy's percentile in every case;
but sorted() does not move a nan to the end (comparisons with nan are False), so a nan
need not reach the ranks read: [3, nan, 1, 2] gives finite p90/p99, not nan (mean is nan)."""
import math


def percentiles(values) -> dict:
    """mean, p50, p90, p99 of values (see the stub's contract)."""
    values = [float(v) for v in values]
    if not values:
        return dict(mean=math.nan, p50=math.nan, p90=math.nan, p99=math.nan)
    ordered = sorted(values)
    n = len(ordered)

    def pct(q):
        rank = (n - 1) * q / 100
        low = math.floor(rank)
        high = min(low + 1, n - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)

    return dict(mean=sum(values) / n, p50=pct(50), p90=pct(90), p99=pct(99))

"""Misconception: the standard library's statistics.quantiles(n=100) is numpy's
percentile; its default method is "exclusive" ((n + 1) * q ranks), numpy's is
"inclusive" ((n - 1) * q). p50 agrees; p90/p99 differ: 1..10 gives p90 9.9, not 9.1."""
import math
import statistics


def percentiles(values) -> dict:
    """mean, p50, p90, p99 of values (see the stub's contract)."""
    values = [float(v) for v in values]
    if not values or any(math.isnan(v) for v in values):
        return dict(mean=math.nan, p50=math.nan, p90=math.nan, p99=math.nan)
    if len(values) == 1:
        v = values[0]
        return dict(mean=v, p50=v, p90=v, p99=v)
    cuts = statistics.quantiles(values, n=100)          # cuts[k - 1] is the k-th percentile
    return dict(mean=statistics.fmean(values), p50=statistics.median(values),
                p90=cuts[89], p99=cuts[98])

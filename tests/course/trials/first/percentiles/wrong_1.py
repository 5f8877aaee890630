"""Misconception: statistics.quantiles is "the" percentile, but its default method is
'exclusive' (rank p*(n+1)), not numpy's linear (rank p*(n-1)).
Goes wrong on values=list(range(1, 11)): p90 is 9.9 here, numpy gives 9.1."""
import math
import statistics


def percentiles(values) -> dict:
    """A dict with keys mean, p50, p90 and p99 (floats) of ``values`` (a list of
    numbers), each percentile interpolated linearly between the two nearest
    ranks, as numpy.percentile does by default. No values: every entry nan.
    """
    if not values:
        return {k: math.nan for k in ("mean", "p50", "p90", "p99")}
    if len(values) == 1:
        v = float(values[0])
        return {"mean": v, "p50": v, "p90": v, "p99": v}
    cuts = statistics.quantiles(values, n=100)        # 99 cut points, p1..p99
    return {
        "mean": float(statistics.fmean(values)),
        "p50": float(statistics.median(values)),
        "p90": float(cuts[89]),
        "p99": float(cuts[98]),
    }

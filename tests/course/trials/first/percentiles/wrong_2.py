"""Misconception: the rank of the p-th percentile is p/100 * n (n values), not
p/100 * (n - 1), interpolated between neighbours and clamped at the last value.
Goes wrong on values=[10, 20]: p50 is 20.0 here, numpy gives 15.0."""
import math


def percentiles(values) -> dict:
    """A dict with keys mean, p50, p90 and p99 (floats) of ``values`` (a list of
    numbers), each percentile interpolated linearly between the two nearest
    ranks, as numpy.percentile does by default. No values: every entry nan.
    """
    if not values:
        return {k: math.nan for k in ("mean", "p50", "p90", "p99")}
    ordered = sorted(float(v) for v in values)
    n = len(ordered)

    def pct(p):
        rank = p / 100 * n
        lo = min(int(rank), n - 1)
        hi = min(lo + 1, n - 1)
        frac = rank - int(rank)
        return ordered[lo] + (ordered[hi] - ordered[lo]) * frac

    return {"mean": sum(ordered) / n, "p50": pct(50), "p90": pct(90), "p99": pct(99)}

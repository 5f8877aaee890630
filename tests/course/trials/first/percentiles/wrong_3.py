"""Misconception: the per-request times arrive in order, so the ranks can be read off
the list as given, without sorting it.
Goes wrong on values=[3.0, 1.0, 2.0]: p50 is 1.0 here, numpy gives 2.0."""
import math


def percentiles(values) -> dict:
    """A dict with keys mean, p50, p90 and p99 (floats) of ``values`` (a list of
    numbers), each percentile interpolated linearly between the two nearest
    ranks, as numpy.percentile does by default. No values: every entry nan.
    """
    n = len(values)
    if n == 0:
        return {k: math.nan for k in ("mean", "p50", "p90", "p99")}

    def pct(p):
        rank = p / 100 * (n - 1)
        lo = int(rank)
        hi = min(lo + 1, n - 1)
        frac = rank - lo
        return float(values[lo] + (values[hi] - values[lo]) * frac)

    return {"mean": float(sum(values) / n), "p50": pct(50), "p90": pct(90), "p99": pct(99)}

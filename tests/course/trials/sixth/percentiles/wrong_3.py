"""Misconception: a percentile is the value at the nearest rank (sorted[round(p/100 (n-1))]),
not an interpolation between the two nearest. Agrees whenever (n-1)p/100 is whole, e.g.
n = 101; [1, 2, 3, 4] gives p90 4.0, not 3.7.
"""
import math


def percentiles(values) -> dict:
    """A dict with keys mean, p50, p90 and p99 (floats) of ``values`` (a list of
    numbers), each percentile interpolated linearly between the two nearest
    ranks, as numpy.percentile does by default. No values: every entry nan; a
    nan among the values makes every entry nan too, as numpy's mean and
    percentile do.
    """
    data = sorted(float(v) for v in values)
    if not data or any(math.isnan(v) for v in data):
        return dict(mean=math.nan, p50=math.nan, p90=math.nan, p99=math.nan)
    def at(p):
        return data[int(p / 100 * (len(data) - 1) + 0.5)]
    return dict(mean=sum(data) / len(data), p50=at(50), p90=at(90), p99=at(99))

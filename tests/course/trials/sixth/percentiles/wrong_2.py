"""Misconception: a nan is a missing measurement, so it is dropped before summarising
(numpy's nanmean/nanpercentile), instead of making every entry nan: [1.0, nan, 3.0]
gives mean 2.0 rather than nan.
"""
import numpy as np


def percentiles(values) -> dict:
    """A dict with keys mean, p50, p90 and p99 (floats) of ``values`` (a list of
    numbers), each percentile interpolated linearly between the two nearest
    ranks, as numpy.percentile does by default. No values: every entry nan; a
    nan among the values makes every entry nan too, as numpy's mean and
    percentile do.
    """
    data = np.asarray(values, dtype=float)
    data = data[~np.isnan(data)]
    if data.size == 0:
        return dict(mean=float("nan"), p50=float("nan"), p90=float("nan"), p99=float("nan"))
    p50, p90, p99 = np.percentile(data, [50, 90, 99])
    return dict(mean=float(data.mean()), p50=float(p50), p90=float(p90), p99=float(p99))

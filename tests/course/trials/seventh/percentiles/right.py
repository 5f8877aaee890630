"""Right: no numpy percentile call. The values are sorted once and each
percentile is interpolated by hand at the virtual index (n - 1) * p / 100,
using numpy's own two-sided lerp (a + (b - a) t below t = 0.5, b - (b - a)
(1 - t) from 0.5 on) so the results agree with numpy.percentile to the bit.
A nan anywhere, or no values, makes every entry nan. (The mean is numpy's
pairwise-summed mean, so it too agrees to the bit.)"""
import math

import numpy as np


def _lerp(a, b, t):
    if t >= 0.5:
        return b - (b - a) * (1 - t)
    return a + (b - a) * t


def percentiles(values) -> dict:
    data = [float(v) for v in values]
    nan = float("nan")
    if not data or any(math.isnan(v) for v in data):
        return dict(mean=nan, p50=nan, p90=nan, p99=nan)
    ordered = sorted(data)
    n = len(ordered)
    result = dict(mean=float(np.mean(np.array(data, dtype=float))))
    for key, p in (("p50", 50), ("p90", 90), ("p99", 99)):
        position = (n - 1) * (p / 100)
        low = math.floor(position)
        if position >= n - 1:
            result[key] = ordered[-1]
            continue
        result[key] = float(_lerp(ordered[low], ordered[low + 1], position - low))
    return result

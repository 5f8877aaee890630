"""Misconception: "a percentile is one of the measured values: the value at
rank round(p/100 x (n - 1))" (nearest rank, no interpolation). For p50 of an
odd count it agrees with the interpolated one, and for large, dense samples
it is close, but whenever the virtual index falls between two ranks it picks
one of them instead of the point between.

Concrete input: [1.0, 2.0, 3.0, 4.0]: numpy's p50 is 2.5, p90 3.7, p99 3.97;
this gives 3.0 (round(1.5) = 2, Python rounds half to even), 4.0 and 4.0.
"""
import math

import numpy as np


def percentiles(values) -> dict:
    data = [float(v) for v in values]
    if not data or any(math.isnan(v) for v in data):
        nan = float("nan")
        return dict(mean=nan, p50=nan, p90=nan, p99=nan)
    ordered = sorted(data)
    n = len(ordered)

    def rank(p):
        return ordered[round(p / 100 * (n - 1))]

    return dict(mean=float(np.mean(data)), p50=rank(50), p90=rank(90), p99=rank(99))

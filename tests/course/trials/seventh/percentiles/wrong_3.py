"""Misconception: "nan propagates through arithmetic by itself, so a nan
among the values will show in every result": the percentiles are taken by
sorting with Python's sorted() and interpolating exactly as numpy does (right
for finite values, to the bit), and the mean with numpy. The mean does come
out nan, but nan compares False with everything, so sorted() leaves it
wherever the comparisons happen to put it, and a percentile interpolated
between two finite neighbours is an ordinary number. (numpy.percentile sorts
nan to the end and returns nan.) Empty input is handled.

Concrete input: [3.0, float("nan"), 1.0, 2.0]: the contract gives nan for
all four entries; sorted() returns the list unchanged, and this gives mean
nan, p50 nan, but p90 1.7 and p99 1.97.
"""
import math

import numpy as np


def percentiles(values) -> dict:
    data = [float(v) for v in values]
    nan = float("nan")
    if not data:
        return dict(mean=nan, p50=nan, p90=nan, p99=nan)
    ordered = sorted(data)
    n = len(ordered)

    def at(p):
        position = (n - 1) * (p / 100)
        if position >= n - 1:
            return ordered[-1]
        low = math.floor(position)
        a, b, t = ordered[low], ordered[low + 1], position - low
        return b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t

    return dict(mean=float(np.mean(data)), p50=at(50), p90=at(90), p99=at(99))

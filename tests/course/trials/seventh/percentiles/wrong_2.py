"""Misconception: "the p-th percentile sits at rank p/100 x (n + 1)" (the
textbook / Excel PERCENTILE.EXC / Weibull rule), interpolated linearly and
clamped to the smallest and largest values. numpy's default puts it at
p/100 x (n - 1) counting from 0, i.e. p/100 x (n - 1) + 1 counting from 1.
The two agree for p50 of any sample and for the extremes of small ones, so a
check of the median alone passes; the tails differ.

Concrete input: [1.0, 2.0, 3.0, 4.0, 5.0]: numpy's p90 is 4.6 and p99 4.96;
this gives p90 at rank 5.4 -> clamped 5.0, and p99 5.0.
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

    def at(p):
        rank = p / 100 * (n + 1)            # 1-based
        if rank <= 1:
            return ordered[0]
        if rank >= n:
            return ordered[-1]
        low = math.floor(rank)
        frac = rank - low
        return ordered[low - 1] + (ordered[low] - ordered[low - 1]) * frac

    return dict(mean=float(np.mean(data)), p50=at(50), p90=at(90), p99=at(99))

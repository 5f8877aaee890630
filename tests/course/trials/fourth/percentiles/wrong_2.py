"""Misconception: a nan is a bad measurement to drop (numpy's nanmean / nanpercentile),
not something that poisons every entry; only an all-nan list gives nan.
values=[1.0, nan, 3.0] gives mean 2.0 where the contract wants nan."""
import numpy as np


def percentiles(values) -> dict:
    """A dict with keys mean, p50, p90 and p99 (floats) of ``values`` (a list of
    numbers), each percentile interpolated linearly between the two nearest
    ranks, as numpy.percentile does by default. No values: every entry nan; a
    nan among the values makes every entry nan too, as numpy's mean and
    percentile do.
    """
    a = np.asarray(list(values), dtype=float)
    a = a[~np.isnan(a)]          # skip failed measurements
    if a.size == 0:
        nan = float("nan")
        return {"mean": nan, "p50": nan, "p90": nan, "p99": nan}
    p50, p90, p99 = np.percentile(a, [50, 90, 99])
    return {"mean": float(a.mean()), "p50": float(p50), "p90": float(p90), "p99": float(p99)}

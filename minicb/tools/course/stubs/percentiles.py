"""Chapter 7: a run's summary statistics.

Every latency and throughput table in the book reports a mean and three
percentiles of a list of per-request times.
Check: ``python -m minicb check percentiles``.
"""


def percentiles(values) -> dict:
    """A dict with keys mean, p50, p90 and p99 (floats) of ``values`` (a list of
    numbers), each percentile interpolated linearly between the two nearest
    ranks, as numpy.percentile does by default. No values: every entry nan; a
    nan among the values makes every entry nan too, as numpy's mean and
    percentile do.
    """
    raise NotImplementedError

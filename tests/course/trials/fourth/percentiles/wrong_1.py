"""Misconception: the (n + 1) * p rank rule (Excel's PERCENTILE.EXC / Weibull), clamped to
the ends, instead of numpy's (n - 1) * p. p50 always agrees, p90/p99 do not:
values=[1, 2, 3, 4] gives p90 4.0 where numpy gives 3.7."""


def percentiles(values) -> dict:
    """A dict with keys mean, p50, p90 and p99 (floats) of ``values`` (a list of
    numbers), each percentile interpolated linearly between the two nearest
    ranks, as numpy.percentile does by default. No values: every entry nan; a
    nan among the values makes every entry nan too, as numpy's mean and
    percentile do.
    """
    nan = float("nan")
    values = [float(v) for v in values]
    if not values or any(v != v for v in values):
        return {"mean": nan, "p50": nan, "p90": nan, "p99": nan}
    ordered = sorted(values)
    n = len(ordered)

    def pct(p):
        # rank counted from 1 over n + 1 gaps, then back to a 0-based index
        rank = p / 100 * (n + 1) - 1
        rank = min(max(rank, 0.0), n - 1)
        lo = int(rank)
        hi = min(lo + 1, n - 1)
        frac = rank - lo
        return ordered[lo] + (ordered[hi] - ordered[lo]) * frac

    return {"mean": sum(values) / n, "p50": pct(50), "p90": pct(90), "p99": pct(99)}

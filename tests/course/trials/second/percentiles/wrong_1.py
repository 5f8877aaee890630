"""Misconception: per-request times are taken to be in rank order already, so the ranks index the list as given.
Right on sorted input such as [1, 2, ..., 10]; wrong on any unsorted list, e.g. [3, 1, 2]: p50 2.0 wanted, 1.0 given.
"""


def percentiles(values) -> dict:
    """See the stub: mean, p50, p90, p99 of values, linear between the nearest ranks; nan if empty."""
    n = len(values)
    if n == 0:
        return {key: float("nan") for key in ("mean", "p50", "p90", "p99")}
    out = {"mean": float(sum(values) / n)}
    for p in (50, 90, 99):
        rank = p / 100 * (n - 1)
        below = int(rank)
        above = min(below + 1, n - 1)
        out[f"p{p}"] = float(values[below] + (values[above] - values[below]) * (rank - below))
    return out

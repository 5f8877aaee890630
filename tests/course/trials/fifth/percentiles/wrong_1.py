"""Misconception: a run with no values has nothing to report, so every entry is 0.0
(numpy would warn and give nan); otherwise numpy as the contract says. Wrong only for
values=[]: gives mean 0.0, p50 0.0, ..., not nan."""
import numpy as np


def percentiles(values) -> dict:
    """mean, p50, p90, p99 of values (see the stub's contract)."""
    if len(values) == 0:
        return dict(mean=0.0, p50=0.0, p90=0.0, p99=0.0)     # nothing measured
    data = np.asarray(values, dtype=float)
    p50, p90, p99 = np.percentile(data, [50, 90, 99])
    return dict(mean=float(data.mean()), p50=float(p50), p90=float(p90), p99=float(p99))

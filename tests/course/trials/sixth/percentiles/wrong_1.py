"""Misconception: torch.quantile is numpy.percentile's twin (same linear rule, nan in ->
nan out), but torch.tensor of Python floats is float32, so every entry is rounded there:
[0.1, 0.2, 0.3] gives mean 0.20000000298..., not 0.2 (1e8 + 1 is lost entirely).
"""
import math

import torch


def percentiles(values) -> dict:
    """A dict with keys mean, p50, p90 and p99 (floats) of ``values`` (a list of
    numbers), each percentile interpolated linearly between the two nearest
    ranks, as numpy.percentile does by default. No values: every entry nan; a
    nan among the values makes every entry nan too, as numpy's mean and
    percentile do.
    """
    if len(values) == 0:
        return dict(mean=math.nan, p50=math.nan, p90=math.nan, p99=math.nan)
    data = torch.tensor([float(v) for v in values])
    p50, p90, p99 = torch.quantile(data, torch.tensor([0.50, 0.90, 0.99])).tolist()
    return dict(mean=data.mean().item(), p50=p50, p90=p90, p99=p99)

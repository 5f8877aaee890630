"""Misconception: torch.quantile is numpy.percentile (same linear rule), so use it on a tensor of the
values; torch.tensor makes float32, which rounds: [1e8 + 1, 1e8 + 2] gives p50 1e8, not 100000001.5.
"""
import math

import torch


def percentiles(values) -> dict:
    """A dict with keys mean, p50, p90 and p99 of ``values``."""
    if len(values) == 0:
        return {k: math.nan for k in ("mean", "p50", "p90", "p99")}
    t = torch.tensor(values)
    if not t.is_floating_point():
        t = t.float()
    q = torch.quantile(t, torch.tensor([0.5, 0.9, 0.99]))   # linear interpolation by default
    return {"mean": t.mean().item(), "p50": q[0].item(), "p90": q[1].item(), "p99": q[2].item()}

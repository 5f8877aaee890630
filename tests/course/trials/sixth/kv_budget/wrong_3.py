"""Misconception: bytes are whole, so the engine's share of memory is floored before the
weights come off (rounding at a different point). Off by a fraction of a byte whenever
utilization x memory is not an integer, e.g. memory 1e9 + 1 at 0.9 (900000000.9 -> ...0.0).
"""
import math


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes for the KV cache: ``utilization`` of ``hw.memory`` less the model's
    weights (``shape.params`` values of ``bytes_per_value`` bytes each).
    Activations are left out: a step's are small beside either.
    """
    usable = math.floor(utilization * hw.memory)
    return float(usable - shape.params * bytes_per_value)

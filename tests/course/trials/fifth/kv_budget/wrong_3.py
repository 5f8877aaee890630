"""Misconception: bytes come whole, so the usable share of memory is floored to an int
before the weights are taken off (rounding before the subtraction, and an int result).
Invisible on the datasheet GPUs (u x memory is whole there); memory=1e9+1, params=1000, 2 bytes: 899998000, not 899998000.9."""
import math


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes for the KV cache (see the stub's contract)."""
    usable = math.floor(utilization * hw.memory)          # whole bytes
    return usable - shape.params * bytes_per_value

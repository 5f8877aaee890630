"""Right: names the two shares (the usable bytes as a float, the weights as exact integer bytes) and
subtracts them with math.fsum, which rounds once: the same float as utilization * memory - weights.
"""
import math


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes left for the KV cache: utilization x memory, less the weights."""
    usable = utilization * hw.memory                    # what the engine may fill in all
    weights = shape.params * bytes_per_value            # exact: integers
    return math.fsum((usable, -weights))

"""Misconception: utilization is a percentage of memory in whole percent, so the bytes stay exact
integers. int(0.29 * 100) is 28 (float rounding) and 0.925 becomes 92%: 80 GB at 0.925 loses 400 MB.
"""


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes for the KV cache."""
    percent = int(utilization * 100)
    usable = int(hw.memory) * percent // 100
    return float(usable - shape.params * bytes_per_value)

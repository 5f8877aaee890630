"""Misconception: a budget cannot be negative, so a model too large for the GPU gets 0 bytes of
KV cache. OPT-13B in fp32 (51 GB) on 40 GB: returns 0.0 where the contract gives -15.4e9.
"""


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes for the KV cache."""
    left = utilization * hw.memory - shape.params * bytes_per_value
    return max(left, 0.0)

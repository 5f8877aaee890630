"""Misconception: a budget of bytes cannot be negative, so it is clamped at 0 when the
weights take more than the usable memory. Wrong for a model too big for the GPU, e.g.
OPT-13B in fp32 on a 40 GB A100: returns 0.0, not -15.4e9."""


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes for the KV cache (see the stub's contract)."""
    return max(0.0, utilization * hw.memory - shape.params * bytes_per_value)

"""Misconception: the weights are loaded first and utilization is the share of what they
leave that the KV cache may take: u x (memory - weights), not u x memory - weights.
Too big by (1 - u) x weights: OPT-13B bf16 on a 40 GB A100 gives 12.9e9, not 10.3e9."""


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes for the KV cache (see the stub's contract)."""
    weights = shape.params * bytes_per_value
    return utilization * (hw.memory - weights)

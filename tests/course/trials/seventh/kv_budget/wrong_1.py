"""Misconception: "utilization is the share of the memory the weights leave
that the KV cache may take": (memory - weights) x utilization, instead of
utilization x memory - weights. The headroom left unused is then 10% of
what remains after the weights rather than 10% of the whole GPU, so the
budget is larger by (1 - utilization) x weights.

Concrete input: an A100 40 GB (40e9 bytes), OPT-13B's shape in bf16
(12.84e9 parameters: 25.68e9 bytes), utilization 0.9: the contract gives
36e9 - 25.68e9 = 10.32e9 bytes; this gives 0.9 x 14.32e9 = 12.89e9.
"""


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    return (hw.memory - shape.params * bytes_per_value) * utilization

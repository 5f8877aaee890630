"""Misconception: "the weights are stored in the dtype the hardware profile
runs the model in", so their bytes come from hw.dtype (bfloat16: 2 bytes),
and the bytes_per_value argument is taken for the KV cache's values only and
not used here. The simulated executor passes the itemsize of hw.dtype, so
inside the engine the two always agree and every run passes; called with
another width (fp32 weights, an fp8 study) the budget is wrong.

Concrete input: an H100 80 GB (dtype "bfloat16"), the Llama 3.2 1B shape,
bytes_per_value 4: the contract subtracts 4 bytes per parameter; this
subtracts 2, giving a budget larger by 2 x params bytes (about 2.5 GB).
"""
import torch


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    weight_bytes = getattr(torch, hw.dtype).itemsize
    return hw.memory * utilization - shape.params * weight_bytes

"""Misconception: the weights' bytes come from the dtype the profile says the model runs in
(hw.dtype), not from the bytes_per_value argument. Agrees whenever they match (bf16 and 2);
hw bf16 with bytes_per_value=4 (an fp32 run) leaves the weights at half their size."""
import torch

from minicb.costmodel import Hardware, ModelShape


def kv_budget(hw: Hardware, shape: ModelShape, bytes_per_value: int,
              utilization: float = 0.9) -> float:
    """Bytes for the KV cache: ``utilization`` of ``hw.memory`` less the model's
    weights (``shape.params`` values of ``bytes_per_value`` bytes each).
    Activations are left out: a step's are small beside either.
    """
    # the profile knows what the model runs in there
    value_bytes = torch.empty((), dtype=getattr(torch, hw.dtype)).element_size()
    return utilization * hw.memory - shape.params * value_bytes

"""Misconception: a model always has an embedding table and an output layer, so the student
recounts the weights as layers + 2 x vocab x hidden instead of using shape.params, which counts
a tied table once. OPT-13B (tied) on an A100 40 GB in bf16: 9.81e9 bytes instead of 10.32e9."""
from minicb.costmodel import Hardware, ModelShape


def kv_budget(hw: Hardware, shape: ModelShape, bytes_per_value: int,
              utilization: float = 0.9) -> float:
    """Bytes for the KV cache: ``utilization`` of ``hw.memory`` less the model's
    weights (``shape.params`` values of ``bytes_per_value`` bytes each).
    Activations are left out: a step's are small beside either.
    """
    embedding = shape.vocab * shape.hidden
    output_layer = shape.vocab * shape.hidden
    weights = shape.layers * shape.layer_params + embedding + output_layer
    return utilization * hw.memory - weights * bytes_per_value

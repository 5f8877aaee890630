"""Misconception: the weights are re-derived as every layer plus an embedding table and an
LM head, ignoring tied embeddings, instead of using shape.params. Right for Llama 3.1 8B;
for OPT-13B or Llama 3.2 1B (tied) it subtracts vocab x hidden weights once too often."""


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes for the KV cache: ``utilization`` of ``hw.memory`` less the model's
    weights (``shape.params`` values of ``bytes_per_value`` bytes each).
    Activations are left out: a step's are small beside either.
    """
    embedding = lm_head = shape.vocab * shape.hidden
    weights = shape.layers * shape.layer_params + embedding + lm_head
    return utilization * hw.memory - weights * bytes_per_value

"""Misconception: the weights are the layers plus an embedding table and a separate LM head, always.
Wrong for tied embeddings (OPT-13B, Llama 3.2 1B): the shared table is subtracted twice.
"""


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes for the KV cache: ``utilization`` of ``hw.memory`` less the model's
    weights (``shape.params`` values of ``bytes_per_value`` bytes each).
    Activations are left out: a step's are small beside either.
    """
    embedding = shape.vocab * shape.hidden
    lm_head = shape.vocab * shape.hidden
    weights = (shape.layers * shape.layer_params + embedding + lm_head) * bytes_per_value
    return utilization * hw.memory - weights

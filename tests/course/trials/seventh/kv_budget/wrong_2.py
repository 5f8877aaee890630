"""Misconception: "the weights are the layers plus an embedding table and an
output layer", counted from the dimensions as
layers x layer_params + 2 x vocab x hidden, instead of using shape.params.
That double-counts the table of a model whose output layer *is* its
embedding (tied_embeddings: OPT-13B, Llama 3.2 1B, the tiny Qwen2): the
budget is short by vocab x hidden x bytes_per_value. For untied models
(Llama 3.1 8B) it is exact.

Concrete input: an A100 40 GB, OPT-13B (tied, vocab 50,272, hidden 5,120)
in bf16: the contract gives 36e9 - 25.68e9 bytes; this is
50,272 x 5,120 x 2 = 514.8 MB less.
"""


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    weights = (shape.layers * shape.layer_params + 2 * shape.vocab * shape.hidden) \
        * bytes_per_value
    return hw.memory * utilization - weights

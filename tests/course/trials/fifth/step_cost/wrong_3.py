"""Misconception: "2 FLOPs per parameter per token" over the whole model (shape.params:
embedding and output tables included) for every new token, with the output layer's
per-sampled-row term on top. Decode steps are memory-bound, so only prefill times move."""


def step_seconds(hw, shape, bytes_per_value, sequences, sampled) -> float:
    """Seconds for one forward pass (see the stub's contract)."""
    kv = shape.kv_bytes_per_token(bytes_per_value)
    new = sum(n for n, _ in sequences)
    cached = sum(c - n for n, c in sequences)
    pairs = sum(n * c - n * (n - 1) // 2 for n, c in sequences)
    moved = shape.params * bytes_per_value + (cached + new) * kv
    flops = (2 * shape.params * new + 2 * shape.vocab * shape.hidden * sampled
             + 4 * shape.head_dim * shape.layers * shape.heads * pairs)
    seconds = max(moved / (hw.bandwidth * hw.bandwidth_fraction),
                  flops / (hw.flops * hw.flops_fraction))
    prompt = any(n > 1 for n, _ in sequences)
    return (seconds + hw.step_overhead + hw.sequence_overhead * len(sequences)
            + hw.token_overhead * new + hw.cached_token_overhead * cached
            + (hw.prompt_step_overhead if prompt else 0.0))

"""Misconception: "causal" means a query sees only the new tokens up to itself, n(n+1)/2 pairs a
sequence, so cached context costs no attention FLOPs. Same for a fresh prefill; a 512-token chunk after 3,584 cached tokens is undercounted.
"""


def step_seconds(hw, shape, bytes_per_value, sequences, sampled) -> float:
    """Predicted seconds of one forward pass."""
    kv = shape.kv_bytes_per_token(bytes_per_value)
    new_tokens = sum(n for n, _ in sequences)
    cached_tokens = sum(c - n for n, c in sequences)
    nbytes = shape.params * bytes_per_value + (cached_tokens + new_tokens) * kv
    pairs = sum(n * (n + 1) // 2 for n, _ in sequences)            # causal: the triangle of the new tokens
    flops = (2 * shape.layers * shape.layer_params * new_tokens
             + 2 * shape.vocab * shape.hidden * sampled
             + 4 * shape.head_dim * shape.heads * shape.layers * pairs)
    seconds = max(nbytes / (hw.bandwidth * hw.bandwidth_fraction),
                  flops / (hw.flops * hw.flops_fraction))
    seconds += hw.step_overhead + hw.sequence_overhead * len(sequences)
    seconds += hw.token_overhead * new_tokens + hw.cached_token_overhead * cached_tokens
    if any(n > 1 for n, _ in sequences):
        seconds += hw.prompt_step_overhead
    return seconds

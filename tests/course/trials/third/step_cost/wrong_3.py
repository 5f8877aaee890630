"""Misconception: the cached tokens attention reads are the whole context, new tokens included, so
cached_token_overhead is paid per context token. Prefill of 100 with cached_token_overhead 1e-6 adds 100 us, the contract 0.
"""


def step_seconds(hw, shape, bytes_per_value, sequences, sampled) -> float:
    """Predicted seconds of one forward pass."""
    kv = shape.kv_bytes_per_token(bytes_per_value)
    new_tokens = sum(n for n, _ in sequences)
    context_tokens = sum(c for _, c in sequences)
    nbytes = shape.params * bytes_per_value + context_tokens * kv     # cache read + new written
    pairs = sum(n * (c - n) + n * (n + 1) // 2 for n, c in sequences)
    flops = (2 * shape.layers * shape.layer_params * new_tokens
             + 2 * shape.vocab * shape.hidden * sampled
             + 4 * shape.head_dim * shape.heads * shape.layers * pairs)
    seconds = max(nbytes / (hw.bandwidth * hw.bandwidth_fraction),
                  flops / (hw.flops * hw.flops_fraction))
    seconds += hw.step_overhead + hw.sequence_overhead * len(sequences)
    # attention reads every key of the context: that is what a cached token costs
    seconds += hw.token_overhead * new_tokens + hw.cached_token_overhead * context_tokens
    if any(n > 1 for n, _ in sequences):
        seconds += hw.prompt_step_overhead
    return seconds

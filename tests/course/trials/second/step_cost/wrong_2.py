"""Misconception: a causal query sees only the new tokens before it (n(n+1)/2 pairs), not the cached prefix too.
Right for a whole prompt (context == new) and invisible in memory-bound decodes; wrong for a compute-bound
chunk after a cached prefix, e.g. [(2048, 8192)] on the H200: 2.1M pairs counted instead of 14.7M.
"""


def step_seconds(hw, shape, bytes_per_value, sequences, sampled) -> float:
    """See the stub: a roofline plus overheads."""
    kv = shape.kv_bytes_per_token(bytes_per_value)
    new = sum(n for n, _ in sequences)
    cached = sum(context - n for n, context in sequences)
    moved = shape.params * bytes_per_value + (cached + new) * kv
    # causal: query i attends to keys 0..i of its own tokens
    pairs = sum(n * (n + 1) // 2 for n, _ in sequences)
    flops = (2 * shape.layers * shape.layer_params * new
             + 2 * shape.vocab * shape.hidden * sampled
             + 4 * shape.head_dim * shape.layers * shape.heads * pairs)
    roofline = max(moved / (hw.bandwidth * hw.bandwidth_fraction),
                   flops / (hw.flops * hw.flops_fraction))
    prompt = any(n > 1 for n, _ in sequences)
    return (roofline + hw.step_overhead + hw.sequence_overhead * len(sequences)
            + hw.token_overhead * new + hw.cached_token_overhead * cached
            + (hw.prompt_step_overhead if prompt else 0.0))

"""Misconception: the launch cost of a prompt is paid per prompt: prompt_step_overhead once for every
sequence with more than one new token. A step carrying 3 prompts pays it 3 times, the contract once.
"""


def step_seconds(hw, shape, bytes_per_value, sequences, sampled) -> float:
    """Predicted seconds of one forward pass."""
    kv = shape.kv_bytes_per_token(bytes_per_value)
    new_tokens = sum(n for n, _ in sequences)
    cached_tokens = sum(c - n for n, c in sequences)
    nbytes = shape.params * bytes_per_value + (cached_tokens + new_tokens) * kv
    pairs = sum(n * (c - n) + n * (n + 1) // 2 for n, c in sequences)
    flops = (2 * shape.layers * shape.layer_params * new_tokens
             + 2 * shape.vocab * shape.hidden * sampled
             + 4 * shape.head_dim * shape.heads * shape.layers * pairs)
    seconds = max(nbytes / (hw.bandwidth * hw.bandwidth_fraction),
                  flops / (hw.flops * hw.flops_fraction))
    seconds += hw.step_overhead + hw.sequence_overhead * len(sequences)
    seconds += hw.token_overhead * new_tokens + hw.cached_token_overhead * cached_tokens
    prompts = sum(1 for n, _ in sequences if n > 1)     # each prompt launches without a graph
    seconds += hw.prompt_step_overhead * prompts
    return seconds

"""Misconception: the launch cost of a prompt is paid per prompt sequence, not once per step that carries one.
Wrong for a step with two or more prompts, e.g. sequences [(100, 100), (50, 50)] with prompt_step_overhead > 0.
"""


def step_seconds(hw, shape, bytes_per_value, sequences, sampled) -> float:
    """See the stub: a roofline plus overheads."""
    kv = shape.kv_bytes_per_token(bytes_per_value)
    new = sum(n for n, _ in sequences)
    cached = sum(context - n for n, context in sequences)
    moved = shape.params * bytes_per_value + cached * kv + new * kv
    pairs = sum(n * (context - n) + n * (n + 1) // 2 for n, context in sequences)
    flops = (2 * shape.layers * shape.layer_params * new
             + 2 * shape.vocab * shape.hidden * sampled
             + 4 * shape.head_dim * shape.layers * shape.heads * pairs)
    roofline = max(moved / (hw.bandwidth * hw.bandwidth_fraction),
                   flops / (hw.flops * hw.flops_fraction))
    prompts = sum(1 for n, _ in sequences if n > 1)
    return (roofline + hw.step_overhead + hw.sequence_overhead * len(sequences)
            + hw.token_overhead * new + hw.cached_token_overhead * cached
            + hw.prompt_step_overhead * prompts)   # each prompt launches its kernels

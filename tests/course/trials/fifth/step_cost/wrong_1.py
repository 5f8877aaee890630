"""Misconception: a prompt's cost of launching without a CUDA graph is paid by each
sequence that carries a prompt, not once per step. Right for steps with at most one
prompt; a step with 3 prompts pays 3 x prompt_step_overhead (measured profiles set it)."""


def step_seconds(hw, shape, bytes_per_value, sequences, sampled) -> float:
    """Seconds for one forward pass (see the stub's contract)."""
    kv = shape.kv_bytes_per_token(bytes_per_value)
    new = sum(n for n, _ in sequences)
    cached = sum(c - n for n, c in sequences)
    pairs = sum(n * c - n * (n - 1) // 2 for n, c in sequences)
    moved = shape.params * bytes_per_value + (cached + new) * kv
    flops = (2 * shape.layers * shape.layer_params * new + 2 * shape.vocab * shape.hidden * sampled
             + 4 * shape.head_dim * shape.layers * shape.heads * pairs)
    seconds = max(moved / (hw.bandwidth * hw.bandwidth_fraction),
                  flops / (hw.flops * hw.flops_fraction))
    prompts = sum(1 for n, _ in sequences if n > 1)
    return (seconds + hw.step_overhead + hw.sequence_overhead * len(sequences)
            + hw.token_overhead * new + hw.cached_token_overhead * cached
            + hw.prompt_step_overhead * prompts)

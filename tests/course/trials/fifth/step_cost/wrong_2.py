"""Misconception: a causal prefill's (query, key) pairs are "half the square", n*n/2 for
its n new tokens (plus n x the cached keys), not the triangle n(n+1)/2: attention FLOPs
short by n/2 pairs per sequence. Only visible in compute-bound steps, by a small fraction."""


def step_seconds(hw, shape, bytes_per_value, sequences, sampled) -> float:
    """Seconds for one forward pass (see the stub's contract)."""
    kv = shape.kv_bytes_per_token(bytes_per_value)
    new = sum(n for n, _ in sequences)
    cached = sum(c - n for n, c in sequences)
    pairs = sum(n * (c - n) + n * n / 2 for n, c in sequences)     # causal: half of the n x n block
    moved = shape.params * bytes_per_value + (cached + new) * kv
    flops = (2 * shape.layers * shape.layer_params * new + 2 * shape.vocab * shape.hidden * sampled
             + 4 * shape.head_dim * shape.layers * shape.heads * pairs)
    seconds = max(moved / (hw.bandwidth * hw.bandwidth_fraction),
                  flops / (hw.flops * hw.flops_fraction))
    prompt = any(n > 1 for n, _ in sequences)
    return (seconds + hw.step_overhead + hw.sequence_overhead * len(sequences)
            + hw.token_overhead * new + hw.cached_token_overhead * cached
            + (hw.prompt_step_overhead if prompt else 0.0))

"""Right: walks the sequences once, splitting each one's causal (query, key) pairs into
the block of cached keys every new query sees and the triangle among the new tokens,
n*(c-n) + n*(n+1)/2, in exact integers, rather than the closed form n*c - n*(n-1)/2.
"""


def step_seconds(hw, shape, bytes_per_value, sequences, sampled) -> float:
    """hw: a Hardware profile (bandwidth, flops, their achieved fractions, and
    step_overhead, sequence_overhead, token_overhead, cached_token_overhead,
    prompt_step_overhead);
    shape: a ModelShape (params, layers, layer_params, heads, head_dim, vocab,
    hidden, kv_bytes_per_token(bytes)). ``sequences``: (new tokens, context after
    them) per sequence; ``sampled``: how many rows get logits. Return seconds:

    - bytes: every weight once, each sequence's cached K/V read (context less its
      new tokens), and the new tokens' K/V written;
    - FLOPs: 2 per decoder-layer weight per new token, 2 per output-layer weight
      (vocab x hidden) per sampled row, and attention's 4 x head_dim per layer,
      per query head and per (query, key) pair a causal query sees;
    - the step takes the larger of bytes / (bandwidth x its fraction) and
      FLOPs / (flops x its fraction), plus the overheads: per step, per
      sequence, per new token and per cached token, and per step that carries
      a prompt (a sequence with more than one new token: no CUDA graph).
    """
    new_total = cached_total = pairs = 0
    carries_prompt = False
    for new, context in sequences:
        cached = context - new
        new_total += new
        cached_total += cached
        pairs += new * cached + new * (new + 1) // 2     # cached block + causal triangle
        carries_prompt = carries_prompt or new > 1
    per_token_kv = shape.kv_bytes_per_token(bytes_per_value)
    moved = shape.params * bytes_per_value + (cached_total + new_total) * per_token_kv
    linear = 2 * shape.layers * shape.layer_params * new_total
    head = 2 * shape.vocab * shape.hidden * sampled
    attention = 4 * shape.head_dim * shape.layers * shape.heads * pairs
    roofline = max(moved / (hw.bandwidth * hw.bandwidth_fraction),
                   (linear + head + attention) / (hw.flops * hw.flops_fraction))
    return (roofline + hw.step_overhead + hw.sequence_overhead * len(sequences)
            + hw.token_overhead * new_total + hw.cached_token_overhead * cached_total
            + (hw.prompt_step_overhead if carries_prompt else 0.0))

"""Correct, written differently: one pass over the sequences accumulates a per-sequence
tally; K/V traffic is the whole context (read + write = context), causal pairs use the
closed form n*context - n(n-1)/2, and the roofline is a max over a dict of (amount, rate)."""


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
    new_tokens = cached_tokens = pairs = context_tokens = 0
    carries_prompt = False
    for new, context in sequences:
        new_tokens += new
        cached_tokens += context - new
        context_tokens += context                  # cached ones read + new ones written
        pairs += new * context - new * (new - 1) // 2
        carries_prompt = carries_prompt or new > 1
    moved = shape.params * bytes_per_value + context_tokens * shape.kv_bytes_per_token(bytes_per_value)
    per_pair = 4 * shape.head_dim * shape.heads * shape.layers
    work = (2 * shape.layers * shape.layer_params * new_tokens
            + 2 * shape.vocab * shape.hidden * sampled + per_pair * pairs)
    limits = {"memory": (moved, hw.bandwidth * hw.bandwidth_fraction),
              "compute": (work, hw.flops * hw.flops_fraction)}
    roofline = max(amount / rate for amount, rate in limits.values())
    overhead = (hw.step_overhead + hw.sequence_overhead * len(sequences)
                + hw.token_overhead * new_tokens + hw.cached_token_overhead * cached_tokens
                + (hw.prompt_step_overhead if carries_prompt else 0.0))
    return roofline + overhead

"""Misconception: the prompt-launch cost is paid per prompt in the step, not once per step
that carries one. Same with one prompt; with h200-measured and two prefills in one step,
[(100, 100), (50, 50)], it adds prompt_step_overhead twice."""


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
    new = sum(n for n, _ in sequences)
    cached = sum(context - n for n, context in sequences)
    kv = shape.kv_bytes_per_token(bytes_per_value)
    total_bytes = shape.params * bytes_per_value + cached * kv + new * kv
    pairs = sum(n * (context - n) + n * (n + 1) // 2 for n, context in sequences)
    flops = (2 * shape.layers * shape.layer_params * new
             + 2 * shape.vocab * shape.hidden * sampled
             + 4 * shape.head_dim * shape.heads * shape.layers * pairs)
    seconds = max(total_bytes / (hw.bandwidth * hw.bandwidth_fraction),
                  flops / (hw.flops * hw.flops_fraction))
    prompts = sum(1 for n, _ in sequences if n > 1)
    seconds += (hw.step_overhead + hw.sequence_overhead * len(sequences)
                + hw.token_overhead * new + hw.cached_token_overhead * cached
                + hw.prompt_step_overhead * prompts)
    return seconds

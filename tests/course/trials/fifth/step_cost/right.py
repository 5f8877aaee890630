"""Right: one pass over the sequences keeps exact integer totals, counting causal (query, key)
pairs as a difference of triangular numbers c(c+1)/2 - p(p+1)/2 (p = cached keys), and only
then divides; the overheads are a table of (rate, count) pairs added in the contract's order."""


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
        past = context - new                    # keys already in the cache
        new_total += new
        cached_total += past
        # query at position p (0-based) sees p + 1 keys: sum over p in [past, context)
        pairs += context * (context + 1) // 2 - past * (past + 1) // 2
        carries_prompt = carries_prompt or new > 1
    kv_token = shape.kv_bytes_per_token(bytes_per_value)
    moved = shape.params * bytes_per_value + (cached_total + new_total) * kv_token
    flops = (2 * shape.layers * shape.layer_params * new_total
             + 2 * shape.vocab * shape.hidden * sampled
             + 4 * shape.head_dim * shape.layers * shape.heads * pairs)
    memory_time = moved / (hw.bandwidth * hw.bandwidth_fraction)
    compute_time = flops / (hw.flops * hw.flops_fraction)
    overheads = ((hw.step_overhead, 1), (hw.sequence_overhead, len(sequences)),
                 (hw.token_overhead, new_total), (hw.cached_token_overhead, cached_total),
                 (hw.prompt_step_overhead, int(carries_prompt)))
    seconds = max(memory_time, compute_time)
    for rate, count in overheads:
        seconds += rate * count
    return seconds

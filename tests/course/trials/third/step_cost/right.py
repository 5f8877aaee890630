"""Right: walks the sequences once, accumulating bytes, FLOPs and the overhead counts, with the
causal pairs summed as the sum of an arithmetic series (first query sees cached + 1 keys, last sees context).
"""


def step_seconds(hw, shape, bytes_per_value, sequences, sampled) -> float:
    """Predicted seconds of one forward pass (see the stub's contract)."""
    kv_per_token = shape.kv_bytes_per_token(bytes_per_value)
    attention_per_pair = 4 * shape.head_dim * shape.heads * shape.layers
    moved = shape.params * bytes_per_value
    work = 2 * shape.vocab * shape.hidden * sampled
    new_total = cached_total = 0
    carries_prompt = False
    for new, context in sequences:
        cached = context - new
        moved += cached * kv_per_token + new * kv_per_token      # read the cache, write the new
        # queries see cached+1, cached+2, ..., context keys: new terms of an arithmetic series
        pairs = new * (cached + 1 + context) // 2
        work += 2 * shape.layers * shape.layer_params * new + attention_per_pair * pairs
        new_total += new
        cached_total += cached
        carries_prompt = carries_prompt or new > 1
    roofline = max(moved / (hw.bandwidth * hw.bandwidth_fraction),
                   work / (hw.flops * hw.flops_fraction))
    overhead = (hw.step_overhead + hw.sequence_overhead * len(sequences)
                + hw.token_overhead * new_total + hw.cached_token_overhead * cached_total
                + (hw.prompt_step_overhead if carries_prompt else 0.0))
    return roofline + overhead

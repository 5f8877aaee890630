"""Right: walks the sequences once, accumulating each one's bytes, FLOPs and
counts, instead of summing separate generator expressions; a sequence's
causal (query, key) pairs are counted as n x context - n (n - 1) / 2 (all n
queries see the whole context, less the future keys each of the first
n - 1 must not see), which equals the engine's n (context - n) +
n (n + 1) / 2. Everything is integer until the two divisions; the overheads
are added in the contract's order."""


def step_seconds(hw, shape, bytes_per_value, sequences, sampled) -> float:
    kv = shape.kv_bytes_per_token(bytes_per_value)
    per_token_linear = 2 * shape.layers * shape.layer_params
    per_pair = 4 * shape.layers * shape.heads * shape.head_dim
    moved = shape.params * bytes_per_value
    flops = 2 * shape.vocab * shape.hidden * sampled
    new_total = cached_total = 0
    carries_prompt = False
    for new, context in sequences:
        cached = context - new
        moved += (cached + new) * kv                  # read the cache, write the new rows
        pairs = new * context - new * (new - 1) // 2
        flops += per_token_linear * new + per_pair * pairs
        new_total += new
        cached_total += cached
        carries_prompt = carries_prompt or new > 1
    overhead = (hw.step_overhead + hw.sequence_overhead * len(sequences)
                + hw.token_overhead * new_total + hw.cached_token_overhead * cached_total)
    if carries_prompt:
        overhead += hw.prompt_step_overhead
    memory_time = moved / (hw.bandwidth * hw.bandwidth_fraction)
    compute_time = flops / (hw.flops * hw.flops_fraction)
    return max(memory_time, compute_time) + overhead

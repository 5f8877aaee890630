"""Right, written per sequence: bytes read and written fold into context x K/V bytes, a sequence's causal
pairs are the closed form n*context - n(n-1)/2, and the two rooflines are compared as a ratio
of work to achieved rate in one loop rather than as summed totals.
"""


def step_seconds(hw, shape, bytes_per_value, sequences, sampled) -> float:
    """hw: a Hardware profile; shape: a ModelShape; sequences: (new tokens, context
    after them) per sequence; sampled: rows that get logits. Seconds for the step."""
    kv_per_token = shape.kv_bytes_per_token(bytes_per_value)
    per_pair = 4 * shape.head_dim * shape.heads * shape.layers
    per_token = 2 * shape.layers * shape.layer_params

    moved = shape.params * bytes_per_value          # every weight once
    work = 2 * shape.vocab * shape.hidden * sampled  # the output layer, per sampled row
    overhead = hw.step_overhead
    carries_prompt = False
    for new, context in sequences:
        # cached (context - new) read + new written = context tokens of K/V
        moved += context * kv_per_token
        # query i of new (0-based) sits at position context - new + i and sees that many + 1 keys
        work += per_token * new + per_pair * (new * context - new * (new - 1) // 2)
        overhead += (hw.sequence_overhead + hw.token_overhead * new
                     + hw.cached_token_overhead * (context - new))
        carries_prompt = carries_prompt or new > 1
    if carries_prompt:
        overhead += hw.prompt_step_overhead
    memory_time = moved / (hw.bandwidth * hw.bandwidth_fraction)
    compute_time = work / (hw.flops * hw.flops_fraction)
    return (memory_time if memory_time >= compute_time else compute_time) + overhead

"""Misconception: "a step carries a prompt when one of its sequences is a
fresh prompt, all of its context new" (new == context), rather than any
sequence with more than one new token. A chunk of a prompt that is not its
first (chunked prefill), or a prompt whose prefix came from the prefix
cache, has context > new but still runs without a CUDA graph; this version
does not charge it prompt_step_overhead. Datasheet profiles have that
overhead at 0, so only a measured profile shows the difference.

Concrete input: a profile with prompt_step_overhead 5e-3, sequences
[(256, 768)] (the second chunk of a prompt): the contract adds 5 ms; this
version adds nothing.
"""


def step_seconds(hw, shape, bytes_per_value, sequences, sampled) -> float:
    new = sum(n for n, _ in sequences)
    cached = sum(c - n for n, c in sequences)
    kv = shape.kv_bytes_per_token(bytes_per_value)
    memory = shape.params * bytes_per_value + cached * kv + new * kv
    linear = 2 * shape.layers * shape.layer_params * new + 2 * shape.vocab * shape.hidden * sampled
    pairs = sum(n * (c - n) + n * (n + 1) // 2 for n, c in sequences)
    attention = 4 * shape.layers * shape.heads * shape.head_dim * pairs
    overhead = (hw.step_overhead + hw.sequence_overhead * len(sequences)
                + hw.token_overhead * new + hw.cached_token_overhead * cached)
    if any(n > 1 and n == c for n, c in sequences):       # a whole prompt
        overhead += hw.prompt_step_overhead
    return max(memory / (hw.bandwidth * hw.bandwidth_fraction),
               (linear + attention) / (hw.flops * hw.flops_fraction)) + overhead

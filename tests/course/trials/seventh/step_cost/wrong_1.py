"""Misconception: "each new token's query attends to the whole context", so
attention's pairs are new x context for every sequence, forgetting that a
causal query sees only the keys up to its own position. For a decode step
(one new token) the two agree, so decode-only tests pass; a prefill's pairs
are counted almost twice over (n^2 instead of n (n + 1) / 2), and a
compute-bound prefill's time with them.

Concrete input: the Llama 3.1 8B shape, one prefill of 4,096 tokens
(sequences [(4096, 4096)], sampled 1) on an H100: the contract counts
8,390,656 pairs, this 16,777,216, and the predicted time grows accordingly
(the step is compute-bound).
"""


def step_seconds(hw, shape, bytes_per_value, sequences, sampled) -> float:
    new = sum(n for n, _ in sequences)
    cached = sum(c - n for n, c in sequences)
    kv = shape.kv_bytes_per_token(bytes_per_value)
    memory = shape.params * bytes_per_value + cached * kv + new * kv
    linear = 2 * shape.layers * shape.layer_params * new + 2 * shape.vocab * shape.hidden * sampled
    pairs = sum(n * c for n, c in sequences)              # every query sees the context
    attention = 4 * shape.layers * shape.heads * shape.head_dim * pairs
    overhead = (hw.step_overhead + hw.sequence_overhead * len(sequences)
                + hw.token_overhead * new + hw.cached_token_overhead * cached)
    if any(n > 1 for n, _ in sequences):
        overhead += hw.prompt_step_overhead
    return max(memory / (hw.bandwidth * hw.bandwidth_fraction),
               (linear + attention) / (hw.flops * hw.flops_fraction)) + overhead

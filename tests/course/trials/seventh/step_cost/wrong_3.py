"""Misconception: "a forward pass costs 2 FLOPs per parameter per token", the
well-known rule of thumb, so the linear FLOPs are 2 x shape.params x new
tokens. That counts the embedding table as a matmul (it is a lookup) and the
output layer for every new token instead of for the sampled rows only. A
decode step is memory-bound, so its predicted time does not change and
decode tests pass; prefills, which are compute-bound, come out slower.

Concrete input: the Llama 3.1 8B shape (vocab 128,256, hidden 4,096,
untied), one prefill of 2,048 tokens with 1 sampled row on an H100: the
contract's linear FLOPs are 2 x 2,048 x decoder weights + 2 x vocab x hidden;
this adds 2 x 2,048 x 2 x vocab x hidden - 2 x vocab x hidden, about 4.3
TFLOP more (some 15% of the linear FLOPs).
"""


def step_seconds(hw, shape, bytes_per_value, sequences, sampled) -> float:
    new = sum(n for n, _ in sequences)
    cached = sum(c - n for n, c in sequences)
    kv = shape.kv_bytes_per_token(bytes_per_value)
    memory = shape.params * bytes_per_value + cached * kv + new * kv
    linear = 2 * shape.params * new                       # 2 FLOPs per parameter per token
    pairs = sum(n * (c - n) + n * (n + 1) // 2 for n, c in sequences)
    attention = 4 * shape.layers * shape.heads * shape.head_dim * pairs
    overhead = (hw.step_overhead + hw.sequence_overhead * len(sequences)
                + hw.token_overhead * new + hw.cached_token_overhead * cached)
    if any(n > 1 for n, _ in sequences):
        overhead += hw.prompt_step_overhead
    return max(memory / (hw.bandwidth * hw.bandwidth_fraction),
               (linear + attention) / (hw.flops * hw.flops_fraction)) + overhead

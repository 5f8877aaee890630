"""Misconception: a causal query sees the keys *before* it, not itself, so a sequence's pairs
are new x cached + new x (new - 1) / 2. Decode steps are memory-bound and hide it; a 4096-token
prompt on h100-sxm (compute-bound) loses 4096 pairs per head and layer."""
from minicb.costmodel import Hardware, ModelShape


def _triangle(k: int) -> int:
    return k * (k - 1) // 2


def step_seconds(hw: Hardware, shape: ModelShape, bytes_per_value: int,
                 sequences, sampled: int) -> float:
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
    count = 0
    for new, context in sequences:
        count += 1
        new_total += new
        cached_total += context - new
        # queries sit at positions context-new .. context-1 and each sees the keys before it
        pairs += _triangle(context) - _triangle(context - new)
        carries_prompt = carries_prompt or new > 1

    # cached K/V read plus new K/V written: every context token's K/V crosses once
    moved = shape.params * bytes_per_value + (cached_total + new_total) * shape.kv_bytes_per_token(bytes_per_value)
    work = (2 * shape.layers * shape.layer_params * new_total
            + 2 * shape.vocab * shape.hidden * sampled
            + 4 * shape.head_dim * shape.layers * shape.heads * pairs)
    memory_time = moved / (hw.bandwidth * hw.bandwidth_fraction)
    compute_time = work / (hw.flops * hw.flops_fraction)
    seconds = max(memory_time, compute_time)
    seconds += hw.step_overhead
    seconds += hw.sequence_overhead * count
    seconds += hw.token_overhead * new_total
    seconds += hw.cached_token_overhead * cached_total
    if carries_prompt:
        seconds += hw.prompt_step_overhead
    return seconds

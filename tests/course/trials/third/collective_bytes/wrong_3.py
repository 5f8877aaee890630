"""Misconception: the LM head scores every token of the step, so the all-gather carries num_tokens
rows. Same in a decode step (one token per sampled row); a 2,048-token prefill sampling 1 row counts 2,048 rows.
"""
import math


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    """Bytes one rank hands to all-reduce and to all-gather in one forward pass."""
    hidden_state = num_tokens * cfg.hidden_size * bytes_per_value
    all_reduce = hidden_state * (1 + 2 * cfg.num_hidden_layers)
    scores = num_tokens * math.ceil(cfg.vocab_size / n) * bytes_per_value
    return {"all_reduce": all_reduce, "all_gather": scores}

"""Misconception: the output layer scores every token of the pass and sampling picks rows
afterwards, so the all-gather carries num_tokens rows. Right for decode steps (every
token samples); a prefill of 100 tokens with 1 sampled row counts 100x too much."""
import math


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    """Bytes one rank hands to each kind of collective (see the stub's contract)."""
    row = num_tokens * cfg.hidden_size * bytes_per_value
    share = math.ceil(cfg.vocab_size / n)
    return dict(all_reduce=(1 + 2 * cfg.num_hidden_layers) * row,
                all_gather=num_tokens * share * bytes_per_value)

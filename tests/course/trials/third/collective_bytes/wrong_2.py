"""Misconception: a rank's share of the vocabulary is vocab // n (the padding is not sent).
vocab 259, n 2: 129 scores a sampled row, not 130; equal only when n divides the vocabulary.
"""


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    """Bytes one rank hands to all-reduce and to all-gather in one forward pass."""
    layers, hidden = cfg.num_hidden_layers, cfg.hidden_size
    all_reduce = (2 * layers + 1) * num_tokens * hidden * bytes_per_value
    all_gather = num_sampled * (cfg.vocab_size // n) * bytes_per_value
    return {"all_reduce": all_reduce, "all_gather": all_gather}

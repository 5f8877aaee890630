"""Misconception: each rank's share of the vocabulary is vocab // n entries (the padding
that makes the shares equal is forgotten). Right when n divides the vocabulary; for
vocab 259 on 2 ranks the all-gather counts 129 entries a row, not 130."""


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    """Bytes one rank hands to each kind of collective (see the stub's contract)."""
    row = num_tokens * cfg.hidden_size * bytes_per_value
    return dict(all_reduce=(1 + 2 * cfg.num_hidden_layers) * row,
                all_gather=num_sampled * (cfg.vocab_size // n) * bytes_per_value)

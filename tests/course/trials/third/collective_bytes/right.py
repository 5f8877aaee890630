"""Right: counts values first (one [tokens, hidden] tensor per all-reduce, 1 + 2 x layers of
them; one [sampled, ceil(vocab / n)] share) and multiplies by the value size once at the end, in exact integers.
"""


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    """Bytes one rank hands to all-reduce and to all-gather in one forward pass."""
    all_reduces = 1 + 2 * cfg.num_hidden_layers          # embedding, then attention and MLP per layer
    reduced_values = all_reduces * num_tokens * cfg.hidden_size
    share = (cfg.vocab_size + n - 1) // n                # this rank's padded vocabulary share
    gathered_values = num_sampled * share
    return dict(all_reduce=reduced_values * bytes_per_value,
                all_gather=gathered_values * bytes_per_value)

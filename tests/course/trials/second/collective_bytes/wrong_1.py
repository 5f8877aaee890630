"""Misconception: each rank gathers its true share of the vocabulary, vocab // n entries, forgetting the padding
that makes every share ceil(vocab / n). Right when n divides the vocabulary; wrong e.g. for vocab 259 on 2 ranks.
"""


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    """See the stub: bytes one rank hands to all-reduce and all-gather in a forward pass."""
    hidden_state = num_tokens * cfg.hidden_size * bytes_per_value
    reduces = 1 + 2 * cfg.num_hidden_layers        # the embedding, then attention and MLP per layer
    share = cfg.vocab_size // n                     # this rank's slice of the vocabulary
    return dict(all_reduce=reduces * hidden_state,
                all_gather=num_sampled * share * bytes_per_value)

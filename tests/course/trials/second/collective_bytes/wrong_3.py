"""Misconception: rounding up is (vocab + n) // n, which is one too many whenever n divides the vocabulary.
Passes the chapter's table to its 0.1 MB (128,256 on 2 or 8 ranks) and any vocab n does not divide; wrong e.g. vocab 256 on 2 ranks.
"""


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    """See the stub: bytes one rank hands to all-reduce and all-gather in a forward pass."""
    share = (cfg.vocab_size + n) // n               # rounded up: the last share is padded
    all_reduce = (2 * cfg.num_hidden_layers + 1) * num_tokens * cfg.hidden_size * bytes_per_value
    all_gather = num_sampled * share * bytes_per_value
    return dict(all_reduce=all_reduce, all_gather=all_gather)

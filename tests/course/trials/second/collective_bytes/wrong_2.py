"""Misconception: the LM head scores every token of the pass, so the all-gather carries num_tokens rows.
Right for decode steps (one token each, all sampled); wrong for a prefill, e.g. 2048 tokens of which 1 is sampled.
"""


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    """See the stub: bytes one rank hands to all-reduce and all-gather in a forward pass."""
    per_token_hidden = cfg.hidden_size * bytes_per_value
    share = -(-cfg.vocab_size // n)
    all_reduce = num_tokens * per_token_hidden * (2 * cfg.num_hidden_layers + 1)
    # each row's logits over this rank's share; the rows that are not sampled are dropped afterwards
    all_gather = num_tokens * share * bytes_per_value
    return dict(all_reduce=all_reduce, all_gather=all_gather)

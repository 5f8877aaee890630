"""Right, built up as the ranks would count it: one entry per collective call (the embedding's, then two per
layer) summed, and the padded share taken from divmod rather than a ceil expression.
"""


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    """cfg: the model's ModelConfig (hidden_size, num_hidden_layers, vocab_size).
    Return dict(all_reduce=..., all_gather=...): the bytes one rank hands to each
    collective in a forward pass of num_tokens tokens, num_sampled of them with logits."""
    one_hidden_state = num_tokens * cfg.hidden_size * bytes_per_value
    calls = [one_hidden_state]                                  # after the embedding
    for _ in range(cfg.num_hidden_layers):
        calls += [one_hidden_state, one_hidden_state]           # after attention, after the MLP
    whole, rest = divmod(cfg.vocab_size, n)
    share = whole + (1 if rest else 0)                          # every rank's, padded
    return dict(all_reduce=sum(calls), all_gather=num_sampled * share * bytes_per_value)

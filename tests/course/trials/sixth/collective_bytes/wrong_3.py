"""Misconception: the LM head scores every token of the step (as a plain HF forward
does), so the all-gather counts num_tokens rows rather than num_sampled. Right for
decode steps (one token per sequence, all sampled); wrong for a prefill or chunk.
"""


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    """cfg: the model's ModelConfig (hidden_size, num_hidden_layers, vocab_size).
    Return dict(all_reduce=..., all_gather=...): the bytes one rank hands to
    each kind of collective in a forward pass of ``num_tokens`` tokens,
    ``num_sampled`` of which get logits, on ``n`` ranks. The all-reduces: a
    [tokens, hidden] tensor after the embedding, and after each layer's
    attention and its MLP. The all-gather: each sampled row's scores over this
    rank's share of the vocabulary (ceil(vocab / n) entries).
    """
    tensor = num_tokens * cfg.hidden_size * bytes_per_value
    all_reduce = (1 + 2 * cfg.num_hidden_layers) * tensor
    share = -(-cfg.vocab_size // n)
    all_gather = num_tokens * share * bytes_per_value
    return dict(all_reduce=all_reduce, all_gather=all_gather)

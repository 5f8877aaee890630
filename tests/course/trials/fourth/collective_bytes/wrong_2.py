"""Misconception: a rank scores vocab // n entries (the even split), forgetting that the last
share is padded to ceil(vocab / n) so every rank's tensor is the same size. Equal when n divides
the vocabulary (the 8B shape's 128,256 at n=2 and 8); vocab 259 on n=2: 129 entries instead of 130."""


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    """cfg: the model's ModelConfig (hidden_size, num_hidden_layers, vocab_size).
    Return dict(all_reduce=..., all_gather=...): the bytes one rank hands to
    each kind of collective in a forward pass of ``num_tokens`` tokens,
    ``num_sampled`` of which get logits, on ``n`` ranks. The all-reduces: a
    [tokens, hidden] tensor after the embedding, and after each layer's
    attention and its MLP. The all-gather: each sampled row's scores over this
    rank's share of the vocabulary (ceil(vocab / n) entries).
    """
    all_reduce = (1 + 2 * cfg.num_hidden_layers) * num_tokens * cfg.hidden_size * bytes_per_value
    all_gather = num_sampled * (cfg.vocab_size // n) * bytes_per_value
    return dict(all_reduce=all_reduce, all_gather=all_gather)

"""Misconception: with one rank nothing is communicated, so n == 1 hands the collectives 0
bytes. The contract's formula has no such case (the all-reduces are the same tensors whatever n,
and the all-gather's share is the whole vocabulary): n=1, 64 tokens gives 0 instead of the volume."""


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    """cfg: the model's ModelConfig (hidden_size, num_hidden_layers, vocab_size).
    Return dict(all_reduce=..., all_gather=...): the bytes one rank hands to
    each kind of collective in a forward pass of ``num_tokens`` tokens,
    ``num_sampled`` of which get logits, on ``n`` ranks. The all-reduces: a
    [tokens, hidden] tensor after the embedding, and after each layer's
    attention and its MLP. The all-gather: each sampled row's scores over this
    rank's share of the vocabulary (ceil(vocab / n) entries).
    """
    if n == 1:
        return dict(all_reduce=0, all_gather=0)    # a single rank talks to no one
    all_reduce = (2 * cfg.num_hidden_layers + 1) * num_tokens * cfg.hidden_size * bytes_per_value
    share = (cfg.vocab_size + n - 1) // n
    all_gather = num_sampled * share * bytes_per_value
    return dict(all_reduce=all_reduce, all_gather=all_gather)

"""Misconception: counts what a ring all-reduce sends per rank, 2(n-1)/n times the tensor
(the chapter's aside), instead of the tensor the rank hands over. Equal at n = 2, so a
two-rank test passes; on 8 ranks (or 1) the all-reduce bytes are 1.75x (or 0x) too many.
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
    per_call = tensor * 2 * (n - 1) // n          # a ring all-reduce's traffic per rank
    all_reduce = (1 + 2 * cfg.num_hidden_layers) * per_call
    share = -(-cfg.vocab_size // n)
    all_gather = num_sampled * share * bytes_per_value
    return dict(all_reduce=all_reduce, all_gather=all_gather)

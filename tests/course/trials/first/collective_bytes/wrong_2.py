"""Misconception: counts what a ring all-reduce sends (2(N - 1)/N times the tensor, as the
chapter notes), not the tensor a rank hands the collective. At n=2 the factor is 1 and it
agrees; at n=4 (or n=1, where it gives 0) the all-reduce bytes are wrong."""


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
    ring = 2 * (n - 1) / n                       # each rank sends this share of the tensor
    all_reduce = (1 + 2 * cfg.num_hidden_layers) * tensor * ring
    share = -(-cfg.vocab_size // n)
    return dict(all_reduce=int(all_reduce),
                all_gather=num_sampled * share * bytes_per_value)

"""Misconception: what a rank "hands" a collective is its ring traffic, 2(n-1)/n of the tensor
for an all-reduce and (n-1) shares for an all-gather (the chapter's aside). At n=2 both equal
the tensor itself, so the chapter's n=2 rows agree; n=8 gives 1.75x the all-reduce and 7x the all-gather."""


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    """cfg: the model's ModelConfig (hidden_size, num_hidden_layers, vocab_size).
    Return dict(all_reduce=..., all_gather=...): the bytes one rank hands to
    each kind of collective in a forward pass of ``num_tokens`` tokens,
    ``num_sampled`` of which get logits, on ``n`` ranks. The all-reduces: a
    [tokens, hidden] tensor after the embedding, and after each layer's
    attention and its MLP. The all-gather: each sampled row's scores over this
    rank's share of the vocabulary (ceil(vocab / n) entries).
    """
    per_all_reduce = num_tokens * cfg.hidden_size * bytes_per_value
    all_reduces = 1 + 2 * cfg.num_hidden_layers
    share = -(-cfg.vocab_size // n)
    # a ring all-reduce sends 2(n-1)/n of the tensor from each rank, an all-gather n-1 shares
    all_reduce = all_reduces * per_all_reduce * 2 * (n - 1) // n
    all_gather = num_sampled * share * bytes_per_value * (n - 1)
    return dict(all_reduce=all_reduce, all_gather=all_gather)

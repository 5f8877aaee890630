"""Misconception: the LM head scores every token of the pass, so the all-gather is sized by
num_tokens rather than by the sampled rows. Right for decode steps (one token a sequence,
each sampled); wrong for a prefill: num_tokens=2048, num_sampled=1 counts 2048 rows."""


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    """cfg: the model's ModelConfig (hidden_size, num_hidden_layers, vocab_size).
    Return dict(all_reduce=..., all_gather=...): the bytes one rank hands to
    each kind of collective in a forward pass of ``num_tokens`` tokens,
    ``num_sampled`` of which get logits, on ``n`` ranks. The all-reduces: a
    [tokens, hidden] tensor after the embedding, and after each layer's
    attention and its MLP. The all-gather: each sampled row's scores over this
    rank's share of the vocabulary (ceil(vocab / n) entries).
    """
    share = -(-cfg.vocab_size // n)
    per_layer = 2 * num_tokens * cfg.hidden_size
    all_reduce = num_tokens * cfg.hidden_size + cfg.num_hidden_layers * per_layer
    all_gather = num_tokens * share
    return dict(all_reduce=all_reduce * bytes_per_value, all_gather=all_gather * bytes_per_value)

"""Misconception: a rank's share of the vocabulary is vocab // n (what each rank 'really'
owns), not the padded ceil(vocab / n). Same when n divides the vocabulary; for vocab 259
on n=2 the all-gather counts 129 scores a row instead of 130."""


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    """cfg: the model's ModelConfig (hidden_size, num_hidden_layers, vocab_size).
    Return dict(all_reduce=..., all_gather=...): the bytes one rank hands to
    each kind of collective in a forward pass of ``num_tokens`` tokens,
    ``num_sampled`` of which get logits, on ``n`` ranks. The all-reduces: a
    [tokens, hidden] tensor after the embedding, and after each layer's
    attention and its MLP. The all-gather: each sampled row's scores over this
    rank's share of the vocabulary (ceil(vocab / n) entries).
    """
    all_reduce = (2 * cfg.num_hidden_layers + 1) * num_tokens * cfg.hidden_size
    all_gather = num_sampled * (cfg.vocab_size // n)
    return dict(all_reduce=all_reduce * bytes_per_value, all_gather=all_gather * bytes_per_value)

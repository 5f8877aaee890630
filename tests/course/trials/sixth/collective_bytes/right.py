"""Right: lists the tensors themselves, one (rows, columns) pair per collective call as a
rank makes them, and sums their sizes, instead of writing the closed formula.
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
    share = -(-cfg.vocab_size // n)                      # ceil without floats
    reduced = [(num_tokens, cfg.hidden_size)]            # the embedding's rows
    for _ in range(cfg.num_hidden_layers):
        reduced.append((num_tokens, cfg.hidden_size))    # attention's output projection
        reduced.append((num_tokens, cfg.hidden_size))    # the MLP's down projection
    gathered = [(num_sampled, share)]                    # the LM head's scores
    size = lambda shapes: sum(rows * cols for rows, cols in shapes) * bytes_per_value
    return dict(all_reduce=size(reduced), all_gather=size(gathered))

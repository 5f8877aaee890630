"""Right: no closed formula: lists every tensor the rank hands over (its shape) in the
order the forward pass makes them and sums numel x bytes per kind, so the count follows
the model's structure (the embedding, two per layer, one gather of the logits)."""
import math


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    """cfg: the model's ModelConfig (hidden_size, num_hidden_layers, vocab_size).
    Return dict(all_reduce=..., all_gather=...): the bytes one rank hands to
    each kind of collective in a forward pass of ``num_tokens`` tokens,
    ``num_sampled`` of which get logits, on ``n`` ranks. The all-reduces: a
    [tokens, hidden] tensor after the embedding, and after each layer's
    attention and its MLP. The all-gather: each sampled row's scores over this
    rank's share of the vocabulary (ceil(vocab / n) entries).
    """
    handed = []                                         # (kind, shape)
    handed.append(("all_reduce", (num_tokens, cfg.hidden_size)))         # embedding
    for _ in range(cfg.num_hidden_layers):
        handed.append(("all_reduce", (num_tokens, cfg.hidden_size)))     # attention's o_proj
        handed.append(("all_reduce", (num_tokens, cfg.hidden_size)))     # the MLP's down_proj
    handed.append(("all_gather", (num_sampled, -(-cfg.vocab_size // n))))  # this rank's logits
    totals = dict(all_reduce=0, all_gather=0)
    for kind, shape in handed:
        totals[kind] += math.prod(shape) * bytes_per_value
    return totals

"""Right, written differently: it counts the collectives as a list of the tensor shapes each
rank hands over (one [tokens, hidden] per all-reduce, one [sampled, share] all-gather) and sums
their numel x bytes, with the share from math.ceil on an exact Fraction instead of // tricks."""
import math
from fractions import Fraction


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    """cfg: the model's ModelConfig (hidden_size, num_hidden_layers, vocab_size).
    Return dict(all_reduce=..., all_gather=...): the bytes one rank hands to
    each kind of collective in a forward pass of ``num_tokens`` tokens,
    ``num_sampled`` of which get logits, on ``n`` ranks. The all-reduces: a
    [tokens, hidden] tensor after the embedding, and after each layer's
    attention and its MLP. The all-gather: each sampled row's scores over this
    rank's share of the vocabulary (ceil(vocab / n) entries).
    """
    hidden, layers = cfg.hidden_size, cfg.num_hidden_layers
    share = math.ceil(Fraction(cfg.vocab_size, n))
    reduced = [(num_tokens, hidden)]                       # after the embedding
    for _ in range(layers):
        reduced += [(num_tokens, hidden), (num_tokens, hidden)]   # attention, MLP
    gathered = [(num_sampled, share)]                      # this rank's logits
    volume = lambda shapes: sum(math.prod(s) for s in shapes) * bytes_per_value
    return dict(all_reduce=volume(reduced), all_gather=volume(gathered))

"""Misconception: counts what the interconnect carries for a ring collective (all-reduce
2(n-1)/n of the tensor, all-gather (n-1) shares), not the tensor the rank hands over.
Equal at n=2 only: at n=4 the all-reduce is 1.5x too big, the all-gather 3x."""
import math


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    """Bytes one rank hands to each kind of collective (see the stub's contract)."""
    tensor = num_tokens * cfg.hidden_size * bytes_per_value
    reduces = 1 + 2 * cfg.num_hidden_layers
    share = num_sampled * math.ceil(cfg.vocab_size / n) * bytes_per_value
    return dict(all_reduce=round(reduces * tensor * 2 * (n - 1) / n),   # reduce-scatter + all-gather
                all_gather=share * (n - 1))                             # to each other rank

"""Correct, written differently: counts values per collective call in a list (one entry per
call a forward pass makes, as the workers' counters would see them) and sums them, with the
vocabulary share as a ceiling via -(-vocab // n), instead of one closed formula per kind."""


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    """cfg: the model's ModelConfig (hidden_size, num_hidden_layers, vocab_size).
    Return dict(all_reduce=..., all_gather=...): the bytes one rank hands to
    each kind of collective in a forward pass of ``num_tokens`` tokens,
    ``num_sampled`` of which get logits, on ``n`` ranks. The all-reduces: a
    [tokens, hidden] tensor after the embedding, and after each layer's
    attention and its MLP. The all-gather: each sampled row's scores over this
    rank's share of the vocabulary (ceil(vocab / n) entries).
    """
    hidden_state = num_tokens * cfg.hidden_size
    reduces = [hidden_state]                                  # the embedding's lookup
    for _ in range(cfg.num_hidden_layers):
        reduces += [hidden_state, hidden_state]               # attention's o_proj, the MLP's down
    gathers = [num_sampled * -(-cfg.vocab_size // n)]         # the LM head's share of scores
    return dict(all_reduce=sum(reduces) * bytes_per_value,
                all_gather=sum(gathers) * bytes_per_value)

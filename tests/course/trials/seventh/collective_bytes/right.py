"""Right: counts the collectives one call at a time, as a forward pass makes
them, instead of with a closed formula: one all-reduce of [tokens, hidden]
after the embedding, then two per layer (attention's output projection, the
MLP's down projection), and one all-gather of [sampled, padded share]; the
share is the ceiling computed with integer arithmetic (-(-vocab // n)),
never through a float."""


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    activation = num_tokens * cfg.hidden_size * bytes_per_value
    all_reduce = activation                        # the embedding's rows
    for _ in range(cfg.num_hidden_layers):
        all_reduce += activation                   # attention: o_proj's partial sums
        all_reduce += activation                   # MLP: down_proj's partial sums
    share = -(-cfg.vocab_size // n)
    all_gather = num_sampled * share * bytes_per_value
    return dict(all_reduce=all_reduce, all_gather=all_gather)

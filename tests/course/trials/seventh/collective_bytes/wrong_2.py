"""Misconception: "the padding rows score nothing real, so they are not sent":
each rank's share of the logits is counted as vocab // n entries (its real
tokens on average), not the padded ceil(vocab / n) that every rank's tensor
actually has. Right whenever n divides the vocabulary (Llama 3's 128,256 by
2, 4 or 8), wrong otherwise.

Concrete input: vocab 259 (the tiny models' byte-level vocabulary), n 2,
10 sampled rows, 4 bytes: the contract's all-gather is 10 x 130 x 4 = 5,200
bytes; this gives 10 x 129 x 4 = 5,160.
"""


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    row = cfg.hidden_size * bytes_per_value
    share = cfg.vocab_size // n
    return dict(all_reduce=(1 + 2 * cfg.num_hidden_layers) * num_tokens * row,
                all_gather=num_sampled * share * bytes_per_value)

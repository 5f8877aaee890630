"""Misconception: "the LM head runs on every token of the pass, as in
training or in transformers' forward", so the all-gather is counted for
num_tokens rows instead of the num_sampled rows that get logits (a prefill
computes logits only for each sequence's last token). In a decode step the
two counts are equal, so decode-only tests pass.

Concrete input: a prefill of 2,048 tokens of which 1 is sampled, vocab
128,256, n 2, 2 bytes: the contract's all-gather is 1 x 64,128 x 2 =
128,256 bytes; this gives 2,048 times that.
"""
import math


def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    row = cfg.hidden_size * bytes_per_value
    share = math.ceil(cfg.vocab_size / n)
    return dict(all_reduce=(1 + 2 * cfg.num_hidden_layers) * num_tokens * row,
                all_gather=num_tokens * share * bytes_per_value)

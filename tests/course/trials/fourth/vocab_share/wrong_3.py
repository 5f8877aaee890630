"""Misconception: a buffer from torch.zeros is in the right dtype because copying weight's rows
into it "keeps" their dtype; torch.zeros is float32, so an fp16/bf16 table comes back as fp32
(twice the memory). weight fp32 agrees; weight fp16, vocab=10, n=3 gives rows.dtype float32."""
import torch
from torch import nn


def vocab_share(weight, rank: int, n: int):
    """weight [vocab, hidden]. Return (start, end, rows): this rank's token ids
    are start <= id < end, and rows [share, hidden] holds their rows of weight,
    where share = ceil(vocab / n) for every rank; rows past end - start are zeros.
    Ranks take consecutive ranges in rank order; a rank past the vocabulary's
    end has start == end == vocab. Return rows as a frozen nn.Parameter
    (requires_grad=False) in weight's dtype, holding memory of its own: not a
    view into weight, so that a rank keeps only its share once the whole table
    is dropped.
    """
    vocab, hidden = weight.shape
    share = -(-vocab // n)
    start = min(rank * share, vocab)
    end = min(start + share, vocab)
    rows = torch.zeros(share, hidden, device=weight.device)
    rows[:end - start] = weight[start:end]
    return start, end, nn.Parameter(rows, requires_grad=False)

"""Right, written differently: no zero buffer and no slice. It gathers rows by index with
index_select (which always allocates), clamping the padding's indices to a real row, then
blanks the padding with torch.where, so inf/nan rows never leak into it."""
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
    vocab = weight.shape[0]
    share = (vocab + n - 1) // n
    start = min(rank * share, vocab)
    end = min(start + share, vocab)
    ids = torch.arange(start, start + share, device=weight.device)
    real = ids < end
    if vocab > 0:
        rows = weight.index_select(0, ids.clamp(max=vocab - 1))
        rows = torch.where(real[:, None], rows, torch.zeros((), dtype=weight.dtype, device=weight.device))
    else:
        rows = weight.new_zeros(share, weight.shape[1])
    return start, end, nn.Parameter(rows.contiguous(), requires_grad=False)

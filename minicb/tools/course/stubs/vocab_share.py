"""Chapter 10: one rank's share of the vocabulary.

With tensor parallelism the embedding table and the output layer are cut by
rows: each of n ranks holds a range of token ids. Equal shapes keep every
rank's collectives the same size, so a short last share is padded.
Check: ``python -m minicb check vocab_share``.
"""


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
    raise NotImplementedError

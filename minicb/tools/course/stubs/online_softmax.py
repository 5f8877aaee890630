"""Chapter 1: online softmax, one block of keys (a Triton function).

Every attention kernel here walks a sequence's keys one block at a time and
never holds a whole row of scores. This function folds one block into what a
tile of query rows has seen so far. The engine's kernels call it; the check
runs stage 1's kernel with yours inside it, in Triton's interpreter, against
the naive reference. Check: ``python -m minicb check online_softmax``.
"""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    """q [M, D]: the tile's query rows; k, v [N, D]: one block of keys and
    values; visible [M, N]: which keys each row may see (False: as if absent).
    m_i [M], l_i [M], acc [M, D] (fp32) describe the keys seen before this block:
    after the last block, acc / l_i must equal softmax(q k^T * scale) @ v over
    every visible key, and a row that has seen no visible key must end with
    l_i == 0 and acc == 0 (never nan). A row starts at m_i = -inf, l_i = 0,
    acc = 0. Return the new (m_i, l_i, acc). Split-KV reads m_i + log(l_i) as
    the log of the row's softmax denominator (its log-sum-exp of the scores), so
    keep m_i and l_i in natural units: m_i the largest visible score so far (or
    any shift that keeps the exponents finite), l_i the sum of exp(score - m_i).

    Use ``tl.dot(a, b, input_precision=PRECISION)`` for matrix products.
    """
    raise NotImplementedError

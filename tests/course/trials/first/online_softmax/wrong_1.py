"""Misconception: hide invisible keys with a large finite negative score (-1e30, the usual
trick to dodge -inf arithmetic). A row that never sees a visible key (a padding query row)
then ends with l_i = number of hidden keys and acc = their sum of v, not l_i == 0, acc == 0.
"""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    """Fold one block of keys into the running (m_i, l_i, acc) of online softmax."""
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    s = tl.where(visible, s, -1.0e30)
    m_new = tl.maximum(m_i, tl.max(s, 1))
    alpha = tl.exp(m_i - m_new)
    p = tl.exp(s - m_new[:, None])
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_i, acc

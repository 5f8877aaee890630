"""Misconception: mask hidden keys with a large finite score (-1e30) instead of -inf, to
keep nan out. A row that sees no visible key at all then ends with l_i = BLOCK_N per block
and acc = the sum of its values (e.g. a left-padding query row), not l_i == 0, acc == 0."""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    s = tl.where(visible, s, -1.0e30)                 # "hidden": far below any real score
    m_new = tl.maximum(m_i, tl.max(s, 1))
    p = tl.exp(s - m_new[:, None])
    alpha = tl.exp(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_i, acc

"""Misconception: take the running max over the block's raw scores and mask after
exponentiating (p = where(visible, exp(s - m), 0)): no nan, and m_i is "a shift". But an
invisible key (a future token) scoring 120 above the visible ones underflows every visible p to 0."""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    m_new = tl.maximum(m_i, tl.max(s, 1))
    alpha = tl.exp(m_i - m_new)
    p = tl.where(visible, tl.exp(s - m_new[:, None]), 0.0)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_i, acc

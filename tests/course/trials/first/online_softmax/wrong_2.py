"""Misconception: the running max is only there for stability and softmax is shift
invariant, so take it over the raw scores and mask p afterwards. An invisible key (a
future or out-of-range one) scoring ~100 above the visible ones underflows them to 0: output 0.
"""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    """Fold one block of keys into the running (m_i, l_i, acc) of online softmax."""
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    m_new = tl.maximum(m_i, tl.max(s, 1))
    alpha = tl.exp(m_i - m_new)
    p = tl.where(visible, tl.exp(s - m_new[:, None]), 0.0)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_i, acc

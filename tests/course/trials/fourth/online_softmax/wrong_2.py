"""Misconception: the max is only there for stability and softmax is shift-invariant, so take
it over the whole block's scores and apply the mask after the exp. Exact in real arithmetic, but
when hidden keys (the future, padding) score far above the visible ones (by > ~88), exp underflows: l_i = 0."""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    m_new = tl.maximum(m_i, tl.max(s, 1))            # finite: no -inf - -inf anywhere
    p = tl.where(visible, tl.exp(s - m_new[:, None]), 0.0)
    alpha = tl.exp(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_i, acc

"""Misconception: a row with no key yet can take 0 as its running max (to dodge -inf - -inf).
After a block with nothing visible, m_i stays 0, so if its later visible scores are all
below about -88 (times scale), exp underflows and the row ends with l_i == 0: output 0."""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    s = tl.where(visible, s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, 1))
    m_new = tl.where(m_new == float("-inf"), 0.0, m_new)     # nothing seen yet: start at 0
    p = tl.exp(s - m_new[:, None])
    alpha = tl.exp(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_i, acc

"""Misconception: exp2 is cheaper and the base cancels in acc / l_i, so keep m_i in log2
units (scores times log2(e)). The output is right, but split-KV reads m_i + log(l_i) as a
natural log: paged_attention(..., num_splits=2) on a 40-key decode weights the ranges wrongly."""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    LOG2E: tl.constexpr = 1.4426950408889634
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * (scale * LOG2E)
    s = tl.where(visible, s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, 1))
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
    alpha = tl.exp2(m_i - m_safe)
    p = tl.exp2(s - m_safe[:, None])
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_i, acc

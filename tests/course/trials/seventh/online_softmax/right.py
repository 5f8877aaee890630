"""Right: the same online softmax, but in base 2 and with the masking done on
the probabilities instead of the scores. The raw scores are never set to
-inf: the block's maximum is taken over tl.where(visible, s, -inf), the
exponentials are computed with exp2 on scores pre-multiplied by log2(e), and
invisible keys (and rows with no finite maximum yet) are zeroed with
tl.where afterwards, so no nan can appear. m_i stays in natural units (the
largest visible scaled score) so that m_i + log(l_i) is the row's log-sum-exp.
"""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    block_max = tl.max(tl.where(visible, s, float("-inf")), 1)
    m_new = tl.maximum(m_i, block_max)
    seen = m_new > float("-inf")                      # the row has a finite maximum
    ref = tl.where(seen, m_new, 0.0)
    p = tl.exp2((s - ref[:, None]) * 1.4426950408889634)
    p = tl.where(visible & seen[:, None], p, 0.0)
    # rows that had seen nothing keep l_i = 0 and acc = 0: their factor is 0
    alpha = tl.where(m_i > float("-inf"), tl.exp2((m_i - ref) * 1.4426950408889634), 0.0)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_i, acc

"""Misconception (from Triton's fused-attention tutorial): work in base 2 throughout, m_i the max
of score*log2(e) and l_i the sum of exp2: acc / l_i is exact, but m_i + log(l_i) is not the
natural log-sum-exp, so split-KV's combine mis-weights its ranges (any split decode, num_splits=2)."""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    """Fold one block of keys into the running (m_i, l_i, acc) of a tile of query rows."""
    qk_scale = scale * 1.4426950408889634               # log2(e): exp(x) = exp2(x * log2 e)
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * qk_scale
    s = tl.where(visible, s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, 1))
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
    alpha = tl.exp2(m_i - m_safe)
    p = tl.exp2(s - m_safe[:, None])
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_i, acc

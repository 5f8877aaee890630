"""Misconception (from Triton's fused-attention tutorial): fold log2(e) into the scale and keep
the running max in base-2 units, using exp2. acc / l_i is right, but m_i + log(l_i) is no longer the
row's log-sum-exp, so split-KV's combine weighs its ranges wrongly (any split decode step)."""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    qk_scale = scale * 1.4426950408889634            # log2(e): exp(x) == exp2(x * log2(e))
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * qk_scale
    s = tl.where(visible, s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, 1))
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
    p = tl.math.exp2(s - m_safe[:, None])
    alpha = tl.math.exp2(m_i - m_safe)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_i, acc

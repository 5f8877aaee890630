"""Misconception: tl.dot is exact by default, so PRECISION can be left out. In Triton's
interpreter it is; on a GPU an fp32 dot then runs in tf32 (10-bit mantissa) and fp32 attention
drifts from the reference by ~1e-3 (any fp32 prefill on an A100/H100)."""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    """Fold one block of keys into the running (m_i, l_i, acc) of a tile of query rows."""
    s = tl.dot(q, tl.trans(k)) * scale
    s = tl.where(visible, s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, 1))
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
    alpha = tl.exp(m_i - m_safe)
    p = tl.exp(s - m_safe[:, None])
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
    return m_new, l_i, acc

"""Misconception: masking after the exponential is equivalent (hidden keys just get p = 0), so the max
is taken over every key of the block, hidden ones included; a large hidden score then underflows
the visible ones. Goes wrong: a causal row whose future keys score 100+ above its visible ones -> output 0."""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    """Fold one block of keys into the running (m_i, l_i, acc) of a tile of query rows."""
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    m_new = tl.maximum(m_i, tl.max(s, axis=1))
    alpha = tl.exp(m_i - m_new)
    p = tl.where(visible, tl.exp(s - m_new[:, None]), 0.0)
    l_i = l_i * alpha + tl.sum(p, axis=1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_i, acc

"""Misconception: any finite max works as the shift, so a row with no visible key yet gets m = 0 and
*keeps* it; a later block whose scores are all far below 0 then underflows to l = 0.
Goes wrong: a row whose first block is all hidden and whose later visible scores are all below about -104 -> output 0."""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    """Fold one block of keys into the running (m_i, l_i, acc) of a tile of query rows."""
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    s = tl.where(visible, s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, axis=1))
    m_new = tl.where(m_new == float("-inf"), 0.0, m_new)     # avoid -inf - -inf
    alpha = tl.exp(m_i - m_new)
    p = tl.exp(s - m_new[:, None])
    l_i = l_i * alpha + tl.sum(p, axis=1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_i, acc

"""Right, but masks the probabilities rather than the scores (p = where(visible, ., 0)), so
no -inf - -inf can arise, and exponentiates with exp2 of log2(e)-scaled differences while
keeping m_i and l_i in natural units (the shift is 0 for a row that has seen nothing)."""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    """Fold one block of keys into the running (m_i, l_i, acc) of a tile of query rows."""
    LOG2E: tl.constexpr = 1.4426950408889634
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    block_max = tl.max(tl.where(visible, s, float("-inf")), 1)
    m_new = tl.maximum(m_i, block_max)
    # A row with nothing visible yet keeps m = -inf; it is shifted by 0 instead.
    shift = tl.where(m_new > float("-inf"), m_new, 0.0)
    alpha = tl.exp2((m_i - shift) * LOG2E)               # exp(m_i - shift); 0 when m_i = -inf
    p = tl.where(visible, tl.exp2((s - shift[:, None]) * LOG2E), 0.0)
    l_new = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_new, acc

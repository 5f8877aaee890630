"""Right, but exponentiates with exp2 (log2(e) applied to each difference, the running max kept
in natural units so m_i + log(l_i) stays the log-sum-exp) and guards empty rows by where():
the old sums are kept as they are when the max does not move (alpha = 1, even at -inf)."""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    LOG2E: tl.constexpr = 1.4426950408889634
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    s = tl.where(visible, s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, 1))
    # Rescale factor of what was summed so far: exactly 1 when the max stays put
    # (this also covers a row still at -inf, where m_i - m_new would be nan).
    alpha = tl.where(m_i == m_new, 1.0, tl.math.exp2((m_i - m_new) * LOG2E))
    # Weights of this block: 0 for a hidden key, whatever m_new is.
    p = tl.where(visible, tl.math.exp2((s - m_new[:, None]) * LOG2E), 0.0)
    l_new = l_i * alpha + tl.sum(p, 1)
    acc_new = tl.dot(p.to(v.dtype), v, acc=acc * alpha[:, None], input_precision=PRECISION)
    return m_new, l_new, acc_new

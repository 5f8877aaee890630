"""Right, in base 2 with a separate shift: p = exp2((s - shift) * log2 e), where the shift is
the running max or, for a row that has seen nothing, 0 for this block only (no nan to mend
afterwards); m_i is still returned in natural units, -inf while the row is empty."""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    block_max = tl.max(tl.where(visible, s, float("-inf")), 1)
    m_new = tl.maximum(m_i, block_max)                     # -inf while the row has seen nothing
    shift = tl.where(m_new > float("-inf"), m_new, 0.0)    # finite, for this block's arithmetic
    # hidden keys get -inf before exp2 (exp2(-inf) = 0): no overflow on a hidden huge score
    p = tl.exp2(tl.where(visible, s - shift[:, None], float("-inf")) * 1.4426950408889634)
    alpha = tl.exp2((m_i - shift) * 1.4426950408889634)   # exp2(-inf) = 0 for an empty past
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_i, acc

"""Misconception: hide invisible keys with a large finite score (-1e9) instead of -inf,
"so no inf - inf can ever make a nan". A row that sees no key then averages the hidden
values (l_i = N, acc = sum of v) instead of ending at l_i == 0, acc == 0: e.g. visible all False."""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    s = tl.where(visible, s, -1.0e9)                 # hidden keys: a very low score
    m_new = tl.maximum(m_i, tl.max(s, 1))            # always finite after the first block
    p = tl.exp(s - m_new[:, None])
    alpha = tl.exp(m_i - m_new)                      # exp(-inf) = 0 on the first block
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_i, acc

"""Misconception: "the shift only has to keep this block's exponentials in
range, and alpha carries the old sums over to it", so m_i becomes the
current block's own maximum rather than the running maximum
max(m_i, block max). The algebra still telescopes, so with ordinary scores
the output is right, but the rescale factor alpha = exp(m_old - m_block) is
now > 1 whenever a later block's best score is lower than an earlier one, and
it overflows to inf in fp32 once the drop exceeds about 88: acc and l_i
become inf and the row's output inf/inf = nan. The contract allows any shift
"that keeps the exponents finite"; this one does not.

Concrete input: one row, block 1 (keys 0-15) with a visible scaled score of
100 (large q and k: a real model's outlier channels, or drawn scores of that
size), block 2 (keys 16-31) whose visible scores are about 0: alpha = e^100 =
inf in fp32, and the row's output is nan instead of (about) the value of
block 1's best key.
"""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    s = tl.where(visible, s, float("-inf"))
    m_block = tl.max(s, 1)
    # shift by this block's own maximum; a block with nothing visible keeps the old one
    m_new = tl.where(m_block == float("-inf"), m_i, m_block)
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
    p = tl.exp(s - m_safe[:, None])
    alpha = tl.where(m_i == float("-inf"), 0.0, tl.exp(m_i - m_safe))
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_i, acc

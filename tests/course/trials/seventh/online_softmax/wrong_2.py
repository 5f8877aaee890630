"""Misconception: "the scale can go inside the exponent, as FlashAttention-2
does: take the running max of the raw q.k scores and compute
exp((s - m) * scale)". The normalised output acc / l_i is still exactly the
softmax, so the single-pass kernels pass. But m_i is then kept in unscaled
units, and split-KV reads m_i + log(l_i) as each range's log-sum-exp of the
*scaled* scores: with m_i = max(q.k) instead of max(q.k) * scale, the
log-sum-exps of different ranges are off by (1 - scale) x their own maxima,
so the combine weighs the ranges wrongly.

Concrete input: head_dim 64 (scale 1/8), a decode query over 600 keys
split into 2 ranges whose largest raw scores are 40 and 8: the true
log-sum-exps differ by about 4 (5 - 1), this version's by about 32, so the
second range's weight is scaled by roughly e^-28 and the result is close to
the first range alone instead of the softmax over both.
"""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    raw = tl.dot(q, tl.trans(k), input_precision=PRECISION)
    raw = tl.where(visible, raw, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(raw, 1))
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
    p = tl.exp((raw - m_safe[:, None]) * scale)
    alpha = tl.exp((m_i - m_safe) * scale)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_i, acc

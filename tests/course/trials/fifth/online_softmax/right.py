"""Right: lazy rescaling (as in FlashAttention 4): the row keeps its old shift m_i while the
block's best visible score stays within TAU nats of it, and rescales only when it grows past;
exponents stay <= e^TAU, and m_i + log(l_i) is still the natural-log log-sum-exp."""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    TAU: tl.constexpr = 8.0        # e^8 ~ 3e3: fits fp16 when p is cast for the dot
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    s = tl.where(visible, s, float("-inf"))
    block_best = tl.max(s, 1)
    # a new shift only where the block's best escapes the old one by more than TAU
    # (a row that had none, m_i = -inf, takes the block's best if it sees anything)
    m_new = tl.where(block_best > m_i + TAU, block_best, m_i)
    shift = tl.where(m_new == float("-inf"), 0.0, m_new)     # rows with nothing seen
    alpha = tl.exp(m_i - shift)
    p = tl.exp(s - shift[:, None])
    l_new = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_new, acc

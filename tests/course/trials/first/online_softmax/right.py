"""Correct. Differs from the usual exp() form: works in base 2 (scale * log2(e) folded
into the scores, exp2 throughout, as Triton's fused-attention tutorial does), and keeps
rows with no visible key nan-free by masking p with `visible` and taking alpha = 1
whenever the running maximum did not move, instead of substituting 0 for a -inf maximum.
"""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    """q [M, D]: the tile's query rows; k, v [N, D]: one block of keys and
    values; visible [M, N]: which keys each row may see (False: as if absent).
    m_i [M], l_i [M], acc [M, D] (fp32) describe the keys seen before this block:
    after the last block, acc / l_i must equal softmax(q k^T * scale) @ v over
    every visible key, and a row that has seen no visible key must end with
    l_i == 0 and acc == 0 (never nan). A row starts at m_i = -inf, l_i = 0,
    acc = 0. Return the new (m_i, l_i, acc).

    Use ``tl.dot(a, b, input_precision=PRECISION)`` for matrix products.
    """
    LOG2E: tl.constexpr = 1.4426950408889634
    # Scores in base 2: exp(x) == exp2(x * log2(e)). m_i stays in natural units.
    s2 = tl.dot(q, tl.trans(k), input_precision=PRECISION) * (scale * LOG2E)
    s2 = tl.where(visible, s2, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s2, 1) / LOG2E)       # natural units
    m2 = m_new * LOG2E
    # A key is counted only if visible: for a row still at -inf, s2 - m2 is nan for
    # its hidden keys, and where() drops it without spreading it.
    p = tl.where(visible, tl.math.exp2(s2 - m2[:, None]), 0.0)
    # The max did not move (including -inf to -inf): nothing to rescale.
    alpha = tl.where(m_new == m_i, 1.0, tl.math.exp2((m_i - m_new) * LOG2E))
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_i, acc

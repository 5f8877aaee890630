"""Right, in base 2: scores are pre-multiplied by scale * log2(e) and exponentiated with tl.exp2,
and a row whose running max is still -inf is shifted by 0 instead (so exp2(-inf) = 0, never nan);
the rescale factor is taken against that safe shift, and m_i stays -inf until a visible key arrives."""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    """Fold one block of keys into the running (m_i, l_i, acc) of a tile of query rows."""
    # scores in log2 units: softmax(x) = 2^(x log2 e - max) / sum(...)
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * (scale * 1.4426950408889634)   # log2(e)
    s = tl.where(visible, s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, axis=1))
    shift = tl.where(m_new == float("-inf"), 0.0, m_new)      # no key yet: any finite shift
    p = tl.exp2(s - shift[:, None])                       # invisible keys -> exactly 0
    alpha = tl.exp2(m_i - shift)                          # m_i == -inf -> 0 (acc, l_i are 0 anyway)
    l_new = l_i * alpha + tl.sum(p, axis=1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_new, acc

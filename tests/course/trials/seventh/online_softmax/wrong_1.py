"""Misconception: "a very large negative number is as good as -inf for
masking, and it avoids the nan of -inf - -inf": invisible scores are set to
-1e30 instead of -inf. Any row that sees at least one visible key comes out
right (exp(-1e30 - m) is 0). But a row whose keys so far are all invisible
gets m_i = -1e30 and p = exp(0) = 1 for every masked key, so l_i counts the
masked keys and acc sums their values; if no visible key ever comes, the row
ends with l_i = N and acc = sum of v, not the l_i == 0, acc == 0 the
contract requires, and m_i + log(l_i) reports a finite log-sum-exp for a
range that held no key.

Concrete input: one block with visible all False for a row (a query before a
split-KV range, a padding row, a left-padded row's padding columns):
l_i becomes 16 (BLOCK_N) and acc the sum of the 16 value rows, instead of 0.
"""
import triton
import triton.language as tl


@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    s = tl.where(visible, s, -1.0e30)
    m_new = tl.maximum(m_i, tl.max(s, 1))
    p = tl.exp(s - m_new[:, None])
    alpha = tl.exp(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_i, acc

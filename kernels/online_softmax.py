"""The one idea every attention kernel here shares: online softmax.

A kernel walks the keys in blocks of BLOCK_N and never holds a full row of
scores. For each block it rescales what it has summed so far by
exp(old_max - new_max), so the result equals softmax over all keys at once
(FlashAttention's trick). Kernels differ only in *which* keys they visit and
which of them are visible; they all call ``attend_block`` for the arithmetic.
"""
import torch
import triton
import triton.language as tl

SUPPORTED_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


# ANCHOR: attend_block
@triton.jit
def attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    """One key block. q [M, D], k/v [N, D], visible [M, N].
    Carries m_i (running max), l_i (running sum of exp), acc (running P @ V)."""
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    s = tl.where(visible, s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, 1))
    # A row that has seen no visible key yet keeps max = -inf; subtract 0
    # instead so exp() gives 0 rather than nan.
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
    p = tl.exp(s - m_safe[:, None])
    alpha = tl.exp(m_i - m_safe)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l_i, acc
# ANCHOR_END: attend_block


@triton.jit
def finish_rows(acc, l_i):
    """Divide by the softmax sum; rows that saw no key (padding) become 0."""
    return acc / tl.where(l_i == 0.0, 1.0, l_i)[:, None]


# ANCHOR: step_varying
# Triton compiles a kernel anew when an integer argument moves between three
# classes: equal to 1, divisible by 16, neither (it specializes on them).
# Lengths change every step, so a serving run would stop to compile whenever
# one first entered another class: the kernels mark them do_not_specialize.
STEP_VARYING = ["num_queries", "context_len"]
# ANCHOR_END: step_varying


def launch_options(q, head_dim, num_queries):
    """Block sizes and dot precision shared by the host wrappers."""
    if q.dtype not in SUPPORTED_DTYPES:
        raise ValueError(f"attention kernels support {SUPPORTED_DTYPES}, got {q.dtype}")
    block_d = max(16, triton.next_power_of_2(head_dim))
    if block_d > 256:
        raise ValueError(f"head_dim {head_dim} is larger than the kernels support (256)")
    block_m = min(64, max(16, triton.next_power_of_2(num_queries)))
    return dict(
        BLOCK_M=block_m, BLOCK_N=32, BLOCK_D=block_d, HEAD_DIM=head_dim,
        # fp32 tl.dot defaults to tf32 on a GPU; "ieee" keeps fp32 exact enough
        # to match the PyTorch reference and transformers token for token.
        PRECISION="ieee" if q.dtype.itemsize == 4 else "tf32",
    )


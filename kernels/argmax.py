"""The greedy token and the non-finite check in one pass (chapter 8).

The sampler picks each row's best token (argmax) and must know whether the
row's logits are all finite: a nan or an infinity means the model broke for
that request, which then fails alone. As PyTorch ops that is argmax, then
isfinite, all, a negation and a masked fill: five kernels, two of which read
the whole [B, vocab] logits. Here one program owns one row and reads it once,
keeping a best value and its column per lane; the row's token is the first
column that holds the largest value (as ``torch.argmax``), or -1.
"""
import torch
import triton
import triton.language as tl

BLOCK = 1024


# ANCHOR: kernel
@triton.jit
def _finite_argmax_kernel(LOGITS, TOKENS, stride, width, BLOCK: tl.constexpr):
    row, lanes = tl.program_id(0), tl.arange(0, BLOCK)
    best = tl.full([BLOCK], float("-inf"), tl.float32)
    column = tl.zeros([BLOCK], tl.int32)
    finite = tl.full([BLOCK], 1, tl.int32)
    for start in range(0, width, BLOCK):
        cols = start + lanes
        x = tl.load(LOGITS + row * stride + cols, mask=cols < width, other=float("-inf"))
        better = x > best                  # strictly: a lane keeps its first best column
        best, column = tl.where(better, x, best), tl.where(better, cols, column)
        # nan fails every comparison, an infinity this one
        finite &= ((tl.abs(x) < float("inf")) | (cols >= width)).to(tl.int32)
    top = tl.max(best, 0)
    token = tl.min(tl.where(best == top, column, width), 0)    # the first column holding it
    tl.store(TOKENS + row, tl.where(tl.min(finite, 0) == 1, token, -1).to(tl.int64))
# ANCHOR_END: kernel


def finite_argmax(logits):
    """logits [B, vocab] (last axis contiguous) -> each row's argmax [B] (int64),
    -1 where the row holds a nan or an infinity."""
    if logits.dim() != 2 or logits.stride(-1) != 1:
        raise ValueError(f"logits must be [B, vocab] with a contiguous last axis, got "
                         f"shape {tuple(logits.shape)}, strides {logits.stride()}")
    tokens = torch.empty(logits.shape[0], dtype=torch.int64, device=logits.device)
    _finite_argmax_kernel[(logits.shape[0],)](logits, tokens, logits.stride(0), logits.shape[1],
                                              BLOCK=BLOCK)
    return tokens

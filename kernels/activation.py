"""SiLU(gate) x up in one kernel: the middle of the SwiGLU MLP (chapter 8).

As PyTorch ops it is two kernels, and the [N, intermediate] tensor SiLU
writes is read back at once by the multiply. Here each program reads a tile
of the gate and of up and writes the product: one read of each, one write.
gate and up may be two halves of one matmul's output (rows with a stride).
"""
import torch
import triton
import triton.language as tl

BLOCK = 1024


# ANCHOR: kernel
@triton.jit
def _silu_mul_kernel(GATE, UP, OUT, stride_g, stride_u, stride_o, width,
                     BLOCK: tl.constexpr):
    row, cols = tl.program_id(0), tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    inside = cols < width
    gate = tl.load(GATE + row * stride_g + cols, mask=inside, other=0.0).to(tl.float32)
    up = tl.load(UP + row * stride_u + cols, mask=inside, other=0.0).to(tl.float32)
    # Rounded where PyTorch rounds: SiLU's output, then the product.
    silu = (gate * tl.sigmoid(gate)).to(OUT.dtype.element_ty).to(tl.float32)
    tl.store(OUT + row * stride_o + cols, (silu * up).to(OUT.dtype.element_ty), mask=inside)
# ANCHOR_END: kernel


def silu_mul(gate, up):
    """gate, up [N, width] (last axis contiguous) -> SiLU(gate) * up [N, width]."""
    if gate.shape != up.shape or gate.stride(-1) != 1 or up.stride(-1) != 1:
        raise ValueError(f"gate and up must have one shape and a contiguous last axis, got "
                         f"{tuple(gate.shape)} and {tuple(up.shape)}")
    rows, width = gate.shape
    out = torch.empty(rows, width, dtype=gate.dtype, device=gate.device)
    _silu_mul_kernel[(rows, triton.cdiv(width, BLOCK))](
        gate, up, out, gate.stride(0), up.stride(0), out.stride(0), width, BLOCK=BLOCK)
    return out

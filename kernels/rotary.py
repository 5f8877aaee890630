"""Rotary position embedding of q and k in one kernel (chapter 8).

As PyTorch ops, rotating one tensor is a slice, a negation, a concatenation,
two multiplies and an add, each a kernel over the whole tensor, and q and k
each pay for all of them. Here one program owns one token: it reads each
head of q and k once, rotates channel i with channel i + d/2 by the token's
angle, and writes it back in place.
"""
import triton
import triton.language as tl


# ANCHOR: kernel
@triton.jit
def _rotate_heads(X, row, stride_t, stride_h, num_heads, cos, sin, half,
                  HEADS: tl.constexpr, HALF: tl.constexpr):
    heads, cols = tl.arange(0, HEADS)[:, None], tl.arange(0, HALF)[None, :]
    inside = (heads < num_heads) & (cols < half)
    first = X + row * stride_t + heads * stride_h + cols        # channels 0 .. d/2
    x1 = tl.load(first, mask=inside, other=0.0).to(tl.float32)
    x2 = tl.load(first + half, mask=inside, other=0.0).to(tl.float32)
    # x * cos + rotate_half(x) * sin, each product rounded as PyTorch rounds it
    dtype = X.dtype.element_ty
    out1 = (x1 * cos).to(dtype).to(tl.float32) - (x2 * sin).to(dtype).to(tl.float32)
    out2 = (x2 * cos).to(dtype).to(tl.float32) + (x1 * sin).to(dtype).to(tl.float32)
    tl.store(first, out1.to(dtype), mask=inside)
    tl.store(first + half, out2.to(dtype), mask=inside)


@triton.jit
def _rotary_kernel(Q, K, COS, SIN, stride_qt, stride_qh, stride_kt, stride_kh,
                   stride_c, num_q_heads, num_k_heads, half,
                   Q_HEADS: tl.constexpr, K_HEADS: tl.constexpr, HALF: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, HALF)[None, :]
    # cos/sin [N, d] repeat their first half: channel i and i + d/2 turn by one angle
    cos = tl.load(COS + row * stride_c + cols, mask=cols < half, other=0.0).to(tl.float32)
    sin = tl.load(SIN + row * stride_c + cols, mask=cols < half, other=0.0).to(tl.float32)
    _rotate_heads(Q, row, stride_qt, stride_qh, num_q_heads, cos, sin, half, Q_HEADS, HALF)
    _rotate_heads(K, row, stride_kt, stride_kh, num_k_heads, cos, sin, half, K_HEADS, HALF)
# ANCHOR_END: kernel


def rotary(q, k, cos, sin):
    """q [N, H, d], k [N, KVH, d], rotated in place; cos/sin [N, d] as
    ``minicb.model.Rotary.cos_sin`` gives them. Returns (q, k)."""
    for name, x in (("q", q), ("k", k)):
        if x.stride(-1) != 1:
            raise ValueError(f"the last (head_dim) axis of {name} must be contiguous")
    tokens, num_q_heads, head_dim = q.shape
    half = head_dim // 2
    _rotary_kernel[(tokens,)](
        q, k, cos, sin, q.stride(0), q.stride(1), k.stride(0), k.stride(1), cos.stride(0),
        num_q_heads, k.shape[1], half,
        Q_HEADS=triton.next_power_of_2(num_q_heads), K_HEADS=triton.next_power_of_2(k.shape[1]),
        HALF=triton.next_power_of_2(half))
    return q, k

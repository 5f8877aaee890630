"""The one idea every attention kernel here shares: online softmax.

A kernel walks the keys in blocks of BLOCK_N and never holds a full row of
scores. For each block it rescales what it has summed so far by
exp(old_max - new_max), so the result equals softmax over all keys at once
(FlashAttention's trick). Kernels differ only in *which* keys they visit and
which of them are visible; they all call ``attend_block`` for the arithmetic.
"""
import math

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
def empty_rows(BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr):
    """The running max, sum and output of rows that have seen no key yet."""
    return (tl.full([BLOCK_M], float("-inf"), tl.float32), tl.zeros([BLOCK_M], tl.float32),
            tl.zeros([BLOCK_M, BLOCK_D], tl.float32))


@triton.jit
def finish_rows(acc, l_i):
    """Divide by the softmax sum; rows that saw no key (padding) become 0."""
    return acc / tl.where(l_i == 0.0, 1.0, l_i)[:, None]


# ANCHOR: step_varying
# Triton compiles a kernel anew when an integer argument moves between three
# classes: equal to 1, divisible by 16, neither (it specializes on them).
# Lengths change every step, so a serving run would stop to compile whenever
# one first entered another class: the kernels mark them do_not_specialize.
# (Context lengths are not arguments: the kernels read them from memory.)
STEP_VARYING = ["num_queries"]
# ANCHOR_END: step_varying


# ANCHOR: launch_options
def launch_options(q, k_cache, num_queries, pack_heads=True, sequences=1):
    """Tile sizes, warps and dot precision shared by the host wrappers, for
    q [..., H, d], a cache [..., KVH, d], and ``sequences`` sequences of at
    most num_queries new tokens each in one launch."""
    if q.dtype not in SUPPORTED_DTYPES:
        raise ValueError(f"attention kernels support {SUPPORTED_DTYPES}, got {q.dtype}")
    arch, num_heads = gpu_arch(q.device), q.shape[-2]
    opts = tile_options(q.dtype, q.shape[-1], num_heads // k_cache.shape[-2],
                        num_queries, pack_heads, arch)
    programs = sequences * math.prod(tile_grid(opts, num_queries, num_heads))
    if fills_the_gpu(programs, multiprocessors(q.device)):
        return opts
    return longer_trips(opts, arch)


def gpu_arch(device) -> int:
    """The GPU's compute capability as one number (75, 80, 90, ...). Off a GPU,
    TARGET_ARCH: the compile check sets it to the GPU it compiles for."""
    if device.type != "cuda":
        return TARGET_ARCH
    major, minor = torch.cuda.get_device_capability(device)
    return 10 * major + minor


TARGET_ARCH = 90


def tile_options(dtype, head_dim, group, num_queries, pack_heads=True, arch=90):
    """A tile's rows are (query, head) pairs: HEADS query heads that share one
    KV head, times BLOCK_M // HEADS queries. Packing a KV head's whole GQA
    group into one program (HEADS = group) makes it read that head's K and V
    once instead of once per query head; pack_heads=False keeps one head per
    program, the layout before packing, for comparison only."""
    block_d = max(16, triton.next_power_of_2(head_dim))
    if block_d > 256:
        raise ValueError(
            f"head_dim {head_dim} is larger than the kernels support (256)")
    fp32 = dtype.itemsize == 4
    # Sizes where no kernel spills a register, read off the compile check
    # (python -m workshop.gpu.compile_check --full: head dims 64, 80 and 128,
    # sm_80 and sm_90, Triton 3.6 and 3.9, and the quick matrix for sm_89 and
    # sm_75; head dims above 128 passed one run for sm_90). An exact fp32 dot
    # runs on the CUDA cores with its operands in registers, so fp32 tiles are
    # short and get 8 warps. ptxas does not reliably spill less as tiles
    # shrink: this is a table, not a formula.
    if fp32:
        max_rows, block_n = (32 if block_d <= 128 else 16), 16
    else:
        max_rows, block_n = (64 if block_d <= 64 else 32), 32
        if arch < 80 and block_d > 64:       # a T4 (sm_75) spills the 32-row tile
            max_rows = 16
    # The largest share of the group that fits a tile and divides the group evenly.
    heads = (max(h for h in range(1, min(group, max_rows) + 1) if group % h == 0)
             if pack_heads else 1)
    block_m = min(max_rows, max(16, triton.next_power_of_2(heads * num_queries)))
    num_warps = 8 if fp32 or block_m == 64 else 4
    return dict(
        GROUP=group, HEADS=heads,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_D=block_d, HEAD_DIM=head_dim,
        # fp32 tl.dot defaults to tf32 on a GPU; "ieee" keeps fp32 exact enough
        # to match the PyTorch reference and transformers token for token.
        PRECISION="ieee" if fp32 else "tf32", num_warps=num_warps,
        # Left to itself, ptxas may hold a kernel to fewer registers than it needs
        # (80, say) to fit more blocks on a multiprocessor, and spill the rest to
        # local memory.
        maxnreg=255,
    )
# ANCHOR_END: launch_options


# ANCHOR: longer_trips
def fills_the_gpu(programs, processors) -> bool:
    """Whether a launch of ``programs`` gives each of the GPU's ``processors``
    (streaming multiprocessors) two at least. Off a GPU (0) there is nothing to fill."""
    return programs >= 2 * processors


def longer_trips(opts, arch) -> dict:
    """The options for a launch with too few programs to fill the GPU. A decode
    tile of 16-bit values (16 rows: one query's heads) holds few registers, so
    it walks the keys 64 at a time (four blocks of 16 tokens in stage 5): twice
    the bytes in flight per program, half the trips round its loop. A launch
    with programs to spare keeps 32: the 64-key tile takes more registers (163
    a thread against 114 for 128-wide heads on sm_90, by the compile check), so
    three programs fit a multiprocessor instead of four, and 64 sequences of the
    8B shape's 8 KV heads (512 programs) no longer fit at once on 132 of them."""
    short_tile = opts["BLOCK_M"] == 16 and opts["PRECISION"] != "ieee"
    if short_tile and opts["BLOCK_D"] <= 128 and arch >= 80:
        return dict(opts, BLOCK_N=64)
    return opts


def multiprocessors(device) -> int:
    """The GPU's streaming multiprocessors; off a GPU, TARGET_PROCESSORS: 0,
    nothing to fill (the compile check sets it to the GPU it compiles for)."""
    device = torch.device(device)
    if device.type != "cuda":
        return TARGET_PROCESSORS
    return torch.cuda.get_device_properties(device).multi_processor_count


TARGET_PROCESSORS = 0
# ANCHOR_END: longer_trips


def tile_grid(opts, num_queries, num_heads):
    """Grid axes 0 and 1: tiles of queries, programs per head group."""
    return triton.cdiv(num_queries, opts["BLOCK_M"] // opts["HEADS"]), num_heads // opts["HEADS"]


def check_cache(q, k_cache, v_cache, context_len=None):
    """Shape checks shared by the host wrappers; q [..., Lq, H, d], caches [..., T, KVH, d].
    (A context length read on the GPU, as stage 2's, is not checked here.)"""
    if q.stride(-1) != 1 or k_cache.stride(-1) != 1 or v_cache.stride(-1) != 1:
        raise ValueError("the last (head_dim) axis of q and the caches must be contiguous")
    if k_cache.stride() != v_cache.stride():
        raise ValueError("k_cache and v_cache must share one layout")
    if q.shape[-2] % k_cache.shape[-2]:
        raise ValueError(f"{q.shape[-2]} query heads is not a multiple of {k_cache.shape[-2]} KV heads")
    if context_len is not None and not q.shape[-3] <= context_len <= k_cache.shape[-3]:
        raise ValueError(f"context_len {context_len} must be within [{q.shape[-3]}, {k_cache.shape[-3]}]")

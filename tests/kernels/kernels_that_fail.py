"""Two kernels the compile check must refuse (tests/kernels/test_compile.py): one that
does not compile, one that cannot keep its values in registers."""
import triton
import triton.language as tl


@triton.jit
def dot_of_two_vectors(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.store(X + tl.arange(0, BLOCK), tl.dot(x, x))        # tl.dot needs 2-D blocks: a compile error


@triton.jit
def tile_too_large_for_one_warp(X, Y, BLOCK: tl.constexpr):
    # Two BLOCK x BLOCK fp32 tiles, both needed after each is summed: at BLOCK = 128
    # one warp would need 1,024 registers per thread to hold them (ptxas has 255).
    offs = tl.arange(0, BLOCK)
    tile = offs[:, None] * BLOCK + offs[None, :]
    x, y = tl.load(X + tile), tl.load(Y + tile)
    tl.store(Y + tile, x * tl.sum(y, 0)[None, :] + y * tl.sum(x, 1)[:, None])

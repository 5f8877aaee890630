"""The cases a kernel exercise is checked on: each runs the engine's kernel
wrapper (with the student's function swapped in) and its naive reference
(``kernels/reference.py``) on the same random inputs, small enough for Triton's
interpreter: a few seconds on a laptop.

Each case is (label, kernel call, reference call, tolerance), and a fifth item,
True, where the input is one the kernel may refuse with ValueError instead (a last
axis that is not contiguous): then it must compute it right or refuse it. The
shapes cover what the engine meets: prompts and single-token decodes, grouped-query
heads, lengths on and off a tile's or a block's edge, fp32 and fp16.
"""
import importlib
from functools import partial

import torch

from ...kernels import reference

TOLERANCE = {torch.float32: dict(atol=1e-5, rtol=1e-4), torch.float16: dict(atol=2e-3, rtol=2e-3)}
DTYPES = tuple(TOLERANCE)
HEAD_DIM = 16


def kernel(module: str):
    """A kernel module of minicb.kernels, imported when a check first runs:
    minicb/attention.py has decided on Triton's interpreter by then."""
    return importlib.import_module(f"minicb.kernels.{module}")


def randn(generator, *shape, dtype=torch.float32):
    return torch.randn(*shape, generator=generator).to(dtype)


def name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def attention_cases():
    """Stage 1's kernel: a sequence's queries over its contiguous cache; then stage 2's."""
    contiguous_attention = kernel("contiguous_attention").contiguous_attention
    cases = []
    for dtype in DTYPES:
        for queries, context, heads, kv_heads in [(1, 37, 4, 2), (16, 16, 4, 4), (5, 70, 8, 2)]:
            g = torch.Generator().manual_seed(queries * 100 + context)
            q = randn(g, queries, heads, HEAD_DIM, dtype=dtype)
            k, v = (randn(g, 80, kv_heads, HEAD_DIM, dtype=dtype) for _ in range(2))
            args = (q, k, v, context)
            cases.append((f"{name(dtype)}, {queries} queries over {context} keys, "
                          f"{heads}/{kv_heads} heads", partial(contiguous_attention, *args),
                          partial(reference.contiguous_attention, *args), TOLERANCE[dtype]))
    # Scores far beyond exp's range (float32 overflows past e^88): only a shift by each
    # row's running maximum keeps every exponent at or below 0.
    g = torch.Generator().manual_seed(3)
    q, k, v = 40 * randn(g, 5, 4, HEAD_DIM), randn(g, 70, 2, HEAD_DIM), randn(g, 70, 2, HEAD_DIM)
    cases.append(("float32, scores in the hundreds", partial(contiguous_attention, q, k, v, 70),
                  partial(reference.contiguous_attention, q, k, v, 70), TOLERANCE[torch.float32]))
    return cases + padded_cases()


def padded_cases():
    """Stage 2's kernel over a left-padded prompt: the padding's query rows share a tile
    with real ones and see no key at all, so they must come out 0, never nan (a nan there
    is written to the cache as the padding's K/V, and reaches every real row after it)."""
    padded_attention = kernel("padded_attention").padded_attention
    cases = []
    for dtype in DTYPES:
        g = torch.Generator().manual_seed(2)
        q = randn(g, 2, 12, 4, HEAD_DIM, dtype=dtype)
        k, v = (randn(g, 2, 12, 2, HEAD_DIM, dtype=dtype) for _ in range(2))
        args = (q, k, v, torch.tensor([12, 12]), torch.tensor([5, 0]))
        cases.append((f"{name(dtype)}, a prompt left-padded by 5 beside one unpadded",
                      partial(padded_attention, *args),
                      partial(reference.padded_attention, *args), TOLERANCE[dtype]))
    return cases


def paged_inputs(g, query_lens, context_lens, heads, kv_heads, block_size, dtype):
    """One step over a paged cache whose blocks are shuffled through the pool."""
    widest = max(-(-c // block_size) for c in context_lens)
    num_blocks = len(context_lens) * widest + 3
    tables = torch.randperm(num_blocks, generator=g)[:len(context_lens) * widest]
    tables = tables.view(len(context_lens), widest).to(torch.int32)
    cu_seqlens = torch.tensor([0, *torch.tensor(query_lens).cumsum(0).tolist()], dtype=torch.int32)
    seq_lens = torch.tensor(context_lens, dtype=torch.int32)
    q = randn(g, sum(query_lens), heads, HEAD_DIM, dtype=dtype)
    k, v = (randn(g, num_blocks * block_size, kv_heads, HEAD_DIM, dtype=dtype) for _ in range(2))
    return q, k, v, cu_seqlens, seq_lens, tables, block_size


def paged_cases():
    """Stage 5's kernel: prompts, chunks and decodes over shuffled blocks."""
    paged_attention = kernel("paged_attention").paged_attention
    cases = []
    for dtype in DTYPES:
        for block_size in (1, 4, 16):
            g = torch.Generator().manual_seed(block_size)
            args = paged_inputs(g, [9, 1, 3, 1], [9, 40, 21, 16], 4, 2, block_size, dtype)
            cases.append((f"{name(dtype)}, blocks of {block_size}, a prompt, a chunk and decodes",
                          partial(paged_attention, *args),
                          partial(reference.paged_attention, *args), TOLERANCE[dtype]))
    return cases


def combine_cases():
    """Split-KV's merge, alone (some ranges saw no key) and inside a split decode."""
    paged_attention = kernel("paged_attention").paged_attention
    cases = []
    for dtype in DTYPES:
        for splits in (1, 3, 8):
            g = torch.Generator().manual_seed(splits)
            parts = randn(g, splits, 5, 3, HEAD_DIM)
            lse = randn(g, splits, 5, 3) * 4
            empty = torch.rand(splits, 5, 3, generator=g) < 0.3
            empty[:, 0] = True                              # token 0: no range saw a key
            lse[empty], parts[empty] = float("-inf"), 0.0
            cases.append((f"{name(dtype)}, {splits} ranges, some empty",
                          partial(_combine, parts, lse, dtype),
                          partial(reference.combine_splits, parts, lse, dtype), TOLERANCE[dtype]))
        g = torch.Generator().manual_seed(99)
        parts, lse = randn(g, 3, 5, 3, 2 * HEAD_DIM)[..., ::2], randn(g, 3, 5, 3)
        cases.append((f"{name(dtype)}, parts whose last axis is strided",
                      partial(_combine, parts, lse, dtype),
                      partial(reference.combine_splits, parts, lse, dtype), TOLERANCE[dtype], True))
        args = paged_inputs(g, [1] * 3, [70, 5, 33], 4, 2, 4, dtype)
        cases.append((f"{name(dtype)}, decodes split 4 ways", partial(paged_attention, *args, 1, 4),
                      partial(reference.paged_attention, *args), TOLERANCE[dtype]))
    return cases


def _combine(parts, lse, dtype):
    # the module's combine_splits, looked up at the call: the student's, swapped in
    return kernel("paged_attention").combine_splits(parts, lse, dtype)


def norm_cases():
    """The residual add and RMSNorm, with a residual and without (the first layer)."""
    norm = kernel("norm")
    cases = []
    for dtype in DTYPES:
        for rows, hidden, with_residual in [(3, 64, True), (5, 80, False), (2, 1000, True)]:
            g = torch.Generator().manual_seed(rows * hidden)
            x, weight = randn(g, rows, hidden, dtype=dtype), 1 + randn(g, hidden, dtype=dtype) / 4
            residual = randn(g, rows, hidden, dtype=dtype) if with_residual else None
            args = (x, residual, weight, 1e-6)
            cases.append((f"{name(dtype)}, {rows} rows of {hidden}, "
                          f"{'with' if with_residual else 'without'} a residual",
                          partial(_norm, norm, *args), partial(reference.add_rms_norm, *args),
                          TOLERANCE[dtype]))
        g = torch.Generator().manual_seed(7)
        x, weight = randn(g, 3, 64, dtype=dtype), 1 + randn(g, 64, dtype=dtype) / 4
        wide = randn(g, 3, 96, dtype=dtype)[:, :64]             # rows 96 apart, not 64
        strided = x.t().contiguous().t()                          # its last axis 3 apart
        for label, args, may_refuse in [("a residual whose rows are 96 apart", (x, wide), False),
                                        ("x's last axis strided", (strided, None), True)]:
            args = (*args, weight, 1e-6)
            cases.append((f"{name(dtype)}, {label}", partial(_norm, norm, *args),
                          partial(reference.add_rms_norm, *args), TOLERANCE[dtype], may_refuse))
    return cases


def _norm(module, *args):
    return module.add_rms_norm(*args)      # the module's: the student's, swapped in


CASES = {"attention": attention_cases, "paged": paged_cases, "combine": combine_cases,
         "norm": norm_cases}

"""The inputs each kernel exercise may meet, drawn whole, small enough for
Triton's interpreter: the engine's kernel wrapper (with the student's function
swapped in) against its naive reference (``kernels/reference.py``).

A draw picks the kernel's shapes (odd head dims, grouped-query heads, lengths
on and off a tile's and a block's edge, block sizes that are no power of two),
its dtype (fp32 and fp16; bf16 only on a GPU, whose interpreter math is wrong),
its values (scores in the hundreds, log-sum-exps far apart, rows of 1e-3 beside
epsilon) and its layout (views into wider tensors; a last axis that is not
contiguous, which a kernel may refuse with ValueError instead). A case is
``Case(kernel, reference, tolerance, may_refuse, readable)``; ``readable`` names
elements no kernel may read (``memory_guard``): a block table's entries past
each sequence's own blocks.
"""
import importlib
from dataclasses import dataclass
from functools import partial

import torch
import triton
import triton.language as tl
from hypothesis import strategies as st

from ...kernels import reference, tile

TOLERANCE = {torch.float32: dict(atol=1e-5, rtol=1e-4), torch.float16: dict(atol=2e-3, rtol=2e-3)}
DTYPES = {"float32": torch.float32, "float16": torch.float16}
KERNEL_EXAMPLES = 24        # drawn cases a kernel check runs, past its named ones


@dataclass
class Case:
    kernel: object                  # () -> the kernel's output(s), the student's function inside
    reference: object               # () -> the naive reference's
    tolerance: dict
    may_refuse: bool = False        # an input the kernel may refuse with ValueError
    readable: tuple = ()            # (tensor, bool mask, words) for memory_guard.bounded
    sign_only: tuple = ()           # outputs compared as > 0 or == 0 only (a running sum's scale is free)


@dataclass(frozen=True)
class KernelSpace:
    draw: object                    # a strategy of plain inputs
    build: object                   # inputs -> Case
    examples: dict
    describe: object
    generated: int = KERNEL_EXAMPLES


def kernel(module: str):
    """A kernel module of minicb.kernels, imported when a check first runs:
    minicb/attention.py has decided on Triton's interpreter by then."""
    return importlib.import_module(f"minicb.kernels.{module}")


def randn(seed, *shape, dtype=torch.float32, scale=1.0):
    return (torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * scale).to(dtype)


def wider(tensor, extra: int):
    """The same values as a view into a tensor whose rows are ``extra`` wider."""
    if not extra:
        return tensor
    big = torch.zeros(*tensor.shape[:-1], tensor.shape[-1] + extra, dtype=tensor.dtype)
    big[..., :tensor.shape[-1]] = tensor
    return big[..., :tensor.shape[-1]]


# ---------------------------------------------------------------- the online softmax's kernels
def attention_space() -> KernelSpace:
    inputs = st.one_of(
        st.builds(dict, kind=st.sampled_from(["contiguous", "padded", "paged"]),
                  dtype=st.sampled_from(list(DTYPES)), head_dim=st.sampled_from([8, 16, 24, 40]),
                  kv_heads=st.integers(1, 2), group=st.integers(1, 3), queries=st.integers(1, 12),
                  context=st.integers(0, 30), scale=st.sampled_from([1.0, 1.0, 30.0]),
                  seed=st.integers(0, 2**16), q_view=st.booleans()),
        st.builds(dict, kind=st.just("blocks"), blocks=st.lists(st.sampled_from(["none", "some", "all"]),
                                                                 min_size=1, max_size=4),
                  dtype=st.sampled_from(list(DTYPES)), shift=st.sampled_from([0.0, 0.0, -150.0, 150.0]),
                  hidden_shift=st.sampled_from([0.0, 150.0]), seed=st.integers(0, 2**16)))
    example = lambda kind, dtype="float32", **d: dict(  # noqa: E731
        dict(kind=kind, dtype=dtype, head_dim=16, kv_heads=2, group=2, scale=1.0, q_view=False), **d)
    examples = {
        "float32, 1 query over 37 keys, 4/2 heads": example("contiguous", queries=1, context=36, seed=1),
        "float32, scores in the hundreds": example("contiguous", queries=5, context=65, scale=40.0, seed=3),
        "float32, a prompt left-padded beside one unpadded": example("padded", queries=12, context=0,
                                                                      seed=2),
        "float16, a prompt, a chunk and decodes over blocks": example("paged", "float16", queries=9,
                                                                       context=12, seed=4),
        "float32, blocks that hide every key, then scores all below -100": dict(
            kind="blocks", blocks=["none", "some", "all"], dtype="float32", shift=-150.0,
            hidden_shift=0.0, seed=5),
        "float32, hidden keys scoring 150 above the visible ones": dict(
            kind="blocks", blocks=["all", "none", "some"], dtype="float32", shift=0.0,
            hidden_shift=150.0, seed=6)}
    return KernelSpace(inputs, attention_case, examples, describe=describe_attention)


def describe_attention(d) -> str:
    if d["kind"] == "blocks":
        return (f"{d['dtype']}, attend_block alone over blocks whose keys each row sees "
                f"{d['blocks']}, scores shifted by {d['shift']:g}, those of blocks no row sees by "
                f"{d['hidden_shift']:g} more (seed {d['seed']})")
    return (f"{d['dtype']}, {d['kind']} attention, {d['queries']} queries, {d['context']} keys before "
            f"them, {d['kv_heads'] * d['group']}/{d['kv_heads']} heads of {d['head_dim']}, q x "
            f"{d['scale']:g}{', q a view of a wider tensor' if d['q_view'] else ''} (seed {d['seed']})")


@triton.jit
def _fold_blocks(Q, K, V, VISIBLE, ACC, L, LSE, num_blocks, scale, PRECISION: tl.constexpr,
                 M: tl.constexpr, N: tl.constexpr, D: tl.constexpr):
    """attend_block alone: a tile of M rows folds num_blocks blocks of N keys, as the
    kernels do, and leaves its running sum and output as they are."""
    rows, cols, dims = tl.arange(0, M), tl.arange(0, N), tl.arange(0, D)
    q = tl.load(Q + rows[:, None] * D + dims[None, :])
    m_i = tl.full([M], float("-inf"), tl.float32)
    l_i = tl.zeros([M], tl.float32)
    acc = tl.zeros([M, D], tl.float32)
    for b in range(num_blocks):
        keys = b * N + cols
        k = tl.load(K + keys[:, None] * D + dims[None, :])
        v = tl.load(V + keys[:, None] * D + dims[None, :])
        visible = tl.load(VISIBLE + rows[:, None] * (num_blocks * N) + keys[None, :]) != 0
        m_i, l_i, acc = tile.attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION)
    tl.store(ACC + rows[:, None] * D + dims[None, :], acc)
    tl.store(L + rows, l_i)
    tl.store(LSE + rows, m_i + tl.log(l_i))          # as split-KV reads it


def folded_blocks(q, k, v, visible, scale):
    """(acc / l_i where a row saw a key, else acc; l_i; m_i + log(l_i) where a row saw
    a key, else 0) after _fold_blocks."""
    acc, l_i = torch.empty(q.shape, dtype=torch.float32), torch.empty(q.shape[0], dtype=torch.float32)
    lse = torch.empty(q.shape[0], dtype=torch.float32)
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    _fold_blocks[(1,)](q, k, v, visible.to(torch.int8), acc, l_i, lse, visible.shape[1] // 16, scale,
                       PRECISION=precision, M=16, N=16, D=16)
    seen = l_i > 0
    return (torch.where(seen[:, None], acc / l_i.clamp(min=1e-30)[:, None], acc), l_i,
            torch.where(seen, lse, torch.zeros_like(lse)))


def naive_blocks(q, k, v, visible, scale):
    """What the contract asks of the tile after its last block: the softmax of every
    visible key's score times its value, and l_i == 0 (with acc 0) for a row that saw none."""
    scores = (q.float() @ k.float().T * scale).masked_fill(~visible, float("-inf"))
    probs = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    seen = visible.any(-1)
    out = probs @ v.float()
    # a row that saw keys: its l_i only needs to be > 0 (it is scaled by the running max);
    # its log-sum-exp is the scores'
    lse = torch.where(seen, torch.logsumexp(scores, -1), torch.zeros(len(seen)))
    return out, torch.where(seen, torch.ones(len(seen)), torch.zeros(len(seen))), lse


def blocks_case(d) -> Case:
    """attend_block over whole blocks that each row sees none, some or all of: a row
    that sees nothing for a while, or ever; scores shifted far from 0."""
    dtype, seed, n = DTYPES[d["dtype"]], d["seed"], len(d["blocks"])
    scale = 16 ** -0.5
    # rows alike (a common direction, a little noise), so that one shift moves every
    # row's scores: keys get shift / scale along that direction
    base = torch.randn(16, generator=torch.Generator().manual_seed(seed))
    q = (base + 0.1 * randn(seed + 1, 16, 16)).to(dtype)
    along = base / base.norm() ** 2 / scale              # a key moved by this scores 1 higher
    hidden = torch.tensor([b == "none" for b in d["blocks"]]).repeat_interleave(16)
    k = randn(seed + 2, 16 * n, 16) + (d["shift"] + d["hidden_shift"] * hidden[:, None]) * along
    k, v = k.to(dtype), randn(seed + 3, 16 * n, 16, dtype=dtype)
    g = torch.Generator().manual_seed(seed + 4)
    visible = torch.cat([torch.zeros(16, 16, dtype=torch.bool) if b == "none" else
                         torch.ones(16, 16, dtype=torch.bool) if b == "all" else
                         torch.rand(16, 16, generator=g) < 0.5 for b in d["blocks"]], 1)
    visible[:2] = False                                   # two rows never see a key
    args = (q, k, v, visible, scale)
    return Case(lambda: folded_blocks(*args), lambda: naive_blocks(*args),
                dict(TOLERANCE[dtype], rtol=2e-3 if dtype == torch.float32 else 1e-2),
                sign_only=(1,))


def attention_case(d) -> Case:
    if d["kind"] == "blocks":
        return blocks_case(d)
    dtype, heads, kv, dim = DTYPES[d["dtype"]], d["kv_heads"] * d["group"], d["kv_heads"], d["head_dim"]
    queries, context, seed = d["queries"], d["queries"] + d["context"], d["seed"]
    q = randn(seed, queries, heads, dim, dtype=dtype, scale=d["scale"])
    if d["q_view"]:
        q = torch.cat([q, torch.zeros_like(q)], 1)[:, :heads]     # its tokens twice as far apart
    tolerance = TOLERANCE[dtype]
    if d["kind"] == "contiguous":
        k, v = (randn(seed + i, context + 3, kv, dim, dtype=dtype) for i in (1, 2))
        args = (q, k, v, context)
        return Case(partial(kernel("contiguous_attention").contiguous_attention, *args),
                    partial(reference.contiguous_attention, *args), tolerance)
    if d["kind"] == "padded":
        # row 0 left-padded by up to queries - 1 (its padding rows see no key), row 1 not
        batch = torch.stack([q, randn(seed + 3, queries, heads, dim, dtype=dtype)])
        k, v = (randn(seed + i, 2, queries, kv, dim, dtype=dtype) for i in (1, 2))
        pad = torch.tensor([min(queries - 1, 1 + seed % queries), 0])
        args = (batch, k, v, torch.tensor([queries, queries]), pad)
        return Case(partial(kernel("padded_attention").padded_attention, *args),
                    partial(reference.padded_attention, *args), tolerance)
    args = paged_inputs(seed, [queries, 1], [context, context // 2 + 1], heads, kv, 4, dim, dtype)
    return paged_case(args, None, tolerance)


# ---------------------------------------------------------------- the paged kernel's lookup
def paged_inputs(seed, query_lens, context_lens, heads, kv_heads, block_size, dim, dtype):
    """One step over a paged cache: block tables exactly as wide as the widest
    sequence needs, their blocks shuffled through a pool with a few spare."""
    widest = max(-(-c // block_size) for c in context_lens)
    num_blocks = len(context_lens) * widest + 3
    g = torch.Generator().manual_seed(seed)
    tables = torch.randperm(num_blocks, generator=g)[:len(context_lens) * widest]
    tables = tables.view(len(context_lens), widest).to(torch.int32).clone()
    cu_seqlens = torch.tensor([0, *torch.tensor(query_lens).cumsum(0).tolist()], dtype=torch.int32)
    seq_lens = torch.tensor(context_lens, dtype=torch.int32)
    q = randn(seed + 1, sum(query_lens), heads, dim, dtype=dtype)
    k, v = (randn(seed + i, num_blocks * block_size, kv_heads, dim, dtype=dtype) for i in (2, 3))
    return q, k, v, cu_seqlens, seq_lens, tables, block_size


def paged_case(args, num_splits, tolerance) -> Case:
    """The paged kernel on ``args``, with each table's entries past its sequence's
    blocks unreadable."""
    tables, seq_lens, block_size = args[5], args[4], args[6]
    blocks = (seq_lens.long() + block_size - 1) // block_size
    allowed = torch.arange(tables.shape[1])[None, :] < blocks[:, None]
    call = partial(kernel("paged_attention").paged_attention, *args, None, num_splits)
    return Case(call, partial(reference.paged_attention, *args), tolerance,
                readable=((tables, allowed, "a block table entry past that sequence's blocks"),))


def paged_space() -> KernelSpace:
    sequence = st.integers(1, 6).flatmap(lambda n: st.tuples(st.just(n), st.integers(n, 40)))
    inputs = st.builds(dict, sequences=st.lists(sequence, min_size=1, max_size=4),
                       block_size=st.sampled_from([1, 2, 3, 4, 5, 8, 12, 16]), dtype=st.sampled_from(list(DTYPES)),
                       group=st.integers(1, 3), splits=st.sampled_from([None, None, 2, 3]), seed=st.integers(0, 2**16))
    examples = {f"float32, blocks of {size}, a prompt, a chunk and decodes": dict(
        sequences=[(9, 9), (1, 40), (3, 21), (1, 16)], block_size=size, dtype="float32", group=2, splits=None,
        seed=size) for size in (1, 4, 16)}
    examples["float32, decodes split 3 ways, the last sequence ending on a block's edge"] = dict(
        sequences=[(1, 13), (1, 5), (1, 32)], block_size=4, dtype="float32", group=2, splits=3, seed=5)
    return KernelSpace(inputs, paged_rows_case, examples, describe=lambda d: (
        f"{d['dtype']}, blocks of {d['block_size']}, sequences (new, context) {d['sequences']}"
        f"{', decodes split %d ways' % d['splits'] if d['splits'] and split(d) else ''} (seed {d['seed']})"))


def split(d) -> bool:
    return all(n == 1 for n, _ in d["sequences"])


def paged_rows_case(d) -> Case:
    dtype = DTYPES[d["dtype"]]
    args = paged_inputs(d["seed"], [n for n, _ in d["sequences"]], [c for _, c in d["sequences"]],
                        2 * d["group"], 2, d["block_size"], 16, dtype)
    return paged_case(args, d["splits"] if split(d) else None, TOLERANCE[dtype])


# ---------------------------------------------------------------- split-KV's merge
def combine_space() -> KernelSpace:
    inputs = st.builds(dict, splits=st.integers(1, 9), tokens=st.integers(1, 5), heads=st.integers(1, 3),
                       head_dim=st.sampled_from([8, 16, 24]), spread=st.sampled_from([1.0, 4.0, 100.0]),
                       offset=st.sampled_from([0.0, 95.0, -120.0]), empty=st.sampled_from([0.0, 0.3, 1.0]),
                       dtype=st.sampled_from(list(DTYPES)),
                       layout=st.sampled_from(["contiguous", "rows apart", "tokens and heads swapped",
                                               "last axis strided"]), seed=st.integers(0, 2**16))
    examples = {f"float32, {s} ranges, some empty": dict(splits=s, tokens=5, heads=3, head_dim=16, spread=4.0,
                                                        offset=0.0, empty=0.3, dtype="float32",
                                                        layout="contiguous", seed=s) for s in (1, 3, 8)}
    examples["float32, one range, some rows it never saw"] = dict(
        splits=1, tokens=4, heads=2, head_dim=16, spread=1.0, offset=0.0, empty=0.5, dtype="float32",
        layout="contiguous", seed=11)
    examples["float32, log-sum-exps near 100"] = dict(splits=3, tokens=2, heads=2, head_dim=16, spread=1.0,
                                                      offset=95.0, empty=0.0, dtype="float32", layout="contiguous",
                                                      seed=7)
    examples["float16 out, parts whose last axis is strided"] = dict(
        splits=3, tokens=5, heads=3, head_dim=16, spread=1.0, offset=0.0, empty=0.0, dtype="float16",
        layout="last axis strided", seed=99)
    return KernelSpace(inputs, combine_case, examples, describe=lambda d: (
        f"{d['dtype']} out, {d['splits']} ranges x {d['tokens']} tokens x {d['heads']} heads of {d['head_dim']}, "
        f"log-sum-exps {d['offset']:g} + N(0, {d['spread']:g}), {d['empty']:.0%} of ranges empty, "
        f"{d['layout']} (seed {d['seed']})"))


def combine_case(d) -> Case:
    shape = (d["splits"], d["tokens"], d["heads"])
    parts = randn(d["seed"], *shape, d["head_dim"])
    lse = randn(d["seed"] + 1, *shape, scale=d["spread"]) + d["offset"]
    empty = torch.rand(*shape, generator=torch.Generator().manual_seed(d["seed"] + 2)) < d["empty"]
    empty[:, 0] = d["empty"] > 0                          # token 0: no range saw a key
    # a range that saw no key says so in its lse alone: its parts may hold anything finite
    lse[empty], parts[empty] = float("-inf"), 7.0
    if d["layout"] == "rows apart":
        parts = wider(parts, 5)
    elif d["layout"] == "tokens and heads swapped":             # in memory; each row's d stays contiguous
        parts = parts.transpose(1, 2).contiguous().transpose(1, 2)
    elif d["layout"] == "last axis strided":
        parts = torch.stack([parts, parts], -1).flatten(-2)[..., ::2]
    dtype = DTYPES[d["dtype"]]
    call = lambda: kernel("paged_attention").combine_splits(parts, lse, dtype)  # noqa: E731 (the student's, swapped in)
    return Case(call, partial(reference.combine_splits, parts, lse, dtype), TOLERANCE[dtype],
                may_refuse=d["layout"] == "last axis strided")


# ---------------------------------------------------------------- the fused residual add and RMSNorm
def norm_space() -> KernelSpace:
    inputs = st.builds(dict, rows=st.integers(1, 5), hidden=st.integers(1, 300), residual=st.booleans(),
                       dtype=st.sampled_from(list(DTYPES)), scale=st.sampled_from([1.0, 1.0, 1e-3, 300.0]),
                       eps=st.sampled_from([1e-6, 1e-5, 1e-2]),
                       layout=st.sampled_from(["contiguous", "x's rows apart", "residual's rows apart",
                                               "x's last axis strided"]), seed=st.integers(0, 2**16))
    example = lambda rows, hidden, residual, dtype="float32", layout="contiguous", scale=1.0, eps=1e-6: dict(  # noqa: E731
        rows=rows, hidden=hidden, residual=residual, dtype=dtype, scale=scale, eps=eps, layout=layout, seed=rows)
    examples = {"float32, 3 rows of 64, with a residual": example(3, 64, True),
                "float16, 5 rows of 80, without a residual": example(5, 80, False, "float16"),
                "float32, 2 rows of 1000": example(2, 1000, True),
                "float32, rows of 1e-3 beside an epsilon of 1e-2": example(3, 48, False, scale=1e-3, eps=1e-2),
                "float32, a residual whose rows are 96 apart": example(3, 64, True, layout="residual's rows apart"),
                "float16, x's last axis strided": example(3, 64, False, "float16", "x's last axis strided")}
    return KernelSpace(inputs, norm_case, examples, describe=lambda d: (
        f"{d['dtype']}, {d['rows']} rows of {d['hidden']}, {'with' if d['residual'] else 'without'} a residual, "
        f"values x {d['scale']:g}, eps {d['eps']:g}, {d['layout']} (seed {d['seed']})"))


def norm_case(d) -> Case:
    dtype, seed, shape = DTYPES[d["dtype"]], d["seed"], (d["rows"], d["hidden"])
    x = randn(seed, *shape, dtype=dtype, scale=d["scale"])
    residual = randn(seed + 1, *shape, dtype=dtype, scale=d["scale"]) if d["residual"] else None
    weight = (1 + randn(seed + 2, d["hidden"]) / 4).to(dtype)
    if d["layout"] == "x's rows apart":
        x = wider(x, 7)
    elif d["layout"] == "residual's rows apart" and residual is not None:
        residual = wider(residual, 32)
    elif d["layout"] == "x's last axis strided":
        x = x.t().contiguous().t()
    args = (x, residual, weight, d["eps"])
    call = lambda: kernel("norm").add_rms_norm(*args)       # noqa: E731 (the student's, swapped in)
    # It rounds where the plain model rounds: in fp16 all but a few elements (where a sum's
    # order moves a rounding) equal the reference's to the last bit.
    tolerance = dict(TOLERANCE[dtype], exact=0.95) if dtype == torch.float16 else TOLERANCE[dtype]
    return Case(call, partial(reference.add_rms_norm, *args), tolerance,
                may_refuse=d["layout"] == "x's last axis strided" and x.stride(-1) != 1)


SPACES = {"attention": attention_space, "paged": paged_space, "combine": combine_space, "norm": norm_space}

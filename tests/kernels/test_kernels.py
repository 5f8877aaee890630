"""Every Triton attention kernel equals its naive reference (kernels/reference.py).

Covers kernels/contiguous_attention.py (stage 1), kernels/padded_attention.py
(stage 2), kernels/ragged_attention.py and kernels/kv_write.py (stage 4), which
share kernels/online_softmax.py. On a CPU they run through
Triton's interpreter in fp32 and fp16; bf16 runs only on a GPU, because the
interpreter's bf16 arithmetic is not faithful.
"""
import os
import subprocess
import sys

import pytest
import torch

from minicb.kernels import reference, sdpa
from minicb.kernels.contiguous_attention import contiguous_attention
from minicb.kernels.kv_write import store_kv_cache
from minicb.kernels.padded_attention import padded_attention
from minicb.kernels.ragged_attention import ragged_attention
from minicb.kernels.traffic import attention_bytes

from ..conftest import DEVICE

DTYPES = [torch.float32, torch.float16] + ([torch.bfloat16] if DEVICE == "cuda" else [])
TOLERANCE = {torch.float32: dict(atol=1e-5, rtol=1e-4), torch.float16: dict(atol=2e-3, rtol=2e-3),
             torch.bfloat16: dict(atol=2e-2, rtol=2e-2)}
# (query heads, kv heads): GQA ratios 1, 2, 4 and 8
HEADS = [(4, 4), (4, 2), (8, 2), (8, 1)]


def rand(*shape, dtype):
    return torch.randn(*shape, dtype=dtype, device=DEVICE)


# What the contiguous kernel (stage 1) is checked on: head dims, and (new tokens, context length)
CONTIGUOUS_HEAD_DIMS = [64, 128, 48]
CONTIGUOUS_SHAPES = [
    (1, 1),      # a one-token prompt
    (7, 7),      # prefill shorter than one key block
    (33, 33),    # prefill across two key blocks
    (1, 40),     # decode: one new token over a long context
    (5, 40),     # new tokens after a cached prefix
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("head_dim", CONTIGUOUS_HEAD_DIMS)
@pytest.mark.parametrize("heads", HEADS, ids=lambda h: f"gqa{h[0] // h[1]}")
@pytest.mark.parametrize("num_queries,context_len", CONTIGUOUS_SHAPES)
def test_contiguous_attention_matches_reference(dtype, head_dim, heads, num_queries, context_len):
    torch.manual_seed(0)
    num_heads, num_kv_heads = heads
    q = rand(num_queries, num_heads, head_dim, dtype=dtype)
    k_cache = rand(48, num_kv_heads, head_dim, dtype=dtype)     # capacity beyond context_len
    v_cache = rand(48, num_kv_heads, head_dim, dtype=dtype)
    out = contiguous_attention(q, k_cache, v_cache, context_len)
    expected = reference.contiguous_attention(q, k_cache, v_cache, context_len)
    torch.testing.assert_close(out, expected, **TOLERANCE[dtype])


# What the padded kernel (stage 2) is checked on: head dims
PADDED_HEAD_DIMS = [64, 128, 80]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("head_dim", PADDED_HEAD_DIMS)
@pytest.mark.parametrize("heads", HEADS, ids=lambda h: f"gqa{h[0] // h[1]}")
@pytest.mark.parametrize("phase", ["prefill", "decode"])
def test_padded_attention_matches_reference(dtype, head_dim, heads, phase):
    torch.manual_seed(1)
    num_heads, num_kv_heads = heads
    prompt_lens = [33, 1, 7]                            # batch 3, left-padded to 33
    pad_lens = torch.tensor([33 - n for n in prompt_lens], device=DEVICE)
    k_cache = rand(3, 45, num_kv_heads, head_dim, dtype=dtype)
    v_cache = rand(3, 45, num_kv_heads, head_dim, dtype=dtype)
    num_queries, context_len = (33, 33) if phase == "prefill" else (1, 38)
    q = rand(3, num_queries, num_heads, head_dim, dtype=dtype)
    seq_lens = torch.full((3,), context_len, device=DEVICE)
    out = padded_attention(q, k_cache, v_cache, seq_lens, pad_lens)
    expected = reference.padded_attention(q, k_cache, v_cache, seq_lens, pad_lens)
    torch.testing.assert_close(out, expected, **TOLERANCE[dtype])


@pytest.mark.parametrize("backend", ["triton", "sdpa"])
def test_padded_rows_may_end_at_different_columns_in_a_wider_cache(backend):
    """What a CUDA graph's padding rows need: each row reads its own end
    (seq_lens) from memory, and the cache may hold more rows than the batch."""
    torch.manual_seed(2)
    attention = padded_attention if backend == "triton" else sdpa.padded_attention
    k_cache, v_cache = rand(5, 20, 2, 64, dtype=torch.float32), rand(5, 20, 2, 64, dtype=torch.float32)
    q = rand(3, 1, 4, 64, dtype=torch.float32)
    seq_lens = torch.tensor([17, 1, 9], device=DEVICE)
    pad_lens = torch.tensor([3, 0, 8], device=DEVICE)
    out = attention(q, k_cache, v_cache, seq_lens, pad_lens)
    expected = reference.padded_attention(q, k_cache, v_cache, seq_lens, pad_lens)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-4)
    # row 2 sees one key (column 8): its output is that key's value, per KV head
    torch.testing.assert_close(out[2, 0], v_cache[2, 8].repeat_interleave(2, dim=0), atol=1e-5, rtol=1e-5)


def test_padding_query_rows_are_zero():
    """A query that is itself padding sees no key; both versions give zeros, not nan."""
    q = rand(2, 6, 2, 64, dtype=torch.float32)
    k_cache = rand(2, 6, 2, 64, dtype=torch.float32)
    pad_lens = torch.tensor([0, 4], device=DEVICE)
    out = padded_attention(q, k_cache, k_cache.clone(), torch.full((2,), 6, device=DEVICE), pad_lens)
    assert torch.isfinite(out).all()
    assert out[1, :4].abs().max() == 0
    assert out[1, 4:].abs().max() > 0


def test_kernels_reject_bad_shapes():
    q = rand(3, 6, 64, dtype=torch.float32)
    k_cache = rand(10, 4, 64, dtype=torch.float32)
    with pytest.raises(ValueError, match="6 query heads is not a multiple of 4 KV heads"):
        contiguous_attention(q, k_cache, k_cache, 3)
    with pytest.raises(ValueError, match="context_len 11"):
        contiguous_attention(rand(3, 4, 64, dtype=torch.float32), k_cache, k_cache, 11)
    with pytest.raises(ValueError, match="head_dim 512"):
        big = rand(2, 2, 512, dtype=torch.float32)
        contiguous_attention(big, big, big, 2)
    with pytest.raises(ValueError, match="pad_lens must have shape"):
        qb = rand(2, 1, 4, 64, dtype=torch.float32)
        kb = rand(2, 8, 4, 64, dtype=torch.float32)
        padded_attention(qb, kb, kb, torch.full((2,), 4, device=DEVICE),
                         torch.zeros(3, dtype=torch.int32, device=DEVICE))
    with pytest.raises(ValueError, match="seq_lens must have shape"):
        padded_attention(qb, kb, kb, torch.full((3,), 4, device=DEVICE),
                         torch.zeros(2, dtype=torch.int32, device=DEVICE))


# A step of continuous batching: two prompts being prefilled (33 and 7 tokens),
# three requests decoding one token over contexts of 40, 5 and 1 tokens, and
# one prompt of 17 tokens. Each owns a 64-row region of the cache, in shuffled order.
RAGGED = dict(query_lens=[33, 1, 7, 1, 17, 1], context_lens=[33, 40, 7, 5, 17, 1],
              starts=[320, 0, 128, 64, 192, 256])


def ragged_inputs(num_heads, num_kv_heads, head_dim, dtype):
    query_lens = RAGGED["query_lens"]
    cu_seqlens_q = torch.tensor([0] + torch.tensor(query_lens).cumsum(0).tolist(), device=DEVICE,
                                dtype=torch.int32)
    q = rand(sum(query_lens), num_heads, head_dim, dtype=dtype)
    k_cache = rand(384, num_kv_heads, head_dim, dtype=dtype)
    v_cache = rand(384, num_kv_heads, head_dim, dtype=dtype)
    meta = [torch.tensor(RAGGED[k], device=DEVICE, dtype=torch.int32) for k in ("context_lens", "starts")]
    return q, k_cache, v_cache, cu_seqlens_q, *meta


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("heads", HEADS, ids=lambda h: f"gqa{h[0] // h[1]}")
def test_ragged_attention_matches_reference(dtype, head_dim, heads):
    torch.manual_seed(2)
    q, k_cache, v_cache, cu_seqlens_q, seq_lens, seq_starts = ragged_inputs(*heads, head_dim, dtype)
    out = ragged_attention(q, k_cache, v_cache, cu_seqlens_q, seq_lens, seq_starts, max_query_len=33)
    expected = reference.ragged_attention(q, k_cache, v_cache, cu_seqlens_q, seq_lens, seq_starts)
    torch.testing.assert_close(out, expected, **TOLERANCE[dtype])


def test_ragged_attention_finds_max_query_len_itself():
    q, k_cache, v_cache, cu_seqlens_q, seq_lens, seq_starts = ragged_inputs(4, 2, 64, torch.float32)
    out = ragged_attention(q, k_cache, v_cache, cu_seqlens_q, seq_lens, seq_starts)
    expected = reference.ragged_attention(q, k_cache, v_cache, cu_seqlens_q, seq_lens, seq_starts)
    torch.testing.assert_close(out, expected, **TOLERANCE[torch.float32])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kv_heads,head_dim", [(1, 64), (2, 128), (4, 48)])
def test_store_kv_cache_matches_reference(dtype, kv_heads, head_dim):
    torch.manual_seed(3)
    k, v = rand(11, kv_heads, head_dim, dtype=dtype), rand(11, kv_heads, head_dim, dtype=dtype)
    slot_mapping = torch.randperm(40, device=DEVICE)[:11]
    slot_mapping[4] = -1                                     # a token that is not stored
    caches = [rand(40, kv_heads, head_dim, dtype=dtype) for _ in range(2)]
    ours, theirs = [c.clone() for c in caches], [c.clone() for c in caches]
    store_kv_cache(k, v, *ours, slot_mapping)
    reference.store_kv_cache(k, v, *theirs, slot_mapping)
    assert torch.equal(ours[0], theirs[0]) and torch.equal(ours[1], theirs[1])
    assert not torch.equal(ours[0], caches[0])               # it did write
    untouched = torch.ones(40, dtype=torch.bool, device=DEVICE)
    untouched[slot_mapping[slot_mapping >= 0]] = False
    assert torch.equal(ours[0][untouched], caches[0][untouched])


def test_store_kv_cache_rejects_mismatched_shapes():
    k = rand(3, 2, 64, dtype=torch.float32)
    cache = rand(10, 4, 64, dtype=torch.float32)
    with pytest.raises(ValueError, match="does not fit the cache"):
        store_kv_cache(k, k, cache, cache.clone(), torch.arange(3, device=DEVICE))


def test_lengths_that_change_every_step_are_not_specialized():
    # Under the interpreter do_not_specialize is never read, and a misspelt name
    # would only fail on a GPU: compile-mode kernels are checked in a fresh process.
    code = ("import minicb.kernels.contiguous_attention as c, minicb.kernels.padded_attention as d, "
            "minicb.kernels.paged_attention as p\n"
            "for k in (c._contiguous_attention_kernel, d._padded_attention_kernel, p._paged_attention_kernel, "
            "p._paged_attention_split_kernel, p._combine_splits_kernel):\n"
            "    print(sorted(x.name for x in k.params if x.do_not_specialize))")
    env = {**os.environ, "TRITON_INTERPRET": "0"}
    lines = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           check=True).stdout.splitlines()
    assert lines == [str(sorted(names)) for names in (
        ["num_queries"], ["num_queries", "stride_ob", "stride_qb"],
        ["stride_table"], ["split_len", "stride_lse_part", "stride_part", "stride_table"],
        ["num_splits", "stride_lse_part", "stride_part"])]


def test_packed_decode_reads_each_kv_head_once():
    """Llama-3.1-8B's attention (32 query heads, 8 KV heads, d 128), bf16: a
    decode step of 64 sequences x 4,096 tokens in blocks of 16."""
    args = ([1] * 64, [4096] * 64, 32, 8, 128, torch.bfloat16, 16)
    packed, per_head = attention_bytes(*args), attention_bytes(*args, pack_heads=False)
    kv = 8 * 64 * 4096 * 2 * 128 * 2                 # K and V of every token, once per KV head: 1.07 GB
    tables = 64 * (4096 // 16) * 4                   # one int32 per block
    q_and_out = 2 * 64 * 32 * 128 * 2
    assert packed["required"] == per_head["required"] == kv + tables + q_and_out
    assert packed["grid"] == kv + 8 * tables + q_and_out          # each KV head's program reads the table
    assert per_head["grid"] == 4 * kv + 32 * tables + q_and_out   # each KV head read by 4 programs
    assert round(kv / 1e9, 2) == 1.07 and round(per_head["grid"] / 1e9, 2) == 4.30


def test_bytes_model_follows_causal_tiles_and_splits():
    # 64 new tokens over a 70-token context, fp32, no GQA: tiles of 32 queries (fp32's
    # tallest) walking keys in blocks of 16. The first tile's last query sees key 37, so it
    # reads the blocks up to key 47: 48 keys. The second tile reads all 70.
    kv_token, q = 2 * 64 * 4, 64 * 4 * 64 * 4
    out = attention_bytes([64], [70], 4, 4, 64, torch.float32)
    assert out == dict(required=2 * q + 4 * 70 * kv_token, grid=2 * q + 4 * (48 + 70) * kv_token)
    # Three splits load the query three times, and write and read back fp32 partial outputs.
    whole, split = (attention_bytes([1], [40], 4, 4, 64, torch.float32, num_splits=n)["grid"] for n in (1, 3))
    assert split - whole == 2 * (4 * 64 * 4) + 2 * 3 * 4 * (64 + 1) * 4


def sparse_cache(folder, name, rows, kv_heads, head_dim):
    """A [rows, kv_heads, head_dim] fp16 cache mapped from a sparse file: only the
    pages a test writes or a kernel reads take memory, so it can pass 2**32 values."""
    path = folder / name
    with open(path, "wb") as f:
        f.truncate(rows * kv_heads * head_dim * 2)
    return torch.from_file(str(path), shared=True, size=rows * kv_heads * head_dim,
                           dtype=torch.float16).view(rows, kv_heads, head_dim)


@pytest.mark.skipif(DEVICE == "cuda", reason="a CPU test of the interpreter's 32-bit offsets")
@pytest.mark.parametrize("kernel", ["ragged", "paged", "paged, split-KV"])
def test_a_cache_row_past_2_to_the_32_values_is_read_where_it_is(tmp_path, kernel):
    """Offsets into the cache are 64-bit: row r of a [rows, KVH, d] cache starts r * KVH * d
    values in, and in 32 bits a row 2**32 values in would read row 0 instead."""
    from minicb.kernels.paged_attention import paged_attention

    kv_heads, head_dim, block = 2, 64, 16
    far_row = 2**32 // (kv_heads * head_dim)                 # wraps to row 0 in 32 bits
    k, v = (sparse_cache(tmp_path, name, far_row + block, kv_heads, head_dim) for name in "kv")
    torch.manual_seed(0)
    for cache in (k, v):                                     # different values near and far
        cache[:block] = torch.randn(block, kv_heads, head_dim, dtype=torch.float16)
        cache[far_row:] = torch.randn(block, kv_heads, head_dim, dtype=torch.float16)
    q = torch.randn(1, 4, head_dim, dtype=torch.float16)
    cu, lens = torch.tensor([0, 1], dtype=torch.int32), torch.tensor([block], dtype=torch.int32)
    if kernel == "ragged":
        starts = torch.tensor([far_row], dtype=torch.int32)
        out = ragged_attention(q, k, v, cu, lens, starts, 1)
        expected = reference.ragged_attention(q, k, v, cu, lens, starts, 1)
    else:
        tables = torch.tensor([[far_row // block]], dtype=torch.int32)
        out = paged_attention(q, k, v, cu, lens, tables, block, 1, num_splits=2 if "split" in kernel else 1)
        expected = reference.paged_attention(q, k, v, cu, lens, tables, block, 1)
    torch.testing.assert_close(out, expected, **TOLERANCE[torch.float16])

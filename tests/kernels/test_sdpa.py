"""The "sdpa" backend (PyTorch's fused attention, the default without a GPU)
against the naive reference, on the same inputs as the Triton kernels' tests."""
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from minicb.kernels import reference, sdpa

from .test_kernels import DEVICE, DTYPES, HEADS, RAGGED, TOLERANCE, ragged_inputs, rand
from ..stages.test_5_paged import PAGED_SEQS, paged_inputs


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("heads", HEADS, ids=lambda h: f"gqa{h[0] // h[1]}")
@pytest.mark.parametrize("num_queries,context_len", [(1, 1), (7, 7), (1, 40), (5, 40)])
def test_contiguous(dtype, heads, num_queries, context_len):
    torch.manual_seed(0)
    q = rand(num_queries, heads[0], 64, dtype=dtype)
    k_cache, v_cache = rand(48, heads[1], 64, dtype=dtype), rand(48, heads[1], 64, dtype=dtype)
    torch.testing.assert_close(sdpa.contiguous_attention(q, k_cache, v_cache, context_len),
                               reference.contiguous_attention(q, k_cache, v_cache, context_len), **TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("heads", HEADS, ids=lambda h: f"gqa{h[0] // h[1]}")
@pytest.mark.parametrize("num_queries,context_len", [(33, 33), (1, 38)])
def test_padded_with_padding_rows_zero(dtype, heads, num_queries, context_len):
    torch.manual_seed(1)
    pad_lens = torch.tensor([0, 32, 26], device=DEVICE)            # prompts of 33, 1 and 7 tokens
    k_cache, v_cache = rand(3, 45, heads[1], 80, dtype=dtype), rand(3, 45, heads[1], 80, dtype=dtype)
    q = rand(3, num_queries, heads[0], 80, dtype=dtype)
    seq_lens = torch.full((3,), context_len, device=DEVICE)
    out = sdpa.padded_attention(q, k_cache, v_cache, seq_lens, pad_lens)
    torch.testing.assert_close(out, reference.padded_attention(q, k_cache, v_cache, seq_lens, pad_lens),
                               **TOLERANCE[dtype])
    if num_queries > 1:
        assert out[1, :32].abs().max() == 0 and out[1, 32:].abs().max() > 0


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("heads", HEADS, ids=lambda h: f"gqa{h[0] // h[1]}")
def test_ragged_mixed_step(dtype, heads):
    """Prefills, chunks and decodes in one step: one call for the decodes, one for the rest."""
    torch.manual_seed(2)
    args = ragged_inputs(*heads, 64, dtype)
    torch.testing.assert_close(sdpa.ragged_attention(*args, max_query_len=max(RAGGED["query_lens"])),
                               reference.ragged_attention(*args), **TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("block_size", [1, 16])
@pytest.mark.parametrize("heads", HEADS, ids=lambda h: f"gqa{h[0] // h[1]}")
def test_paged_mixed_step(dtype, block_size, heads):
    torch.manual_seed(4)
    args = paged_inputs(*zip(*PAGED_SEQS), *heads, 64, dtype, block_size)
    torch.testing.assert_close(sdpa.paged_attention(*args), reference.paged_attention(*args), **TOLERANCE[dtype])


@settings(max_examples=40, deadline=None)
@given(seqs=st.lists(st.tuples(st.integers(1, 20), st.integers(0, 30)), min_size=1, max_size=6),
       block_size=st.sampled_from([1, 4, 16]), heads=st.sampled_from(HEADS))
def test_paged_any_step(seqs, block_size, heads):
    """Any mix: sequence s brings q new tokens over q + cached of context."""
    query_lens, context_lens = [q for q, _ in seqs], [q + cached for q, cached in seqs]
    args = paged_inputs(query_lens, context_lens, *heads, 32, torch.float32, block_size)
    torch.testing.assert_close(sdpa.paged_attention(*args), reference.paged_attention(*args),
                               **TOLERANCE[torch.float32])

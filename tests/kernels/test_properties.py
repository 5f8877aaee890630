"""Property tests (hypothesis): random shapes and distributions, not hand-picked ones."""
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from minicb.kernels import reference
from minicb.kernels.padded_attention import padded_attention
from minicb.sampling import keep_top_p

from ..conftest import DEVICE


@settings(max_examples=25, deadline=None)
@given(prompt_lens=st.lists(st.integers(1, 40), min_size=1, max_size=4),
       group=st.sampled_from([1, 2, 4]), head_dim=st.sampled_from([16, 48, 64]),
       decode_steps=st.integers(0, 5), seed=st.integers(0, 2**16))
def test_padded_kernel_matches_reference_on_random_batches(prompt_lens, group, head_dim, decode_steps, seed):
    """Any batch of left-padded prompts, at prefill (decode_steps 0) or after some decode steps."""
    gen = torch.Generator().manual_seed(seed)
    longest, batch, kv_heads = max(prompt_lens), len(prompt_lens), 2
    pad_lens = torch.tensor([longest - n for n in prompt_lens], device=DEVICE)
    capacity = longest + decode_steps + 3
    k_cache, v_cache = (torch.randn(batch, capacity, kv_heads, head_dim, generator=gen).to(DEVICE)
                        for _ in range(2))
    num_queries = longest if decode_steps == 0 else 1
    q = torch.randn(batch, num_queries, kv_heads * group, head_dim, generator=gen).to(DEVICE)
    seq_lens = torch.full((batch,), longest + decode_steps, device=DEVICE)
    out = padded_attention(q, k_cache, v_cache, seq_lens, pad_lens)
    torch.testing.assert_close(out, reference.padded_attention(q, k_cache, v_cache, seq_lens, pad_lens),
                               atol=1e-5, rtol=1e-4)


@given(probs=st.lists(st.floats(0.01, 1.0), min_size=2, max_size=20), top_p=st.floats(0.05, 1.0))
def test_top_p_keeps_the_most_probable_tokens_reaching_p(probs, top_p):
    p = torch.tensor(probs, dtype=torch.float64)
    p = p / p.sum()
    kept = keep_top_p(p[None], torch.tensor([top_p], dtype=torch.float64))[0]
    kept_mask = kept > 0
    torch.testing.assert_close(kept.sum(), torch.tensor(1.0, dtype=torch.float64))
    assert p[kept_mask].sum() >= top_p - 1e-9                  # enough mass kept
    if (~kept_mask).any():                                       # nothing dropped beats anything kept
        assert p[~kept_mask].max() <= p[kept_mask].min()
    smallest_kept = p[kept_mask].min()                           # and no kept token was superfluous
    assert p[kept_mask].sum() - smallest_kept < top_p + 1e-9

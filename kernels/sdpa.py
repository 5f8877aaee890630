"""PyTorch's fused attention: minicb's default where there is no GPU.

The same functions with the same signatures as ``reference.py`` and the
Triton kernels, built on ``torch.nn.functional.scaled_dot_product_attention``
(SDPA), which on a CPU runs a fused flash-attention loop in C++: no score
matrix is materialized and the GQA heads are shared, not copied.

Where the reference loops over sequences in Python, these functions gather
every sequence's keys into one padded batch and make one SDPA call for it. On
a CPU a step is many small operations, and each pays for waking the thread
pool; one large call pays once. Decodes (one query each) and prefill chunks
go in separate calls, so that one long prompt does not pad every decode in
the step to its length.

``tests/kernels/test_kernels.py`` checks every function against the reference.
"""
import torch
import torch.nn.functional as F

from .reference import causal_visibility, store_kv_cache  # noqa: F401 (the KV write is one indexed copy already)


# ANCHOR: sdpa_attend
def attend(q, k, v, visible):
    """q [B, Lq, H, d], k/v [B, Lk, KVH, d], visible [B, Lq, Lk] bool -> [B, Lq, H, d].

    A query row that sees no key at all (a padding row) returns zeros."""
    out = F.scaled_dot_product_attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
        attn_mask=visible[:, None], enable_gqa=True)
    # some GPU kernels give nan for a row with no key
    return out.transpose(1, 2).nan_to_num(0.0)
# ANCHOR_END: sdpa_attend


def contiguous_attention(q, k_cache, v_cache, context_len):
    """Stage 1: q [Lq, H, d], the newest tokens of one sequence in k/v_cache[:context_len]."""
    context_len = int(context_len)        # (a tensor's: read on the host)
    visible = causal_visibility(q.shape[0], context_len, q.device)
    return attend(q[None], k_cache[None, :context_len], v_cache[None, :context_len], visible[None])[0]


def padded_attention(q, k_cache, v_cache, seq_lens, pad_lens):
    """Stage 2: a left-padded batch, q [B, Lq, H, d], caches [B', T, KVH, d]; one call for all rows."""
    batch, num_queries = q.shape[:2]
    longest = int(seq_lens.max())
    columns = torch.arange(longest, device=q.device)
    # each query's own column: the last num_queries of its row's context
    query_columns = seq_lens[:, None] - num_queries + torch.arange(num_queries, device=q.device)
    visible = ((columns[None, None, :] <= query_columns[:, :, None])
               & (columns[None, None, :] >= pad_lens[:, None, None]))        # [B, Lq, Lk]
    return attend(q, k_cache[:batch, :longest], v_cache[:batch, :longest], visible)


# ANCHOR: sdpa_packed
def ragged_attention(q, k_cache, v_cache, cu_seqlens_q, seq_lens, seq_starts,
                     max_query_len=None):
    """Stage 4: sequence s's keys are cache rows
    seq_starts[s] + 0, 1, ..., seq_lens[s] - 1."""
    positions = torch.arange(int(seq_lens.max()), device=q.device)
    key_rows = seq_starts[:, None].long() + positions
    # past its end: any real row
    key_rows = torch.where(positions < seq_lens[:, None], key_rows, 0)
    return packed_attention(q, k_cache, v_cache, cu_seqlens_q, seq_lens, key_rows)


def paged_attention(q, k_cache, v_cache, cu_seqlens_q, seq_lens, block_tables,
                    block_size, max_query_len=None):
    """Stage 5: sequence s's key j is at row
    block_tables[s, j // block_size] * block_size + j % block_size."""
    positions = torch.arange(int(seq_lens.max()), device=q.device)
    key_rows = (block_tables[:, positions // block_size].long() * block_size
                + positions % block_size)
    return packed_attention(q, k_cache, v_cache, cu_seqlens_q, seq_lens, key_rows)


def packed_attention(q, k_cache, v_cache, cu_seqlens_q, seq_lens, key_rows):
    """Stages 4-5. q [N, H, d] packs each sequence's newest tokens without padding
    (sequence s owns rows cu_seqlens_q[s]:cu_seqlens_q[s+1]); key_rows [S, Lk]
    holds the cache row of each sequence's key j (any real row past its end)."""
    out = torch.empty_like(q)
    q_lens = cu_seqlens_q.diff()
    # decodes; prefill chunks
    for seqs in (q_lens == 1).nonzero()[:, 0], (q_lens > 1).nonzero()[:, 0]:
        if len(seqs):
            attend_group(q, out, k_cache, v_cache, cu_seqlens_q[seqs], q_lens[seqs],
                         seq_lens[seqs], key_rows[seqs])
    return out


def attend_group(q, out, k_cache, v_cache, q_starts, q_lens, seq_lens, key_rows):
    """One SDPA call for a group of sequences, their queries padded to the longest."""
    offsets = torch.arange(int(q_lens.max()), device=q.device)
    real_query = offsets < q_lens[:, None]                                     # [S, Lq]
    # padding repeats the first query
    q_rows = q_starts[:, None].long() + torch.where(real_query, offsets, 0)
    keys = key_rows[:, :int(seq_lens.max())]
    # A sequence's queries are its last tokens: query i sits at position
    # seq_len - q_len + i.
    q_positions = (seq_lens - q_lens)[:, None] + offsets
    # [S, Lq, Lk]
    visible = torch.arange(keys.shape[1], device=q.device) <= q_positions[:, :, None]
    result = attend(q[q_rows], k_cache[keys], v_cache[keys], visible)
    out[q_rows[real_query]] = result[real_query]
# ANCHOR_END: sdpa_packed

"""Naive PyTorch attention: the ground truth every Triton kernel is tested against.

Every function here builds the full score matrix and an explicit boolean mask,
so it is easy to check by eye. They compute in fp32 and return q's dtype.
Shapes: ``H`` query heads, ``KVH`` key/value heads (GQA: H is a multiple of
KVH), ``d`` head dim, ``T`` cache capacity in tokens.
"""
import torch


# ANCHOR: naive_attention
def naive_attention(q, k, v, visible):
    """q [Lq, H, d], k/v [Lk, KVH, d], visible [Lq, Lk] bool -> [Lq, H, d].

    A query row that sees no key at all (a padding row) returns zeros.
    """
    group = q.shape[1] // k.shape[1]
    k = k.float().repeat_interleave(group, dim=1)              # [Lk, H, d]
    v = v.float().repeat_interleave(group, dim=1)
    scores = torch.einsum("qhd,khd->hqk", q.float(), k) * q.shape[-1] ** -0.5
    scores = scores.masked_fill(~visible, float("-inf"))       # [H, Lq, Lk]
    probs = torch.softmax(scores, dim=-1).nan_to_num(0.0)      # all -inf rows -> 0
    return torch.einsum("hqk,khd->qhd", probs, v).to(q.dtype)
# ANCHOR_END: naive_attention


def causal_visibility(num_queries, context_len, device=None):
    """[Lq, context_len] mask: the queries are the last Lq tokens of the context."""
    q_pos = torch.arange(context_len - num_queries, context_len, device=device)
    k_pos = torch.arange(context_len, device=device)
    return k_pos[None, :] <= q_pos[:, None]


# ANCHOR: contiguous_reference
def contiguous_attention(q, k_cache, v_cache, context_len):
    """Stage 1. q [Lq, H, d] are the newest Lq tokens of one sequence whose
    K/V (new tokens included) fill k_cache[:context_len] ([T, KVH, d]);
    context_len an int or a one-element tensor."""
    context_len = int(context_len)
    visible = causal_visibility(q.shape[0], context_len, q.device)
    return naive_attention(q, k_cache[:context_len], v_cache[:context_len], visible)
# ANCHOR_END: contiguous_reference


# ANCHOR: padded_reference
def padded_attention(q, k_cache, v_cache, seq_lens, pad_lens):
    """Stage 2. A left-padded batch: q [B, Lq, H, d], caches [B', T, KVH, d].

    Row b holds pad_lens[b] padding tokens, then its real tokens, and ends at
    column seq_lens[b] (in a static batch, the same column for every row). A
    key is visible if it is real (column >= pad_lens[b]) and not in the
    query's future.
    """
    out = torch.empty_like(q)
    for b in range(q.shape[0]):
        context_len = int(seq_lens[b])
        causal = causal_visibility(q.shape[1], context_len, q.device)
        real_key = torch.arange(context_len, device=q.device) >= int(pad_lens[b])
        visible = causal & real_key[None, :]
        out[b] = naive_attention(q[b], k_cache[b, :context_len],
                                 v_cache[b, :context_len], visible)
    return out
# ANCHOR_END: padded_reference


# ANCHOR: ragged_reference
def ragged_attention(q, k_cache, v_cache, cu_seqlens_q, seq_lens, seq_starts,
                     max_query_len=None):
    """Stage 4. Sequences packed without padding. q [N, H, d]: sequence s owns
    rows cu_seqlens_q[s]:cu_seqlens_q[s+1], its newest tokens. Its context of
    seq_lens[s] tokens (new ones included) lies in cache rows
    seq_starts[s] : seq_starts[s] + seq_lens[s] of k/v_cache [rows, KVH, d].
    (max_query_len is accepted for the kernel's signature and not needed here.)"""
    out = torch.empty_like(q)
    for s in range(len(seq_lens)):
        q_lo, q_hi = int(cu_seqlens_q[s]), int(cu_seqlens_q[s + 1])
        start, context_len = int(seq_starts[s]), int(seq_lens[s])
        keys = slice(start, start + context_len)
        visible = causal_visibility(q_hi - q_lo, context_len, q.device)
        out[q_lo:q_hi] = naive_attention(q[q_lo:q_hi], k_cache[keys],
                                         v_cache[keys], visible)
    return out
# ANCHOR_END: ragged_reference


# ANCHOR: store_kv_reference
def store_kv_cache(k, v, k_cache, v_cache, slot_mapping):
    """Write token i's k/v [N, KVH, d] into cache row slot_mapping[i]; -1 skips it."""
    keep = slot_mapping >= 0
    k_cache[slot_mapping[keep]] = k[keep]
    v_cache[slot_mapping[keep]] = v[keep]
# ANCHOR_END: store_kv_reference


# ANCHOR: paged_reference
def paged_attention(q, k_cache, v_cache, cu_seqlens_q, seq_lens, block_tables,
                    block_size, max_query_len=None):
    """Stage 5. Gather each sequence's blocks into a contiguous tensor, then
    attend as stage 4 does. k/v_cache [num_blocks * block_size, KVH, d]."""
    out = torch.empty_like(q)
    for s in range(len(seq_lens)):
        q_lo, q_hi, context_len = (int(cu_seqlens_q[s]), int(cu_seqlens_q[s + 1]),
                                   int(seq_lens[s]))
        positions = torch.arange(context_len, device=q.device)
        rows = (block_tables[s, positions // block_size].long() * block_size
                + positions % block_size)
        visible = causal_visibility(q_hi - q_lo, context_len, q.device)
        out[q_lo:q_hi] = naive_attention(q[q_lo:q_hi], k_cache[rows],
                                         v_cache[rows], visible)
    return out
# ANCHOR_END: paged_reference


# ANCHOR: combine_reference
def combine_splits(parts, lse, dtype):
    """Split-KV's merge. parts [splits, N, H, d]: each split's attention over
    its own keys; lse [splits, N, H]: the log of its softmax denominator (-inf:
    no key). Weighting split s by exp(lse_s - logsumexp(lse)), a softmax over
    the splits, gives the softmax over all keys; rows no split saw become 0."""
    weights = torch.softmax(lse.float(), dim=0).nan_to_num(0.0)  # [splits, N, H]
    return (weights[..., None] * parts.float()).sum(0).to(dtype)
# ANCHOR_END: combine_reference


# The decoder layer's other operations, as the plain model computes them: the twins
# of the fused kernels of chapter 8 (kernels/norm.py, activation.py, rotary.py).
# ANCHOR: layer_references
def add_rms_norm(x, residual, weight, eps):
    """(RMSNorm(x + residual) * weight, x + residual): normalised in fp32, cast
    back, then scaled. residual None: x alone (the first layer)."""
    residual = x if residual is None else x + residual
    x32 = residual.float()
    normed = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)
    return weight * normed.to(x.dtype), residual


def silu_mul(gate, up):
    """The SwiGLU MLP's middle: SiLU(gate) * up."""
    return torch.nn.functional.silu(gate) * up


def rotary(q, k, cos, sin):
    """q [N, H, d], k [N, KVH, d] rotated by cos/sin [N, d]: channel i turns
    with channel i + d/2 (rotate_half)."""
    def rotate(x):
        half = x.shape[-1] // 2
        rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * cos[:, None, :] + rotated * sin[:, None, :]
    return rotate(q), rotate(k)
# ANCHOR_END: layer_references


# ANCHOR: finite_argmax
def finite_argmax(logits):
    """Each row's best token, or -1 where the row's logits are not all finite
    (the sampler's greedy pick and its check; kernels/argmax.py in one pass)."""
    return logits.argmax(dim=-1).masked_fill(~torch.isfinite(logits).all(dim=-1), -1)
# ANCHOR_END: finite_argmax

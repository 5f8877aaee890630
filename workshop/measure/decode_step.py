"""The measurements behind notebook 08: one decode step's attention in every
stage's kernel against the naive reference and the copy bandwidth, and the whole
decode step against its roofline (the bytes it must read: weights and KV cache).

Timings on a GPU use CUDA graphs or ``triton.testing.do_bench`` (caches flushed
between runs); on a CPU a median over a few calls (``benchmarks``' timers).
"""
import math
import statistics

import torch

from minicb.attention import attention_ops
from minicb.costmodel import HARDWARE, MODEL_SHAPES, Hardware
from minicb.executors import ParallelExecutor
from minicb.kernels.online_softmax import multiprocessors, tile_options
from minicb.kernels.paged_attention import choose_splits
from minicb.kernels.traffic import attention_bytes
from minicb.llm import LLMEngine
from minicb.sampling_params import SamplingParams
from workshop.measure.benchmarks import graph_ms, interleaved_ms, time_ms


# ---------------------------------------------------------------- figure 6
# ANCHOR: kernel_cases
def decode_attention_cases(batch, context, heads, kv_heads, head_dim, dtype, device,
                           block_size=16, seed=0, tile_keys=None):
    """One decode step's attention (one query per sequence, ``context`` keys
    each) laid out for every stage's kernel, the naive reference and PyTorch's
    SDPA (and stage 5 with one program per query head, the layout before GQA
    packing). Returns {name: zero-argument callable} and the bytes one call
    must read and write at least (K, V, q and the output). tile_keys: stage 5's
    keys per tile, instead of its rule's (tile_lengths compares them)."""
    triton_ops, reference = attention_ops("triton"), attention_ops("reference")
    g = torch.Generator(device="cpu").manual_seed(seed)
    rand = lambda *shape: torch.randn(*shape, generator=g).to(  # noqa: E731
        device=device, dtype=dtype)
    q = rand(batch, heads, head_dim)
    k, v = (rand(batch, context, kv_heads, head_dim),
            rand(batch, context, kv_heads, head_dim))
    ints = lambda values: torch.tensor(  # noqa: E731
        values, dtype=torch.int32, device=device)
    cu_seqlens, seq_lens = ints(range(batch + 1)), ints([context] * batch)
    flat_k, flat_v = (k.reshape(batch * context, kv_heads, head_dim),
                      v.reshape(batch * context, kv_heads, head_dim))
    # Paged: the same tokens, their blocks shuffled through the pool.
    blocks_per_seq = context // block_size
    order = torch.randperm(batch * blocks_per_seq, generator=g)
    block_tables = torch.empty(batch * blocks_per_seq, dtype=torch.int32)
    block_tables[order] = torch.arange(batch * blocks_per_seq, dtype=torch.int32)
    block_tables = block_tables.view(batch, blocks_per_seq).to(device)
    paged_k, paged_v = torch.empty_like(flat_k), torch.empty_like(flat_v)
    rows = (block_tables.long()[:, :, None] * block_size
            + torch.arange(block_size, device=device)).reshape(-1)
    paged_k[rows], paged_v[rows] = flat_k, flat_v
    # [B, H, L, d]
    sdpa_q, sdpa_k, sdpa_v = q[:, :, None], k.transpose(1, 2), v.transpose(1, 2)
    cases = {
        "stage 1 contiguous (per sequence)": lambda: [
            triton_ops.contiguous_attention(q[b:b + 1], k[b], v[b], context)
            for b in range(batch)],
        "stage 2 padded": lambda: triton_ops.padded_attention(
            q[:, None], k, v, ints([context] * batch), ints([0] * batch)),
        "stage 4 ragged": lambda: triton_ops.ragged_attention(
            q, flat_k, flat_v, cu_seqlens, seq_lens,
            ints(range(0, batch * context, context)), 1),
        "stage 5 paged": lambda: triton_ops.paged_attention(
            q, paged_k, paged_v, cu_seqlens, seq_lens, block_tables, block_size, 1,
            tile_keys=tile_keys),
        PER_HEAD: lambda: triton_ops.paged_attention(
            q, paged_k, paged_v, cu_seqlens, seq_lens, block_tables, block_size, 1,
            pack_heads=False),
        "naive reference": lambda: reference.padded_attention(
            q[:, None], k, v, ints([context] * batch), ints([0] * batch)),
        "torch SDPA": lambda: torch.nn.functional.scaled_dot_product_attention(
            sdpa_q, sdpa_k, sdpa_v, enable_gqa=heads != kv_heads),
    }
    num_bytes = attention_bytes([1] * batch, [context] * batch, heads, kv_heads,
                                head_dim, dtype)["required"]
    return cases, num_bytes
# ANCHOR_END: kernel_cases


PER_HEAD = "stage 5 paged, one head per program"
# The cases that launch minicb's Triton kernels (the rest are PyTorch's).
TRITON_CASES = ("stage 1 contiguous (per sequence)", "stage 2 padded", "stage 4 ragged",
                "stage 5 paged", PER_HEAD)


def tile_lengths(batch, context, heads, kv_heads, head_dim, dtype, device, bandwidth,
                 lengths=(32, 64), repeats=3, timer=graph_ms) -> list[dict]:
    """The paged decode kernel with each tile length (keys per trip round its
    loop), timed in turns ``repeats`` times by ``timer``: a row per length, with
    its times and the share of ``bandwidth`` its median moves the bytes at."""
    cases = {}
    for keys in lengths:
        calls, num_bytes = decode_attention_cases(batch, context, heads, kv_heads, head_dim,
                                                  dtype, device, tile_keys=keys)
        cases[keys] = calls["stage 5 paged"]
    times = interleaved_ms(cases, repeats, timer)
    return [dict(tile_keys=keys, batch=batch, context=context, heads=heads, kv_heads=kv_heads,
                 head_dim=head_dim, ms=ms,
                 of_copy=num_bytes / (statistics.median(ms) / 1e3) / bandwidth)
            for keys, ms in times.items()]


def paged_decode_bytes(batch, context, heads, kv_heads, head_dim, dtype, device, block_size=16) -> dict:
    """{layout: bytes that must move, bytes the grid reads} for one paged
    decode launch, split over the key ranges the host wrapper would choose."""
    out = {}
    for name, packed in [("stage 5 paged", True), (PER_HEAD, False)]:
        programs = batch * heads // tile_options(dtype, head_dim, heads // kv_heads, 1, packed)["HEADS"]
        out[name] = attention_bytes([1] * batch, [context] * batch, heads, kv_heads, head_dim, dtype, block_size,
                                    packed, choose_splits(programs, context, 1, multiprocessors(device)))
    return out


def kernel_bandwidth(points, heads, kv_heads, head_dim, dtype, device, bandwidth, skip=()):
    """Rows of (kernel, batch, context, ms, GB/s, share of ``bandwidth``) for
    each (batch, context) in ``points``; ``skip`` names cases left out. GB/s
    counts the bytes a call must move; for the paged launches grid_gb_s
    counts the bytes their programs actually read."""
    rows = []
    for batch, context in points:
        cases, num_bytes = decode_attention_cases(batch, context, heads, kv_heads, head_dim, dtype, device)
        paged = paged_decode_bytes(batch, context, heads, kv_heads, head_dim, dtype, device)
        for name, fn in cases.items():
            if name in skip:
                continue
            ms = time_ms(fn)
            rows.append(dict(kernel=name, batch=batch, context=context, ms=ms,
                             gb_s=num_bytes / ms / 1e6, of_copy=num_bytes / (ms / 1e3) / bandwidth,
                             grid_gb_s=paged[name]["grid"] / ms / 1e6 if name in paged else None))
        del cases
    return rows


# ---------------------------------------------------------------- figure 7
# ANCHOR: roofline
def decode_weight_bytes(model) -> int:
    """Parameter bytes a decode step reads: everything but the embedding
    table, of which it reads one row per token. The lm_head it reads whole:
    tied to the embedding, it is the same memory (load_model), counted once."""
    embed, head = model.embed_tokens.weight, model.lm_head.weight
    # tied weights: two names, one memory
    memory = {(p.data_ptr(), p.numel()): p.numel() * p.element_size()
              for p in model.parameters()}
    total = sum(memory.values())
    if embed.data_ptr() != head.data_ptr():
        total -= embed.numel() * embed.element_size()
    return total


def decode_roofline(path, batch_sizes, context, options, bandwidth, decode_steps=16):
    """For each batch size: the paged engine's median decode step, and the
    time to stream (decode weights + the batch's KV) once at ``bandwidth``."""
    engine = LLMEngine(path, engine="paged", max_num_seqs=max(batch_sizes), **options)
    model = engine.executor.model
    kv_per_token = model.config.kv_bytes_per_token(
        model.embed_tokens.weight.element_size())
    weights = decode_weight_bytes(model)
    return [roofline_row(engine, batch, context, weights, kv_per_token, bandwidth,
                         decode_steps) for batch in batch_sizes]


def roofline_row(engine, batch, context, weights, kv_per_token, bandwidth,
                 decode_steps):
    """One batch size's decode steps against the roofline. A step's time is from
    its start to the next step's start, which counts the same work whether or
    not the host runs ahead (async scheduling)."""
    # The first decode step at a batch size may capture its CUDA graph: left out.
    steps = decode_steps_at(engine, batch, context, decode_steps + 2)[1:]
    intervals = [b.started - a.started for a, b in zip(steps, steps[1:])]
    measured = statistics.median(intervals)
    steps = steps[:-1]                          # the steps those intervals timed
    kv_bytes = batch * (context + decode_steps / 2) * kv_per_token   # mean context
    roofline = (weights + kv_bytes) / bandwidth
    return dict(batch=batch, context=context, step_ms=1e3 * measured,
                step_ms_each=[1e3 * t for t in intervals],
                roofline_ms=1e3 * roofline, ratio=measured / roofline,
                weight_bytes=weights, kv_bytes=int(kv_bytes),
                host_ms=1e3 * statistics.median(s.host_time for s in steps),
                forward_ms=1e3 * statistics.median(s.forward_time for s in steps))
# ANCHOR_END: roofline


def simulated_decode_roofline(shape, hardware, batch_sizes, context, max_model_len,
                              decode_steps=16):
    """decode_roofline predicted: the paged engine on the simulated executor,
    its steps priced by minicb.costmodel for ``hardware``, against streaming
    (every weight + the batch's KV) once at the GPU's datasheet bandwidth."""
    engine = LLMEngine(shape, engine="paged", executor="simulated", hardware=hardware,
                       max_num_seqs=max(batch_sizes), max_model_len=max_model_len)
    model, gpu = MODEL_SHAPES[shape], hardware if isinstance(hardware, Hardware) else HARDWARE[hardware]
    return [roofline_row(engine, batch, context, model.params * 2, model.kv_bytes_per_token(2),
                         gpu.bandwidth, decode_steps) for batch in batch_sizes]


def decode_steps_at(engine, batch, context, num_steps):
    """Run ``batch`` requests with ``context``-token prompts until all decode
    together, then return the StepRecords of ``num_steps`` decode steps."""
    # The prompts take steps to admit: the step's token budget holds a few, and once
    # some decode, as few as one a step. The first admitted decodes meanwhile: it
    # must still be running when the last joins.
    admitting = batch * math.ceil(context / engine.config.max_num_batched_tokens) + 1
    params = SamplingParams(max_tokens=num_steps + 2 + admitting, ignore_eos=True)
    for i in range(batch):
        engine.add_request([3 + (i + j) % 200 for j in range(context)], params)
    with engine.stage.measuring() as steps:
        while engine.has_unfinished_requests():
            engine.step()
    decodes = [s for s in steps if s.kind == "decode" and s.useful_rows == batch]
    if len(decodes) < num_steps:
        raise RuntimeError(f"only {len(decodes)} decode steps ran all {batch} requests together; "
                           f"is the KV cache large enough for {batch} x {context} tokens?")
    return decodes[:num_steps]


# ANCHOR: decode_split
def decode_split(engine, batch: int, prompt_len: int, decode_steps: int) -> dict:
    """Mean ms per decode step of ``batch`` requests, split into the driver's
    host time (scheduling, inputs), the model's compute and its collectives
    (rank 0's, with tensor parallelism), and the rest: sending each call to the
    workers and back, and sampling."""
    params = SamplingParams(max_tokens=decode_steps + 1, ignore_eos=True)
    for i in range(batch):
        engine.add_request([3 + i] * prompt_len, params)
    engine.step()                                                # every prefill
    parallel = isinstance(engine.executor, ParallelExecutor)
    before = engine.executor.communication() if parallel else None
    with engine.stage.measuring() as steps:
        while engine.has_unfinished_requests():
            engine.step()
    assert len(steps) == decode_steps and all(s.kind == "decode" for s in steps)
    n = len(steps)
    step = 1e3 * sum(s.duration for s in steps) / n
    host = 1e3 * sum(s.host_time for s in steps) / n
    if not parallel:
        return dict(step_ms=step, host_ms=host, compute_ms=step - host,
                    collective_ms=0.0, transport_ms=0.0)
    after = engine.executor.communication()
    model = 1e3 * (after["model_s"] - before["model_s"]) / n
    collective = 1e3 * (after["collective_s"] - before["collective_s"]) / n
    return dict(step_ms=step, host_ms=host, compute_ms=model - collective,
                collective_ms=collective, transport_ms=step - host - model)
# ANCHOR_END: decode_split

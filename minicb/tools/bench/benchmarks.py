"""The measurements behind the benchmark notebooks (06 and 07).

Each function runs one experiment and returns plain numbers; the notebooks
plot them and save the figures with their sidecars. The same code runs at
CPU scale in CI and at full scale on a GPU: only the sizes differ.

Timings on a GPU use ``triton.testing.do_bench`` (CUDA events, caches
flushed between runs); on a CPU a median over a few calls.
"""
import dataclasses
import math
import statistics
import time
from collections import Counter
from types import SimpleNamespace

import torch
from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes

from ...attention import attention_ops
from ... import executors
from ...costmodel import HARDWARE, MODEL_SHAPES, Hardware, kv_budget
from ...executors import ParallelExecutor
from ...kernels.online_softmax import multiprocessors, tile_options
from ...kernels.paged_attention import choose_splits
from ...kernels import reference
from ...kernels.traffic import attention_bytes
from ...layer_ops import LAYER_OP_NAMES
from ...llm import LLMEngine
from ...sampling import SamplingParams
from .offline import default_device, run_bench, run_workloads
from .peers import load_hf_model, run_loaded_peer
from .workload import preset_workload


# ANCHOR: timing
def time_ms(fn, reps=5) -> float:
    """Median milliseconds per call of ``fn``."""
    if torch.cuda.is_available():
        import triton.testing          # its timer: on a GPU only

        return triton.testing.do_bench(fn, return_mode="median")
    fn()                                                    # warm-up
    times = []
    for _ in range(reps):
        started = time.perf_counter()
        fn()
        times.append(1e3 * (time.perf_counter() - started))
    return statistics.median(times)


def interleaved_ms(cases: dict, repeats=3, timer=time_ms) -> dict:
    """{name: [ms per call, one per repeat]} for each zero-argument callable in
    ``cases``, timed in turns (every case once, then again): the repeats a
    claim about their times is judged from (minicb.tools.report.claims)."""
    times = {name: [] for name in cases}
    for _ in range(repeats):
        for name, fn in cases.items():
            times[name].append(timer(fn))
    return times


def graph_ms(fn, reps=100) -> float:
    """Median milliseconds of ``fn`` on a GPU replayed from a CUDA graph, as an
    engine's decode step runs its kernels: no Python between the launches. (Between
    do_bench's calls the host launches the next one in Python, which a small
    kernel's time then measures.) The L2 cache is flushed before every replay, as
    do_bench does, so the inputs come from memory."""
    fn()                                     # compiled before the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    flush = torch.empty(256 * 2**20, dtype=torch.int8, device="cuda")
    timed = lambda: torch.cuda.Event(enable_timing=True)      # noqa: E731
    events = [(timed(), timed()) for _ in range(reps)]
    for start, end in events:
        flush.zero_()
        start.record()
        graph.replay()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(start.elapsed_time(end) for start, end in events)


def copy_bandwidth(device, num_bytes=2**30) -> float:
    """Bytes per second a plain device-to-device copy achieves (read + write):
    the practical ceiling for a kernel that streams memory."""
    src = torch.empty(num_bytes, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    return 2 * num_bytes / (time_ms(lambda: dst.copy_(src)) / 1e3)
# ANCHOR_END: timing


def measured_rates(device) -> dict:
    """Copy bandwidth (bytes read + written per second) and a large matmul's
    FLOP/s, in the dtype the figures run in."""
    cuda = device == "cuda"
    n, dtype = (8192, torch.bfloat16) if cuda else (1024, torch.float32)
    if cuda and torch.cuda.get_device_capability() < (8, 0):
        dtype = torch.float16
    a, b = (torch.randn(n, n, device=device).to(dtype) for _ in range(2))
    matmul_s = time_ms(lambda: a @ b) / 1e3
    rates = dict(copy_gb_s=round(copy_bandwidth(device, 2**30 if cuda else 2**26) / 1e9, 1),
                 matmul_tflops=round(2 * n**3 / matmul_s / 1e12, 2), matmul_dtype=str(dtype).removeprefix("torch."))
    del a, b
    if cuda:     # hand the buffers back: cached here, they are not free to another process's engine
        torch.cuda.empty_cache()
    return rates


# ---------------------------------------------------------------- figure 1
# ANCHOR: layer_launches
class Launches(TorchDispatchMode):
    """Counts the PyTorch operations that compute something: on a GPU each is at
    least one kernel launch (a view, which only relabels memory, launches none)."""

    def __init__(self):
        super().__init__()
        self.count = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if not func.is_view:
            self.count[func.overloadpacket.__name__] += 1
        return func(*args, **(kwargs or {}))


def layer_launches(model, tokens=4) -> Counter:
    """What one decoder layer of ``model`` launches for ``tokens`` tokens,
    attention aside: PyTorch's computing operations, and each fused kernel of
    ``model.ops`` (minicb/layer_ops.py) once, under its own name."""
    launches, ops = Launches(), model.ops

    def counted(name, op):
        if op is getattr(reference, name):     # a plain operation: its parts count
            return op

        def kernel(*args):                          # a fused kernel: one launch
            launches.count[name] += 1
            with _disable_current_modes():
                return op(*args)
        return kernel

    counting = SimpleNamespace(**{name: counted(name, getattr(ops, name))
                                  for name in LAYER_OP_NAMES})
    cfg, dtype = model.config, model.dtype
    device = model.embed_tokens.weight.device
    h, residual = (torch.randn(tokens, cfg.hidden_size, dtype=dtype, device=device)
                   for _ in range(2))
    cos, sin = model.rotary.cos_sin(torch.arange(tokens, device=device), dtype)
    with torch.inference_mode(), launches:
        model.layers[0](h, residual, cos, sin, lambda layer, q, k, v: q, counting)
    return launches.count
# ANCHOR_END: layer_launches


# ANCHOR: study
STUDY_CAPS = (32, 128, 512, 1536)       # Anyscale's output caps; prompts of 512 tokens


def study_kv_tokens() -> int:
    """The KV memory of Anyscale's study, in tokens: what OPT-13B's weights leave
    of an A100 40 GB at gpu_memory_utilization 0.9, in bf16 (minicb.costmodel)."""
    opt_13b = MODEL_SHAPES["opt-13b"]
    kv_bytes = kv_budget(HARDWARE["a100-40gb"], opt_13b, bytes_per_value=2)
    return int(kv_bytes // opt_13b.kv_bytes_per_token(2))


def study_options(cap: int, kv_tokens: int, prompt_len: int = 512) -> dict:
    """Each stage's options at one cap, on a budget of kv_tokens. A static or
    dynamic batch, and stage 4's slots, reserve a prompt and the cap for every
    request, so the budget holds kv_tokens // (prompt_len + cap) of them (the
    study's baselines ran batches of 16, 12, 8 and 4); paging hands the same
    tokens out in blocks of 16, to at most 256 requests at once."""
    rows = kv_tokens // (prompt_len + cap)
    fixed = dict(max_model_len=prompt_len + cap)
    return dict(static=dict(fixed, max_batch_size=rows),
                dynamic=dict(fixed, max_batch_size=rows, max_wait_ms=0),
                continuous=dict(fixed, max_num_seqs=rows),
                paged=dict(fixed, max_num_seqs=256, block_size=16,
                           num_blocks=kv_tokens // 16))
# ANCHOR_END: study


def first(workload, n):
    """The workload's first n requests (all, when n is None)."""
    return dataclasses.replace(workload, prompts=workload.prompts[:n],
                               params=workload.params[:n],
                               arrival_times=workload.arrival_times[:n])


# ANCHOR: one_executor
def one_executor() -> str:
    """The one executor every stage built in this process ran on, in words: stages
    compare on equal terms only then (chapter 7). Raises AssertionError otherwise."""
    kinds = {kind for stage_kinds in executors.built().values() for kind in stage_kinds}
    if len(kinds) != 1:
        raise AssertionError(f"the stages ran on different executors: "
                             f"{executors.built()}")
    return kinds.pop()
# ANCHOR_END: one_executor


# ANCHOR: throughput_vs_spread
def throughput_vs_spread(path, caps, engines, peers, num_requests, scale,
                         setup, peer_requests=None, seed=0, progress=None):
    """The Anyscale experiment: every request at once, output lengths
    exponential (mean 128 x scale) capped at each of ``caps``; minicb's
    engines and transformers' peers on the same checkpoint, in one run.
    ``setup(cap)`` gives ({engine: its options}, the KV budget in tokens) at
    that cap: the peers get the budget too, and generate the static batch's
    rows. They serve the first ``peer_requests`` requests (default: all).
    Returns {cap: {name: RunMetrics or PeerRun}}; ``progress`` ticks per run."""
    workloads = {cap: preset_workload("anyscale", num_requests=num_requests, cap=cap,
                                      scale=scale, seed=seed) for cap in caps}
    results = {}
    for cap, workload in workloads.items():       # each cap its own engines' sizes
        options, _ = setup(cap)
        runs = run_workloads(path, engines, {cap: workload}, options, progress)
        results[cap] = runs[cap]
    for peer in peers:
        static = setup(caps[0])[0]["static"]
        model = load_hf_model(path, static.get("dtype", "float32"),
                              static.get("device") or default_device())
        for cap, workload in workloads.items():
            options, kv_tokens = setup(cap)
            rows = options["static"]["max_batch_size"]      # the static batch's
            results[cap][peer] = run_loaded_peer(
                peer, model, first(workload, peer_requests), rows, kv_tokens)
            if progress is not None:
                progress.update(1)
        del model
    return results
# ANCHOR_END: throughput_vs_spread


# ---------------------------------------------------------------- figure 2
# ANCHOR: load_rates
def load_rates(saturated_req_s, light=0.25, heavy=0.9) -> dict:
    """Poisson rates scaled to the model: a share of the request rate the
    best engine sustains when every request is already waiting. ``light``
    leaves it mostly idle; ``heavy`` keeps it nearly saturated."""
    return {"light": light * saturated_req_s, "heavy": heavy * saturated_req_s}
# ANCHOR_END: load_rates


def latency_under_load(path, engines, rates, num_requests, scale, cap, options, engine_options=None, seed=1,
                       progress=None):
    """{load name: {engine: RunMetrics}} with Poisson arrivals at each rate."""
    workloads = {load: preset_workload("anyscale", num_requests=num_requests, cap=cap, scale=scale, qps=qps,
                                       seed=seed) for load, qps in rates.items()}
    return run_workloads(path, engines, workloads, engine_options, progress, **options)


# ---------------------------------------------------------------- figure 5
# ANCHOR: knobs
def scheduling_variants(chunk_sizes) -> dict:
    """Name -> stage-5 options: the two policies, then chunked prefill with
    each per-step token budget in ``chunk_sizes``."""
    variants = {"prefill_first": dict(scheduling_policy="prefill_first"),
                "mixed": dict(scheduling_policy="mixed")}
    for size in chunk_sizes:
        variants[f"chunked {size}"] = dict(scheduling_policy="mixed",
                                           enable_chunked_prefill=True,
                                           max_num_batched_tokens=size)
    return variants


def scheduling_knobs(path, presets, chunk_sizes, num_requests, scale, options, qps,
                     seed=2, progress=None):
    """{preset: {variant: RunMetrics}} for the paged engine, requests arriving
    at ``qps`` (inf: all waiting at the start). Each variant's engine serves
    every preset."""
    workloads = {preset: preset_workload(preset, num_requests=num_requests,
                                         scale=scale, qps=qps, seed=seed)
                 for preset in presets}
    results = {preset: {} for preset in presets}
    for name, variant in scheduling_variants(chunk_sizes).items():
        runs = run_workloads(path, ["paged"], workloads, progress=progress,
                             **options, **variant)
        for preset in presets:
            results[preset][name] = runs[preset]["paged"]
    return results
# ANCHOR_END: knobs


def schedule_intervals(path, intervals, preset, num_requests, scale, options, qps, seed=3, progress=None):
    """{interval: RunMetrics}: how often waiting requests may be admitted."""
    workload = preset_workload(preset, num_requests=num_requests, scale=scale, qps=qps, seed=seed)
    return {n: run_bench(path, ["paged"], workload, progress=progress, **options, schedule_interval=n)["paged"]
            for n in intervals}


def host_and_step_ms(run) -> dict:
    """Per step kind, median ms of: host work before the forward pass
    (scheduling + building inputs), the forward pass on the device, the whole step."""
    out = {}
    for kind in ("prefill", "decode", "mixed"):
        steps = [s for s in run.steps if s.kind == kind]
        if steps:
            out[kind] = dict(host_ms=1e3 * statistics.median(s.host_time for s in steps),
                             forward_ms=1e3 * statistics.median(s.forward_time for s in steps),
                             step_ms=1e3 * statistics.median(s.duration for s in steps), steps=len(steps))
    return out


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

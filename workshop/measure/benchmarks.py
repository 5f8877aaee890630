"""The measurements behind the benchmark notebooks (06 and 07), and the timers
every measurement uses (notebook 08's are in ``decode_step``).

Each function runs one experiment and returns plain numbers; the notebooks
plot them and save the figures with their sidecars. The same code runs at
CPU scale in CI and at full scale on a GPU: only the sizes differ.

Timings on a GPU use ``triton.testing.do_bench`` (CUDA events, caches
flushed between runs); on a CPU a median over a few calls.
"""
import dataclasses
import statistics
import time
from collections import Counter
from types import SimpleNamespace

import torch
from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes

from minicb import executors
from minicb.costmodel import HARDWARE, MODEL_SHAPES, kv_budget
from minicb.kernels import reference
from minicb.layer_ops import LAYER_OP_NAMES
from minicb.tools.bench.offline import default_device, run_bench, run_workloads
from minicb.tools.bench.peers import load_hf_model, run_loaded_peer
from minicb.tools.bench.workload import preset_workload


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
    claim about their times is judged from (minicb.tools.bench.claims)."""
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

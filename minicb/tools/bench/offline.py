"""``python -m minicb bench``: several engines, one workload, one table."""
import json
import os
import platform
import statistics
from pathlib import Path

import torch

from ...checkpoint import make_tiny_checkpoint, read_config
from ...config import EngineConfig, default_num_threads
from ...costmodel import HARDWARE
from ...kernels.online_softmax import tile_options
from ...llm import LLMEngine
from ...metrics import BENCH_COLUMNS, SPECULATIVE_COLUMNS, THROUGHPUT_COLUMNS, format_table
from ...pretrained import resolve_model
from ...sampling_params import SamplingParams
from ...stages import STAGES
from .driver import replay
from .run_record import environment, this_run
from ..serve.options import check_out_path, engine_options
from .peers import PEERS, run_peer
from .workload import preset_workload


# ANCHOR: bench
def run_bench(model, engines, workload, engine_options=None, progress=None, **options) -> dict:
    """Replay ``workload`` against each engine in turn; {engine: RunMetrics}.
    ``options`` are EngineConfig fields shared by all engines (each uses its
    own); ``engine_options`` maps an engine name to fields for it alone.
    Each run shows its own progress bar, unless ``progress`` (a bar for a
    whole experiment) is given: then that ticks once per run."""
    return run_workloads(model, engines, {"": workload}, engine_options, progress, **options)[""]


def run_workloads(model, engines, workloads: dict, engine_options=None, progress=None,
                  **options) -> dict:
    """{key: {engine: RunMetrics}} for a dict of workloads: each engine is built
    once (its weights loaded, its kernels compiled, on a GPU its CUDA graphs
    captured) and replays every workload in turn."""
    runs = {key: {} for key in workloads}
    for name in engines:
        engine = LLMEngine(model, engine=name,
                           **{**options, **(engine_options or {}).get(name, {})})
        warm_up(engine)
        for key, workload in workloads.items():
            runs[key][name] = replay(engine, workload, use_tqdm=progress is None)
            if progress is not None:
                progress.update(1)
        del engine                 # free its KV cache before the next engine sizes its own
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    return runs
# ANCHOR_END: bench


# ANCHOR: warm_up
def warm_up(engine: LLMEngine):
    """Run one short request per attention tile height, so that Triton
    compiles each attention kernel's variants before the clock starts. The
    height (BLOCK_M) follows from the most queries one sequence brings to a
    step, times the query heads packed into each program: send the shortest
    prompt that reaches each height. (With CUDA graphs, stage 5's default
    on a GPU, the split-KV kernels compile when the graphs are captured.)"""
    cfg, model = engine.config, engine.executor.config
    dtype = engine.executor.dtype
    group = model.num_attention_heads // model.num_key_value_heads
    shortest = {}
    for prompt_len in range(1, 257):
        shortest.setdefault(
            tile_options(dtype, model.head_dim, group, prompt_len)["BLOCK_M"],
            prompt_len)
    for prompt_len in shortest.values():  # each clipped to what the engine accepts
        prompt_len = max(1, min(prompt_len, cfg.max_model_len - 2,
                                cfg.max_num_batched_tokens))
        engine.add_request([3] * prompt_len, SamplingParams(max_tokens=2))
        while engine.has_unfinished_requests():
            engine.step()
# ANCHOR_END: warm_up


def default_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def main(args):
    options = dict(engine_options(args), num_threads=args.threads)
    # Only stage 5 can run the host a step ahead; the other stages run as they are.
    per_engine = {"paged": dict(async_scheduling=options.pop("async_scheduling"))}
    check_flags(args, options, per_engine)
    torch.set_num_threads(args.threads or default_num_threads())    # the peers run with minicb's threads
    workload = preset_workload(args.workload, num_requests=args.num_requests, cap=args.cap, qps=args.qps,
                               scale=args.scale, seed=args.seed)        # checked before a model is made
    model = bench_model(args)
    where = (f"simulated (predicted by minicb.costmodel, not measured): {args.hardware} "
             f"({HARDWARE[args.hardware].kind}), {model}"
             if args.executor == "simulated" else f"machine: {machine()}")
    print(f"workload: {workload.description}\n{where}")
    rounds = []
    for round_number in range(args.repeat):            # engines and peers take turns, round after round
        runs = run_bench(model, args.engine.split(","), workload, per_engine, **options)
        runs.update({name: run_peer(name, model, workload, args.dtype, options["device"] or default_device(),
                                    args.max_batch_size, peer_kv_tokens(model, options))
                     for name in filter(None, args.peers.split(","))})
        print(f"\nround {round_number + 1} of {args.repeat} (load average now {os.getloadavg()[0]:.2f})")
        print(format_table({n: r for n, r in runs.items() if n in STAGES}, BENCH_COLUMNS))
        if any(r.num_draft_tokens for n, r in runs.items() if n in STAGES):
            print("\nspeculative decoding (drafted tokens, and those kept):")
            print(format_table({n: r for n, r in runs.items() if n in STAGES}, SPECULATIVE_COLUMNS))
        if args.peers:
            print("\ntransformers on the same requests, all at once (arrival times ignored):")
            print(format_table(runs, THROUGHPUT_COLUMNS))
        rounds.append(runs)
    if args.repeat > 1:
        print("\noutput tok/s in each round:")
        print(format_rounds(rounds))
    if args.out:
        result = dict(model=str(model), workload=workload.description, options=options,
                      engine_options=per_engine, threads=torch.get_num_threads(),
                      environment=environment(), machine=machine(), run=this_run(),
                      rounds=[{n: r.summary() for n, r in runs.items()} for runs in rounds])
        Path(args.out).write_text(json.dumps(result, indent=2, default=str) + "\n")
        print(f"results: {args.out}")


def check_flags(args, options, per_engine):
    """Every flag before any engine runs: a mistake in the last of them must not
    cost the whole benchmark first."""
    if args.repeat < 1:
        raise ValueError(f"--repeat must be >= 1, got {args.repeat}")
    if args.threads is not None and not 1 <= args.threads <= os.cpu_count():
        raise ValueError(f"--threads must be in 1..{os.cpu_count()} (the CPUs here), got {args.threads}")
    for name in args.engine.split(","):
        EngineConfig(engine=name, **{**options, **per_engine.get(name, {})})    # raises on a bad value
    unknown = [name for name in filter(None, args.peers.split(",")) if name not in PEERS]
    if unknown:
        raise ValueError(f"--peers: unknown peer {unknown[0]!r}; choose from {', '.join(PEERS)}")
    check_out_path(args.out)


def bench_model(args) -> str:
    """The checkpoint (or, simulated, the shape) the run uses."""
    if args.executor == "simulated":
        if args.peers:
            raise ValueError("--peers runs transformers on real weights; it cannot be simulated")
        return args.model or "llama-3.1-8b"
    if args.model:
        return resolve_model(args.model)
    return make_tiny_checkpoint("scratch/checkpoints/tiny", arch="llama", seed=0)


def peer_kv_tokens(model, options) -> int:
    """The KV budget the paged engine gets on a CPU (max_num_seqs x max_model_len
    token slots, unless num_blocks says otherwise), for transformers' continuous
    batching too: sized by itself it takes a share of the machine's free memory."""
    config = EngineConfig(engine="paged", **options)
    config.settle_max_model_len(read_config(model).max_context)
    return (config.num_blocks or config.max_num_seqs * config.max_model_len // config.block_size) \
        * config.block_size


def format_rounds(rounds) -> str:
    """One line per run: its output tok/s in each round, and its ratio to the first run, per round
    and the median over rounds (one round of a short run on a shared CPU can be off by a third)."""
    names = list(rounds[0])
    lines = []
    for name in names:
        values = [runs[name].output_throughput for runs in rounds]
        ratios = [runs[name].output_throughput / runs[names[0]].output_throughput for runs in rounds]
        lines.append(f"{name:>20}  " + "  ".join(f"{v:8.1f}" for v in values) +
                     f"   x {names[0]}: " + "  ".join(f"{r:.2f}" for r in ratios) +
                     f"   median x {statistics.median(ratios):.2f}")
    return "\n".join(lines)


def machine() -> str:
    """The CPU, its cores, torch's threads and the load: what a CPU figure depends on."""
    return (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
            f"{torch.get_num_threads()} torch threads, load average {os.getloadavg()[0]:.2f}"
            + (f", {torch.cuda.get_device_name()}" if torch.cuda.is_available() else ""))

"""How big a notebook runs, decided in one place.

- **cpu**: a laptop. The tiny random Llama in fp32 and small workloads, so
  every notebook runs in a minute or two.
- **full**: a GPU. Real model shapes with random weights (as vLLM's
  dummy-weight benchmarks do), in bf16 where the GPU has it (fp16 on one that
  has not), and the workloads the figures are about. A shape the GPU's memory
  cannot hold is replaced by the largest that it can.
- **rehearsal**: the full scale's settings and request lengths, on a CPU, the
  tiny model and fewer requests (MINICB_SCALE=rehearsal). CI runs it, so that
  the first time a full-scale branch runs is not on a borrowed GPU.

A notebook starts with ``SCALE = run_scale()`` and takes its sizes from
``SCALE.sizes(its name)``; the table of sizes is ``SIZES`` below, which the
GPU driver (``workshop.gpu.run``) also reads to plan its parts.
"""
import json
import math
import os
import platform
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

import torch

from minicb.checkpoint import make_tiny_checkpoint
from minicb.costmodel import MODEL_SHAPES
from minicb.shapes import SHAPES
from minicb.tools.bench.claims import MAX_OTHERS_CORES, CpuUse, Verdict, judge, judge_steps
from minicb.tools.bench.run_record import THIS_RUN, current_commit, machine, project_root, this_run  # noqa: F401

# A rehearsal's largest batch, and its requests per workload: three batches' worth,
# so that batching still has something to do and every figure's claim is checked.
REHEARSAL_BATCH = 8
REHEARSAL_REQUESTS = 3 * REHEARSAL_BATCH

# Each notebook's sizes at CPU scale and at full scale. A rehearsal takes the full
# ones, with every requests count cut to REHEARSAL_REQUESTS, every batch size (and
# list of them) to REHEARSAL_BATCH, repeats to 1, and its own where it names any.
SIZES = {
    "01_single": dict(
        cpu=dict(prompt_lens=[16, 64, 128, 256], decode_tokens=16, copy_mib=32, repeats=3),
        full=dict(prompt_lens=[128, 512, 1024, 2048], decode_tokens=64, copy_mib=256, repeats=3)),
    "02_static": dict(
        cpu=dict(num_requests=24, prompt_len=(4, 48), output_len=(2, 48), batch=8),
        full=dict(num_requests=64, prompt_len=(64, 512), output_len=(16, 512), batch=16)),
    # The CPU's rate is light for the tiny model; at full scale the rate is a share
    # of what the engine serves one request at a time (measured in the notebook).
    "03_dynamic": dict(
        cpu=dict(num_requests=40, prompt_len=(4, 32), output_len=(2, 8), qps=20.0, batch=8,
                 windows=[0, 25, 50, 100, 200], repeats=3),
        full=dict(num_requests=48, prompt_len=(64, 256), output_len=(8, 32), load=0.3, batch=16,
                  windows=[0, 25, 50, 100, 200, 400], repeats=3)),
    "04_continuous": dict(
        cpu=dict(scale=1 / 16, num_requests=32, batch=8, max_model_len=256, repeats=3),
        full=dict(scale=1.0, num_requests=256, batch=32, max_model_len=1024, repeats=3)),
    "05_paged": dict(
        cpu=dict(scale=1 / 8, num_requests=32, max_model_len=256, chunk_budget=32, reading_requests=16),
        full=dict(scale=1.0, num_requests=256, max_model_len=2048, chunk_budget=64, reading_requests=16)),
    "06_memory_pressure": dict(
        cpu=dict(batch=4, knob_requests=16, knob_scale=1 / 4, knob_max_model_len=512, chunk_sizes=[32, 64, 128],
                 repeats=3),
        full=dict(batch=64, knob_requests=32, knob_scale=1.0, knob_max_model_len=2048,
                  chunk_sizes=[256, 512, 1024], repeats=2)),
    "07_benchmarks": dict(
        cpu=dict(num_requests=48, scale=1 / 16, batch=4, max_model_len=128, load_requests=48,
                 preset_requests=16, preset_scale=1 / 4, preset_max_model_len=512, repeats=3),
        # The spread experiment in the study's shape (benchmarks.study_options), 500 requests a
        # cap; the peers serve the first 8 (on an H200, 32 took 253 s of the part's 9 minutes),
        # graphs on and off compare on 48. Every experiment runs once: twice would not fit a
        # GPU part (workshop/gpu/run.py).
        full=dict(num_requests=500, scale=1.0, batch=64, max_model_len=2048, load_requests=64,
                  preset_requests=32, preset_scale=1.0, preset_max_model_len=2048, repeats=1,
                  peer_requests=8, launch_requests=48)),
    "08_kernels": dict(
        cpu=dict(heads=dict(heads=4, kv_heads=2, head_dim=16), contexts=[32, 64], context_batch=2,
                 small_heads=dict(heads=4, kv_heads=1, head_dim=16), small_context=16,
                 batches=[1, 4], batch_context=32, reference_tokens=1024,
                 roofline=dict(context=32, max_model_len=64, shapes={"tiny": [1, 4, 8]})),
        full=dict(heads=dict(heads=32, kv_heads=8, head_dim=128), contexts=[512, 1024, 2048, 4096, 8192, 16384],
                  context_batch=16, batches=[1, 4, 16, 64, 256], batch_context=4096,
                  small_heads=dict(heads=32, kv_heads=8, head_dim=64), small_context=1024,   # Llama 3.2 1B
                  reference_tokens=64 * 4096,
                  roofline=dict(context=1024, max_model_len=2048,
                                shapes={"llama-3.2-1b": [1, 8, 32, 64, 128, 256],
                                        "llama-3.1-8b": [1, 8, 32, 64]})),
        # A CPU holds 16 sequences of 16,384 keys in fp32 only with gigabytes to spare.
        rehearsal=dict(context_batch=2)),
    "09_serving": dict(
        cpu=dict(num_prompts=32, scale=1 / 4, max_model_len=512, batch=4, repeats=3),
        full=dict(num_prompts=64, scale=1.0, max_model_len=2048, batch=32, repeats=3),
        # Four servers at four rates with the full scale's lengths: half the rehearsal's
        # requests still fill a batch and a half, in half the time.
        rehearsal=dict(num_prompts=REHEARSAL_REQUESTS // 2)),
    "10_tensor_parallel": dict(
        cpu=dict(batch=4, prompt_len=16, decode_steps=16, repeats=3),
        full=dict(batch=4, prompt_len=16, decode_steps=16, repeats=3)),
    # The real model (SmolLM2-135M-Instruct) with and without each drafter.
    "12_speculative": dict(
        cpu=dict(batches=[1, 4], max_tokens=32, repeats=3),
        full=dict(batches=[1, 8, 32, 128], max_tokens=128, repeats=3)),
}


# The notebook this process runs, its sizes and its verdicts on time: save_figure writes
# them into each sidecar. And the CPU time spent when it first asked for its scale, for time claims.
RUNNING = {}
CPU_USE_AT_START = [None]


@dataclass(frozen=True)
class Scale:
    name: str                   # "cpu", "full" or "rehearsal"
    device: str                 # "cuda" at full scale, else "cpu"
    dtype: str                  # a GPU's half precision; float32 on a CPU
    gpu: str | None = None      # the GPU's name
    gpu_memory: int = 0         # its memory in bytes

    @property
    def full(self) -> bool:
        """The full scale's settings: at full scale, and in its rehearsal."""
        return self.name != "cpu"

    def sizes(self, notebook: str) -> dict:
        """The notebook's sizes at this scale; every figure's sidecar records them."""
        table = SIZES[notebook]
        if self.name == "rehearsal":
            sizes = {k: rehearsed(k, v) for k, v in table["full"].items()} | table.get("rehearsal", {})
        else:
            sizes = dict(table[self.name])
        RUNNING.clear()
        RUNNING.update(notebook=notebook, **this_run(), sizes=sizes)
        return sizes

    def model(self, shape: str = "llama-3.2-1b") -> dict:
        """The checkpoint a notebook measures with (make_tiny_checkpoint's arguments):
        ``shape`` at full scale, or the largest shape this GPU holds; the tiny Llama
        in fp32 otherwise."""
        if self.name == "cpu":
            return dict(arch="llama", shape="tiny", dtype="float32")
        if self.name == "rehearsal":       # the tiny model, with the context of the one it stands for
            return dict(arch="llama", shape="tiny", dtype="float32",
                        max_position_embeddings=SHAPES[shape]["max_position_embeddings"])
        fitting = [s for s in SHAPES if self.fits(s)]
        if shape not in fitting:
            shape = max(fitting, key=lambda s: weight_bytes(s), default="tiny")
        return dict(arch="llama", shape=shape, dtype=self.dtype)

    def checkpoint(self, model: dict) -> str:
        """The folder of ``model`` (as ``model()`` gives it), random weights of seed 0,
        written once for this scale under scratch/checkpoints/ (the GPU run's first
        part writes the real shapes' ahead, while its tests run)."""
        return make_tiny_checkpoint(project_root() / "scratch" / "checkpoints" / self.name / model["shape"],
                                    seed=0, **model)

    def fits(self, shape: str) -> bool:
        """Whether this GPU holds the shape's weights with room for KV cache and
        activations: at most 60% of its memory for the weights."""
        return self.name == "full" and weight_bytes(shape) <= 0.6 * self.gpu_memory

    def time_claim(self, left, op: str, right, what) -> Verdict:
        """A claim about time, ``left op right``, judged from this run's repeats
        (``minicb.tools.bench.claims``): one that holds or is not decided is printed;
        one that does not hold stops the notebook, except in a rehearsal, which
        times a tiny model on a CPU at the full scale's lengths, where it need not
        hold. Every verdict goes into the sidecars of the figures saved after it.
        While other processes keep a core busy, no time claim is decided."""
        return self.record(judge(left, op, right, others_cores()), op, what)

    def step_claim(self, left, op: str, right, what) -> Verdict:
        """A claim about time decided from one run's many steps a side
        (``claims.judge_steps``), where repeating the run is too dear: warm-up and
        CUDA-graph capture steps must be left out by the caller. Recorded and
        printed as ``time_claim``'s are."""
        busy = others_cores()
        if busy is not None and busy > MAX_OTHERS_CORES:
            verdict = Verdict(None, math.nan, math.nan, math.nan, f"other processes kept {busy:.1f} cores busy")
        else:
            verdict = judge_steps(left, op, right)
        return self.record(verdict, op, what)

    def record(self, verdict: Verdict, op: str, what) -> Verdict:
        """Print the verdict and keep it: in every sidecar saved after it, and at
        once in NOTEBOOK_claims.json beside the figures, so that a claim that fails
        and stops the notebook is recorded too."""
        text = verdict.describe(op, what)
        RUNNING.setdefault("time_claims", []).append(text)
        RUNNING.setdefault("claims", []).append(dict(claim=str(what), op=op, left=verdict.left, right=verdict.right,
                                                     margin=verdict.margin, holds=verdict.holds,
                                                     reason=verdict.reason))
        save_claims()
        if verdict.holds is False and self.name != "rehearsal":
            raise AssertionError(f"time claim {text}")
        print(("rehearsal, checked at full scale: " if self.name == "rehearsal" else "time claim ") + text)
        return verdict

    def synchronize(self):
        """Wait for the GPU, before reading a clock; nothing to wait for on a CPU."""
        if self.device == "cuda":
            torch.cuda.synchronize()

    def describe(self) -> str:
        where = (f"GPU: {self.gpu} ({self.gpu_memory / 2**30:.0f} GiB)" if self.gpu
                 else f"CPU: {platform.machine()}, {os.cpu_count()} cores")
        what = {"cpu": "CPU scale", "full": "full scale",
                "rehearsal": "rehearsal of the full scale (the tiny model, fewer requests)"}[self.name]
        return f"{what} | {where} | {self.dtype}"


def others_cores() -> float | None:
    """Cores other processes kept busy, on average, since this process (a
    notebook's kernel) first asked for its scale; None where this machine
    cannot say."""
    start, now = CPU_USE_AT_START[0], CpuUse.now()
    return start.others_cores(now) if start and now else None


def rehearsed(key, value):
    """One full-scale size as a rehearsal takes it."""
    if key.endswith("requests") or key == "num_prompts":
        return min(value, REHEARSAL_REQUESTS)
    if key == "batch":
        return min(value, REHEARSAL_BATCH)
    if key == "repeats":
        return 1
    if key == "batches":
        return [b for b in value if b <= REHEARSAL_BATCH]
    if key == "roofline":
        return dict(value, shapes={s: [b for b in sizes if b <= REHEARSAL_BATCH]
                                   for s, sizes in value["shapes"].items()})
    return value


def weight_bytes(shape: str, bytes_per_value: int = 2) -> int:
    """A real shape's weights in bytes (bf16 by default)."""
    return MODEL_SHAPES[shape].params * bytes_per_value


def run_scale() -> Scale:
    """The scale of this run: MINICB_SCALE names it (cpu, full, rehearsal); else
    full on a GPU and cpu without one."""
    if CPU_USE_AT_START[0] is None:          # what other processes do from here on: time claims ask
        CPU_USE_AT_START[0] = CpuUse.now()
    RUNNING.update(this_run())
    name = os.environ.get("MINICB_SCALE") or ("full" if torch.cuda.is_available() else "cpu")
    if name not in ("cpu", "full", "rehearsal"):
        raise ValueError(f"MINICB_SCALE={name!r}: choose cpu, full or rehearsal")
    if name != "full":
        return Scale(name, "cpu", "float32")
    if not torch.cuda.is_available():
        raise ValueError("MINICB_SCALE=full needs a GPU, and torch sees none here")
    properties = torch.cuda.get_device_properties(0)
    dtype = "bfloat16" if torch.cuda.get_device_capability(0) >= (8, 0) else "float16"
    return Scale("full", "cuda", dtype, properties.name, properties.total_memory)


SCALE_NAMES = {"full": "full scale", "cpu": "CPU scale", "rehearsal": "rehearsal (CPU, tiny model)"}


def full_scale() -> bool:
    return run_scale().name == "full"


def figure_dir() -> Path:
    if "MINICB_FIGURES_DIR" in os.environ:
        path = project_root() / os.environ["MINICB_FIGURES_DIR"]
    else:
        path = project_root() / ("figures/gpu" if full_scale() else "scratch/figures")
    path.mkdir(parents=True, exist_ok=True)
    return path


def save_claims() -> Path | None:
    """NOTEBOOK_claims.json beside the figures: every claim about time this run has
    judged so far, with its verdict (a failed one too, before it stops the notebook)."""
    if "run_id" not in RUNNING:
        return None
    path = figure_dir() / f"{RUNNING.get('notebook', 'run-' + RUNNING['run_id'])}_claims.json"
    record = dict(notebook=RUNNING.get("notebook"), run_id=RUNNING.get("run_id"), commit=RUNNING.get("commit"),
                  machine=machine(), scale=SCALE_NAMES[run_scale().name], claims=RUNNING.get("claims", []))
    path.write_text(json.dumps(record, indent=2, default=str) + "\n")
    return path

"""Compile a kernel the engines launch for a real GPU, without one.

Triton can compile for a named target (``GPUTarget("cuda", 90, 32)``) all
the way to a cubin, with the ptxas its wheel ships: no GPU and no driver.
This module calls each host wrapper as the engines do, records the launches
instead of running them, and compiles each distinct one (``minicb check`` does so
for a student's kernel; the repository's ``workshop/gpu/compile_check.py`` for every
launch of every engine). Arguments are
specialized by Triton's own launcher code, so a pointer or a stride that a
real launch would mark "divisible by 16" is marked so here too. For each
compiled kernel it reads from the cubin (with the wheel's cuobjdump) the
registers per thread and the stack frame, which is where ptxas puts spilled
registers, and from Triton the shared memory the launch asks for.

Run it where ``TRITON_INTERPRET`` is unset or 0: the kernels must be real
JIT functions, not the interpreter's.
"""
import argparse
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource, make_backend
from triton.runtime.jit import JITFunction, create_function_from_signature

from ...kernels import activation, argmax, kv_write, norm, online_softmax, rotary
from ...kernels.contiguous_attention import contiguous_attention
from ...kernels.padded_attention import padded_attention
from ...kernels.paged_attention import paged_attention, paged_attention_tiles
from ...kernels.ragged_attention import ragged_attention

DTYPES = (torch.float32, torch.float16, torch.bfloat16)
HEAD_DIMS = (64, 80, 128)
GROUPS = (1, 3, 4, 8)                    # query heads per KV head (3: a group that is no power of two)
QUERY_LENS = (1, 3, 5, 9, 17, 33, 64)    # new tokens per sequence: decode, then every tile height
SPLITS = (2, 3, 5, 9)                    # split-KV ranges: every power-of-two bucket up to 16
ARCHS = (90, 80)                         # H100, A100: every case with --full
QUICK_ARCHS = (89, 75)                   # L4, T4 (a free hosted notebook's GPU): the quick matrix
# The most dynamic shared memory a block may ask for.
SHARED_LIMIT = {90: 232448, 80: 166912, 89: 101376, 75: 65536}
BF16_FROM = 80                           # bf16 needs sm_80; older GPUs run fp16
# Streaming multiprocessors the host wrappers assume when choosing tiles and
# splits as a GPU would (an H100's: an A100 has 108, an L4 58, a T4 40)
H100_PROCESSORS = 132


@dataclass
class Launch:
    kernel: object                       # the JITFunction
    args: tuple
    kwargs: dict
    case: str                            # where it came from, for the report


@dataclass
class Compiled:
    kernel: str
    arch: int
    case: str
    constants: str
    num_warps: int
    registers: int = 0
    stack_bytes: int = 0                 # > 0 means ptxas spilled registers to local memory
    shared_bytes: int = 0
    seconds: float = 0.0
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error and self.stack_bytes == 0 and self.shared_bytes <= SHARED_LIMIT[self.arch]


# ANCHOR: record
@contextmanager
def recorded_launches():
    """Inside, launching any Triton kernel records it instead: the host
    wrappers run as they do in the engine, and nothing touches a GPU."""
    launches, original = [], JITFunction.run

    def record(self, *args, grid, warmup, **kwargs):
        launches.append(Launch(self, args, kwargs, case=""))

    JITFunction.run = record
    try:
        yield launches
    finally:
        JITFunction.run = original


def specialize(launch: Launch, arch: int):
    """What a launch on sm_<arch> would compile: Triton's own launcher code
    classifies each argument (a pointer or an integer divisible by 16, an
    integer equal to 1, ...) unless the kernel marks it do_not_specialize."""
    kernel, target = launch.kernel, GPUTarget("cuda", arch, 32)
    backend = make_backend(target)
    binder = create_function_from_signature(kernel.signature, kernel.params, backend)
    bound, specialization, options = binder(*launch.args, **launch.kwargs)
    options, signature, constexprs, attrs = kernel._pack_args(
        backend, launch.kwargs, bound, specialization, options)
    return ASTSource(kernel, signature, constexprs, attrs), target, options


def compile_launch(launch: Launch, arch: int):
    """Compile one recorded launch for sm_<arch>, specialized as a real launch
    would be."""
    source, target, options = specialize(launch, arch)
    return triton.compile(source, target=target, options=options.__dict__)
# ANCHOR_END: record


def resource_usage(cubin: bytes) -> dict:
    """Registers and stack bytes per thread, read from the cubin by cuobjdump."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        report = subprocess.run([triton.knobs.nvidia.cuobjdump.path, "-res-usage", f.name],
                                capture_output=True, text=True, check=True).stdout
    usage = {key: max(int(v) for k, v in re.findall(r"(REG|STACK|LOCAL):(\d+)", report) if k == key)
             for key in ("REG", "STACK", "LOCAL")}               # the largest of any function in the cubin
    return dict(registers=usage["REG"], stack_bytes=usage["STACK"] + usage["LOCAL"])


def first_cause(error) -> str:
    """A compile error inside a nested @triton.jit function arrives wrapped once per
    call site; the innermost exception says what went wrong."""
    while error.__cause__ is not None or (error.__context__ is not None and not error.__suppress_context__):
        error = error.__cause__ or error.__context__
    return f"{type(error).__name__}: {str(error).strip()[:300]}"


def check(launch: Launch, arch: int) -> Compiled:
    constants = {k: v for k, v in launch.kwargs.items() if k not in ("num_warps", "num_stages", "maxnreg")}
    row = Compiled(launch.kernel.__name__.lstrip("_"), arch, launch.case,
                   " ".join(f"{k}={v}" for k, v in constants.items()), launch.kwargs.get("num_warps", 4))
    started = time.perf_counter()
    try:
        compiled = compile_launch(launch, arch)
        row.shared_bytes = compiled.metadata.shared
        for key, value in resource_usage(compiled.asm["cubin"]).items():
            setattr(row, key, value)
    except Exception as error:                       # a compile error is a result to report
        row.error = first_cause(error)
    row.seconds = time.perf_counter() - started
    return row


# ---------------------------------------------------------------- the cases
# ANCHOR: cases
def engine_launches(dtype, head_dim, group, query_lens=QUERY_LENS, block_size=16,
                    splits=SPLITS):
    """Every launch the engines make for one (dtype, head_dim, GQA group),
    with the layouts they use: caches with a layer axis, one layer's view
    passed in; packed q [tokens, H, d]; int32 metadata, int64 slot mapping."""
    kv_heads, layers, rows = 2, 2, 4 * block_size * 64
    heads = kv_heads * group
    new = lambda *shape, dt=dtype: torch.zeros(*shape, dtype=dt)     # noqa: E731
    k_cache, v_cache = (new(layers, rows, kv_heads, head_dim),
                        new(layers, rows, kv_heads, head_dim))
    ints = lambda values: torch.tensor(values, dtype=torch.int32)     # noqa: E731
    with recorded_launches() as launches:
        # two sequences of n new tokens each
        for n in query_lens:
            q, context = new(2 * n, heads, head_dim), n + 40
            contiguous_attention(q[:n], k_cache[1], v_cache[1], context)
            padded = k_cache[1, :2 * 128].view(2, 128, kv_heads, head_dim)
            padded_attention(q.view(2, n, heads, head_dim), padded, padded.clone(),
                             ints([context, context]), ints([0, 3]))
            cu_seqlens, seq_lens = ints([0, n, 2 * n]), ints([context, context + 7])
            ragged_attention(q, k_cache[1], v_cache[1], cu_seqlens, seq_lens,
                             ints([0, 256]), n)
            tables = ints(range(2 * 8)).view(2, 8)
            paged_attention(q, k_cache[1], v_cache[1], cu_seqlens, seq_lens,
                            tables, block_size, n)
            # the same step as a graph replays it: tiles listed for 2n queries
            paged_attention_tiles(q, k_cache[1], v_cache[1], cu_seqlens, seq_lens,
                                  tables, block_size, 2 * n)
            kv_write.store_kv_cache(q[:, :kv_heads], q[:, :kv_heads],
                                    k_cache[1], v_cache[1], torch.arange(2 * n))
        decode = (new(2, heads, head_dim), ints([0, 1, 2]), ints([300, 40]),
                  ints(range(2 * 32)).view(2, 32))
        # split-KV decode steps and their combine
        for num_splits in splits:
            q, cu_seqlens, seq_lens, tables = decode
            paged_attention(q, k_cache[1], v_cache[1], cu_seqlens, seq_lens,
                            tables, block_size, 1, num_splits)
        # a decode step whose programs fill the GPU: its tiles walk fewer keys a trip
        full = 2 * H100_PROCESSORS
        q, lens = new(full, heads, head_dim), ints([300] * full)
        padded = k_cache[1, :full * 8].view(full, 8, kv_heads, head_dim)
        padded_attention(q.view(full, 1, heads, head_dim), padded, padded.clone(),
                         ints([8] * full), ints([0] * full))
        cu_seqlens = torch.arange(full + 1, dtype=torch.int32)
        ragged_attention(q, k_cache[1], v_cache[1], cu_seqlens, ints([16] * full),
                         ints([0] * full), 1)
        paged_attention(q, k_cache[1], v_cache[1], cu_seqlens, lens,
                        ints([0] * 32 * full).view(full, 32), block_size, 1)
    for launch in launches:
        launch.case = f"{str(dtype).removeprefix('torch.')} d={head_dim} gqa={group}"
    return launches
# ANCHOR_END: cases


def layer_launches(dtype, heads, kv_heads, head_dim, tokens=8):
    """The fused kernels of a decoder layer (chapter 8) at this shape: the residual
    add and RMSNorm (the first layer's without a residual), SiLU x up on the halves
    of one gate-and-up output, rotary on q and k, and the sampler's greedy pick
    over fp32 logits (the model's dtype aside)."""
    hidden = heads * head_dim
    new = lambda *shape: torch.zeros(*shape, dtype=dtype)     # noqa: E731
    with recorded_launches() as launches:
        x, weight = new(tokens, hidden), new(hidden)
        norm.add_rms_norm(x, x, weight, 1e-5)
        norm.add_rms_norm(x, None, weight, 1e-5)
        gate_up = new(tokens, 8 * hidden)
        activation.silu_mul(gate_up[:, :4 * hidden], gate_up[:, 4 * hidden:])
        rotary.rotary(new(tokens, heads, head_dim), new(tokens, kv_heads, head_dim),
                      new(tokens, head_dim), new(tokens, head_dim))
        argmax.finite_argmax(torch.zeros(tokens, 128256))
    for launch in launches:
        launch.case = f"{str(dtype).removeprefix('torch.')} layer hidden={hidden}"
    return launches


def distinct(launches):
    """One launch per compiled kernel: the same kernel, constants and argument classes compile once."""
    backend, seen, kept = make_backend(GPUTarget("cuda", 90, 32)), set(), []
    for launch in launches:
        binder = create_function_from_signature(launch.kernel.signature, launch.kernel.params, backend)
        _, specialization, _ = binder(*launch.args, **launch.kwargs)
        key = (launch.kernel.__name__, str(specialization), str(sorted(launch.kwargs.items())))
        if key not in seen:
            seen.add(key)
            kept.append(launch)
    return kept



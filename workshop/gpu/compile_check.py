"""Compile every kernel the engines launch for a real GPU, without one: the
repository's check that each launch compiles, spills nothing and fits its shared
memory, for the GPUs this machine lacks.

    python -m workshop.gpu.compile_check            # the quick matrix, sm_90
    python -m workshop.gpu.compile_check --full     # every case for sm_90 and sm_80,
                                                    # the quick matrix for sm_89 and sm_75

Run it where ``TRITON_INTERPRET`` is unset or 0 (it starts itself again so).
"""
import argparse
import itertools
import json
import os
import sys
from dataclasses import asdict

import torch
import triton

from minicb.kernels import online_softmax
from minicb.kernels.contiguous_attention import contiguous_attention
from minicb.tools.bench.run_record import current_commit, machine
from minicb.tools.gpu.compile_for_gpu import (ARCHS, BF16_FROM, DTYPES, GROUPS, H100_PROCESSORS, HEAD_DIMS, QUICK_ARCHS,
                                      SHARED_LIMIT, Compiled, check, distinct, engine_launches, layer_launches,
                                      recorded_launches)


def matrix(full: bool, arch: int):
    """The quick matrix: bf16 (fp16 below sm_80) at head_dim 128 with GQA 1, 4
    and 8 (the GPU figures' shapes), fp16 and fp32 at one group each. Full:
    every dtype x head_dim x group. Both: every tile height, every split bucket.
    The host wrappers choose tiles for ``arch``, as they would on that GPU."""
    half = torch.bfloat16 if arch >= BF16_FROM else torch.float16
    if full:
        dtypes = [d for d in DTYPES if d != torch.bfloat16 or arch >= BF16_FROM]
        cases = itertools.product(dtypes, HEAD_DIMS, GROUPS)
    else:
        cases = [(half, 128, g) for g in (1, 4, 8)] + [(torch.float16, 80, 4), (torch.float32, 64, 3)]
    chosen = online_softmax.TARGET_ARCH, online_softmax.TARGET_PROCESSORS
    online_softmax.TARGET_ARCH, online_softmax.TARGET_PROCESSORS = arch, H100_PROCESSORS
    try:
        launches = [launch for case in cases for launch in engine_launches(*case)]
        for dtype in dict.fromkeys(case[0] for case in cases):     # the 1B shape's layer
            launches += layer_launches(dtype, heads=32, kv_heads=8, head_dim=64)
        return launches
    finally:
        online_softmax.TARGET_ARCH, online_softmax.TARGET_PROCESSORS = chosen


def plan(full: bool, archs=None) -> list[tuple[int, bool]]:
    """(arch, whole matrix?) pairs: --arch as given (quick, or whole with --full);
    else sm_90 quick, or with --full sm_90 and sm_80 whole, sm_89 and sm_75 quick."""
    if archs:
        return [(arch, full) for arch in archs]
    return [(arch, True) for arch in ARCHS] + [(arch, False) for arch in QUICK_ARCHS] if full \
        else [(ARCHS[0], False)]


def run(full: bool, archs=None) -> list[Compiled]:
    rows = []
    for arch, whole in plan(full, archs):
        rows += [check(launch, arch) for launch in distinct(matrix(whole, arch))]
    return rows


def report(rows: list[Compiled]) -> str:
    lines = [f"{'kernel':30s} {'sm':>3s} {'case':22s} {'warps':>5s} {'regs':>4s} {'spill':>5s} "
             f"{'shared':>7s}  constants"]
    for r in rows:
        status = r.error or ""
        lines.append(f"{r.kernel:30s} {r.arch:3d} {r.case:22s} {r.num_warps:5d} {r.registers:4d} "
                     f"{r.stack_bytes:5d} {r.shared_bytes:7d}  {r.constants} {status}")
    failed = [r for r in rows if not r.ok]
    lines.append(f"{len(rows)} compiled with triton {triton.__version__} in {sum(r.seconds for r in rows):.0f} s: "
                 f"{len(failed)} failed (compile error, spill or too much shared memory); most registers "
                 f"{max((r.registers for r in rows), default=0)}, most shared memory "
                 f"{max((r.shared_bytes for r in rows), default=0)} bytes")
    return "\n".join(lines)


PROBE_ROWS, PROBE_HEAD_DIM = 64, 128      # the tall fp32 tile: fp16's rows, at a wide head


def fp32_tall_tile_probe(arch: int = 90) -> Compiled:
    """The launch that set fp32 tiles at 32 rows: contiguous attention in fp32 at head
    dim 128, with tiles of 64 rows (tile_options' choice for fp16) instead. It
    spills (chapter 8, "Compiled for a GPU you do not have")."""
    tiles = online_softmax
    chosen = tiles.tile_options

    def tall(dtype, *args, **kwargs):
        opts = chosen(dtype, *args, **kwargs)
        return opts | dict(BLOCK_M=PROBE_ROWS) if dtype == torch.float32 else opts

    q, cache = torch.zeros(64, 8, PROBE_HEAD_DIM), torch.zeros(2, 512, 2, PROBE_HEAD_DIM)
    tiles.tile_options = tall
    try:
        with recorded_launches() as launches:
            contiguous_attention(q, cache[1], cache[1], 64 + 40)
    finally:
        tiles.tile_options = chosen
    launch = next(launch for launch in launches if launch.kwargs.get("BLOCK_M") == PROBE_ROWS)
    launch.case = f"float32 d={PROBE_HEAD_DIM} gqa=4, {PROBE_ROWS}-row tiles"
    return check(launch, arch)


def summary(rows: list[Compiled]) -> dict:
    """What chapter 8 quotes of a full run: how many kernels, how many failed, the most
    registers and shared memory any one uses, and what the tall fp32 tile spills."""
    probe = fp32_tall_tile_probe()
    widest = max(rows, key=lambda r: r.shared_bytes)
    return dict(triton=triton.__version__, commit=current_commit(), machine=machine(),
                archs=sorted({r.arch for r in rows}), kernels=len(rows),
                failed=sum(not r.ok for r in rows), most_registers=max(r.registers for r in rows),
                most_shared_bytes=widest.shared_bytes, most_shared_case=f"{widest.kernel} {widest.case} "
                f"{widest.constants}", fp32_64_row_tile=dict(arch=probe.arch, registers=probe.registers,
                                                             stack_bytes=probe.stack_bytes, error=probe.error))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true",
                        help="every dtype, head_dim, GQA group and tile (sm_90, sm_80), and the quick "
                             "matrix for sm_89 and sm_75")
    parser.add_argument("--arch", type=int, nargs="+", help="compute capabilities to compile for "
                        "(default: 90; with --full, 90 80 89 75)")
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("--summary", help="also write what chapter 8 quotes of the run to this file")
    args = parser.parse_args(argv)
    if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
        # Importing minicb turned the interpreter on (no GPU here): start again with it off.
        env = {**os.environ, "TRITON_INTERPRET": "0"}
        os.execve(sys.executable, [sys.executable, "-m", __spec__.name, *(argv or sys.argv[1:])], env)
    unknown = [arch for arch in args.arch or () if arch not in SHARED_LIMIT]
    if unknown:
        parser.error(f"--arch {unknown[0]}: choose from {sorted(SHARED_LIMIT)}")
    rows = run(args.full, args.arch)
    print(report(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(triton=triton.__version__, rows=[asdict(r) | dict(ok=r.ok) for r in rows]), f, indent=1)
    if args.summary:
        with open(args.summary, "w") as f:
            json.dump(summary(rows), f, indent=1)
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

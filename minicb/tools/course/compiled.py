"""A student's Triton code compiled for real GPUs (sm_90 and sm_80), without one.

Triton's interpreter runs a kernel as numpy code, and accepts what no GPU
would: a ``num_warps`` that is no power of two, a block shape a ``tl.dot``
cannot take, more shared memory than a GPU has, more than 1,024 threads a
block. So a kernel exercise's check also records the launches the engine's
host wrappers make with the student's function inside, as the GPU compile
check does (``minicb.tools.gpu.compile_for_gpu``, which the repository's
compile check runs over every launch), compiles each one for an H100
and an A100 through the ptxas Triton's wheel ships, and refuses what compiles
but would not launch. It runs in a process of its own, with the interpreter off:

    python -m minicb.tools.course.compiled NAME FILE FUNCTION   # prints JSON: what failed
"""
import json
import os
import subprocess
import sys
from contextlib import ExitStack

import torch

from ...kernels import norm
from ..gpu import compile_for_gpu as compile_check
from .exercises import EXERCISES
from .student import load_stub, swapped_in

ARCHS = (90, 80)


def launches(kind: str) -> list:
    """The launches to compile for one kernel exercise: its kernels as the engine
    launches them, in fp16 and fp32 (bf16 for sm_80 and up, where it exists)."""
    if kind == "norm":
        with compile_check.recorded_launches() as recorded:
            for dtype in (torch.float16, torch.bfloat16, torch.float32):
                for hidden in (96, 4096):                 # 4 warps, then 8
                    x, weight = torch.zeros(4, hidden, dtype=dtype), torch.zeros(hidden, dtype=dtype)
                    norm.add_rms_norm(x, x, weight, 1e-5)
                    norm.add_rms_norm(x, None, weight, 1e-5)
        return recorded
    recorded = []
    for dtype, head_dim, group in ((torch.float16, 64, 4), (torch.float32, 80, 3)):
        recorded += compile_check.engine_launches(dtype, head_dim, group, query_lens=(1, 9), splits=(3,))
    return [launch for launch in recorded if uses(launch.kernel, kind)]


def uses(kernel, kind: str) -> bool:
    """Whether a kernel's source reaches the exercise's function (attention: every
    attention kernel; paged: the paged ones; combine: split-KV's merge)."""
    name = kernel.__name__
    if kind == "attention":
        return "attention" in name
    if kind == "paged":
        return "paged" in name
    return "combine" in name


def compile_all(kind: str) -> list[dict]:
    """Every launch for every arch: a row for each that failed."""
    failed = []
    for launch in compile_check.distinct(launches(kind)):
        for arch in ARCHS:
            row = compile_check.check(launch, arch)
            error = row.error or refused(row, arch) or imprecise(launch, arch)
            if error:
                failed.append(dict(kernel=row.kernel, arch=arch, constants=row.constants,
                                   num_warps=row.num_warps, error=error))
    return failed


MAX_THREADS = 1024            # a block's threads on every NVIDIA GPU since 2010


def refused(row, arch: int) -> str:
    """Why a GPU would refuse to launch what compiled, if it would."""
    if row.num_warps * 32 > MAX_THREADS:
        return (f"{row.num_warps} warps are {row.num_warps * 32} threads a block; a GPU launches "
                f"at most {MAX_THREADS}")
    if row.shared_bytes > compile_check.SHARED_LIMIT[arch]:
        return f"{row.shared_bytes} bytes of shared memory, more than sm_{arch} has"
    return ""


def imprecise(launch, arch: int) -> str:
    """An fp32 launch that asks for exact dot products (PRECISION "ieee") whose
    compiled code multiplies in tf32 all the same: a tl.dot that left out
    input_precision, which the interpreter computes exactly and a GPU does not."""
    if launch.kwargs.get("PRECISION") != "ieee":
        return ""
    if "tf32" not in compile_check.compile_launch(launch, arch).asm["ptx"]:
        return ""
    return ("its fp32 dot products run in tf32 on this GPU (a tl.dot without "
            "input_precision=PRECISION), about 3 decimal digits where fp32 keeps 7")


def main(argv=None) -> int:
    name, path, function = (argv or sys.argv[1:])[:3]
    ex = EXERCISES[name]
    yours = load_stub(ex, path, function)
    with ExitStack() as stack:
        for module in (ex.target.partition(":")[0], *ex.also):
            stack.enter_context(swapped_in(f"{module}:{ex.function_name}", yours))
        print(json.dumps(compile_all(ex.space)))
    return 0


def failures(name: str, path, function: str) -> tuple[list, str | None]:
    """What failed to compile with the student's ``function`` from the file at
    ``path``, and why nothing could be compiled, if so."""
    env = {**os.environ, "TRITON_INTERPRET": "0", "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([sys.executable, "-m", __spec__.name, name, str(path), function], env=env,
                          capture_output=True, text=True)
    if done.returncode:
        lines = done.stderr.strip().splitlines() or ["no output"]
        return [], lines[-1]
    return json.loads(done.stdout.strip().splitlines()[-1]), None


if __name__ == "__main__":
    sys.exit(main())

"""The kernels compile for real GPUs, checked on a machine without one.

workshop/gpu/compile_check.py calls every host wrapper the way the engines do,
records the launches, and compiles each for sm_90 (H100) with the ptxas
that Triton's wheel ships. A compile error, a register spill or a launch
asking for more shared memory than the GPU has fails the test.

- The default run compiles the quick matrix for sm_90.
- MINICB_COMPILE_CHECK=full compiles every dtype x head_dim x GQA group x
  tile height x split bucket for sm_90 and sm_80, and the quick matrix for
  sm_89 (L4) and sm_75 (T4, fp16) (the same as
  ``python -m workshop.gpu.compile_check --full`` from a shell).
- MINICB_EXTRA_TRITON=<folder> also runs it with the Triton installed in
  that folder (``pip install --no-deps --target <folder> triton==3.6.0``,
  which `make test` does).

The checks run in a fresh process: in this one the kernels are the
interpreter's, not compiled JIT functions.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KERNELS = {"add_rms_norm_kernel", "silu_mul_kernel", "rotary_kernel", "finite_argmax_kernel",
           "contiguous_attention_kernel", "padded_attention_kernel", "ragged_attention_kernel",
           "paged_attention_kernel", "paged_attention_tiles_kernel", "paged_attention_split_kernel",
           "combine_splits_kernel", "store_kv_kernel"}
FULL = os.environ.get("MINICB_COMPILE_CHECK") == "full"
EXTRA_TRITON = os.environ.get("MINICB_EXTRA_TRITON")


def run_compiled(args, triton_folder=None, **kwargs):
    """Run python with args in a fresh process where Triton compiles (no interpreter)."""
    env = {**os.environ, "TRITON_INTERPRET": "0"}
    if triton_folder:
        env["PYTHONPATH"] = os.pathsep.join([triton_folder, env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, cwd=ROOT, **kwargs)


def triton_version(folder):
    code = "import triton; print(triton.__version__)"
    return run_compiled(["-c", code], folder, check=True).stdout.strip()


TRITONS = pytest.mark.parametrize("triton_folder", [None] + ([EXTRA_TRITON] if EXTRA_TRITON else []),
                                  ids=lambda f: "installed-triton" if f is None else Path(f).name)


@pytest.mark.long
@TRITONS
def test_every_launch_compiles_for_the_gpu_without_spilling(tmp_path, triton_folder):
    report = tmp_path / "compile.json"
    result = run_compiled(["-m", "workshop.gpu.compile_check", "--json", str(report)] + (["--full"] if FULL else []),
                          triton_folder, timeout=3600)
    print(result.stdout)                              # the table: registers, spills, shared memory per kernel
    assert report.exists(), result.stderr[-3000:]
    data = json.loads(report.read_text())
    assert data["triton"] == triton_version(triton_folder)     # the Triton we meant compiled it
    rows = data["rows"]
    assert {r["kernel"] for r in rows} == KERNELS
    assert {r["arch"] for r in rows} == ({90, 80, 89, 75} if FULL else {90})
    assert not any(r["arch"] < 80 and "bfloat16" in r["case"] for r in rows)      # a T4 has no bf16
    failed = [r for r in rows if not r["ok"]]
    assert not failed, "\n".join(f"{r['kernel']} sm_{r['arch']} {r['case']} {r['constants']}: spill "
                                 f"{r['stack_bytes']} B, shared {r['shared_bytes']} B {r['error']}" for r in failed)
    assert all(r["registers"] > 0 for r in rows)
    assert result.returncode == 0
    summary = ROOT / "figures" / "cpu" / "compile" / f"triton-{'.'.join(data['triton'].split('.')[:2])}.json"
    if FULL and summary.exists():      # chapter 8 quotes a full run with each Triton it names: this one's
        quoted = json.loads(summary.read_text())
        full = [r for r in rows if r["arch"] in (90, 80)]
        assert (quoted["kernels"], quoted["failed"], quoted["most_registers"], quoted["most_shared_bytes"]) == \
            (len(full), 0, max(r["registers"] for r in full), max(r["shared_bytes"] for r in full)), \
            "run compile_check --full --arch 90 80 --summary again for figures/cpu/compile/"


def test_the_check_compiles_both_lengths_of_the_decode_tile():
    """A decode launch with programs to spare walks 32 keys a trip and one with
    few 64 (kernels/online_softmax.py): the check compiles both, as an H100's
    host wrappers would choose them, and split-KV's only ever with few."""
    code = """
import json, torch
from workshop.gpu.compile_check import matrix
decode = [l for l in matrix(False, 90) if l.kwargs.get("BLOCK_M") == 16 and "bfloat16 d=128" in l.case]
print(json.dumps(sorted({(l.kernel.__name__, l.kwargs["BLOCK_N"]) for l in decode})))
"""
    result = run_compiled(["-c", code], timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    lengths = {}
    for kernel, keys in json.loads(result.stdout.splitlines()[-1]):
        lengths.setdefault(kernel.lstrip("_"), set()).add(keys)
    for kernel in ("padded_attention_kernel", "ragged_attention_kernel", "paged_attention_kernel"):
        assert lengths[kernel] == {32, 64}, (kernel, lengths)
    assert lengths["paged_attention_split_kernel"] == {64}
    assert lengths["contiguous_attention_kernel"] == {64}      # one sequence a launch: always few


def test_the_check_fails_a_compile_error_and_a_spill():
    code = """
import json, sys, torch
sys.path.insert(0, "tests/kernels")
import kernels_that_fail as bad
from minicb.tools.gpu.compile_for_gpu import Launch, check
x = torch.zeros(128 * 128)
rows = [check(Launch(bad.dot_of_two_vectors, (x,), dict(BLOCK=16), "broken"), 90),
        check(Launch(bad.tile_too_large_for_one_warp, (x, x), dict(BLOCK=128, num_warps=1), "spills"), 90),
        check(Launch(bad.tile_too_large_for_one_warp, (x, x), dict(BLOCK=16, num_warps=1), "fits"), 90)]
print(json.dumps([dict(ok=r.ok, error=r.error, stack=r.stack_bytes, registers=r.registers) for r in rows]))
"""
    result = run_compiled(["-c", code], timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    broken, spills, fits = json.loads(result.stdout.splitlines()[-1])
    assert not broken["ok"] and broken["error"]
    assert not spills["ok"] and spills["stack"] > 0 and not spills["error"]
    assert fits["ok"] and fits["stack"] == 0 and fits["registers"] > 0


@TRITONS
def test_launches_are_specialized_as_on_a_gpu(triton_folder):
    """Aligned pointers, strides and a block size divisible by 16 compile as
    such; the block table's width, marked do_not_specialize, does not."""
    code = """
import json, torch
from minicb.tools.gpu.compile_for_gpu import engine_launches, specialize
launches = engine_launches(torch.bfloat16, 128, 4, query_lens=(1,), splits=())
launch = next(l for l in launches if l.kernel.__name__ == "_paged_attention_kernel")
source, _, _ = specialize(launch, 90)
names = launch.kernel.arg_names
print(json.dumps(sorted(names[i] for (i,), attrs in source.attrs.items() if ["tt.divisibility", 16] in attrs)))
"""
    result = run_compiled(["-c", code], triton_folder, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    divisible = json.loads(result.stdout.splitlines()[-1])
    assert divisible == sorted(["Q", "K", "V", "O", "CU_SEQLENS_Q", "SEQ_LENS", "BLOCK_TABLES", "stride_qt",
                                "stride_qh", "stride_kt", "stride_kh", "stride_ot", "stride_oh", "block_size"])


# What Triton does with an integer argument that is not marked do_not_specialize
# (chapter 8): one equal to this becomes a constant, and one divisible by this gets
# code that assumes it.
SPECIALIZED_VALUE, SPECIALIZED_DIVISOR = 1, 16


def test_triton_specializes_an_integer_equal_to_one_and_one_divisible_by_sixteen():
    from triton._C.libtriton import native_specialize_impl
    from triton.backends.compiler import BaseBackend

    def specialized(value):
        return native_specialize_impl(BaseBackend, value, False, True, True)

    assert specialized(SPECIALIZED_VALUE) == ("constexpr", SPECIALIZED_VALUE)
    assert specialized(3 * SPECIALIZED_DIVISOR)[1] == "D"          # known divisible
    assert specialized(SPECIALIZED_DIVISOR + 1)[1] == specialized(SPECIALIZED_DIVISOR // 2)[1] == ""

"""Everything a GPU run owes, in parts that each fit one short command.

    make gpu-wheels                   # with a network: the wheels `make gpu` installs offline
    make gpu-plan                     # on the GPU: each part, and its minutes on this GPU
    make gpu PARTS="correctness"      # a part (or several, or all); PARTS unset: all of them
    make gpu PARTS="stages:03_dynamic"  # only that notebook of the part, and its figures
    make gpu-rehearsal                # every part on this CPU, as CI runs it

A lent GPU comes in short windows (15 minutes in all, the machine's start and
the install included, at most ten for a command, no network), so the run is
cut into parts that each fit one command, packed into windows (``windows``):
the compiled tests first
(the real shapes' checkpoints are written meanwhile, for the parts after),
then the kernels' notebook, then the notebooks whose figures the book shows.
Each part writes one archive, ``OUT/PART.tar.gz``: its figures and their
sidecars, ``results.json`` (the machine, each notebook's outcome and time, the
figures' headline numbers) and ``log.txt``, so bringing a part back is one copy.

``plan`` measures the GPU's copy bandwidth and matmul rate and estimates each
part's minutes from the sizes in ``minicb.tools.report.scale`` with a rough cost model
(below), checked against a run's measured times; ``run`` refuses a part whose
estimate passes MAX_MINUTES. The
rehearsal runs every part on a CPU at the full scale's settings with a tiny
model and fewer requests (``minicb.tools.report.scale``), checks every archive, and says
what it could not do there.
"""
import argparse
import importlib.util
import json
import math
import os
import platform
import re
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch

from ..bench.benchmarks import measured_rates, study_kv_tokens
from ..bench.calibrate import MEASURE
from ..report.figures import REQUIRED_SIDECAR_KEYS, project_root
from ..report.scale import SIZES, weight_bytes
from ..bench.workload import preset_workload, synthetic_workload

WINDOW_MINUTES = 15            # a lent GPU's time in all
START_MINUTES = 1              # of which its start (about 30 s), the install (6 s) and the plan's rates
MAX_MINUTES = 9                # a part: one command (at most 10 minutes), with a margin
ROOFLINE_MODES = 4             # notebook 08's decode roofline: plain, async, fused, fused + async
TEST_WORKERS = 8               # the GPU tests' processes on one GPU (pytest-xdist), each engine sized small
MAX_ARCHIVE_BYTES = 16 * 2**20


# ANCHOR: parts
@dataclass
class Part:
    name: str
    what: str
    notebooks: list[str] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)      # pytest arguments
    figures: list[str] = field(default_factory=list)    # what its notebooks must draw
    gpu_figures: list[str] = field(default_factory=list)  # ...and draw only where Triton compiles
    checkpoints: list[str] = field(default_factory=list)   # shapes written meanwhile, for later parts
    rehearsal_skips: str = "CUDA graphs and CUDA events (the CPU runs the sdpa backend on the wall clock)"
    # python -m MODULE --out PART_FOLDER/OUTPUT: a module that writes files, not figures
    module: str = ""
    output: str = ""


# The GPU's own checks: kernels (fused ones too) against the reference in fp16 and bf16, every engine
# against transformers, CUDA graphs, async scheduling, and the server briefly.
GPU_TESTS = ["tests/test_kernels.py", "tests/test_fused_kernels.py", "tests/test_paged.py",
             "tests/test_engines.py", "tests/test_cuda_graphs.py", "tests/test_overlap.py", "tests/test_sampling.py",
             "tests/test_server.py::test_completions_whole_and_streamed_are_llm_generate",
             "tests/test_server.py::test_dropped_streams_free_their_requests_and_the_rest_complete"]

# Notebooks a GPU run leaves out: they run no model, so they draw the same on any
# machine (the simulated executor's predictions, made with `make figures-cpu`).
SAME_ON_ANY_MACHINE = ("11_simulated",)

PARTS = [
    Part("correctness", "the machine, and the GPU tests: compiled kernels, engines, graphs, server",
         tests=GPU_TESTS, checkpoints=["llama-3.2-1b", "llama-3.1-8b"],
         rehearsal_skips="running the GPU tests (collected only: `make test` runs them on this CPU)"),
    Part("kernels", "kernel bandwidth, what a program reads, the decode roofline, where a step's "
         "time goes", ["08_kernels"],
         figures=["08_kernel_bandwidth", "08_kv_bytes", "08_decode_roofline"], gpu_figures=["08_decode_tile"],
         module="minicb.tools.bench.step_profile", output="profile",
         rehearsal_skips="timing the compiled Triton kernels (PyTorch's cases only), CUDA graphs"),
    Part("stages", "stages 1-3: prefill and decode, the white squares, the window",
         ["01_single", "02_static", "03_dynamic"],
         figures=["01_prefill_vs_decode", "02_static_white_squares", "02_static_kv_use", "03_dynamic_window"]),
    Part("iteration", "stages 4-5: Orca, the block pool, waste, block size, preemption, chunking",
         ["04_continuous", "05_paged"],
         figures=["04_orca_picture", "04_tokens_per_step", "04_latency_cdf", "05_block_pool", "05_kv_waste",
                  "05_running_vs_budget", "05_block_size"]),
    Part("pressure", "memory pressure: the scheduling knobs, prompt steps replayed and launched",
         ["06_memory_pressure"], figures=["06_scheduling_knobs"]),
    Part("benchmarks", "the Anyscale experiment, latency under load, schedule_interval", ["07_benchmarks"],
         figures=["07_throughput_vs_spread", "07_latency_under_load", "07_interval_and_host_time"]),
    Part("serving", "every stage behind minicb serve, measured by bench serve", ["09_serving"],
         figures=["09_serving"]),
    # With one GPU only its arithmetic runs (two ranks need two devices): no figure.
    Part("parallel", "tensor parallelism: what a step communicates", ["10_tensor_parallel"]),
    Part("calibrate", "profiles for the simulated executor: stage 5 measured on this GPU",
         module="minicb.tools.bench.calibrate measure", output="profiles",
         rehearsal_skips="a GPU's rates (the CPU calibrates itself, the tiny model for each shape)"),
]
# ANCHOR_END: parts

# What an H100 SXM measured (copy bytes read + written per second, bf16 matmul):
# the rates `plan` would find there, for checking the plan on a machine without one.
H100_RATES = dict(copy_gb_s=3000, matmul_tflops=798)

# ANCHOR: cuda_only
# Lines that run only on a GPU: a CPU never reaches them, not even in the rehearsal.
# Each file holding one names what reaches it on a GPU: a test of part 1 (which, run
# under coverage there, reports any such line it missed), or a part whose notebooks
# run it at full scale. tests/test_gpu_run.py fails when a file gains such a line
# and is not listed here.
CUDA_ONLY = re.compile(r'startswith\("cuda"\)|torch\.cuda\.is_available\(\)|\.is_cuda\b|== "cuda"|!= "cuda"')
REACHED_ON_A_GPU = {
    "minicb/config.py": "tests/test_engines.py",
    "minicb/llm.py": "tests/test_engines.py",
    "minicb/attention.py": "tests/test_kernels.py",
    "minicb/observer.py": "tests/test_engines.py",
    "minicb/stages/base.py": "tests/test_engines.py",
    "minicb/gpu_memory.py": "tests/test_paged.py",
    "minicb/stages/overlap.py": "tests/test_overlap.py",
    "kernels/online_softmax.py": "tests/test_kernels.py",
    "minicb/executors/parallel.py": "two GPUs: tensor parallelism's NCCL path (a lent machine has one)",
    "minicb/tools/bench/offline.py": "part benchmarks",
    "minicb/tools/bench/peers.py": "part benchmarks",
    "minicb/tools/bench/benchmarks.py": "part kernels",
    "minicb/tools/report/figures.py": "part stages",
    "notebooks/08_kernels.ipynb": "part kernels",
    "minicb/tools/bench/calibrate.py": "part calibrate",
    "minicb/tools/bench/step_profile.py": "part kernels",
}
# The driver and the scale table choose between the GPU and the CPU themselves.
DECIDES_THE_DEVICE = ("minicb/tools/gpu/run.py", "minicb/tools/report/scale.py")


def cuda_only_lines(root: Path) -> dict[str, list[int]]:
    """{file: line numbers} of the lines CUDA_ONLY finds in the engine, the kernels,
    the tools and the notebooks (a notebook's lines counted through its code cells)."""
    found = {}
    for path in sorted([*root.glob("minicb/**/*.py"), *root.glob("kernels/*.py"), *root.glob("notebooks/*.ipynb")]):
        name = str(path.relative_to(root))
        if name in DECIDES_THE_DEVICE:
            continue
        if path.suffix == ".ipynb":
            cells = json.loads(path.read_text())["cells"]
            lines = [line for c in cells if c["cell_type"] == "code" for line in "".join(c["source"]).splitlines()]
        else:
            lines = path.read_text().splitlines()
        hits = [i + 1 for i, line in enumerate(lines) if CUDA_ONLY.search(line.split("#")[0])]
        if hits:
            found[name] = hits
    return found
# ANCHOR_END: cuda_only


# ---------------------------------------------------------------- the machine
def machine() -> dict:
    """The GPU (or CPU), the versions, and the two rates the estimates use."""
    # Their versions only; transformers is slow to import.
    import transformers
    import triton

    cuda = torch.cuda.is_available()
    info = dict(gpu=torch.cuda.get_device_name() if cuda else None, cpu=platform.machine(),
                cpus=os.cpu_count(), torch=torch.__version__, triton=triton.__version__,
                transformers=transformers.__version__, python=platform.python_version(),
                driver=nvidia_driver() if cuda else None)
    return info | measured_rates("cuda" if cuda else "cpu")


def nvidia_driver():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30).stdout.strip() or None
    except OSError:
        return None


# ---------------------------------------------------------------- the estimates
# ANCHOR: estimate
@dataclass
class CostModel:
    """A rough price for a run, from the machine's two rates: a prefill costs its
    FLOPs (2 x parameters per token) at half the matmul rate, a decode step reads
    the weights at 70% of the copy bandwidth and pays a fixed host cost, and
    building an engine loads its weights and captures its CUDA graphs."""
    copy_bytes_s: float
    flops_s: float
    host_s: float = 2e-3               # a step's scheduling and inputs, in Python
    peer_host_s: float = 75e-3         # transformers' steps, whose Python is heavier (an H200's run)
    event_s: float = 0.15e-3           # a served token: its server-sent event, out and in

    def run(self, shape, prompt_tokens, output_tokens, concurrency, host_s=None) -> float:
        weights = weight_bytes(shape)
        prefill = (weights / 2) * 2 * prompt_tokens / (0.5 * self.flops_s)
        steps = output_tokens / max(1, concurrency)
        return prefill + steps * (weights / (0.7 * self.copy_bytes_s) + (host_s or self.host_s))

    def build(self, shape) -> float:
        return 3 + weight_bytes(shape) / 2e9 + 20 * 0.05

    def checkpoint(self, shape) -> float:
        """Writing a random checkpoint of this shape, the first time a fresh machine
        asks for it: 18 s for the 1B shape and 64 s for the 8B on an H200."""
        return 10 + weight_bytes(shape) / 0.3e9
# ANCHOR_END: estimate


def tokens(workload) -> tuple[int, int]:
    return sum(workload.prompt_lens), sum(workload.output_lens)


def notebook_seconds(name, cost: CostModel, shape="llama-3.2-1b") -> float:
    """What one notebook's full-scale run costs by the model: its engine runs
    (from its sizes in minicb.tools.report.scale) and its engine builds."""
    s = SIZES[name]["full"]
    if name == "01_single":
        work = sum(cost.run(shape, n, s["decode_tokens"], 1) for n in s["prompt_lens"]) * s["repeats"]
        return work + 2 * cost.build(shape)
    if name == "02_static":
        p, o = tokens(synthetic_workload(s["num_requests"], s["prompt_len"], s["output_len"]))
        return cost.run(shape, p, o, 1) + 2 * cost.run(shape, p, o, s["batch"] / 2) + 3 * cost.build(shape)
    if name == "03_dynamic":      # each replay lasts its arrivals: 1 / load of the serial time
        p, o = tokens(synthetic_workload(s["num_requests"], s["prompt_len"], s["output_len"]))
        replays = len(s["windows"]) * s["repeats"]
        return replays * cost.run(shape, p, o, 1) / s["load"] + 2 * cost.build(shape)
    if name == "04_continuous":
        p, o = tokens(preset_workload("anyscale", s["num_requests"], cap=512))
        runs = 3 + 2 + 2 * s["repeats"]
        return runs * (cost.run(shape, p, o, s["batch"] / 2) + cost.build(shape))
    if name == "05_paged":       # 25 engines (waste 3, budgets 9, block sizes 8, the rest 5),
        p, o = tokens(preset_workload("anyscale", s["num_requests"], cap=512))  # most holding <= 16
        return 25 * (cost.run(shape, p, o, 16) + cost.build(shape))
    if name == "06_memory_pressure":
        knob_p, knob_o = 0, 0
        for preset in ("reading", "chat", "writing"):
            pk, ok = tokens(preset_workload(preset, s["knob_requests"]))
            knob_p, knob_o = knob_p + pk, knob_o + ok
        runs = 5 * cost.run(shape, knob_p, knob_o, s["batch"])
        reading_p, reading_o = tokens(preset_workload("reading", s["knob_requests"]))
        launched = 3 * (cost.run(shape, reading_p, reading_o, s["batch"]) + cost.build(shape))  # the last cell
        return s["repeats"] * (runs + 5 * cost.build(shape) + launched)
    if name == "07_benchmarks":
        return study_seconds(s, cost, shape) + load_and_interval_seconds(s, cost, shape)
    if name == "08_kernels":
        kernel_cases = (len(s["contexts"]) + 2 * len(s["batches"])) * 7 * 0.5  # do_bench: ~0.5 s a case
        roofline = 0.0
        for model_shape, batches in s["roofline"]["shapes"].items():
            for batch in batches:
                context = s["roofline"]["context"]
                roofline += cost.run(model_shape, batch * context, batch * (16 + batch + 3), batch)
            roofline += cost.build(model_shape)
        return kernel_cases + ROOFLINE_MODES * roofline
    if name == "09_serving":      # replays last their arrivals; sustained runs as fast as they go
        p, o = tokens(preset_workload("anyscale", s["num_prompts"], cap=512))
        concurrency = s["batch"] / 2                                          # every token is an HTTP event
        sustained = cost.run(shape, p, o, concurrency, cost.host_s + concurrency * cost.event_s)
        sweep = sum(1 / share for share in (0.25, 0.5, 0.75)) * s["repeats"] * 4 * sustained
        offline = cost.run(shape, p, o, s["batch"]) + cost.build(shape)      # the engine without HTTP
        return 4 * cost.build(shape) + s["repeats"] * (4 * sustained + offline) + sweep
    if name == "10_tensor_parallel":
        return 20.0                  # its arithmetic only, on one GPU: 18 s on an H200
    raise ValueError(f"no estimate for notebook {name!r}")


def calibrate_seconds(cost: CostModel) -> float:
    """The calibrate part: each shape's checkpoint written (the part often runs
    first on a fresh machine), its engine built, its workload run twice (a
    warm-up, then the timed run), and the machine's rates measured."""
    p, o = tokens(synthetic_workload(MEASURE["num_requests"], MEASURE["prompt_len"], MEASURE["output_len"]))
    return sum(cost.checkpoint(shape) + cost.build(shape) + 2 * cost.run(shape, p, o, MEASURE["batch"] / 2) + 5
               for shape in MEASURE["shapes"])


def step_profile_seconds(cost: CostModel) -> float:
    """The kernels part's profile of a decode step at batch 64: each shape's engine
    built three times (as a GPU runs it, with async scheduling, without CUDA
    graphs), its 64 prompts prefilled and a few dozen steps run."""
    shapes = SIZES["08_kernels"]["full"]["roofline"]["shapes"]
    return 3 * sum(cost.build(shape) + cost.run(shape, 64 * 1024, 64 * 40, 64) for shape in shapes)


MODULE_SECONDS = {"minicb.tools.bench.calibrate measure": calibrate_seconds,
                  "minicb.tools.bench.step_profile": step_profile_seconds}


def study_seconds(s, cost: CostModel, shape) -> float:
    """Notebook 07's spread experiment in the study's shape (static, continuous, paged
    and the peers on the first peer_requests), and its line with graphs on and off. A
    static batch computes for its longest request: about half its rows are live."""
    kv_tokens, seconds = study_kv_tokens(), 0.0
    paged = kv_tokens / (512 + 128)                         # requests the budget holds
    share = s["peer_requests"] / s["num_requests"]
    for cap in (32, 128, 512, 1536):
        rows = kv_tokens // (512 + cap)
        p, o = tokens(preset_workload("anyscale", s["num_requests"], cap=cap))
        seconds += cost.run(shape, p, o, rows / 2) + cost.run(shape, p, o, rows)
        seconds += cost.run(shape, p, o, paged) + 3 * cost.build(shape)
        seconds += share * (cost.run(shape, p, o, rows / 2, cost.peer_host_s)
                            + cost.run(shape, p, o, paged, cost.peer_host_s))
    p, o = tokens(preset_workload("anyscale", s["launch_requests"], cap=1536))
    rows = kv_tokens // (512 + 1536)
    launches = cost.run(shape, p, o, rows / 2) + cost.run(shape, p, o, rows) + cost.run(shape, p, o, paged)
    return s["repeats"] * (seconds + 2 * (launches + 3 * cost.build(shape)))


def load_and_interval_seconds(s, cost: CostModel, shape) -> float:
    """Notebook 07's latency under load and schedule_interval experiments."""
    p, o = tokens(preset_workload("anyscale", s["load_requests"], cap=512))
    runs = 2 * 4 * cost.run(shape, p, o, s["batch"] / 2) * 1.5       # Poisson replays at two loads
    preset_p, preset_o = 0, 0
    for preset in ("reading", "chat", "writing"):
        pk, ok = tokens(preset_workload(preset, s["preset_requests"]))
        preset_p, preset_o = preset_p + pk, preset_o + ok
    runs += 4 * cost.run(shape, preset_p, preset_o, s["batch"])      # schedule_interval, the host split
    return s["repeats"] * (runs + (4 + 3 + 1) * cost.build(shape))    # each engine built once an experiment


def part_minutes(part: Part, rates: dict) -> float:
    """A part's estimated minutes on a machine with these measured rates."""
    cost = CostModel(rates["copy_gb_s"] * 1e9, rates["matmul_tflops"] * 1e12)
    seconds = sum(notebook_seconds(nb, cost) for nb in part.notebooks)
    if part.module:
        seconds += MODULE_SECONDS[part.module](cost)
    if part.tests:
        seconds += 90          # the GPU test set on TEST_WORKERS processes: 64 s on an H200
    return seconds / 60


# ---------------------------------------------------------------- running a part
def run_part(part: Part, out: Path, rehearsal: bool) -> dict:
    """Run one part into out/PART/ and pack out/PART.tar.gz; returns its results."""
    folder = out / part.name
    (folder / "figures").mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, MINICB_FIGURES_DIR=str((folder / "figures").resolve()),
               MINICB_SCALE="rehearsal" if rehearsal else os.environ.get("MINICB_SCALE", "full"))
    results = dict(part=part.name, what=part.what, rehearsal=rehearsal, machine=machine(), steps=[],
                   skipped=[part.rehearsal_skips] if rehearsal else [])
    with open(folder / "log.txt", "w") as log:
        writer = write_checkpoints(part.checkpoints, env, log)
        if part.tests:
            results["steps"].append(run_tests(part, env, log, rehearsal, folder))
            results["unreached_cuda_lines"] = unreached_cuda_lines(folder / "coverage.json")
        for notebook in part.notebooks:
            results["steps"].append(run_notebook(notebook, env, log))
        if part.module:
            command = [sys.executable, "-m", *part.module.split(), "--out", str(folder / part.output)]
            results["steps"].append(timed(command, env, log, part.module.split()[-1]))
        if writer:
            results["steps"].append(waited(writer, "checkpoints"))
    results["figures"] = headline_numbers(folder / "figures")
    results["passed"] = all(step["passed"] for step in results["steps"])
    (folder / "results.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    pack(folder, out / f"{part.name}.tar.gz")
    return results


def write_checkpoints(shapes, env, log):
    """Write the checkpoints of these shapes, as the notebooks of this scale ask for
    them (Scale.checkpoint), in a process of their own: the 8B shape's 16 GB take a
    minute, which the part's tests run beside. Returns (process, start), or None."""
    if not shapes:
        return None
    code = ("from minicb.tools.report.scale import run_scale\nscale = run_scale()\n"
            f"for shape in {shapes!r}:\n    print(scale.checkpoint(scale.model(shape)), flush=True)")
    log.write(f"$ writing the checkpoints of {', '.join(shapes)} in the background\n")
    log.flush()
    return subprocess.Popen([sys.executable, "-c", code], env=env, cwd=project_root(), stdout=log,
                            stderr=subprocess.STDOUT), time.perf_counter()


def waited(writer, name) -> dict:
    process, started = writer
    returncode = process.wait()
    seconds = round(time.perf_counter() - started, 1)
    print(f"  {name}: {'written' if returncode == 0 else 'FAILED'} in {seconds} s (from the part's start)", flush=True)
    return dict(name=name, passed=returncode == 0, seconds=seconds, summary="")


def run_tests(part, env, log, rehearsal, folder) -> dict:
    """On a GPU: the part's tests, under coverage where it is installed. In a
    rehearsal: that they exist (`make test` runs them on the CPU)."""
    pytest = ["-m", "pytest", "-q", "-p", "no:cacheprovider", *part.tests]
    if rehearsal:
        return timed([sys.executable, *pytest, "--collect-only"], env, log, "tests")
    if importlib.util.find_spec("xdist") is not None:
        pytest += ["-n", str(TEST_WORKERS)]
    if importlib.util.find_spec("coverage") is None:
        return timed([sys.executable, *pytest], env, log, "tests")
    return covered(pytest, env, log, folder)


def covered(pytest, env, log, folder) -> dict:
    """Run pytest with each of its processes measuring its own coverage (started in
    tests/conftest.py, as pytest-xdist's workers are not children `coverage run`
    sees), then combine them into folder/coverage.json."""
    data, root = (folder / ".coverage").resolve(), project_root()
    measured = dict(env or os.environ, MINICB_COVERAGE_DATA=str(data),
                    MINICB_COVERAGE_SOURCE=f"{root / 'minicb'},{root / 'kernels'}")
    step = timed([sys.executable, *pytest], measured, log, "tests")
    for command in (["combine", f"--data-file={data}", str(data.parent)],
                    ["json", f"--data-file={data}", "-o", str(folder / "coverage.json")]):
        subprocess.run([sys.executable, "-m", "coverage", *command], cwd=root, stdout=log,
                       stderr=subprocess.STDOUT)
    data.unlink(missing_ok=True)
    return step


def unreached_cuda_lines(coverage_json: Path) -> dict | None:
    """{file: CUDA-only lines} that the GPU tests were to reach and did not;
    None where no coverage ran (a rehearsal, or no coverage package)."""
    if not coverage_json.is_file():
        return None
    root, executed = project_root(), {}
    for path, data in json.loads(coverage_json.read_text())["files"].items():
        executed[str((root / path).resolve().relative_to(root))] = set(data["executed_lines"])
    return {name: missed for name, lines in cuda_only_lines(root).items()
            if REACHED_ON_A_GPU.get(name, "").startswith("tests/")
            and (missed := [n for n in lines if n not in executed.get(name, set())])}


def run_notebook(notebook, env, log) -> dict:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax",
               f"notebooks/{notebook}.ipynb"]
    return timed(command, env, log, notebook)


def timed(command, env, log, name) -> dict:
    """Run one command into the log; its outcome, time and pytest's summary line.
    A command still running at the run's deadline (``run --minutes``) is stopped,
    and what it had printed is kept: a part's archive comes back even then."""
    started = time.perf_counter()
    log.write(f"$ {' '.join(command)}\n")
    log.flush()
    try:
        result = subprocess.run(command, env=env, cwd=project_root(), capture_output=True, text=True,
                                timeout=seconds_left(env))
        stdout, stderr, returncode = result.stdout, result.stderr, result.returncode
    except subprocess.TimeoutExpired as stopped:      # its output comes as bytes, whatever text= says
        stdout, stderr = (text.decode(errors="replace") if isinstance(text, bytes) else text or ""
                          for text in (stopped.stdout, stopped.stderr))
        stderr += f"\nstopped at the run's deadline, after {stopped.timeout:.0f} s\n"
        returncode = "deadline"
    log.write(stdout + stderr)
    seconds = round(time.perf_counter() - started, 1)
    counts = re.findall(r"^=*\s*(\d+ (?:passed|failed|error|tests? collected).*?)\s*=*$", stdout, re.M)
    summary = counts[-1] if counts else ("stopped at the run's deadline" if returncode == "deadline" else "")
    print(f"  {name}: {'passed' if returncode == 0 else 'FAILED'} in {seconds} s  {summary}", flush=True)
    if returncode != 0:          # the failure itself, where a CI log or a GPU reply shows it
        print(indented(failure_of(stdout + stderr)), flush=True)
    return dict(name=name, passed=returncode == 0, seconds=seconds, summary=summary)


def seconds_left(env) -> float | None:
    """Seconds to the run's deadline (MINICB_RUN_DEADLINE, a time.time()), or None: no deadline."""
    deadline = (env or os.environ).get("MINICB_RUN_DEADLINE")
    return None if deadline is None else max(1.0, float(deadline) - time.time())


def failure_of(output: str, lines: int = 40) -> str:
    """What pytest said went wrong: its report of the failures, else the output's end."""
    report = output.split(" FAILURES ", 1)[-1].split(" short test summary info ", 1)[0]
    return "\n".join(report.splitlines()[-lines:])


def indented(text: str) -> str:
    return "\n".join("    | " + line for line in text.splitlines())


def headline_numbers(folder: Path) -> dict:
    """Each figure's sidecar, less the long lists of raw measurements."""
    numbers = {}
    for sidecar in sorted(folder.glob("*.json")):
        meta = json.loads(sidecar.read_text())
        numbers[sidecar.stem] = {k: v for k, v in meta.items() if len(json.dumps(v, default=str)) <= 2000}
    return numbers


def pack(folder: Path, archive: Path):
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname=folder.name)
    if archive.stat().st_size > MAX_ARCHIVE_BYTES:
        raise RuntimeError(f"{archive} is {archive.stat().st_size} bytes, over {MAX_ARCHIVE_BYTES}")


def archive_problems(part: Part, archive: Path) -> list[str]:
    """What a part's archive lacks: results.json, a log, every expected figure
    with a complete sidecar, a step that passed."""
    if not archive.is_file():
        return [f"{archive.name}: missing"]
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
        read = lambda name: tar.extractfile(f"{part.name}/{name}").read()         # noqa: E731
        problems = [f"{archive.name}: no {name}" for name in ("results.json", "log.txt")
                    if f"{part.name}/{name}" not in names]
        if part.output and not any(n.startswith(f"{part.name}/{part.output}/") for n in names):
            problems.append(f"{archive.name}: nothing in {part.output}/")
        rehearsal = (f"{part.name}/results.json" in names
                     and json.loads(read("results.json")).get("rehearsal", True))
        for figure in part.figures + ([] if rehearsal else part.gpu_figures):
            for suffix in (".png", ".json"):
                if f"{part.name}/figures/{figure}{suffix}" not in names:
                    problems.append(f"{archive.name}: no figures/{figure}{suffix}")
            if f"{part.name}/figures/{figure}.json" in names:
                meta = json.loads(read(f"figures/{figure}.json"))
                problems += [f"{archive.name}: {figure}.json lacks {key}" for key in REQUIRED_SIDECAR_KEYS
                             if key not in meta]
        if not problems:
            results = json.loads(read("results.json"))
            problems += [f"{archive.name}: {step['name']} failed (see log.txt)" for step in results["steps"]
                         if not step["passed"]]
    return problems


# ---------------------------------------------------------------- the commands
def chosen(names) -> list[Part]:
    """The parts named, all of them if none. PART:NOTEBOOK,... keeps only those of the
    part's notebooks, and their figures: what a short window can finish."""
    by_name = {part.name: part for part in PARTS}
    parts = []
    for name in names:
        part_name, _, notebooks = name.partition(":")
        if part_name not in by_name:
            raise SystemExit(f"unknown part {part_name!r}; choose from {', '.join(by_name)}")
        parts.append(by_name[part_name] if not notebooks else
                     only_notebooks(by_name[part_name], notebooks.split(",")))
    return parts or PARTS


def only_notebooks(part: Part, notebooks: list[str]) -> Part:
    unknown = [nb for nb in notebooks if nb not in part.notebooks]
    if unknown:
        raise SystemExit(f"part {part.name} has no notebook {unknown[0]!r}; "
                         f"it runs {', '.join(part.notebooks) or 'none'}")
    ours = [nb.split("_")[0] + "_" for nb in notebooks]        # a figure starts with its notebook's number
    keep = [name for name in part.figures if name.startswith(tuple(ours))]
    keep_gpu = [name for name in part.gpu_figures if name.startswith(tuple(ours))]
    return replace(part, notebooks=notebooks, figures=keep, gpu_figures=keep_gpu, tests=[], module="")


def plan(parts) -> dict[str, float]:
    rates = measured_rates("cuda" if torch.cuda.is_available() else "cpu")
    where = torch.cuda.get_device_name() if torch.cuda.is_available() else f"this CPU (a GPU's estimate is minutes)"
    print(f"plan for {where}: copy {rates['copy_gb_s']} GB/s, {rates['matmul_dtype']} matmul "
          f"{rates['matmul_tflops']} TFLOP/s; at most {MAX_MINUTES} minutes a part")
    minutes = {part.name: part_minutes(part, rates) for part in parts}
    for part in parts:
        fits = "" if minutes[part.name] <= MAX_MINUTES else f"  REFUSED: over {MAX_MINUTES} minutes"
        print(f"  {part.name:12s} ~{math.ceil(minutes[part.name]):3d} min  {part.what}{fits}")
    for i, window in enumerate(windows(minutes), 1):
        print(f"  window {i}: {' + '.join(window)}")
    return minutes


def windows(minutes: dict[str, float]) -> list[list[str]]:
    """The parts that fit under MAX_MINUTES, packed into windows of GPU time: each
    window its start, then parts while they fit, the longest placed first."""
    room = WINDOW_MINUTES - START_MINUTES
    packed = []                            # [minutes left, [part names]]
    for name in sorted((n for n, m in minutes.items() if m <= MAX_MINUTES), key=lambda n: -minutes[n]):
        window = next((w for w in packed if w[0] >= minutes[name]), None)
        if window is None:
            window = [room, []]
            packed.append(window)
        window[0] -= minutes[name]
        window[1].append(name)
    return [names for _, names in packed]


def positive_minutes(text: str) -> float:
    """--minutes (make gpu's GPU_MINUTES): a finite number of minutes above 0. Zero
    would set no deadline, a negative or nan one would stop every command at once."""
    try:
        minutes = float(text)
    except ValueError:
        minutes = math.nan
    if not (math.isfinite(minutes) and minutes > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number of minutes above 0 "
                                         f"(GPU_MINUTES), got {text!r}")
    return minutes


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m minicb.tools.gpu.run", description=__doc__.split("\n\n")[1])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("plan", help="each part with its estimated minutes on this GPU")
    run = commands.add_parser("run", help="run parts on this GPU, each into OUT/PART.tar.gz")
    rehearse = commands.add_parser("rehearse", help="run every part on this CPU and check the archives")
    for command in (run, rehearse):
        command.add_argument("parts", nargs="*", help="part names (default: all); PART:NOTEBOOK,... "
                             "runs only those notebooks of the part")
        command.add_argument("--out", default="gpu-results", help="the folder the archives go to")
    run.add_argument("--force", action="store_true", help="run a part whose estimate is over the limit")
    run.add_argument("--minutes", type=positive_minutes, help="stop what still runs this many minutes from now, "
                     "its part's archive written all the same (a command's limit on a lent GPU)")
    args = parser.parse_args(argv)
    if args.command == "plan":
        plan(PARTS)
        return 0
    parts, out = chosen(args.parts), Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if args.command == "run":
        if not torch.cuda.is_available():
            raise SystemExit("no GPU here: `make gpu-rehearsal` runs the parts on a CPU")
        minutes = plan(parts)
        parts = [p for p in parts if args.force or minutes[p.name] <= MAX_MINUTES]
        if args.minutes is not None:
            os.environ["MINICB_RUN_DEADLINE"] = str(time.time() + 60 * args.minutes)
    problems, skipped = [], {}
    for part in parts:
        print(f"{part.name}: {part.what}", flush=True)
        results = run_part(part, out, rehearsal=args.command == "rehearse")
        problems += archive_problems(part, out / f"{part.name}.tar.gz")
        for line in results["skipped"]:
            skipped.setdefault(line, []).append(part.name)
    for line, names in skipped.items():
        print(f"skipped on this CPU ({', '.join(names)}): {line}")
    verdict = "all parts passed" if not problems else f"{len(problems)} problems:\n  " + "\n  ".join(problems)
    print(f"{len(parts)} parts into {out}: {verdict}")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())

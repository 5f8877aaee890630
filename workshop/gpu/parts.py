"""What a GPU run owes, in parts that each fit one short command (``Part``,
``PARTS``), and which lines of the code only a GPU reaches (``cuda_only_lines``).
"""
import json
import re
from dataclasses import dataclass, field
from pathlib import Path




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
GPU_TESTS = ["tests/kernels/test_kernels.py", "tests/kernels/test_fused_kernels.py", "tests/stages/test_5_paged.py",
             "tests/stages/test_prefix_caching.py::test_prefix_caching_shares_blocks_and_keeps_the_output",
             "tests/stages/test_every_stage.py", "tests/engine/test_llm.py",
             "tests/stages/test_2_static.py::test_bucket_by_length_groups_similar_lengths_and_keeps_prompt_order",
             "tests/executors/test_cuda_graphs.py", "tests/stages/test_async.py", "tests/engine/test_sampling.py",
             "tests/server/test_server.py::test_completions_whole_and_streamed_are_llm_generate",
             "tests/server/test_server.py::test_dropped_streams_free_their_requests_and_the_rest_complete"]

# Notebooks a GPU run leaves out, and why (`make figures-cpu` runs them).
LEFT_OUT = {"11_simulated": "it runs no model: the simulated executor's predictions are the same "
                            "on any machine",
            "12_speculative": "it measures the real model, whose weights (98 MB) a GPU machine "
                              "does not have; part speculative measures the verify step there"}

PARTS = [
    Part("correctness", "the machine, and the GPU tests: compiled kernels, engines, graphs, server",
         tests=GPU_TESTS, checkpoints=["llama-3.2-1b", "llama-3.1-8b"],
         rehearsal_skips="running the GPU tests (collected only: `make test` runs them on this CPU)"),
    Part("kernels", "kernel bandwidth, what a program reads, the decode roofline, where a step's "
         "time goes", ["08_kernels"],
         figures=["08_kernel_bandwidth", "08_kv_bytes", "08_decode_roofline"], gpu_figures=["08_decode_tile"],
         module="workshop.measure.step_profile", output="profile",
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
         module="workshop.measure.calibrate measure", output="profiles",
         rehearsal_skips="a GPU's rates (the CPU calibrates itself, the tiny model for each shape)"),
    Part("speculative", "stage 6: a verify step beside a decode step at each batch, and where "
         "speculation stops paying", module="workshop.measure.speculative steps", output="speculative"),
]
# ANCHOR_END: parts

# What an H100 SXM measured (copy bytes read + written per second, bf16 matmul):
# the rates `plan` would find there, for checking the plan on a machine without one.
H100_RATES = dict(copy_gb_s=3000, matmul_tflops=798)

# ANCHOR: cuda_only
# Lines that run only on a GPU: a CPU never reaches them, not even in the rehearsal.
# Each file holding one names what reaches it on a GPU: a test of part 1 (which, run
# under coverage there, reports any such line it missed), or a part whose notebooks
# run it at full scale. tests/repository/test_gpu_run.py fails when a file gains such a line
# and is not listed here.
CUDA_ONLY = re.compile(r'startswith\("cuda"\)|torch\.cuda\.is_available\(\)|\.is_cuda\b|== "cuda"|!= "cuda"')
REACHED_ON_A_GPU = {
    "minicb/config.py": "tests/stages/test_every_stage.py",
    "minicb/llm.py": "tests/stages/test_every_stage.py",
    "minicb/attention.py": "tests/kernels/test_kernels.py",
    "minicb/observer.py": "tests/stages/test_every_stage.py",
    "minicb/sampling.py": "tests/stages/test_every_stage.py",
    "minicb/gpu_memory.py": "tests/stages/test_5_paged.py",
    "minicb/stages/overlap.py": "tests/stages/test_async.py",
    "kernels/__init__.py": "tests/kernels/test_kernels.py",
    "kernels/online_softmax.py": "tests/kernels/test_kernels.py",
    "minicb/executors/parallel.py": "two GPUs: tensor parallelism's NCCL path (a lent machine has one)",
    "minicb/tools/bench/offline.py": "part benchmarks",
    "minicb/tools/bench/peers.py": "part benchmarks",
    "minicb/tools/bench/run_record.py": "part stages",
    "workshop/measure/benchmarks.py": "part kernels",
    "workshop/measure/speculative.py": "part speculative",
    "notebooks/08_kernels.ipynb": "part kernels",
    "workshop/measure/calibrate.py": "part calibrate",
    "workshop/measure/step_profile.py": "part kernels",
}
# The GPU run's own files (this one holds the pattern itself) and the scale table
# choose between the GPU and the CPU themselves.
DECIDES_THE_DEVICE = ("workshop/gpu/parts.py", "workshop/gpu/plan.py",
                      "workshop/gpu/run.py", "workshop/report/scale.py")


def cuda_only_lines(root: Path) -> dict[str, list[int]]:
    """{file: line numbers} of the lines CUDA_ONLY finds in the engine, the kernels,
    the tools, the workshop and the notebooks (a notebook's lines counted through its code cells)."""
    found = {}
    for path in sorted([*root.glob("minicb/**/*.py"), *root.glob("kernels/*.py"), *root.glob("workshop/**/*.py"),
                        *root.glob("notebooks/*.ipynb")]):
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


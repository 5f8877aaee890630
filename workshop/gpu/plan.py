"""How long each part takes on a GPU, estimated before the window opens: a
rough cost model of the notebooks' sizes (``workshop.report.scale``) and the
GPU's measured copy and matmul rates, checked against runs' measured times;
and the parts packed into windows of GPU time (``windows``).
"""
import math
from dataclasses import dataclass, replace

import torch

from workshop.measure.benchmarks import measured_rates, study_kv_tokens
from workshop.measure.calibrate import MEASURE
from workshop.measure.speculative import STEPS, TASKS
from workshop.report.scale import SIZES, weight_bytes
from minicb.tools.bench.workload import preset_workload, synthetic_workload
from workshop.gpu.parts import MAX_MINUTES, PARTS, ROOFLINE_MODES, START_MINUTES, WINDOW_MINUTES, Part


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
    (from its sizes in workshop.report.scale) and its engine builds."""
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


def speculative_steps_seconds(cost: CostModel) -> float:
    """The speculative part: for each shape, batch 1's answers with and without
    drafts, then a plain engine and one that verifies k drafts a step, each built
    once and run at every batch (decode_steps_at: the prompts, then enough steps
    for all of them to decode together)."""
    sizes, seconds = STEPS, 0.0
    for shape in sizes["shapes"]:
        # batch 1's answers, plain and speculative in turns: two engines, each task's rounds
        seconds += 2 * cost.build(shape) + 2 * len(TASKS) * sizes["rounds"] * cost.run(
            shape, 64, sizes["max_tokens"], 1)
        for queries in (1, sizes["k"] + 1):
            seconds += cost.build(shape)
            for batch in sizes["batches"]:
                admitting = batch * math.ceil(sizes["context"] / 2048) + 1
                outputs = batch * (sizes["steps"] + 4 + admitting) * queries
                seconds += cost.run(shape, batch * sizes["context"], outputs, batch)
    return seconds


MODULE_SECONDS = {"workshop.measure.calibrate measure": calibrate_seconds,
                  "workshop.measure.step_profile": step_profile_seconds,
                  "workshop.measure.speculative steps": speculative_steps_seconds}


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
    where = torch.cuda.get_device_name() if torch.cuda.is_available() else "this CPU (a GPU's estimate is minutes)"
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



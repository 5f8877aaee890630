"""Exercises: pieces of the engine a student writes, checked inside the engine.

Each exercise is one function of the engine, its *target*: the scheduler's
admission, the block manager's allocate, the dynamic batcher's window. The
student's version lives in ``notebooks/exercises/NAME.py``, a copy of the stub
in ``minicb/tools/course/stubs/`` that raises NotImplementedError until it is written
(``check`` puts the copies there; ``check NAME --reset`` brings one back). The
student's code runs with a time limit, and whatever it does wrong (a syntax
error, an endless loop, a None where a number is due, a value the engine
cannot use) ends as one line that says so. A check works the same way for every
exercise: it swaps the student's function in for the engine's own
(``swapped_in``), runs the stage on a real workload with the tiny model, and
compares with the run of the engine's own code, request for request and step
for step. After every step it also checks what the engine always holds to: no
more than ``max_num_seqs`` running, no step over the token budget, no KV
memory held twice or lost; and at the end, none held at all. Where a run seldom
reaches a case that matters (an eos token, a boundary met exactly), the exercise
also names ``cases`` (minicb/tools/course/function_cases.py): the student's function is
called on them first and what it returns is compared whole with the engine's.

Both runs are on a virtual clock, on which every step takes a millisecond and
nothing else takes any time, so a decision that depends on time comes out the
same in both. The
reference solution is the engine's own code.

    python -m minicb check --list
    python -m minicb check admission          # your notebooks/exercises/admission.py
    python -m minicb check --reference        # the engine's own code, every exercise
    python -m minicb check                    # your progress: every exercise's state
    python -m minicb check admission --hint   # a hint (--hint 2, --hint 3: the next ones)
    python -m minicb check admission --reset  # the stub again (yours is kept aside)
"""
import importlib
import importlib.util
import math
import os
import shutil
import signal
import sys
import threading
import traceback
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import torch

from ...checkpoint import make_tiny_checkpoint
from ...executors.simulated import VirtualClock
from ...llm import LLMEngine
from ...sampling import SamplingParams
from ...stages.continuous import SlotManager
from ...stages.paged import BlockManager
from .function_cases import CASES as FUNCTION_CASES
from .function_cases import same
from .hints import hint
from .kernel_cases import CASES
from ..bench.workload import synthetic_workload

STUBS = Path(__file__).resolve().parent / "stubs"        # as a student starts them
WORKSPACE = Path(__file__).resolve().parents[3] / "notebooks" / "exercises"   # theirs
TIME_LIMIT = 120.0           # seconds a check may run: each takes a few on a laptop
STEP_SECONDS = 1e-3          # what each step costs on the check's virtual clock
STRANDED_AFTER = 10.0        # virtual seconds: every check's workload ends well before
TINY_KV_BYTES = 512           # the tiny Llama's K and V of one token in fp32: 2 x 2 x 2 x 16 x 4


class CheckFailed(AssertionError):
    """A check found a difference; its message says where, in the student's terms."""


class NotStarted(CheckFailed):
    """The student's function still raises NotImplementedError."""


class TimedOut(CheckFailed):
    """The check ran past its time limit: the student's code loops, most likely."""


@dataclass(frozen=True)
class Exercise:
    name: str
    chapter: int
    target: str                  # "module:Class.function" or "module:function"
    task: str                    # one line: what to write
    engines: tuple               # the stage and its options: one run each
    workload: dict               # synthetic_workload's arguments
    sampling: dict = field(default_factory=dict)   # SamplingParams beyond max_tokens
    cases: str | None = None     # function_cases' cases, called first: where runs seldom go

    @property
    def stub(self) -> Path:
        return STUBS / f"{self.name}.py"

    @property
    def mine(self) -> Path:
        """Where the student writes it."""
        return WORKSPACE / f"{self.name}.py"

    @property
    def function_name(self) -> str:
        return self.target.rpartition(".")[2].rpartition(":")[2]


def exercise(name, chapter, target, task, engine, sampling=None, cases=None,
             **workload) -> Exercise:
    engines = (engine,) if isinstance(engine, dict) else tuple(engine)
    return Exercise(name, chapter, target, task, engines, workload, sampling or {}, cases)


@dataclass(frozen=True)
class KernelExercise:
    """A Triton function or kernel the student writes: swapped in where the
    engine's kernels call it (``target``, and the same name in ``also``, modules
    that import it), then the kernels run in Triton's interpreter against their
    naive references on ``cases`` (minicb/tools/course/kernel_cases.py)."""
    name: str
    chapter: int
    target: str
    task: str
    cases: str
    also: tuple = ()

    stub, mine = Exercise.stub, Exercise.mine
    function_name = Exercise.function_name


@dataclass(frozen=True)
class FunctionExercise:
    """A function of the engine that no stage's step runs (a claim's verdict, a
    metric, the server's holdback, a tensor-parallel share, the cost model):
    each of its ``cases`` (minicb/tools/course/function_cases.py) is called with the
    student's function swapped in and with the engine's own, and compared."""
    name: str
    chapter: int
    target: str
    task: str
    cases: str

    stub, mine = Exercise.stub, Exercise.mine
    function_name = Exercise.function_name


SCHEDULER, PAGED = "minicb.stages.iteration:Scheduler", "minicb.stages.paged"
# ANCHOR: exercises
EXERCISES = {e.name: e for e in [
    exercise("stop_reason", 1, "minicb.stages.base:stop_reason",
             "why a request ends: a stop token, end of sequence, or max_tokens",
             dict(engine="single"), num_requests=12, output_len=(1, 12),
             sampling=dict(ignore_eos=False, stop_token_ids=list(range(3, 259, 16))),
             cases="stop_reason"),
    exercise("top_p", 1, "minicb.stages.base:keep_top_p",
             "nucleus sampling: keep each row's smallest set of tokens reaching top_p",
             dict(engine="single"), num_requests=8, output_len=(4, 12),
             sampling=dict(temperature=1.0, top_p=0.6, seed=7), cases="top_p"),
    exercise("left_padding", 2, "minicb.stages.static:left_padded",
             "pad a static batch's prompts on the left, with their positions",
             dict(engine="static", max_batch_size=4), num_requests=12, prompt_len=(1, 40),
             cases="left_padding"),
    exercise("static_batches", 2, "minicb.stages.static:StaticEngine.next_batch",
             "cut the next static batch, sorted by max_tokens when bucketing",
             [dict(engine="static", max_batch_size=3, bucket_by_length=bucket)
              for bucket in (True, False)], num_requests=14, output_len=(1, 24)),
    exercise("dynamic_window", 3, "minicb.stages.dynamic:DynamicEngine.next_batch",
             "close a batch when it is full or its oldest request has waited long enough",
             dict(engine="dynamic", max_batch_size=4, max_wait_ms=20), num_requests=22,
             qps=60.0, cases="dynamic_window"),
    exercise("tpot", 3, "minicb.request:RequestMetrics.tpot",
             "time per output token after the first",
             dict(engine="dynamic", max_batch_size=4, max_wait_ms=10), num_requests=16,
             output_len=(1, 12), qps=200.0, cases="tpot"),
    exercise("admission", 4, f"{SCHEDULER}.admit",
             "admit waiting requests in order under max_num_seqs and the token budget",
             dict(engine="continuous", max_num_seqs=3, max_num_batched_tokens=48),
             num_requests=16, prompt_len=(4, 40), qps=2000.0, cases="admission"),
    exercise("first_fit", 4, "minicb.stages.continuous:SlotManager.first_fit",
             "find the first hole a request's contiguous slot fits in",
             # sized so that finished slots leave several holes a newcomer fits in
             dict(engine="continuous", max_num_seqs=8, kv_reservation="oracle",
                  kv_cache_memory_bytes=240 * TINY_KV_BYTES), num_requests=24,
             prompt_len=(2, 20), output_len=(1, 40), qps=400.0),
    exercise("block_allocation", 5, f"{PAGED}:BlockManager.allocate",
             "grow a request's block table to cover its tokens",
             [dict(engine="paged", max_num_seqs=6, block_size=size, num_blocks=256 // size)
              for size in (4, 1, 16)], num_requests=16),
    exercise("slot_mapping", 5, f"{PAGED}:BlockManager.cache_rows",
             "map token positions to cache rows through the block table",
             [dict(engine="paged", max_num_seqs=6, block_size=size, num_blocks=256 // size)
              for size in (4, 1, 16)], num_requests=16),
    exercise("preemption", 6, f"{PAGED}:PagedScheduler.preempt",
             "preempt by recomputation: free a request's blocks and requeue it",
             # With chunks, the request just preempted could come back at once in a
             # chunk that fits, unless the scheduler knows it preempted (self.preempted).
             [dict(engine="paged", max_num_seqs=6, block_size=4, num_blocks=24,
                   enable_chunked_prefill=chunked, max_num_batched_tokens=16 if chunked else None)
              for chunked in (False, True)],
             num_requests=16, prompt_len=(4, 24), output_len=(4, 24)),
    exercise("chunking", 6, f"{SCHEDULER}.fit",
             "how many of a request's tokens fit this step's budget (chunked prefill)",
             # Small enough to preempt: a request recomputed after a preemption may hold
             # more tokens than a step, and runs in chunks even with chunking off.
             [dict(engine="paged", max_num_seqs=4, enable_chunked_prefill=chunked,
                   max_num_batched_tokens=16, block_size=4, num_blocks=20)
              for chunked in (True, False)], num_requests=12, prompt_len=(4, 16),
             output_len=(8, 24), cases="chunking"),
    exercise("admission_trigger", 6, f"{SCHEDULER}.admission_open",
             "admit only every schedule_interval steps, and when enough wait",
             dict(engine="continuous", max_num_seqs=4, schedule_interval=3,
                  waiting_served_ratio=1.5), num_requests=20, qps=300.0,
             cases="admission_trigger"),
    KernelExercise("online_softmax", 1, "minicb.kernels.tile:attend_block",
                   "one key block folded into a tile's running max, sum and output (Triton)",
                   "attention", also=("minicb.kernels.online_softmax",)),
    KernelExercise("paged_rows", 5, "minicb.kernels.paged_attention:key_rows",
                   "the cache rows of a tile's keys, through the block table (Triton)", "paged"),
    KernelExercise("combine_splits", 5, "minicb.kernels.paged_attention:combine_splits",
                   "merge split-KV's ranges by their log-sum-exps (a Triton kernel)", "combine"),
    KernelExercise("rms_norm", 8, "minicb.kernels.norm:add_rms_norm",
                   "the residual add and RMSNorm in one pass (a Triton kernel)", "norm"),
    FunctionExercise("claim_verdict", 7, "minicb.tools.report.claims:judge",
                     "decide a claim about time from interleaved repeats, or leave it undecided",
                     "judge"),
    FunctionExercise("percentiles", 7, "minicb.metrics:percentiles",
                     "a run's mean, p50, p90 and p99 of a list of times", "percentiles"),
    FunctionExercise("stop_holdback", 9, "minicb.tools.serve.server:TextStream.take",
                     "stream only text no stop string can still claim", "text_stream"),
    FunctionExercise("vocab_share", 10, "minicb.executors.parallel:vocab_share",
                     "one rank's rows of the vocabulary, padded to an equal share", "vocab_share"),
    FunctionExercise("collective_bytes", 10, "minicb.executors.parallel:collective_bytes",
                     "the bytes a tensor-parallel forward pass hands its collectives",
                     "collectives"),
    FunctionExercise("step_cost", 11, "minicb.costmodel:step_seconds",
                     "a step's predicted time: the slower of its bytes and its FLOPs, plus "
                     "overheads", "step"),
    FunctionExercise("kv_budget", 11, "minicb.costmodel:kv_budget",
                     "the KV memory a GPU leaves once the weights are in", "budget"),
]}
# ANCHOR_END: exercises


# ANCHOR: swapped_in
@contextmanager
def swapped_in(target: str, replacement):
    """For the duration: ``replacement`` where the engine has ``target``
    ("module:Class.attribute" or "module:function"); a property stays one."""
    module_name, _, path = target.partition(":")
    owner = importlib.import_module(module_name)
    *outer, name = path.split(".")
    for part in outer:
        owner = getattr(owner, part)
    original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    if isinstance(original, property):
        replacement = property(replacement)
    setattr(owner, name, replacement)
    try:
        yield original
    finally:
        setattr(owner, name, original)
# ANCHOR_END: swapped_in


def engine_function(ex: Exercise):
    """The engine's own function for an exercise: the reference solution."""
    module_name, _, path = ex.target.partition(":")
    owner = importlib.import_module(module_name)
    for part in path.split("."):
        owner = getattr(owner, part) if not isinstance(owner, type) else owner.__dict__[part]
    return owner.fget if isinstance(owner, property) else owner


def load_stub(ex: Exercise, path: Path | None = None):
    """The student's function, from ``notebooks/exercises/NAME.py`` (or ``path``).
    A file that does not load fails the check in one line: where, and why."""
    path = Path(path or ex.mine)
    if not path.is_file():
        raise CheckFailed(f"{ex.name}: there is no file {path}")
    spec = importlib.util.spec_from_file_location(f"exercise_{ex.name}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        raise CheckFailed(f"{ex.name}: {path}, line {error.lineno}: {error.msg}") from None
    except (Exception, SystemExit) as error:
        line = last_line_in(error, path)
        raise CheckFailed(f"{ex.name}: {path}{f', line {line}' if line else ''}: loading it "
                          f"raised {type(error).__name__}: {error}") from None
    if not hasattr(module, ex.function_name):
        raise CheckFailed(f"{ex.name}: {path} defines no function {ex.function_name!r}")
    return getattr(module, ex.function_name)


def last_line_in(error: BaseException, path) -> int | None:
    """The line of file ``path`` that ``error`` last passed through, if any."""
    lines = [f.lineno for f in traceback.extract_tb(error.__traceback__)
             if Path(f.filename) == Path(path)]
    return lines[-1] if lines else None


def ensure_workspace(workspace: Path = WORKSPACE) -> list[str]:
    """A copy of each exercise's stub in ``workspace``, where the student has none
    yet; the names of those copied."""
    workspace.mkdir(parents=True, exist_ok=True)
    missing = [ex for ex in in_order() if not (workspace / ex.stub.name).exists()]
    for ex in missing:
        shutil.copyfile(ex.stub, workspace / ex.stub.name)
    return [ex.name for ex in missing]


def reset(ex, workspace: Path = WORKSPACE) -> str:
    """The stub again in the student's file, theirs kept aside, numbered."""
    mine, kept = workspace / ex.stub.name, None
    if mine.exists() and mine.read_bytes() != ex.stub.read_bytes():
        kept = next(workspace / f"{ex.name}.before-reset-{n}.py" for n in range(1, 10**6)
                    if not (workspace / f"{ex.name}.before-reset-{n}.py").exists())
        mine.rename(kept)
    shutil.copyfile(ex.stub, mine)
    return f"{mine} is the stub again" + (f"; yours is in {kept}" if kept else "")


@contextmanager
def time_limit(seconds: float):
    """TimedOut, raised in whatever runs once ``seconds`` have passed (where the
    operating system has interval timers: Linux, macOS, WSL; on the main thread)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise TimedOut()
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# ANCHOR: check
def check(name: str, function=None, checkpoint=None, seconds=TIME_LIMIT) -> str:
    """Run exercise ``name`` with ``function`` swapped in (None: the engine's
    own, swapped in the same way) and compare with the engine's own run. Returns
    a line saying what matched; raises CheckFailed saying where it did not, or
    TimedOut after ``seconds``."""
    try:
        with time_limit(seconds):
            return check_within_time(name, function, checkpoint)
    except TimedOut:
        raise TimedOut(f"{name}: stopped after {seconds:g} s, its time limit (a check "
                       f"takes a few seconds): does your code loop forever?") from None


def check_within_time(name: str, function, checkpoint) -> str:
    ex = EXERCISES[name]
    if isinstance(ex, KernelExercise):
        return check_kernel(ex, function or engine_function(ex))
    if isinstance(ex, FunctionExercise):
        return check_function(ex, function or engine_function(ex))
    if ex.cases:
        check_function(ex, function or engine_function(ex))
    checkpoint = checkpoint or tiny_checkpoint()
    for options in ex.engines:
        label = name + settings(ex, options)
        yours = function or engine_function(ex)
        with swapped_in(ex.target, yours):
            got = run_yours(ex, label, checkpoint, options, source_file(yours, ex))
        compare(label, run(ex, checkpoint, options), got)
    return (f"{name}: passed. The same {len(got.steps)} steps as the engine's "
            f"own code, and each of the {len(got.tokens)} requests got its tokens.")
# ANCHOR_END: check


# ANCHOR: check_kernel
def check_kernel(ex: KernelExercise, yours) -> str:
    """The engine's kernels with ``yours`` swapped in, against their naive
    references, case by case; CheckFailed names the first element that differs."""
    cases = CASES[ex.cases]()
    with ExitStack() as stack:
        for module in (ex.target.partition(":")[0], *ex.also):
            stack.enter_context(swapped_in(f"{module}:{ex.function_name}", yours))
        for label, kernel, naive, tolerance, *may_refuse in cases:
            try:
                got = kernel()
            except Exception as raised:
                error = innermost(raised)          # the interpreter wraps what a kernel raised
                if isinstance(error, TimedOut):
                    raise error from None
                if isinstance(error, NotImplementedError):
                    raise not_started(ex, source_file(yours, ex)) from None
                if may_refuse and isinstance(error, ValueError):
                    continue                       # an input it may refuse: refused
                raise CheckFailed(f"{ex.name} ({label}): your {ex.function_name} raised "
                                  f"{type(error).__name__}: {error}") from raised
            compare_tensors(f"{ex.name} ({label})", got, naive(), tolerance)
    return (f"{ex.name}: passed. All {len(cases)} cases equal the naive reference "
            f"within their dtype's tolerance.")


def not_started(ex, where: str) -> NotStarted:
    if Path(where).parent == STUBS:          # the stub as it comes: theirs is a copy of it
        where = str(ex.mine)
    return NotStarted(f"{ex.name}: not written yet. Write {ex.function_name} in {where} "
                      f"(it still raises NotImplementedError)")


def innermost(error: BaseException) -> BaseException:
    while error.__cause__ is not None or error.__context__ is not None:
        error = error.__cause__ or error.__context__
    return error


def compare_tensors(label: str, got, want, tolerance: dict):
    """CheckFailed naming the first element outside atol + rtol * |reference|."""
    gots, wants = (x if isinstance(x, tuple) else (x,) for x in (got, want))
    if len(gots) != len(wants):
        raise CheckFailed(f"{label}: {len(gots)} outputs; the reference gives {len(wants)}")
    for i, (have, need) in enumerate(zip(gots, wants)):
        output = f" output {i}" if isinstance(want, tuple) else ""
        if not isinstance(have, torch.Tensor) or have.shape != need.shape:
            raise CheckFailed(f"{label}:{output} got {getattr(have, 'shape', type(have).__name__)}, "
                              f"the reference has shape {tuple(need.shape)}")
        have, need = have.float(), need.float()
        bad = ~((have - need).abs() <= tolerance["atol"] + tolerance["rtol"] * need.abs())
        if bad.any():
            index = tuple(int(j) for j in bad.nonzero()[0])
            raise CheckFailed(f"{label}:{output} element {list(index)} is {have[index]:.6g}, the "
                              f"reference {need[index]:.6g} ({int(bad.sum())} of {bad.numel()} "
                              f"elements outside atol {tolerance['atol']}, rtol {tolerance['rtol']})")
# ANCHOR_END: check_kernel


# ANCHOR: check_function
def check_function(ex: FunctionExercise, yours) -> str:
    """Each case with ``yours`` swapped in, then with the engine's own; CheckFailed
    names the first case whose results differ."""
    cases = FUNCTION_CASES[ex.cases]()
    for label, call, promised in cases:
        with swapped_in(ex.target, yours):
            try:
                got = promised(call())
            except NotImplementedError:
                raise not_started(ex, source_file(yours, ex)) from None
            except CheckFailed:
                raise
            except Exception as error:
                raise CheckFailed(f"{ex.name} ({label}): "
                                  f"{blame(error, ex, source_file(yours, ex))}") from error
        want = promised(call())
        if not same(got, want):
            due = (", where a number is due" if isinstance(want, (int, float))
                   and (got is None or isinstance(got, float) and math.isnan(got)) else "")
            raise CheckFailed(f"{ex.name} ({label}): yours gives {got!r}{due}; the engine's own "
                              f"code gives {want!r}")
    return f"{ex.name}: passed. All {len(cases)} cases give what the engine's own code gives."
# ANCHOR_END: check_function


def source_file(function, ex: Exercise) -> str:
    """Where the student's function was written: a file, or the stub's place."""
    return getattr(getattr(function, "__code__", None), "co_filename", str(ex.stub))


def run_yours(ex: Exercise, label: str, checkpoint, options: dict, where: str):
    """``run``, with what the student's function (from file ``where``) raised
    told in their terms."""
    try:
        return run(ex, checkpoint, options)
    except NotImplementedError:
        raise not_started(ex, where) from None
    except TimedOut:
        raise
    except CheckFailed as failed:
        raise CheckFailed(f"{label}: {failed}") from None
    except Exception as error:
        raise CheckFailed(f"{label}: {blame(error, ex, where)}") from error


def blame(error: Exception, ex, where: str) -> str:
    """Whose code raised ``error``: the student's (file ``where``), or the engine's
    afterwards, on what the student's function returned or left behind."""
    step = " ".join(getattr(error, "__notes__", []))          # "in step N"
    what = f"{type(error).__name__}{' ' + step if step else ''}: {error}"
    line = last_line_in(error, where)
    if line is not None:
        return f"your {ex.function_name} raised {what} ({Path(where).name}, line {line})"
    frames = traceback.extract_tb(error.__traceback__)
    place = f" in {Path(frames[-1].filename).name}'s {frames[-1].name}" if frames else ""
    return (f"the engine raised {what}{place}, after your {ex.function_name} returned: what "
            f"it returned or left behind is not what the engine can use")


def settings(ex: Exercise, options: dict) -> str:
    """Where an exercise runs more than one way, which one: what sets it apart."""
    if len(ex.engines) == 1:
        return ""
    differing = {k: v for k, v in options.items()
                 if any(other.get(k) != v for other in ex.engines)}
    return " (with " + ", ".join(f"{k}={v}" for k, v in differing.items()) + ")"


@dataclass
class Run:
    tokens: dict            # request id -> output token ids
    reasons: dict           # request id -> finish reason
    tpot: dict              # request id -> seconds on the check's virtual clock
    steps: list             # (kind, requests run, tokens fed, KV reserved) per step
    preemptions: int
    tables: list = field(default_factory=list)   # stages 4-5: where each request's K/V is, per step
    counted: int = 0        # preemptions the scheduler counted (the server's /metrics reads it)


def run(ex: Exercise, checkpoint, options: dict) -> Run:
    """The exercise's workload through its stage, on a virtual clock, with the
    engine's invariants checked after every step."""
    workload = synthetic_workload(seed=0, **ex.workload)
    with swapped_in("minicb.executors.plain:Executor.clock", VirtualClock()):
        engine = LLMEngine(checkpoint, **options)
    pending = sorted(zip(workload.arrival_times, range(len(workload.prompts))))
    requests, clock, tables = {}, engine.clock, []
    deadline = max(workload.arrival_times) + STRANDED_AFTER
    with engine.stage.measuring() as steps:
        while pending or engine.has_unfinished_requests():
            if clock() > deadline:
                stranded = [i for i, r in requests.items() if not r.finished]
                raise CheckFailed(f"requests {stranded} were still unfinished "
                                  f"{STRANDED_AFTER:.0f} s after the last arrival: stranded")
            while pending and pending[0][0] <= clock():
                _, i = pending.pop(0)
                params = SamplingParams(max_tokens=workload.params[i].max_tokens,
                                        **{"ignore_eos": True, **ex.sampling})
                engine.add_request(workload.prompts[i], params, arrival_time=clock(),
                                   request_id=str(i))
                requests[str(i)] = engine.requests[str(i)]
            ran = len(steps)
            try:
                engine.step()
            except Exception as error:
                error.add_note(f"in step {ran + 1}")
                raise
            if len(steps) > ran:
                invariant_problems(engine.stage, steps)
                tables.append(kv_layout(engine.stage))
                clock.sleep(STEP_SECONDS)
            elif pending and not engine.has_unfinished_requests():
                clock.sleep(pending[0][0] - clock())       # idle until the next arrival
            else:
                clock.sleep(2e-4)                           # a batch window still open
    held = kv_held(engine.stage)
    if held:
        raise CheckFailed(f"after the run, KV memory is still held: {held}")
    return Run({i: r.output_token_ids for i, r in requests.items()},
               {i: r.finish_reason for i, r in requests.items()},
               {i: r.metrics.tpot for i, r in requests.items()},
               [(s.kind, [r for r in s.rows if r is not None], s.num_tokens, s.kv_reserved)
                for s in steps], sum(r.num_preemptions for r in requests.values()), tables,
               getattr(getattr(engine.stage, "scheduler", None), "num_preemptions", 0))


def kv_layout(stage) -> dict | None:
    """Where each request's K/V lives: stage 5's blocks, in order, or stage 4's
    slot of cache rows (None for stages 1-3)."""
    kv = getattr(stage, "kv", None)
    if isinstance(kv, BlockManager):
        return {r.request_id: list(table) for r, table in kv.block_tables.items()}
    if isinstance(kv, SlotManager):
        return {r.request_id: (rows.start, rows.stop) for r, rows in kv.slot_of.items()}
    return None


def invariant_problems(stage, steps: list):
    """What stages 4-5 hold to after each step; CheckFailed naming the step if not."""
    cfg, kv = stage.config, getattr(stage, "kv", None)
    if kv is None:
        return
    running = stage.scheduler.running
    problem = None
    if len(running) > cfg.max_num_seqs:
        problem = f"{len(running)} requests run, more than max_num_seqs {cfg.max_num_seqs}"
    elif steps[-1].num_tokens > cfg.max_num_batched_tokens:
        problem = (f"the step fed {steps[-1].num_tokens} tokens, more than "
                   f"max_num_batched_tokens {cfg.max_num_batched_tokens}")
    elif isinstance(kv, BlockManager):
        problem = block_problems(kv)
    elif isinstance(kv, SlotManager):
        problem = slot_problems(kv)
    if problem:
        raise CheckFailed(f"after step {len(steps)}: {problem}")


def block_problems(kv: BlockManager) -> str | None:
    held = [b for table in kv.block_tables.values() for b in table]
    twice = sorted({b for b in held if held.count(b) > 1} | set(held) & set(kv.free_blocks))
    if twice:
        return f"blocks {twice} are given out twice (or held and free at once)"
    lost = sorted(set(range(kv.num_blocks)) - set(held) - set(kv.free_blocks))
    return f"blocks {lost} are neither free nor held: lost" if lost else None


def slot_problems(kv: SlotManager) -> str | None:
    runs = sorted(kv.holes + list(kv.slot_of.values()), key=lambda rows: rows.start)
    for before, after in zip(runs, runs[1:]):
        if before.stop != after.start:
            return f"cache rows {before} and {after} overlap or leave a gap"
    if runs and (runs[0].start, runs[-1].stop) != (0, kv.capacity):
        return f"slots and holes cover rows {runs[0].start}..{runs[-1].stop}, not 0..{kv.capacity}"
    return None


def kv_held(stage) -> str | None:
    kv = getattr(stage, "kv", None)
    if isinstance(kv, BlockManager) and (kv.block_tables or len(kv.free_blocks) < kv.num_blocks):
        return f"{kv.num_blocks - len(kv.free_blocks)} blocks, by requests {list_ids(kv.block_tables)}"
    if isinstance(kv, SlotManager) and (kv.slot_of or kv.holes != [range(kv.capacity)]):
        return f"slots of requests {list_ids(kv.slot_of)}; free rows {kv.holes}"
    return None


def list_ids(held: dict) -> list:
    return [r.request_id for r in held]


def compare(name: str, expected: Run, got: Run):
    """The first difference between the engine's run and the student's, in words."""
    for i, (want, have) in enumerate(zip(expected.steps, got.steps)):
        if want != have:
            raise CheckFailed(f"{name}: step {i + 1} differs. The engine's own code ran "
                              f"{describe(want)}; with yours it ran {describe(have)}")
    for i, (want, have) in enumerate(zip(expected.tables, got.tables)):
        if want != have:
            rid = next(r for r in sorted(set(want) | set(have)) if want.get(r) != have.get(r))
            what, rule = (("blocks", "new blocks come from the front of the free list, in "
                           "order") if isinstance([*want.values(), *have.values()][0], list) else
                          ("cache rows [start, stop)", "a slot goes in the first hole it fits"))
            raise CheckFailed(f"{name}: after step {i + 1}, request {rid} holds {what} "
                              f"{have.get(rid)}; the engine's own code gives it "
                              f"{want.get(rid)} ({rule})")
    if len(expected.steps) != len(got.steps):
        raise CheckFailed(f"{name}: the engine's own code took {len(expected.steps)} steps; "
                          f"with yours, {len(got.steps)}")
    if expected.preemptions != got.preemptions:
        raise CheckFailed(f"{name}: the engine's own code preempted {expected.preemptions} "
                          f"times; with yours, {got.preemptions}")
    if expected.counted != got.counted:
        raise CheckFailed(f"{name}: with yours the scheduler counted {got.counted} preemptions "
                          f"(its num_preemptions, which the server's /metrics reports); the "
                          f"requests were preempted {got.preemptions} times")
    for rid, want in expected.tokens.items():
        have = got.tokens[rid]
        if want != have or expected.reasons[rid] != got.reasons[rid]:
            first = next((j for j, (a, b) in enumerate(zip(want, have)) if a != b),
                         min(len(want), len(have)))
            raise CheckFailed(
                f"{name}: request {rid} got {have} ({got.reasons[rid]}); the engine's own "
                f"code gives {want} ({expected.reasons[rid]}): they part at output token {first}")
        if not isinstance(got.tpot[rid], (int, float)) or math.isnan(got.tpot[rid]):
            raise CheckFailed(f"{name}: request {rid}'s TPOT is {got.tpot[rid]!r}, where a "
                              f"number of seconds is due; the engine's own code gives "
                              f"{expected.tpot[rid]:.6f} s")
        if abs(expected.tpot[rid] - got.tpot[rid]) > 1e-9:
            raise CheckFailed(f"{name}: request {rid}'s TPOT is {got.tpot[rid]:.6f} s; "
                              f"the engine's own code gives {expected.tpot[rid]:.6f} s")


def describe(step) -> str:
    kind, rows, tokens, reserved = step
    return (f"a {kind} step of requests {rows} ({tokens} tokens fed, "
            f"{reserved} KV token slots held)")


def tiny_checkpoint() -> str:
    return str(make_tiny_checkpoint("scratch/checkpoints/tiny", arch="llama", seed=0))


def in_order() -> list:
    """The exercises in the book's order: by chapter, then as each chapter lists them."""
    return sorted(EXERCISES.values(), key=lambda e: e.chapter)


def listing() -> list[str]:
    """One line per exercise, in the book's order: its name, chapter, task and the
    engine code it replaces."""
    return [f"{e.name:18s} chapter {e.chapter}  {e.task} ({e.target})" for e in in_order()]


def next_exercise(lines: list[str]) -> str | None:
    """What to do next, from progress's lines: the first failing exercise in the
    book's order, else the first not started; None when every one has passed."""
    states = {line.split()[2]: line for line in lines[:-1]}
    for wanted in ("FAILING", "not started"):
        for ex in in_order():
            if wanted in states[ex.name]:
                return (f"next: {ex.name} (chapter {ex.chapter}): {ex.task}; write it in "
                        f"notebooks/exercises/{ex.name}.py, then: python -m minicb check {ex.name}")
    return None


# ANCHOR: progress
def progress(workspace: Path = WORKSPACE, checkpoint=None,
             seconds: float = TIME_LIMIT) -> tuple[list[str], int]:
    """Every exercise, by chapter, with its state: not started (its stub still
    raises NotImplementedError), failing (with the first line of why) or passed.
    Also returns how many started exercises fail."""
    lines, failing = [], 0
    for ex in in_order():
        try:
            check(ex.name, load_stub(ex, workspace / f"{ex.name}.py"), checkpoint, seconds)
            state = "passed"
        except NotStarted:
            state = "not started"
        except Exception as failure:        # one exercise's failure, whatever it is, is a line
            why = str(failure) if isinstance(failure, CheckFailed) else f"{ex.name}: {failure!r}"
            state, failing = f"FAILING: {why.splitlines()[0]}", failing + 1
        lines.append(f"chapter {ex.chapter:2d}  {ex.name:18s} {state}")
    done = sum(line.endswith(" passed") for line in lines)
    lines.append(f"{done} of {len(lines)} passed, {failing} failing")
    return lines, failing
# ANCHOR_END: progress


def main(args) -> int:
    """``python -m minicb check``: 0 when every check asked for passed."""
    if args.name is not None and args.name not in EXERCISES:
        raise ValueError(f"no exercise {args.name!r}; --list names them: {', '.join(EXERCISES)}")
    if not (args.time_limit > 0 and math.isfinite(args.time_limit)):
        raise ValueError(f"--time-limit {args.time_limit}: a number of seconds above 0")
    if (args.reset or args.hint is not None) and args.name is None:
        raise ValueError(f"--{'reset' if args.reset else 'hint'} needs an exercise's name: "
                         f"check NAME --{'reset' if args.reset else 'hint'}")
    if args.reset:
        print(reset(EXERCISES[args.name]))
        return 0
    added = ensure_workspace()
    if added:
        print(f"(the stubs of {len(added)} exercises are now in {os.path.relpath(WORKSPACE)}: "
              "write yours there)",
              file=sys.stderr)
    if args.list:
        print("\n".join(listing()))
        return 0
    if args.hint is not None:
        print(hint(args.name, args.hint))
        return 0
    if args.name is None and not args.reference:
        lines, failing = progress(seconds=args.time_limit)
        upcoming = next_exercise(lines)
        print("\n".join(lines[:-1] + ([upcoming] if upcoming else []) + lines[-1:]))
        return 1 if failing else 0
    names = [args.name] if args.name else list(EXERCISES)
    failed = 0
    for name in names:
        try:
            ex = EXERCISES[name]
            function = engine_function(ex) if args.reference else load_stub(ex, args.file)
            print(check(name, function, seconds=args.time_limit))
        except CheckFailed as failure:
            print(f"FAILED {failure}")
            failed += 1
    return 1 if failed else 0

"""How an exercise is checked: the student's function swapped in for the
engine's own (``swapped_in``), run with a time limit, on the stage's workload or
on the exercise's cases, and compared with the engine's own run request for
request and step for step; whatever goes wrong ends as one line
(``CheckFailed``). The exercises themselves are listed in ``exercises.py``.
"""
import importlib
import importlib.util
import math
import signal
import threading
import traceback
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import torch

from ...executors.simulated import VirtualClock
from ...llm import LLMEngine
from ...sampling import SamplingParams
from ...stages.continuous import SlotManager
from ...stages.paged import BlockManager
from ..bench.workload import synthetic_workload
from .exercises import (EXERCISES, STEP_SECONDS, STRANDED_AFTER, STUBS, TIME_LIMIT, CheckFailed,
                        Exercise, FunctionExercise, KernelExercise, NotStarted, TimedOut,
                        tiny_checkpoint)
from .function_cases import CASES as FUNCTION_CASES
from .function_cases import same
from .kernel_cases import CASES


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



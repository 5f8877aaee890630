"""How an exercise is checked: the student's function against the engine's own
on generated inputs (``differential.py``; a kernel against its naive reference,
``kernel_spaces.py``), then swapped in for the engine's own (``swapped_in``)
under every configuration that calls it, each run compared with the engine's
own step for step (``runs.py``); all with a time limit. Whatever goes wrong
ends as one line (``CheckFailed``) that names the chapter's section to read.
The exercises themselves are listed in ``exercises.py``.
"""
import signal
import threading
import traceback
import warnings
from contextlib import ExitStack, contextmanager
from functools import lru_cache
from pathlib import Path

import torch

from ...checkpoint import make_tiny_checkpoint
from . import function_spaces, kernel_spaces, method_spaces
from .compiled import failures as compile_failures
from .configurations import BY_NAME
from .differential import Stop, explore, search
from .exercises import EXERCISES, STUBS, TIME_LIMIT, CheckFailed, Exercise, NotStarted, TimedOut
from .memory_guard import OutOfBounds, bounded
from .runs import compare, run
from .student import engine_function, last_line_in, swapped_in


def tiny_checkpoint() -> str:
    """The checkpoint every check runs on: a tiny Llama, written once."""
    return str(make_tiny_checkpoint("scratch/checkpoints/tiny", arch="llama", seed=0))


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
    """Check exercise ``name`` with ``function`` (None: the engine's own): on
    generated inputs, then in the engine under every configuration that calls it.
    Returns a line saying what matched; raises CheckFailed saying where it did not
    and which section of the book to read, or TimedOut after ``seconds``."""
    ex = EXERCISES[name]
    try:
        with time_limit(seconds):
            return check_within_time(ex, function, checkpoint)
    except TimedOut:
        raise TimedOut(f"{name}: stopped after {seconds:g} s, its time limit (a check "
                       f"takes seconds): does your code loop forever?") from None
    except NotStarted:
        raise
    except CheckFailed as failure:
        raise type(failure)(f"{failure} (chapter {ex.chapter}, \"{ex.section}\", says "
                            f"what {ex.function_name} must do)") from None


def check_within_time(ex: Exercise, function, checkpoint) -> str:
    yours = function or engine_function(ex)
    where = source_file(yours, ex)
    try:
        if ex.kernel:
            tried = check_kernel(ex, yours)
        else:
            tried = explore(ex, space_of(ex), yours, engine_function(ex))
    except NotImplementedError:
        raise not_started(ex, where) from None
    note = ""
    if ex.kernel and yours is not engine_function(ex):
        note = compiles_for_gpus(ex, yours, where)
    checkpoint = checkpoint or tiny_checkpoint()
    steps = 0
    for configuration in map(BY_NAME.get, ex.runs):
        label = f"{ex.name} (under {configuration.name})"
        with swapped(ex, yours):
            got = run_yours(ex, label, configuration, checkpoint, where)
        compare(label, engine_run(configuration.name, checkpoint), got)
        steps += len(got.steps)
    return passed(ex, tried, steps) + note
# ANCHOR_END: check


def passed(ex: Exercise, tried: int, steps: int) -> str:
    runs = (f"; in the engine, under every configuration that calls it ({len(ex.runs)}), "
            f"the same {steps} steps and tokens as the engine's own code" if ex.runs else "")
    compared = ("equal the naive reference" if ex.kernel else
                "give what the engine's own code gives")
    return f"{ex.name}: passed. All {tried} inputs {compared}{runs}."


@contextmanager
def swapped(ex: Exercise, yours):
    """``yours`` in the engine's place, and in each module that imports it by name."""
    with ExitStack() as stack:
        stack.enter_context(swapped_in(ex.target, yours))
        for module in ex.also:
            stack.enter_context(swapped_in(f"{module}:{ex.function_name}", yours))
        yield


def space_of(ex: Exercise):
    for module in (function_spaces, method_spaces):
        maker = getattr(module, f"{ex.space}_space", None)
        if maker:
            return maker()
    raise KeyError(f"{ex.name}: no space {ex.space!r}")


@lru_cache(maxsize=None)
def engine_run(name: str, checkpoint):
    """The engine's own run of a configuration: the same for every exercise."""
    return run(BY_NAME[name], checkpoint)


# ANCHOR: check_kernel
def check_kernel(ex: Exercise, yours) -> int:
    """The engine's kernels with ``yours`` swapped in, against their naive
    references, on the space's named and drawn cases; CheckFailed names the first
    element that differs, or a load or store outside the kernel's tensors."""
    space = kernel_spaces.SPACES[ex.space]()
    with swapped(ex, yours), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # the interpreter's numpy, on -inf and nan
        return search(space, lambda inputs, label: kernel_case(ex, space.build(inputs), label, yours),
                      f"{ex.name}: your {ex.function_name}")


def kernel_case(ex: Exercise, case, label: str, yours):
    try:
        with bounded(case.readable):
            got = case.kernel()
    except Exception as raised:
        error = innermost(raised)          # the interpreter wraps what a kernel raised
        if isinstance(error, (TimedOut, NotImplementedError)):
            raise Stop(error) from None
        if case.may_refuse and isinstance(error, ValueError):
            return                         # an input it may refuse: refused
        if isinstance(error, OutOfBounds):
            raise CheckFailed(f"{ex.name} ({label}): {error}") from None
        raise CheckFailed(f"{ex.name} ({label}): your {ex.function_name} raised "
                          f"{type(error).__name__}: {error}") from None
    compare_tensors(f"{ex.name} ({label})", got, case.reference(), case.tolerance, case.sign_only)


def compiles_for_gpus(ex: Exercise, yours, where: str) -> str:
    """CheckFailed if the kernels with ``yours`` inside do not compile for sm_90 and
    sm_80; where nothing could be compiled, a note saying why."""
    function = getattr(yours, "fn", yours)
    failed, why_not = compile_failures(ex.name, where, function.__name__)
    if why_not:
        return f" (Not compiled for a GPU here: {why_not})"
    if failed:
        first = failed[0]
        raise CheckFailed(f"{ex.name}: with yours, {first['kernel']} does not compile for sm_{first['arch']} "
                          f"(an {'H100' if first['arch'] == 90 else 'A100'}; num_warps {first['num_warps']}, "
                          f"{first['constants']}): {first['error']}")
    return " It compiles for an H100 and an A100."


def not_started(ex, where: str) -> NotStarted:
    if Path(where).parent == STUBS:          # the stub as it comes: theirs is a copy of it
        where = str(ex.mine)
    return NotStarted(f"{ex.name}: not written yet. Write {ex.function_name} in {where} "
                      f"(it still raises NotImplementedError)")


def innermost(error: BaseException) -> BaseException:
    while error.__cause__ is not None or error.__context__ is not None:
        error = error.__cause__ or error.__context__
    return error


def compare_tensors(label: str, got, want, tolerance: dict, sign_only=()):
    """CheckFailed naming an output of another dtype or shape, or the first element
    outside atol + rtol * |reference| (for an output in ``sign_only``: that is 0
    where the reference's is, and not where it is not)."""
    gots, wants = (x if isinstance(x, tuple) else (x,) for x in (got, want))
    if len(gots) != len(wants):
        raise CheckFailed(f"{label}: {len(gots)} outputs; the reference gives {len(wants)}")
    for i, (have, need) in enumerate(zip(gots, wants)):
        output = f" output {i}" if isinstance(want, tuple) else ""
        if not isinstance(have, torch.Tensor) or have.shape != need.shape:
            raise CheckFailed(f"{label}:{output} got {getattr(have, 'shape', type(have).__name__)}, "
                              f"the reference has shape {tuple(need.shape)}")
        if have.dtype != need.dtype:
            raise CheckFailed(f"{label}:{output} is {have.dtype}; the reference gives {need.dtype} "
                              f"(the next operation expects that dtype)")
        have, need = have.float(), need.float()
        if i in sign_only:
            have, need = (have != 0).float(), (need != 0).float()
        bad = ~((have - need).abs() <= tolerance["atol"] + tolerance["rtol"] * need.abs())
        if bad.any():
            index = tuple(int(j) for j in bad.nonzero()[0])
            raise CheckFailed(f"{label}:{output} element {list(index)} is {have[index]:.6g}, the "
                              f"reference {need[index]:.6g} ({int(bad.sum())} of {bad.numel()} "
                              f"elements outside atol {tolerance['atol']}, rtol {tolerance['rtol']})")
        exact = float((have == need).float().mean()) if have.numel() else 1.0
        if exact < tolerance.get("exact", 0.0):
            raise CheckFailed(f"{label}:{output} {1 - exact:.0%} of its elements differ from the reference's "
                              f"in their last bits (no more than {1 - tolerance['exact']:.0%} may): does it "
                              f"round where the reference rounds?")
# ANCHOR_END: check_kernel


def source_file(function, ex: Exercise) -> str:
    """Where the student's function was written: a file, or the stub's place."""
    function = getattr(function, "fn", function)                  # a Triton JITFunction's Python
    return getattr(getattr(function, "__code__", None), "co_filename", str(ex.stub))


def run_yours(ex: Exercise, label: str, configuration, checkpoint, where: str):
    """``run``, with what the student's function (from file ``where``) raised
    told in their terms."""
    try:
        return run(configuration, checkpoint)
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
    error = innermost(error) if not last_line_in(error, where) else error
    step = " ".join(getattr(error, "__notes__", []))          # "in step N"
    what = f"{type(error).__name__}{' ' + step if step else ''}: {error}"
    if isinstance(error, OutOfBounds):
        return str(error)
    line = last_line_in(error, where)
    if line is not None:
        return f"your {ex.function_name} raised {what} ({Path(where).name}, line {line})"
    frames = traceback.extract_tb(error.__traceback__)
    place = f" in {Path(frames[-1].filename).name}'s {frames[-1].name}" if frames else ""
    return (f"the engine raised {what}{place}, after your {ex.function_name} returned: what "
            f"it returned or left behind is not what the engine can use")

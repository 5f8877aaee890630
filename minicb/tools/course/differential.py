"""A differential check on generated inputs: the student's function and the
engine's own, called on the same inputs, compared on everything the
exercise's contract fixes.

An exercise's *space* draws one call's inputs (with hypothesis) from the whole
range its contract allows: odd sizes, boundaries met exactly, extremes, ties.
Its ``call`` builds fresh objects from those inputs for each of the two
functions, calls the function, and says what it observed (``Observed``): what
it returned or raised, what it did to its arguments, the state the contract
lets it change, and the calls it made of what it was given. The first input
where the two differ, made as small as hypothesis can, is the failure's
example. Named examples (the boundaries a chapter talks about) come first.
"""
import copy
import math
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import errors as hypothesis_errors

from .exercises import CheckFailed, TimedOut

GENERATED = 120               # inputs a function check draws, past its named examples


@dataclass
class Observed:
    """What one call did."""
    returned: object = None
    raised: BaseException | None = None
    arguments: dict = field(default_factory=dict)    # name -> (before, after) where they differ
    state: dict = field(default_factory=dict)        # name -> value, as the contract names it
    calls: dict = field(default_factory=dict)        # what it was given -> its calls of it


@dataclass(frozen=True)
class Space:
    """The inputs an exercise's function may meet, and how to call it on them.

    ``draw``: a hypothesis strategy of one call's inputs, as plain data;
    ``call(function, inputs)``: an Observed, from objects built afresh;
    ``examples``: named inputs tried first; ``same``: when two results agree
    (where the contract leaves a choice, every choice it allows);
    ``describe``: an input, in a failure's words."""
    draw: object
    call: Callable
    examples: dict = field(default_factory=dict)
    same: Callable = None
    describe: Callable = repr
    generated: int = GENERATED


class Stop(BaseException):
    """Carries a failure that must not be shrunk (not started, out of time) past
    hypothesis, which retries an ordinary exception on smaller inputs."""
    def __init__(self, failure):
        super().__init__(str(failure))
        self.failure = failure


def attempt(function, *args, **kwargs) -> Observed:
    """Call ``function``; what it returned, or what it raised."""
    try:
        return Observed(returned=function(*args, **kwargs))
    except (NotImplementedError, TimedOut, Stop):
        raise
    except Exception as error:
        return Observed(raised=error)


def observe(run, watched: dict, state=None, calls=None) -> Observed:
    """Call ``run()`` (the function on its inputs): what it returned or raised,
    which of the ``watched`` arguments it changed (compared as ``plain`` data before
    and after), ``state()`` afterwards, and ``calls``, the log of what it was given."""
    before = {name: plain(value) for name, value in watched.items()}
    seen = attempt(run)
    seen.arguments = {name: (before[name], plain(value)) for name, value in watched.items()
                      if before[name] != plain(value)}
    seen.state = state() if state else {}
    seen.calls = {name: list(log) for name, log in (calls or {}).items()}
    return seen


def plain(value):
    """A value as plain, comparable data: containers as lists and dicts, a tensor as
    its dtype and values in words."""
    if torch.is_tensor(value):
        return Shown(f"{str(value.dtype).removeprefix('torch.')} tensor {value.detach().cpu().tolist()}")
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, range)) or type(value).__name__ == "deque":
        return [plain(v) for v in value]
    if hasattr(value, "request_id"):        # a request: what a function might change of it
        return dict(request_id=value.request_id, output_token_ids=list(value.output_token_ids),
                    num_computed_tokens=value.num_computed_tokens, finished=value.finished,
                    num_preemptions=value.num_preemptions)
    return copy.deepcopy(value)


def same(a, b) -> bool:
    """Equal: of one type (an int is not a float, a list not a tensor, None not 0),
    floats within a relative 1e-9 (the order of a sum may differ), nan equal to nan;
    tensors of one dtype, shape and device, within float32's rounding."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and (
            math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15) or (math.isnan(a) and math.isnan(b)))
    if torch.is_tensor(a) or torch.is_tensor(b):
        return (torch.is_tensor(a) and torch.is_tensor(b) and a.shape == b.shape
                and a.dtype == b.dtype and a.device == b.device
                and torch.allclose(a, b, rtol=1e-6, atol=1e-7, equal_nan=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if type(a) is not type(b) and not (isinstance(a, int) and isinstance(b, int)):
        return False
    return a == b


def shown(value) -> str:
    """A value in a failure message: requests by their ids, long ones cut short."""
    text = repr(plain_for_words(value))
    return text if len(text) <= 300 else text[:297] + "..."


def plain_for_words(value):
    if hasattr(value, "request_id"):
        return value.request_id
    if torch.is_tensor(value):
        return Shown(f"{str(value.dtype).removeprefix('torch.')} tensor {value.tolist()}")
    if isinstance(value, dict):
        return {k: plain_for_words(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(plain_for_words(v) for v in value)
    if isinstance(value, list):
        return [plain_for_words(v) for v in value]
    return value


class Shown(str):
    """Text that prints as itself inside a repr."""
    def __repr__(self):
        return str(self)


def difference(function_name: str, yours: Observed, engine: Observed, agree) -> str | None:
    """The first way the two calls differ, in the student's terms; None if they agree."""
    if engine.raised is not None:
        raised = type(engine.raised).__name__
        if yours.raised is None:
            return (f"the engine's own code raises {raised} here ({engine.raised}); yours "
                    f"returned {shown(yours.returned)}")
        if not isinstance(yours.raised, type(engine.raised)):
            return (f"yours raised {type(yours.raised).__name__} ({yours.raised}); the engine's "
                    f"own code raises {raised} ({engine.raised})")
    elif yours.raised is not None:
        return f"your {function_name} raised {type(yours.raised).__name__}: {yours.raised}{where(yours.raised)}"
    elif not agree(yours.returned, engine.returned):
        due = (", where a number is due" if isinstance(engine.returned, (int, float))
               and (yours.returned is None or isinstance(yours.returned, float)
                    and math.isnan(yours.returned)) else "")
        return (f"yours gives {shown(yours.returned)}{typed(yours.returned, engine.returned) if not due else ''}{due}; "
                f"the engine's own code gives {shown(engine.returned)}")
    for name, (before, after) in yours.arguments.items():
        if name not in engine.arguments:
            return (f"your {function_name} changed its argument {name}: it was {shown(before)}, "
                    f"and is {shown(after)} after the call (the engine's own code leaves it as it was)")
    for name, want in engine.state.items():
        if not same(yours.state.get(name), want):
            return f"afterwards {name} is {shown(yours.state.get(name))}; the engine's own code leaves {shown(want)}"
    for name, want in engine.calls.items():
        have = yours.calls.get(name, [])
        if have != want:
            return (f"yours called {name} {times(len(have))} ({shown(have)}); the engine's own code "
                    f"calls it {times(len(want))} ({shown(want)})")
    return None


def where(error: BaseException) -> str:
    """The file and line of the last frame of ``error``'s traceback outside minicb,
    where a student's function raised it."""
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if MINICB not in Path(f.filename).resolve().parents]
    return f" ({Path(frames[-1].filename).name}, line {frames[-1].lineno})" if frames else ""


MINICB = Path(__file__).resolve().parents[2]


def typed(got, want) -> str:
    """Where two results may print alike but differ in type, dtype or device: which."""
    if torch.is_tensor(got) and torch.is_tensor(want):
        if (got.dtype, got.device) != (want.dtype, want.device):
            return f" ({got.dtype} on {got.device}, where {want.dtype} on {want.device} is due)"
        return ""
    kinds = [(int, float), (list, tuple)]
    if type(got) is type(want) or any(isinstance(got, k) and isinstance(want, k) for k in kinds):
        return ""
    if got is None:
        return f", where {kind(want)} is due"
    return f" ({kind(got)}, where {kind(want)} is due)"


def kind(value) -> str:
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def times(n: int) -> str:
    return {0: "never", 1: "once", 2: "twice"}.get(n, f"{n} times")


def compare_on(ex, space: Space, yours, engine, inputs, label: str):
    """One input: CheckFailed naming it where the two functions differ."""
    try:
        mine = space.call(yours, copy.deepcopy(inputs))
    except (NotImplementedError, TimedOut) as failure:     # not worth a smaller input
        raise Stop(failure) from None
    theirs = space.call(engine, copy.deepcopy(inputs))
    if theirs.raised is not None and not isinstance(theirs.raised, ValueError):
        raise RuntimeError(f"{ex.name}: the check itself is broken: the engine's own "
                           f"{ex.function_name} raised on {label}") from theirs.raised
    why = difference(ex.function_name, mine, theirs, space.same or same)
    if why:
        raise CheckFailed(f"{ex.name} ({label}): {why}")


def explore(ex, space: Space, yours, engine) -> int:
    """The named examples, then ``space.generated`` drawn inputs, each compared
    with the engine's own; returns how many inputs were compared."""
    return search(space, lambda inputs, label: compare_on(ex, space, yours, engine, inputs, label),
                  f"{ex.name}: your {ex.function_name}")


SHRINK_SECONDS = 20.0        # how long a failing input is made smaller before it is shown


def search(space, check_one, whose: str) -> int:
    """``check_one(inputs, label)`` on the space's named examples, then on
    ``space.generated`` drawn inputs. The first that fails is made as small as
    hypothesis can in SHRINK_SECONDS, and its CheckFailed raised. Returns how many
    inputs were checked."""
    for label, inputs in space.examples.items():
        try:
            check_one(inputs, label)
        except Stop as stop:
            raise stop.failure from None
    tried, failed = [0], []

    @settings(max_examples=space.generated, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), phases=(Phase.generate, Phase.shrink))
    @given(space.draw)
    def generated(inputs):
        if failed and time.monotonic() - failed[0][0] > SHRINK_SECONDS:
            raise Stop(failed[-1][1])               # small enough: show the last one found
        tried[0] += 1
        try:
            check_one(inputs, space.describe(inputs))
        except CheckFailed as failure:
            failed.append((failed[0][0] if failed else time.monotonic(), failure))
            raise

    try:
        generated()
    except Stop as stop:
        raise stop.failure from None
    except hypothesis_errors.HypothesisException as error:
        raise CheckFailed(f"{whose} gave different results for the same input on different calls "
                          f"({type(error).__name__}): does it keep state between calls?") from None
    return len(space.examples) + tried[0]

"""``python -m minicb check``: the student's workspace (a copy of each stub in
``notebooks/exercises/``, and ``--reset`` to bring one back), the progress
listing in the book's order, and what to do next.
"""
import math
import os
import shutil
import sys
from pathlib import Path

from .check import check
from .student import engine_function, load_stub
from .exercises import (EXERCISES, TIME_LIMIT, WORKSPACE, CheckFailed, NotStarted, in_order,
                        listing)
from .hints import hint


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
    if args.file is not None and not Path(args.file).is_file():
        raise ValueError(f"--file {args.file!r}: there is no such file")
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

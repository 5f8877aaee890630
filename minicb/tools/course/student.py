"""The student's code: loaded from its file (``load_stub``), put where the
engine's own function was for the length of a run (``swapped_in``), and the
engine's own function, the reference solution (``engine_function``).
"""
import importlib
import importlib.util
import traceback
from contextlib import contextmanager
from pathlib import Path

from .exercises import CheckFailed, Exercise


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


def load_stub(ex: Exercise, path: Path | None = None, function_name: str | None = None):
    """The student's function, from ``notebooks/exercises/NAME.py`` (or ``path``;
    ``function_name``: another function of that file). A file that does not load
    fails the check in one line: where, and why."""
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
    function_name = function_name or ex.function_name
    if not hasattr(module, function_name):
        raise CheckFailed(f"{ex.name}: {path} defines no function {function_name!r}")
    return getattr(module, function_name)


def last_line_in(error: BaseException, path) -> int | None:
    """The line of file ``path`` that ``error`` last passed through, if any."""
    lines = [f.lineno for f in traceback.extract_tb(error.__traceback__)
             if Path(f.filename) == Path(path)]
    return lines[-1] if lines else None

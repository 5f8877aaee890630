"""Mutation testing of the exercises' checks: does each check fail on the wrong
answers a student could write?

A *mutant* is the engine's own answer with one small change, the kind a student
makes: a comparison off by its boundary (< for <=), + for -, a constant off by one,
``and`` for ``or``, a guard's test turned round, a statement left out, two
arguments swapped, min for max; and the misconceptions of kernels and block
tables: a wrong dtype (a cast left out, fp16 for fp32), a load or store without
its mask, a boundary moved by one block. Each is run through the exercise's check in place
of the student's function; a check *kills* it when it fails. A mutant that passes
either does what the answer does (it is equivalent: the report says why) or shows
a case the check misses.

    python -m workshop.mutants                  # every exercise: the report
    python -m workshop.mutants top_p tpot       # these only, printed
"""
import argparse
import ast
import copy
import importlib
import inspect
import json
import os
import subprocess
import sys
import textwrap
import time
import types
from pathlib import Path

from minicb.tools.course.check import check, tiny_checkpoint
from minicb.tools.course.student import engine_function
from minicb.tools.course.exercises import EXERCISES, in_order

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "tests" / "course" / "mutants.json"   # what the last full run found
SCRATCH = ROOT / "scratch" / "mutants"
FLIPPED = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
           ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
           ast.Is: ast.IsNot, ast.IsNot: ast.Is}
ARITHMETIC = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
              ast.FloorDiv: ast.Mult, ast.Mod: ast.FloorDiv}
SWAPPED_NAMES = {"min": "max", "max": "min", "minimum": "maximum", "maximum": "minimum"}
OTHER_DTYPE = {"float32": "float16", "float16": "float32", "bfloat16": "float32"}
MASKED = {"load", "store"}                     # tl.load and tl.store: their mask= can be left out
KILL_TARGET = 0.9             # the share of its mutants each check must kill
# Mutants that do what the answer does, so that no check can kill them, and why;
# they are left out of a check's share. Each does so on a GPU too: a kernel's mutant is
# compiled for one by its check. (exercise, change) as the report words it.
EQUIVALENT = {
    ("stop_reason", "return None  ->  (left out)"):
        "a function that ends without a return returns None",
    ("top_p", "-1  ->  1"): "probs is [B, V]: dimension 1 is dimension -1",
    ("online_softmax", "0.0  ->  1.0"):
        "the shift of a row that has seen no visible key: exp(-inf - c) is 0 for any finite c",
    ("paged_rows", "0  ->  1"):
        "the block a masked load reads for a key past the context: that key's row is masked "
        "out before it is read",
    ("percentiles", "np.asarray(values, dtype=float)  ->  np.asarray(values)"):
        "a run's times are ints and floats, which numpy's mean and percentile compute in "
        "float64 either way",
    ("claim_verdict", "gap > 0  ->  gap >= 0"):
        "a gap of 0 is never more than the margin (never below 0), so it never gets here",
    ("rms_norm", "-1  ->  1"): "x and residual are [rows, hidden]: dimension 1 is dimension -1",
    ("rms_norm", "8 if hidden >= 2048 else 4  ->  8 if not hidden >= 2048 else 4"):
        "num_warps, a power of two either way: how a GPU spreads a program's work, never its values",
    ("rms_norm", "hidden >= 2048  ->  hidden > 2048"): "num_warps (as above)",
    ("rms_norm", "2048  ->  2049"): "num_warps (as above)",
}


def answer_tree(name: str) -> ast.FunctionDef:
    """The engine's own function for exercise ``name``, parsed, with its docstring
    and decorators left out (Triton's jit kept)."""
    function = engine_function(EXERCISES[name])
    function = getattr(function, "fn", function)             # a Triton JITFunction's Python
    tree = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0]
    tree.decorator_list = [d for d in tree.decorator_list if "jit" in ast.unparse(d)]
    if ast.get_docstring(tree) is not None:
        tree.body = tree.body[1:] or [ast.Pass()]
    return tree


def sites(tree) -> list[tuple[int, str]]:
    """(node index in ast.walk order, what to change) for every mutation of ``tree``."""
    signature = {id(n) for n in ast.walk(tree.args)}      # the stub gives the student these
    block = block_size_of(tree) is not None
    found = []
    for index, node in enumerate(ast.walk(tree)):
        if id(node) not in signature:
            found.extend((index, change) for change in changes(node))
            if block and isinstance(node, ast.Compare):
                found.append((index, "block"))
    return found


def block_size_of(tree):
    """The function's block size, as it names it (``block_size``, ``self.block_size``), if any."""
    return next((node for node in ast.walk(tree) if isinstance(node, (ast.Name, ast.Attribute))
                 and ast.unparse(node).rpartition(".")[2] == "block_size"
                 and isinstance(node.ctx, ast.Load)), None)


def changes(node) -> list[str]:
    if isinstance(node, ast.Compare):
        return [f"compare {i}" for i, op in enumerate(node.ops) if type(op) in FLIPPED]
    if isinstance(node, ast.Attribute) and node.attr in OTHER_DTYPE:
        return ["dtype"]
    if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
        return ["arithmetic"]
    if isinstance(node, ast.AugAssign) and type(node.op) in ARITHMETIC:
        return ["arithmetic", "drop"]
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, bool):
        return ["constant"]
    if isinstance(node, ast.BoolOp):
        return ["boolean"]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
        return ["unary"]
    if isinstance(node, (ast.If, ast.While, ast.IfExp)):
        return ["negate"]
    if isinstance(node, ast.Call):          # min(a, b) is min(b, a): no swap there
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        keywords = {k.arg for k in node.keywords}
        return (["swap"] if len(node.args) >= 2 and name not in SWAPPED_NAMES else []) + (
            ["rename"] if name in SWAPPED_NAMES else []) + (
            ["unmask"] if name in MASKED and "mask" in keywords else []) + (
            ["uncast"] if name == "to" and isinstance(node.func, ast.Attribute) else []) + (
            ["undtype"] if "dtype" in keywords else [])
    if isinstance(node, (ast.Assign, ast.Expr, ast.Return)) and not is_docstring(node):
        return ["drop"]
    return []


def is_docstring(node) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def mutate(tree, index: int, change: str):
    """A copy of ``tree`` with ``change`` made at node ``index``; the change in words."""
    tree = copy.deepcopy(tree)
    node = list(ast.walk(tree))[index]
    before = ast.unparse(node).splitlines()[0]
    kind, _, arg = change.partition(" ")
    if kind == "compare":
        node.ops[int(arg)] = FLIPPED[type(node.ops[int(arg)])]()
    elif kind == "arithmetic":
        node.op = ARITHMETIC[type(node.op)]()
    elif kind == "constant":
        node.value = (not node.value if isinstance(node.value, bool) else node.value + 1
                      if isinstance(node.value, int) or node.value == 0 else node.value * 2)
    elif kind == "boolean":
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif kind == "unary":
        replace(tree, node, node.operand)
        node = node.operand
    elif kind == "negate":
        node.test = ast.UnaryOp(ast.Not(), node.test)
    elif kind == "swap":
        node.args[0], node.args[1] = node.args[1], node.args[0]
    elif kind == "rename":
        field = "id" if isinstance(node.func, ast.Name) else "attr"
        setattr(node.func, field, SWAPPED_NAMES[getattr(node.func, field)])
    elif kind == "drop":
        replace(tree, node, ast.Pass())
    elif kind == "dtype":
        node.attr = OTHER_DTYPE[node.attr]
    elif kind == "unmask":
        node.keywords = [k for k in node.keywords if k.arg not in ("mask", "other")]
    elif kind == "uncast":                         # x.to(dtype) -> x
        replace(tree, node, node.func.value)
        node = node.func.value
    elif kind == "undtype":
        node.keywords = [k for k in node.keywords if k.arg != "dtype"]
    elif kind == "block":                          # a < b -> a < b + block_size
        node.comparators[0] = ast.BinOp(node.comparators[0], ast.Add(), copy.deepcopy(block_size_of(tree)))
    ast.fix_missing_locations(tree)
    after = "(left out)" if kind == "drop" else ast.unparse(node).splitlines()[0]
    return tree, f"{before}  ->  {after}"


def replace(tree, old, new):
    """Put ``new`` where ``old`` is in ``tree``."""
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
            elif isinstance(value, list) and any(v is old for v in value):
                setattr(parent, field, [new if v is old else v for v in value])


def compiled(name: str, tree, label: str):
    """The mutant as a function of the engine's module (its globals), from a file of its
    own, so that Triton's jit can read its source and a traceback names it."""
    ex = EXERCISES[name]
    original = importlib.import_module(ex.target.partition(":")[0])
    SCRATCH.mkdir(parents=True, exist_ok=True)
    file = SCRATCH / f"{name}_{label}_{os.getpid()}.py"       # processes may compile one at once
    # the engine module's names, imported: the file loads on its own too (the GPU compile step)
    names = sorted({node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
                   & set(vars(original)) - {ex.function_name})
    header = f"from {original.__name__} import {', '.join(names)}  # noqa\n\n" if names else ""
    file.write_text(header
                    + ast.unparse(ast.Module([tree], [])) + "\n")
    module = types.ModuleType(f"mutant_{name}_{label}")
    module.__dict__.update(vars(original))
    module.__file__ = str(file)
    exec(compile(file.read_text(), str(file), "exec"), module.__dict__)
    return module.__dict__[ex.function_name]


def killed(name: str, function, checkpoint, seconds: float) -> bool:
    """Whether the check fails with ``function`` in the engine's place."""
    try:
        check(name, function, checkpoint, seconds)
    except Exception:      # noqa: BLE001 (CheckFailed, or a mutant that breaks the check: it fails)
        return True
    return False


def mutants(name: str) -> list[tuple[str, str, ast.FunctionDef]]:
    """(label, change in words, tree) for each mutant of exercise ``name``."""
    tree = answer_tree(name)
    found = []
    for number, (index, change) in enumerate(sites(tree)):
        mutant, words = mutate(tree, index, change)
        found.append((f"m{number:03d}", words, mutant))
    return found


def run_here(name: str, seconds: float, start: int, log: Path):
    """Exercise ``name``'s mutants from number ``start`` on, through its check in this
    process; a line of ``log`` before each (its label) and after (its result)."""
    checkpoint = tiny_checkpoint()
    with log.open("a") as out:
        for label, words, tree in mutants(name)[start:]:
            print(json.dumps(dict(label=label, change=words)), file=out, flush=True)
            try:
                function = compiled(name, tree, label)
            except Exception as error:          # noqa: BLE001 (not Python a student could run)
                result = dict(label=label, change=words, killed=None, note=repr(error))
            else:
                result = dict(label=label, change=words,
                              killed=killed(name, function, checkpoint, seconds))
            print(json.dumps(result), file=out, flush=True)


def run(name: str, seconds: float = 60.0) -> list[dict]:
    """Each mutant of exercise ``name`` through its check, in a process of its own: a
    mutant can crash the process (a kernel that reads out of bounds in Triton's
    interpreter), and a crash fails the check as surely as a wrong value does."""
    SCRATCH.mkdir(parents=True, exist_ok=True)
    log, results, total = SCRATCH / f"{name}.log", [], len(mutants(name))
    log.unlink(missing_ok=True)
    while len(results) < total:
        child = subprocess.run([sys.executable, "-m", "workshop.mutants", name, "--child",
                                str(len(results)), "--seconds", str(seconds)],
                               capture_output=True, text=True)
        lines = [json.loads(line) for line in log.read_text().splitlines()]
        results = [r for r in lines if "killed" in r]
        if child.returncode != 0:
            if not lines or "killed" in lines[-1]:          # not a mutant's doing
                raise RuntimeError(f"mutation run of {name} failed: {child.stderr[-2000:]}")
            results.append(dict(lines[-1], killed=True,
                                note=f"crashed the check's process (exit {child.returncode})"))
            with log.open("a") as out:
                print(json.dumps(results[-1]), file=out)
    return results


def summary(name: str, results: list[dict]) -> dict:
    """How many of its mutants a check killed; its share, of those not equivalent."""
    for r in results:
        if r["killed"] is False and (name, r["change"]) in EQUIVALENT:
            r["equivalent"] = EQUIVALENT[name, r["change"]]
    counted = [r for r in results if r["killed"] is not None]
    dead = sum(r["killed"] for r in counted)
    equivalent = [f"{r['label']}: {r['change']} ({r['equivalent']})" for r in counted
                  if "equivalent" in r]
    return dict(exercise=name, mutants=len(counted), killed=dead, equivalent=len(equivalent),
                share=round(dead / max(1, len(counted) - len(equivalent)), 4),
                survivors=[f"{r['label']}: {r['change']}" for r in counted
                           if not r["killed"] and "equivalent" not in r],
                equivalents=equivalent, results=results)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workshop.mutants", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="exercises (default: every one, and the report)")
    parser.add_argument("--seconds", type=float, default=60.0, help="a mutant's time limit")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:                  # one exercise's mutants from this one on
        run_here(args.names[0], args.seconds, args.child, SCRATCH / f"{args.names[0]}.log")
        return 0
    unknown = [n for n in args.names if n not in EXERCISES]
    if unknown:
        parser.error(f"no exercise {unknown[0]!r}; python -m minicb check --list names them")
    names = args.names or [ex.name for ex in in_order()]
    report = []
    for name in names:
        started = time.perf_counter()
        row = summary(name, run(name, args.seconds))
        row["seconds"] = round(time.perf_counter() - started, 1)
        report.append(row)
        print(f"{name:18s} {row['killed']:3d} of {row['mutants']:3d} killed, "
              f"{row['equivalent']} equivalent ({100 * row['share']:.0f}% of the others) in "
              f"{row['seconds']:.0f} s", flush=True)
        for survivor in row["survivors"]:
            print(f"    survived {survivor}")
    rows = {row["exercise"]: row for row in json.loads(REPORT.read_text())} if REPORT.exists() else {}
    rows.update((row["exercise"], row) for row in report)     # these exercises anew
    REPORT.write_text(json.dumps([rows[ex.name] for ex in in_order() if ex.name in rows],
                                 indent=1) + "\n")
    return 0 if all(row["share"] >= KILL_TARGET for row in report) else 1


if __name__ == "__main__":
    sys.exit(main())

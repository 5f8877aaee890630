"""The house: the engine, its executors and the tools around it. Every import,
at a module's top or inside a function, points down this order, and none
runs in a circle."""
import ast
import re
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Floors, lowest first. A module imports only from its own floor's earlier rooms
# or from floors below. Inside stages/, the rooms are in the book's order: a stage
# builds on the stages before it, never on a later one.
FLOORS = [
    ["minicb.kernels"],
    ["minicb.sampling_params", "minicb.shapes", "minicb.executor_contract", "minicb.sampling", "minicb.request", "minicb.layer_ops", "minicb.gpu_memory", "minicb.model",
     "minicb.checkpoint", "minicb.costmodel", "minicb.config", "minicb.metrics", "minicb.observer",
     "minicb.attention", "minicb.pretrained"],
    ["minicb.executors"],
    ["minicb.stages.base", "minicb.stages.single", "minicb.stages.static", "minicb.stages.dynamic",
     "minicb.stages.iteration", "minicb.stages.continuous", "minicb.stages.paged",
     "minicb.stages.prefix_caching", "minicb.stages.overlap", "minicb.stages.drafting", "minicb.stages.speculative", "minicb.stages"],
    ["minicb.llm", "minicb"],
    # The tools' rooms, what a user runs: serving, measuring, compiling for a GPU, the
    # course; the CLI is their door.
    ["minicb.tools", "minicb.tools.serve", "minicb.tools.bench", "minicb.tools.gpu", "minicb.tools.course",
     "minicb.cli", "minicb.__main__"],
    # The repository's workshop, beside the package: a run's figures and sizes, the
    # measurements behind them, the GPU run, the book's numbers, mutation testing.
    ["workshop", "workshop.report", "workshop.measure", "workshop.gpu", "workshop.book", "workshop.mutants"],
]
TOOL_ROOMS = FLOORS[-2][1:-2]


def module_name(path: Path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    parts = list(relative.parts)
    if parts[0] == "kernels":
        parts[0:1] = ["minicb", "kernels"]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    paths = [*ROOT.glob("minicb/**/*.py"), *ROOT.glob("kernels/*.py"), *ROOT.glob("workshop/**/*.py")]
    return {module_name(p): p for p in paths}


def imports(name: str, path: Path) -> set[str]:
    """Every minicb or workshop module this one imports, wherever the import stands."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith(("minicb", "workshop"))}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            if not target.startswith(("minicb", "workshop")):
                continue
            subs = {f"{target}.{a.name}" for a in node.names} & set(modules())
            found |= subs or {target}
    return found - {name}


def room(name: str) -> tuple[int, int]:
    """(floor, room) of a module: the most specific entry of FLOORS that holds it."""
    best = None
    for floor, rooms in enumerate(FLOORS):
        for index, prefix in enumerate(rooms):
            if name == prefix or name.startswith(prefix + "."):
                if best is None or len(prefix) > best[2]:
                    best = (floor, index, len(prefix))
    assert best is not None, f"{name} has no place in FLOORS"
    return best[:2]


def graph() -> dict[str, set[str]]:
    return {name: imports(name, path) for name, path in modules().items()}


def test_every_import_points_down():
    up = []
    for name, targets in graph().items():
        for target in targets:
            here, there = room(name), room(target)
            if there > here:
                up.append(f"{name} imports {target}")
    assert not up, "imports that point back up:\n" + "\n".join(sorted(up))


def test_no_imports_run_in_a_circle():
    edges, circles = graph(), []

    def visit(node, trail):
        if node in trail:
            circles.append(trail[trail.index(node):] + [node])
            return
        for target in edges.get(node, ()):
            if target in edges:
                visit(target, trail + [node])

    for start in edges:
        visit(start, [])
    assert not circles, f"imports in a circle: {circles[0]}"


def test_the_engine_imports_no_tool():
    engine = {n: t for n, t in graph().items() if n.startswith("minicb")
              and not n.startswith("minicb.tools") and n not in ("minicb.cli", "minicb.__main__")}
    reaching = sorted(f"{n} imports {t}" for n, targets in engine.items() for t in targets
                      if t.startswith("minicb.tools"))
    assert not reaching, reaching


@pytest.mark.parametrize("name", ["minicb.executors.plain", "minicb.executors.cuda_graphs",
                                  "minicb.executors.parallel", "minicb.executors.simulated"])
def test_an_executor_knows_no_stage(name):
    assert not {t for t in graph()[name] if t.startswith("minicb.stages")}


def imports_inside_functions(path: Path):
    """(line, top-level names imported, has a comment) of each import that stands
    inside a function. The comment may stand on the import's lines or on the two
    lines above the run of imports it belongs to."""
    lines = path.read_text().splitlines()
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.Import):
                names = tuple(a.name.split(".")[0] for a in inner.names)
            elif isinstance(inner, ast.ImportFrom):
                names = ("minicb",) if inner.level else (inner.module.split(".")[0],)
                in_kernels = path.parent.name == "kernels" or (inner.module or "").startswith("kernels")
                if inner.level and in_kernels:
                    names = ("minicb.kernels",)
            else:
                continue
            first = inner.lineno
            while first > 1 and lines[first - 2].strip().startswith(("import ", "from ")):
                first -= 1
            said = any("#" in line for line in lines[max(first - 3, 0):inner.end_lineno])
            found.add((inner.lineno, names, said))
    return sorted(found)


def test_an_import_inside_a_function_defers_a_heavy_dependency_and_says_which():
    # The standard library and minicb's own modules load at the top: deferring them
    # saves little, and hides what a module needs. Only a heavy third-party
    # package that some paths never need waits, and a comment says why; the Triton
    # kernels, which load Triton, are one minicb module that waits. The command line
    # is the other door: it loads a command's code when that command runs, so that
    # each command needs only its own extra (minicb/extras.py).
    problems = []
    for name, path in modules().items():
        for line, names, said in imports_inside_functions(path):
            cheap = [n for n in names if n in sys.stdlib_module_names
                     or (n in ("minicb", "workshop") and name != "minicb.cli")]
            if cheap:
                problems.append(f"{name}:{line} defers {cheap}: import it at the top")
            elif not said:
                problems.append(f"{name}:{line} defers {list(names)} without a comment saying why")
    assert not problems, "\n".join(problems)


def test_the_tools_live_in_named_rooms():
    """minicb/tools/ holds its rooms and nothing loose: a newcomer finds serving,
    measuring, the course or the GPU run by a folder's name."""
    tools = ROOT / "minicb" / "tools"
    loose = sorted(p.name for p in tools.iterdir()
                   if p.name not in ("__init__.py", "__pycache__") and not p.is_dir())
    rooms = sorted(f"minicb.tools.{p.name}" for p in tools.iterdir()
                   if p.is_dir() and p.name != "__pycache__")
    assert not loose, f"files loose in minicb/tools/: {loose}"
    assert rooms == sorted(TOOL_ROOMS), f"rooms on disk {rooms}, in FLOORS {sorted(TOOL_ROOMS)}"


MAX_LINES = 500                  # the longest a Python file may be


def test_nothing_installed_holds_or_imports_the_workshop():
    """pip install minicb is the engine: the workshop is no package it installs, and
    no module of minicb imports it (planted: an import of workshop.report.scale in
    minicb/tools/bench/offline.py fails here and in the floors' test)."""
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    assert not [p for p in packages if not p.startswith("minicb")], packages
    reaching = sorted(f"{name} imports {target}" for name, targets in graph().items() if name.startswith("minicb")
                      for target in targets if target.startswith("workshop"))
    assert not reaching, reaching


def test_no_python_file_passes_500_lines():
    paths = [*ROOT.glob("minicb/**/*.py"), *ROOT.glob("kernels/*.py"), *ROOT.glob("tests/**/*.py"),
             *ROOT.glob("workshop/**/*.py")]
    long = sorted(f"{p.relative_to(ROOT)}: {n}" for p in paths
                  if (n := len(p.read_text().splitlines())) > MAX_LINES)
    assert not long, f"split these: {long}"


def test_importing_minicb_loads_no_server_plots_client_or_course():
    """`import minicb` is the engine: the server (fastapi, uvicorn, prometheus_client),
    the plots (matplotlib), the benchmark client (openai) and the course's checks
    (hypothesis) load only where a command uses them."""
    heavy = ("fastapi", "uvicorn", "prometheus_client", "matplotlib", "openai", "hypothesis")
    code = f"import sys, minicb; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "[]", (result.stdout, result.stderr[-2000:])


@pytest.mark.parametrize("argv", [["--help"], ["generate", "--help"], ["serve", "--bogus"],
                                  ["generate", "--model", "m", "--prompt", "p", "--max-tokens", "x"]])
def test_the_command_line_answers_help_and_a_bad_flag_without_torch(argv):
    """`minicb --help` and a mistyped flag answer from the parser alone: no torch, no
    engine (planted: cli.py importing minicb.llm at its top fails here)."""
    code = ("import sys\nfrom minicb.cli import main\ntry:\n    main(%r)\nexcept SystemExit as stop:\n"
            "    print(stop.code, sorted(m for m in ('torch', 'triton', 'transformers') if m in sys.modules))"
            % (argv,))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    code, loaded = result.stdout.strip().splitlines()[-1].split(" ", 1)
    assert loaded == "[]", (argv, loaded)
    assert code == ("0" if "--help" in argv else "2"), (argv, code, result.stderr[-1000:])


EXTRA_MODULES = ("fastapi", "uvicorn", "prometheus_client", "openai", "psutil", "matplotlib", "hypothesis",
                 "gguf", "accelerate")


def without_extras(code: str) -> subprocess.CompletedProcess:
    """Python code run with every extra's packages unimportable, as after a plain
    ``pip install minicb``."""
    hide = f"import sys\nfor m in {EXTRA_MODULES!r}: sys.modules[m] = None\n"
    return subprocess.run([sys.executable, "-c", hide + code], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)


def test_the_engine_generates_without_any_extra(tmp_path):
    """pip install minicb, no extras: LLM(...).generate(...) serves a tiny checkpoint."""
    code = (f"from minicb import LLM, SamplingParams, make_tiny_checkpoint\n"
            f"path = make_tiny_checkpoint({str(tmp_path / 'tiny')!r}, arch='llama', seed=0)\n"
            "[out] = LLM(path, engine='paged').generate([[1, 2, 3]], SamplingParams(max_tokens=4, ignore_eos=True))\n"
            "print(len(out.output_token_ids))")
    result = without_extras(code)
    assert result.returncode == 0 and result.stdout.split()[-1] == "4", result.stderr[-2000:]


@pytest.mark.parametrize("command,extra", [("serve --model x", "serve"), ("check --list", "course"),
                                           ("bench serve --help", "bench"), ("demo", "plots")])
def test_a_command_without_its_extra_names_it_in_one_line(command, extra):
    result = without_extras(f"from minicb.cli import main; main({command.split()!r})")
    assert result.returncode == 2 or result.returncode == 1, result.stderr[-2000:]
    [line] = result.stderr.strip().splitlines()
    assert f"pip install 'minicb[{extra}]'" in line and command.split()[0] in line, line


def test_the_required_dependencies_are_the_engine_s_and_each_extra_is_declared():
    """pyproject's dependencies hold no extra's package, and each extra minicb/extras.py
    names is declared with the same packages."""
    from minicb.extras import EXTRAS

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    name = lambda spec: re.split(r"[<>=\[ ]", spec)[0].lower().replace("-", "_")      # noqa: E731
    required = {name(d) for d in project["dependencies"]}
    assert not required & set(EXTRA_MODULES), required & set(EXTRA_MODULES)
    for extra, modules in EXTRAS.items():
        assert {name(d) for d in project["optional-dependencies"][extra]} == set(modules), extra

"""Everything a GPU run owes, in parts that each fit one short command.

    make gpu-wheels                   # with a network: the wheels `make gpu` installs offline
    make gpu-plan                     # on the GPU: each part, and its minutes on this GPU
    make gpu PARTS="correctness"      # a part (or several, or all); PARTS unset: all of them
    make gpu PARTS="stages:03_dynamic"  # only that notebook of the part, and its figures
    make gpu-rehearsal                # every part on this CPU, as CI runs it

A lent GPU comes in short windows (15 minutes in all, the machine's start and
the install included, at most ten for a command, no network), so the run is
cut into parts that each fit one command, packed into windows (``windows``):
the compiled tests first
(the real shapes' checkpoints are written meanwhile, for the parts after),
then the kernels' notebook, then the notebooks whose figures the book shows.
Each part writes one archive, ``OUT/PART.tar.gz``: its figures and their
sidecars, ``results.json`` (the machine, each notebook's outcome and time, the
figures' headline numbers) and ``log.txt``, so bringing a part back is one copy.

``plan`` measures the GPU's copy bandwidth and matmul rate and estimates each
part's minutes from the sizes in ``workshop.report.scale`` with a rough cost model
(below), checked against a run's measured times; ``run`` refuses a part whose
estimate passes MAX_MINUTES. The
rehearsal runs every part on a CPU at the full scale's settings with a tiny
model and fewer requests (``workshop.report.scale``), checks every archive, and says
what it could not do there.
"""
import argparse
import importlib.util
import json
import math
import os
import platform
import re
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import torch

from workshop.measure.benchmarks import measured_rates
from workshop.report.figures import REQUIRED_SIDECAR_KEYS, project_root
from workshop.gpu.parts import MAX_ARCHIVE_BYTES, MAX_MINUTES, PARTS, REACHED_ON_A_GPU, TEST_WORKERS, Part, cuda_only_lines
from workshop.gpu.plan import chosen, plan


# ---------------------------------------------------------------- the machine
def machine() -> dict:
    """The GPU (or CPU), the versions, and the two rates the estimates use."""
    # Their versions only; transformers is slow to import.
    import transformers
    import triton

    cuda = torch.cuda.is_available()
    info = dict(gpu=torch.cuda.get_device_name() if cuda else None, cpu=platform.machine(),
                cpus=os.cpu_count(), torch=torch.__version__, triton=triton.__version__,
                transformers=transformers.__version__, python=platform.python_version(),
                driver=nvidia_driver() if cuda else None)
    return info | measured_rates("cuda" if cuda else "cpu")


def nvidia_driver():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30).stdout.strip() or None
    except OSError:
        return None


def run_part(part: Part, out: Path, rehearsal: bool) -> dict:
    """Run one part into out/PART/ and pack out/PART.tar.gz; returns its results."""
    folder = out / part.name
    (folder / "figures").mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, MINICB_FIGURES_DIR=str((folder / "figures").resolve()),
               MINICB_SCALE="rehearsal" if rehearsal else os.environ.get("MINICB_SCALE", "full"))
    results = dict(part=part.name, what=part.what, rehearsal=rehearsal, machine=machine(), steps=[],
                   skipped=[part.rehearsal_skips] if rehearsal else [])
    with open(folder / "log.txt", "w") as log:
        writer = write_checkpoints(part.checkpoints, env, log)
        if part.tests:
            results["steps"].append(run_tests(part, env, log, rehearsal, folder))
            results["unreached_cuda_lines"] = unreached_cuda_lines(folder / "coverage.json")
        for notebook in part.notebooks:
            results["steps"].append(run_notebook(notebook, env, log))
        if part.module:
            command = [sys.executable, "-m", *part.module.split(), "--out", str(folder / part.output)]
            results["steps"].append(timed(command, env, log, part.module.split()[-1]))
        if writer:
            results["steps"].append(waited(writer, "checkpoints"))
    results["figures"] = headline_numbers(folder / "figures")
    results["passed"] = all(step["passed"] for step in results["steps"])
    (folder / "results.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    pack(folder, out / f"{part.name}.tar.gz")
    return results


def write_checkpoints(shapes, env, log):
    """Write the checkpoints of these shapes, as the notebooks of this scale ask for
    them (Scale.checkpoint), in a process of their own: the 8B shape's 16 GB take a
    minute, which the part's tests run beside. Returns (process, start), or None."""
    if not shapes:
        return None
    code = ("from workshop.report.scale import run_scale\nscale = run_scale()\n"
            f"for shape in {shapes!r}:\n    print(scale.checkpoint(scale.model(shape)), flush=True)")
    log.write(f"$ writing the checkpoints of {', '.join(shapes)} in the background\n")
    log.flush()
    return subprocess.Popen([sys.executable, "-c", code], env=env, cwd=project_root(), stdout=log,
                            stderr=subprocess.STDOUT), time.perf_counter()


def waited(writer, name) -> dict:
    process, started = writer
    returncode = process.wait()
    seconds = round(time.perf_counter() - started, 1)
    print(f"  {name}: {'written' if returncode == 0 else 'FAILED'} in {seconds} s (from the part's start)", flush=True)
    return dict(name=name, passed=returncode == 0, seconds=seconds, summary="")


def run_tests(part, env, log, rehearsal, folder) -> dict:
    """On a GPU: the part's tests, under coverage where it is installed. In a
    rehearsal: that they exist (`make test` runs them on the CPU)."""
    pytest = ["-m", "pytest", "-q", "-p", "no:cacheprovider", *part.tests]
    if rehearsal:
        return timed([sys.executable, *pytest, "--collect-only"], env, log, "tests")
    if importlib.util.find_spec("xdist") is not None:
        pytest += ["-n", str(TEST_WORKERS)]
    if importlib.util.find_spec("coverage") is None:
        return timed([sys.executable, *pytest], env, log, "tests")
    return covered(pytest, env, log, folder)


def covered(pytest, env, log, folder) -> dict:
    """Run pytest with each of its processes measuring its own coverage (started in
    tests/conftest.py, as pytest-xdist's workers are not children `coverage run`
    sees), then combine them into folder/coverage.json."""
    data, root = (folder / ".coverage").resolve(), project_root()
    measured = dict(env or os.environ, MINICB_COVERAGE_DATA=str(data),
                    MINICB_COVERAGE_SOURCE=f"{root / 'minicb'},{root / 'kernels'}")
    step = timed([sys.executable, *pytest], measured, log, "tests")
    for command in (["combine", f"--data-file={data}", str(data.parent)],
                    ["json", f"--data-file={data}", "-o", str(folder / "coverage.json")]):
        subprocess.run([sys.executable, "-m", "coverage", *command], cwd=root, stdout=log,
                       stderr=subprocess.STDOUT)
    data.unlink(missing_ok=True)
    return step


def unreached_cuda_lines(coverage_json: Path) -> dict | None:
    """{file: CUDA-only lines} that the GPU tests were to reach and did not;
    None where no coverage ran (a rehearsal, or no coverage package)."""
    if not coverage_json.is_file():
        return None
    root, executed = project_root(), {}
    for path, data in json.loads(coverage_json.read_text())["files"].items():
        executed[str((root / path).resolve().relative_to(root))] = set(data["executed_lines"])
    return {name: missed for name, lines in cuda_only_lines(root).items()
            if REACHED_ON_A_GPU.get(name, "").startswith("tests/")
            and (missed := [n for n in lines if n not in executed.get(name, set())])}


def run_notebook(notebook, env, log) -> dict:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax",
               f"notebooks/{notebook}.ipynb"]
    return timed(command, env, log, notebook)


def timed(command, env, log, name) -> dict:
    """Run one command into the log; its outcome, time and pytest's summary line.
    A command still running at the run's deadline (``run --minutes``) is stopped,
    and what it had printed is kept: a part's archive comes back even then."""
    started = time.perf_counter()
    log.write(f"$ {' '.join(command)}\n")
    log.flush()
    try:
        result = subprocess.run(command, env=env, cwd=project_root(), capture_output=True, text=True,
                                timeout=seconds_left(env))
        stdout, stderr, returncode = result.stdout, result.stderr, result.returncode
    except subprocess.TimeoutExpired as stopped:      # its output comes as bytes, whatever text= says
        stdout, stderr = (text.decode(errors="replace") if isinstance(text, bytes) else text or ""
                          for text in (stopped.stdout, stopped.stderr))
        stderr += f"\nstopped at the run's deadline, after {stopped.timeout:.0f} s\n"
        returncode = "deadline"
    log.write(stdout + stderr)
    seconds = round(time.perf_counter() - started, 1)
    counts = re.findall(r"^=*\s*(\d+ (?:passed|failed|error|tests? collected).*?)\s*=*$", stdout, re.M)
    summary = counts[-1] if counts else ("stopped at the run's deadline" if returncode == "deadline" else "")
    print(f"  {name}: {'passed' if returncode == 0 else 'FAILED'} in {seconds} s  {summary}", flush=True)
    if returncode != 0:          # the failure itself, where a CI log or a GPU reply shows it
        print(indented(failure_of(stdout + stderr)), flush=True)
    return dict(name=name, passed=returncode == 0, seconds=seconds, summary=summary)


def seconds_left(env) -> float | None:
    """Seconds to the run's deadline (MINICB_RUN_DEADLINE, a time.time()), or None: no deadline."""
    deadline = (env or os.environ).get("MINICB_RUN_DEADLINE")
    return None if deadline is None else max(1.0, float(deadline) - time.time())


def failure_of(output: str, lines: int = 40) -> str:
    """What pytest said went wrong: its report of the failures, else the output's end."""
    report = output.split(" FAILURES ", 1)[-1].split(" short test summary info ", 1)[0]
    return "\n".join(report.splitlines()[-lines:])


def indented(text: str) -> str:
    return "\n".join("    | " + line for line in text.splitlines())


def headline_numbers(folder: Path) -> dict:
    """Each figure's sidecar, less the long lists of raw measurements."""
    numbers = {}
    for sidecar in sorted(folder.glob("*.json")):
        meta = json.loads(sidecar.read_text())
        numbers[sidecar.stem] = {k: v for k, v in meta.items() if len(json.dumps(v, default=str)) <= 2000}
    return numbers


def pack(folder: Path, archive: Path):
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname=folder.name)
    if archive.stat().st_size > MAX_ARCHIVE_BYTES:
        raise RuntimeError(f"{archive} is {archive.stat().st_size} bytes, over {MAX_ARCHIVE_BYTES}")


def archive_problems(part: Part, archive: Path) -> list[str]:
    """What a part's archive lacks: results.json, a log, every expected figure
    with a complete sidecar, a step that passed."""
    if not archive.is_file():
        return [f"{archive.name}: missing"]
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
        read = lambda name: tar.extractfile(f"{part.name}/{name}").read()         # noqa: E731
        problems = [f"{archive.name}: no {name}" for name in ("results.json", "log.txt")
                    if f"{part.name}/{name}" not in names]
        if part.output and not any(n.startswith(f"{part.name}/{part.output}/") for n in names):
            problems.append(f"{archive.name}: nothing in {part.output}/")
        rehearsal = (f"{part.name}/results.json" in names
                     and json.loads(read("results.json")).get("rehearsal", True))
        for figure in part.figures + ([] if rehearsal else part.gpu_figures):
            for suffix in (".png", ".json"):
                if f"{part.name}/figures/{figure}{suffix}" not in names:
                    problems.append(f"{archive.name}: no figures/{figure}{suffix}")
            if f"{part.name}/figures/{figure}.json" in names:
                meta = json.loads(read(f"figures/{figure}.json"))
                problems += [f"{archive.name}: {figure}.json lacks {key}" for key in REQUIRED_SIDECAR_KEYS
                             if key not in meta]
        if not problems:
            results = json.loads(read("results.json"))
            problems += [f"{archive.name}: {step['name']} failed (see log.txt)" for step in results["steps"]
                         if not step["passed"]]
    return problems


# ---------------------------------------------------------------- the commands
def positive_minutes(text: str) -> float:
    """--minutes (make gpu's GPU_MINUTES): a finite number of minutes above 0. Zero
    would set no deadline, a negative or nan one would stop every command at once."""
    try:
        minutes = float(text)
    except ValueError:
        minutes = math.nan
    if not (math.isfinite(minutes) and minutes > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number of minutes above 0 "
                                         f"(GPU_MINUTES), got {text!r}")
    return minutes


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m workshop.gpu.run", description=__doc__.split("\n\n")[1])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("plan", help="each part with its estimated minutes on this GPU")
    run = commands.add_parser("run", help="run parts on this GPU, each into OUT/PART.tar.gz")
    rehearse = commands.add_parser("rehearse", help="run every part on this CPU and check the archives")
    for command in (run, rehearse):
        command.add_argument("parts", nargs="*", help="part names (default: all); PART:NOTEBOOK,... "
                             "runs only those notebooks of the part")
        command.add_argument("--out", default="gpu-results", help="the folder the archives go to")
    run.add_argument("--force", action="store_true", help="run a part whose estimate is over the limit")
    run.add_argument("--minutes", type=positive_minutes, help="stop what still runs this many minutes from now, "
                     "its part's archive written all the same (a command's limit on a lent GPU)")
    args = parser.parse_args(argv)
    if args.command == "plan":
        plan(PARTS)
        return 0
    parts, out = chosen(args.parts), Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if args.command == "run":
        if not torch.cuda.is_available():
            raise SystemExit("no GPU here: `make gpu-rehearsal` runs the parts on a CPU")
        minutes = plan(parts)
        parts = [p for p in parts if args.force or minutes[p.name] <= MAX_MINUTES]
        if args.minutes is not None:
            os.environ["MINICB_RUN_DEADLINE"] = str(time.time() + 60 * args.minutes)
    problems, skipped = [], {}
    for part in parts:
        print(f"{part.name}: {part.what}", flush=True)
        results = run_part(part, out, rehearsal=args.command == "rehearse")
        problems += archive_problems(part, out / f"{part.name}.tar.gz")
        for line in results["skipped"]:
            skipped.setdefault(line, []).append(part.name)
    for line, names in skipped.items():
        print(f"skipped on this CPU ({', '.join(names)}): {line}")
    verdict = "all parts passed" if not problems else f"{len(problems)} problems:\n  " + "\n  ".join(problems)
    print(f"{len(parts)} parts into {out}: {verdict}")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())

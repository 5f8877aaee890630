"""The one command a GPU run needs (workshop.gpu.run), checked without a GPU: its
parts cover every notebook and figure, its plan fits an H100's half hour, an
archive that lacks a figure is caught, and every line that only a GPU reaches
names what reaches it there. `make test` also runs the whole rehearsal."""
import dataclasses
import inspect
import io
import json
import math
import re
import sys
import tarfile
import time
from pathlib import Path

import pytest

from workshop.gpu import parts, plan
from workshop.gpu import run as gpu_run
from workshop.report.scale import SIZES, Scale, run_scale

ROOT = Path(__file__).resolve().parents[2]


def test_every_notebook_is_in_exactly_one_part_and_has_sizes():
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb")
                       if p.stem not in parts.LEFT_OUT)
    in_parts = sorted(nb for part in parts.PARTS for nb in part.notebooks)
    assert in_parts == notebooks
    assert set(notebooks) <= set(SIZES) <= set(notebooks) | set(parts.LEFT_OUT)


def test_each_part_expects_the_figures_its_notebooks_draw_at_full_scale():
    """The figure names a part expects are the ones its notebooks save: all of them,
    but 10's, which needs two GPUs."""
    for part in parts.PARTS:
        saved = set()
        for notebook in part.notebooks:
            cells = json.loads((ROOT / "notebooks" / f"{notebook}.ipynb").read_text())["cells"]
            code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
            saved |= set(re.findall(r'save_figure\(\s*\w+,\s*"(\w+)"', code))
        expected = saved - ({"10_tensor_parallel_split"} if part.name == "parallel" else set())
        assert set(part.figures) | set(part.gpu_figures) == expected, part.name


def test_every_part_of_an_h100_run_fits_one_command_and_the_parts_pack_into_windows():
    minutes = {part.name: plan.part_minutes(part, parts.H100_RATES) for part in parts.PARTS}
    assert all(m <= parts.MAX_MINUTES for m in minutes.values()), minutes
    assert parts.MAX_MINUTES < 10                            # each fits one command
    packed = plan.windows(minutes)
    assert sorted(n for window in packed for n in window) == sorted(minutes)      # each part once
    for window in packed:
        assert parts.START_MINUTES + sum(minutes[n] for n in window) <= parts.WINDOW_MINUTES == 15
    assert len(packed) <= math.ceil(sum(minutes.values()) / 7)      # no window left half empty


def test_windows_place_the_longest_parts_first():
    # e cannot run (over MAX_MINUTES); a and b fill a window of 14 minutes after its start
    assert plan.windows({"a": 8, "b": 6, "c": 5, "d": 1, "e": 20}) == [["a", "b"], ["c", "d"]]


# What GPU runs measured: the H200's rates, the decode roofline's modes then, each part's seconds.
GPU_RUNS = [dict(rates=dict(copy_gb_s=4211, matmul_tflops=702), modes=2,
                 seconds={"kernels": 97, "correctness": 64}),
            dict(rates=dict(copy_gb_s=4245, matmul_tflops=790), modes=4,
                 seconds={"kernels": 165, "correctness": 68, "parallel": 18}),
            dict(rates=dict(copy_gb_s=4219, matmul_tflops=784), modes=4, seconds={"correctness": 78}),
            dict(rates=dict(copy_gb_s=4219, matmul_tflops=772), modes=4,
                 # (notebook 06 ran 59 s then; it now runs a cell more, on prompt steps launched)
                 seconds={"calibrate": 113, "stages:03_dynamic": 237, "iteration:04_continuous": 131})]


@pytest.mark.parametrize("run", GPU_RUNS, ids=["first H200 run", "second H200 run", "third H200 run",
                                               "fourth H200 run"])
def test_the_estimates_are_near_what_gpu_runs_measured(monkeypatch, run):
    """Within 50% either way: the plan is rough, but it must not send a part that
    cannot finish, nor refuse one that can."""
    monkeypatch.setattr(plan, "ROOFLINE_MODES", run["modes"])
    for name, measured in run["seconds"].items():
        part = plan.chosen([name])[0]
        if name == "kernels":       # these runs came before the part profiled a decode step
            part = dataclasses.replace(part, module="", output="")
        estimate = 60 * plan.part_minutes(part, run["rates"])
        assert measured / 1.5 <= estimate <= measured * 1.5, (name, estimate, measured)


def test_the_paged_notebook_is_given_more_than_an_h200_needed_for_most_of_it():
    """On an H200 (copy 4,219 GB/s, matmul 728 TFLOP/s) notebook 05 was stopped at a
    deadline of 189 s, in its block-size sweep, with the sweep, preemption and chunking
    still to run: about 25 engines of the 256-request workload, 12 of them done by 167 s."""
    part = plan.chosen(["iteration:05_paged"])[0]
    estimate = 60 * plan.part_minutes(part, dict(copy_gb_s=4219, matmul_tflops=728))
    assert 189 * 25 / 12 / 1.5 <= estimate <= 189 * 25 / 12 * 1.5, estimate


def test_the_study_estimate_is_near_what_an_h200_measured():
    """Notebook 07's spread experiment fills most of the benchmarks part: on an H200
    (copy 4,180 GB/s, matmul 758 TFLOP/s) it took 535 s with the peers on 32 requests,
    when the estimate said 423 s and the rest of the part was cut at the deadline."""
    sizes = dict(SIZES["07_benchmarks"]["full"], peer_requests=32)
    estimate = plan.study_seconds(sizes, plan.CostModel(4180e9, 758e12), "llama-3.2-1b")
    assert 535 / 1.25 <= estimate <= 535 * 1.25, estimate


def test_a_slower_gpu_gets_longer_estimates_and_the_plan_refuses_what_does_not_fit(capsys, monkeypatch):
    slow = dict(copy_gb_s=300, matmul_tflops=65)           # about a T4
    assert all(plan.part_minutes(p, slow) >= plan.part_minutes(p, parts.H100_RATES)
               for p in parts.PARTS)
    monkeypatch.setattr(plan, "measured_rates", lambda device: dict(slow, matmul_dtype="float16"))
    minutes = plan.plan(parts.PARTS)
    printed = capsys.readouterr().out
    refused = [name for name, m in minutes.items() if m > parts.MAX_MINUTES]
    assert refused and all(re.search(rf"{name} .*REFUSED", printed) for name in refused)


def fake_archive(path: Path, part: parts.Part, figures: dict, passed=True, rehearsal=True):
    """A part's archive holding these figure sidecars (each with a PNG)."""
    with tarfile.open(path, "w:gz") as tar:
        def add(name, data: bytes):
            info = tarfile.TarInfo(f"{part.name}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        add("results.json", json.dumps(dict(rehearsal=rehearsal,
                                            steps=[dict(name="x", passed=passed, seconds=1)])).encode())
        add("log.txt", b"")
        if part.output:
            add(f"{part.output}/written.json", b"{}")
        for name, meta in figures.items():
            add(f"figures/{name}.png", b"png")
            add(f"figures/{name}.json", json.dumps(meta).encode())


def test_an_archive_missing_a_figure_or_a_sidecar_key_is_caught(tmp_path):
    part = next(p for p in parts.PARTS if p.name == "iteration")
    complete = dict(gpu="H100", torch="2", triton="3", transformers="5", date="2026-11-24")
    archive = tmp_path / "iteration.tar.gz"
    fake_archive(archive, part, {name: complete for name in part.figures})
    assert gpu_run.archive_problems(part, archive) == []
    fake_archive(archive, part, {name: complete for name in part.figures[1:]})
    problems = gpu_run.archive_problems(part, archive)
    assert problems == [f"iteration.tar.gz: no figures/{part.figures[0]}.png",
                        f"iteration.tar.gz: no figures/{part.figures[0]}.json"]
    fake_archive(archive, part, {name: {k: v for k, v in complete.items() if k != "gpu"} for name in part.figures})
    assert all("lacks gpu" in p for p in gpu_run.archive_problems(part, archive))
    fake_archive(archive, part, {name: complete for name in part.figures}, passed=False)
    assert gpu_run.archive_problems(part, archive) == ["iteration.tar.gz: x failed (see log.txt)"]
    assert gpu_run.archive_problems(part, tmp_path / "none.tar.gz") == ["none.tar.gz: missing"]


def test_a_figure_drawn_only_where_triton_compiles_is_expected_on_a_gpu_alone(tmp_path):
    part = next(p for p in parts.PARTS if p.name == "kernels")
    complete = dict(gpu="H200", torch="2", triton="3", transformers="5", date="2026-11-26")
    archive = tmp_path / "kernels.tar.gz"
    fake_archive(archive, part, {name: complete for name in part.figures}, rehearsal=True)
    assert gpu_run.archive_problems(part, archive) == []
    fake_archive(archive, part, {name: complete for name in part.figures}, rehearsal=False)
    assert gpu_run.archive_problems(part, archive) == [
        f"kernels.tar.gz: no figures/{name}{suffix}" for name in part.gpu_figures for suffix in (".png", ".json")]


def test_a_step_that_fails_prints_its_failure_and_one_that_passes_prints_one_line(tmp_path, capsys):
    failing = tmp_path / "test_fails.py"
    failing.write_text("def test_one():\n    assert 6 * 7 == 41, 'the answer moved'\n")
    with open(tmp_path / "log.txt", "w") as log:
        step = gpu_run.timed([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(failing)],
                             None, log, "failing")
        printed = capsys.readouterr().out
        assert not step["passed"] and step["summary"].startswith("1 failed")
        assert "FAILED" in printed and "    | E       AssertionError: the answer moved" in printed
        failing.write_text("def test_one():\n    assert 6 * 7 == 42\n")
        step = gpu_run.timed([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(failing)],
                             None, log, "passing")
    assert step["passed"] and capsys.readouterr().out.count("\n") == 1


def test_a_step_past_the_runs_deadline_is_stopped_and_its_output_kept(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MINICB_RUN_DEADLINE", str(time.time() + 2))
    code = "import time\nprint('started', flush=True)\ntime.sleep(60)"
    with open(tmp_path / "log.txt", "w") as log:
        step = gpu_run.timed([sys.executable, "-c", code], None, log, "slow")
    assert not step["passed"] and step["seconds"] < 30 and "deadline" in step["summary"]
    assert "started" in (tmp_path / "log.txt").read_text()
    assert "slow: FAILED" in capsys.readouterr().out


def test_the_gpu_tests_coverage_counts_what_their_workers_ran(tmp_path):
    """The GPU tests run in pytest-xdist workers; the lines a worker ran count."""
    pytest.importorskip("coverage")
    pytest.importorskip("xdist")
    from minicb.executors import cuda_graphs

    test = "tests/executors/test_cuda_graphs.py::test_bucket_sizes_cover_every_batch"
    with open(tmp_path / "log.txt", "w") as log:
        step = gpu_run.covered(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", test],
                               None, log, tmp_path)
    assert step["passed"], (tmp_path / "log.txt").read_text()
    files = json.loads((tmp_path / "coverage.json").read_text())["files"]
    executed = {Path(name).resolve(): set(data["executed_lines"]) for name, data in files.items()}
    lines, first = inspect.getsourcelines(cuda_graphs.bucket_sizes)
    body = first + len(lines) - 1                      # its last line runs only when it is called
    assert body in executed[Path(cuda_graphs.__file__).resolve()]


def test_every_line_only_a_gpu_reaches_names_what_reaches_it():
    """A CPU never runs these lines, not even in the rehearsal: each file holding one
    must name the GPU test, or the part, that does (tests of part 1 run under
    coverage on a GPU and report the lines they missed)."""
    found = parts.cuda_only_lines(ROOT)
    unlisted = sorted(set(found) - set(parts.REACHED_ON_A_GPU))
    assert not unlisted, f"lines only a GPU reaches, in files REACHED_ON_A_GPU does not list: {unlisted}"
    assert not set(parts.REACHED_ON_A_GPU) - set(found)              # no stale entry either
    tests = {t.split("::")[0] for t in parts.GPU_TESTS}
    names = {p.name for p in parts.PARTS}
    for name, reached_by in parts.REACHED_ON_A_GPU.items():
        assert (reached_by in tests or reached_by.removeprefix("part ") in names
                or reached_by.startswith("two GPUs")), (name, reached_by)


def test_the_scale_follows_minicb_scale_and_a_rehearsal_keeps_the_full_lengths(monkeypatch):
    monkeypatch.setenv("MINICB_SCALE", "rehearsal")
    scale = run_scale()
    assert scale == Scale("rehearsal", "cpu", "float32") and scale.full
    sizes = scale.sizes("07_benchmarks")
    full = SIZES["07_benchmarks"]["full"]
    assert sizes["max_model_len"] == full["max_model_len"] and sizes["num_requests"] < full["num_requests"]
    assert sizes["repeats"] == 1
    knobs = scale.sizes("06_memory_pressure")
    assert knobs["chunk_sizes"] == SIZES["06_memory_pressure"]["full"]["chunk_sizes"]
    assert scale.model("llama-3.1-8b") == dict(arch="llama", shape="tiny", dtype="float32",
                                               max_position_embeddings=131072)
    monkeypatch.setenv("MINICB_SCALE", "giant")
    with pytest.raises(ValueError, match="MINICB_SCALE='giant': choose cpu, full or rehearsal"):
        run_scale()


def test_a_gpu_too_small_for_a_shape_gets_the_largest_that_fits():
    t4 = Scale("full", "cuda", "float16", "Tesla T4", 15 * 2**30)
    h100 = Scale("full", "cuda", "bfloat16", "NVIDIA H100", 80 * 2**30)
    assert t4.model("llama-3.1-8b") == dict(arch="llama", shape="llama-3.2-1b", dtype="float16")
    assert h100.model("llama-3.1-8b") == dict(arch="llama", shape="llama-3.1-8b", dtype="bfloat16")
    assert not t4.fits("llama-3.1-8b") and t4.fits("llama-3.2-1b")




def test_a_part_can_run_some_of_its_notebooks_and_expects_only_their_figures():
    [stages] = plan.chosen(["stages:03_dynamic"])
    assert stages.notebooks == ["03_dynamic"] and stages.figures == ["03_dynamic_window"]
    [both] = plan.chosen(["iteration:04_continuous,05_paged"])
    assert both.notebooks == ["04_continuous", "05_paged"]
    assert both.figures == ["04_orca_picture", "04_tokens_per_step", "04_latency_cdf", "05_block_pool",
                            "05_kv_waste", "05_running_vs_budget", "05_block_size"]
    assert [p.name for p in plan.chosen(["kernels", "stages"])] == ["kernels", "stages"]
    assert plan.chosen([]) == parts.PARTS
    full = dict(copy_gb_s=4219, matmul_tflops=784)
    assert plan.part_minutes(stages, full) < plan.part_minutes(plan.chosen(["stages"])[0], full)
    with pytest.raises(SystemExit, match="part stages has no notebook '04_continuous'"):
        plan.chosen(["stages:04_continuous"])
    with pytest.raises(SystemExit, match="unknown part 'stage'"):
        plan.chosen(["stage:03_dynamic"])


@pytest.mark.parametrize("minutes", ["0", "-1", "nan", "inf", "soon"])
def test_gpu_minutes_must_be_a_finite_number_above_zero(minutes, capsys):
    """make gpu's GPU_MINUTES: 0 once set no deadline, a negative or nan one stopped
    every command after a second, inf overflowed."""
    with pytest.raises(SystemExit) as stopped:
        gpu_run.main(["run", "--minutes", minutes])
    last = capsys.readouterr().err.splitlines()[-1]
    assert stopped.value.code == 2
    assert last.endswith(f"argument --minutes: must be a finite number of minutes above 0 (GPU_MINUTES), "
                         f"got {minutes!r}"), last

"""Workloads are seeded and shaped as described; the driver replays them on the clock."""
import json
import math
import re
import subprocess
import sys

import numpy as np
import pytest

from minicb import LLMEngine
from minicb.tools.bench.driver import replay
from minicb.tools.bench.workload import PRESETS, preset_workload, synthetic_workload


def test_same_seed_same_workload():
    a = synthetic_workload(20, output_len=("exponential", 10, 30), qps=5.0, seed=3)
    b = synthetic_workload(20, output_len=("exponential", 10, 30), qps=5.0, seed=3)
    c = synthetic_workload(20, output_len=("exponential", 10, 30), qps=5.0, seed=4)
    assert a.prompts == b.prompts and a.output_lens == b.output_lens and a.arrival_times == b.arrival_times
    assert a.output_lens != c.output_lens


def test_capped_exponential_lengths():
    w = synthetic_workload(4000, prompt_len=4, output_len=("exponential", 128, 512), seed=0)
    lens = np.array(w.output_lens)
    assert lens.min() >= 1 and lens.max() == 512                    # capped, and the cap is reached
    assert 110 < lens.mean() < 135                                  # mean 128, a little less after the cap
    assert set(w.prompt_lens) == {4}


def test_poisson_arrivals_at_the_rate():
    w = synthetic_workload(4000, prompt_len=4, output_len=4, qps=8.0, seed=1)
    gaps = np.diff([0.0] + w.arrival_times)
    assert (gaps > 0).all() and abs(gaps.mean() - 1 / 8) < 0.01
    assert synthetic_workload(5, qps=math.inf).arrival_times == [0.0] * 5


@pytest.mark.parametrize("name", list(PRESETS))
def test_presets_scale_their_lengths(name):
    full = preset_workload(name, num_requests=50, seed=0)
    small = preset_workload(name, num_requests=50, seed=0, scale=0.25)
    assert np.mean(small.prompt_lens) == pytest.approx(np.mean(full.prompt_lens) / 4, rel=0.1)
    assert small.description["name"] == name


def test_preset_shapes_match_their_scenarios():
    reading, writing = preset_workload("reading", 40), preset_workload("writing", 40)
    assert min(reading.prompt_lens) > max(reading.output_lens)      # long prompt, short answer
    assert max(writing.prompt_lens) < min(writing.output_lens)      # short prompt, long output
    with pytest.raises(ValueError, match="unknown workload 'poetry'"):
        preset_workload("poetry")


@pytest.mark.parametrize("engine", ["single", "static", "continuous"])
def test_replay_submits_at_arrival_times(llama, engine):
    workload = synthetic_workload(6, prompt_len=(2, 6), output_len=(2, 5), qps=200.0, seed=2)
    llm_engine = LLMEngine(llama, engine=engine, max_batch_size=4, max_num_seqs=4)
    run = replay(llm_engine, workload)
    assert run.num_requests == 6 and run.output_tokens == sum(workload.output_lens)
    assert not llm_engine.requests                               # finished requests are let go
    metrics = sorted(run.request_metrics, key=lambda m: m.arrival_time)
    start = metrics[0].arrival_time - workload.arrival_times[0]
    for m, offset in zip(metrics, sorted(workload.arrival_times)):
        assert m.arrival_time == pytest.approx(start + offset)
        assert m.first_scheduled_time >= m.arrival_time
    assert run.wall_time >= workload.arrival_times[-1]


def test_bench_cli_prints_a_table_and_writes_json(tmp_path, llama):
    out = tmp_path / "bench.json"
    result = subprocess.run([sys.executable, "-m", "minicb", "bench", "--model", llama, "--engine",
                             "static,continuous", "--num-requests", "6", "--scale", "0.03125",
                             "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0] for line in result.stdout.splitlines() if line.strip()}
    assert {"static", "continuous"} <= rows
    data = json.loads(out.read_text())
    (results,) = data["rounds"]                                  # one round unless --repeat
    assert set(results) == {"static", "continuous"}
    assert results["static"]["output_tokens"] == results["continuous"]["output_tokens"]
    assert 0 < results["continuous"]["host_share"] < 1
    assert data["workload"]["name"] == "anyscale"


@pytest.mark.parametrize("options,says", [
    (dict(qps=0), "qps must be a number above 0 .inf: all at once., got 0"),
    (dict(qps=-2.0), "qps must be a number above 0"),
    (dict(qps=math.nan), "qps must be a number above 0"),
    (dict(num_requests=0), "num_requests must be an integer >= 1, got 0"),
    (dict(num_requests=2.5), "num_requests must be an integer >= 1, got 2.5"),
    (dict(cap=0), "cap must be an integer >= 1, got 0"),
    (dict(scale=0.0), "scale must be a finite number above 0, got 0.0"),
    (dict(scale=math.inf), "scale must be a finite number above 0, got inf"),
])
def test_a_workload_that_cannot_be_drawn_is_refused_by_name(options, says):
    with pytest.raises(ValueError, match=f"^{says}"):
        preset_workload("chat", **options)


@pytest.mark.parametrize("flags,says", [(["--qps", "0"], "--qps must be a number above 0"),
                                        (["--num-requests", "0"], "--num-requests must be an integer >= 1"),
                                        (["--repeat", "0"], "--repeat must be >= 1, got 0")])
def test_bench_refuses_a_zero_rate_or_count_in_one_line(flags, says, capsys):
    from minicb.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["bench", *flags])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err.startswith(f"minicb bench: error: {says}") and len(err.splitlines()) == 1


@pytest.mark.parametrize("flags,says", [
    (["--threads", "-3"], r"--threads must be in 1\.\.\d+ \(the CPUs here\), got -3"),
    (["--threads", "100000"], r"--threads must be in 1\.\.\d+ \(the CPUs here\), got 100000"),
    (["--out", "."], "--out '.' is a folder: give a file name"),
    (["--out", "no/such/folder/x.json"], "--out 'no/such/folder/x.json': there is no folder 'no/such/folder'"),
    (["--peers", "nope"], "--peers: unknown peer 'nope'; choose from hf_generate, hf_generate_batch"),
    (["--engine", "static,nope"], "unknown engine 'nope'"),
    (["--engine", "static", "--max-num-seqs", "0"], "--max-num-seqs must be an integer >= 1, got 0"),
    (["--seed", "-1"], "--seed must be an integer >= 0, got -1"),
])
def test_bench_checks_every_flag_before_any_engine_runs(flags, says, capsys, monkeypatch):
    from minicb.cli import main
    from minicb.tools.bench import offline

    def no_run(*args, **kwargs):
        raise AssertionError("an engine ran before a bad flag was refused")

    monkeypatch.setattr(offline, "run_bench", no_run)
    monkeypatch.setattr(offline, "bench_model", no_run)
    with pytest.raises(SystemExit) as stopped:
        main(["bench", *flags])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and re.match(f"minicb bench: error: {says}", err), err
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize("flags,says", [
    (["--scale", "0"], "--scale must be a finite number above 0, got 0.0"),
    (["--cap", "0"], "--cap must be an integer >= 1, got 0"),
    (["--max-concurrency", "-1"], "--max-concurrency must be >= 1, got -1"),
    (["--burstiness", "inf"], "--burstiness must be a finite number > 0, got inf"),
    (["--base-url", "localhost:8000"], "--base-url 'localhost:8000' must start with http:// or https://"),
    (["--out", "."], "--out '.' is a folder: give a file name"),
    (["--num-prompts", "x"], "argument --num-prompts: invalid int value: 'x'"),
    (["--seed", "-1"], "--seed must be an integer >= 0, got -1"),
])
def test_bench_serve_refuses_bad_flags_in_one_line_before_asking_the_server(flags, says, capsys):
    from minicb.cli import main

    with pytest.raises(SystemExit) as stopped:      # the default --base-url: nobody is asked
        main(["bench", "serve", *flags])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err.startswith("minicb bench serve: error: ") and says in err, err
    assert "Traceback" not in err and len(err.splitlines()) <= 2     # argparse's own adds the --help line


def test_bench_serve_says_in_one_line_that_no_server_answers(capsys):
    from minicb.cli import main
    from minicb.executors.parallel import free_port

    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(SystemExit) as stopped:
        main(["bench", "serve", "--base-url", url, "--num-prompts", "2"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err.startswith(f"minicb bench serve: error: cannot reach a server at {url}")
    assert len(err.splitlines()) == 1, err

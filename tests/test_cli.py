"""The command line, run as a user would run it."""
import subprocess
import sys


def run(*args):
    result = subprocess.run([sys.executable, "-m", "minicb", *args], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_generate_prints_one_line_per_prompt(llama):
    out = run("generate", "--model", llama, "--engine", "static", "--prompt", "Hello",
              "--prompt", "Batching is", "--max-tokens", "5", "--ignore-eos")
    lines = out.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("'Hello' -> ") and lines[0].endswith("(5 tokens, length)")
    assert lines[1].startswith("'Batching is' -> ")


def test_generate_matches_the_python_api(llama):
    from minicb import LLM, SamplingParams

    [expected] = LLM(llama, engine="single").generate(["Hi there"], SamplingParams(max_tokens=6,
                                                                                    ignore_eos=True))
    out = run("generate", "--model", llama, "--engine", "single", "--prompt", "Hi there",
              "--max-tokens", "6", "--ignore-eos")
    assert out.strip() == f"'Hi there' -> {expected.text!r}  (6 tokens, length)"


def test_demo_prints_every_stage_and_a_figure(tmp_path):
    out = run("demo", "--requests", "6", "--max-batch-size", "3", "--checkpoint-dir", str(tmp_path / "ckpt"))
    rows = [line.split() for line in out.splitlines()]
    table = {r[0]: r for r in rows if len(r) > 1 and r[1].isdigit()}
    assert {"single", "static"} <= set(table)
    assert table["single"][1] == table["static"][1] == "6"             # requests
    assert table["single"][2] == table["static"][2]                      # same generated tokens
    assert "figure: " in out and "demo_schedules.png" in out
    assert {"dynamic", "continuous"} <= set(table)


def test_bad_engine_is_refused():
    result = subprocess.run([sys.executable, "-m", "minicb", "generate", "--model", "x", "--engine", "nope",
                             "--prompt", "a"], capture_output=True, text=True)
    assert result.returncode == 2 and "invalid choice: 'nope'" in result.stderr


def test_bench_runs_engines_and_peers_on_one_workload(llama):
    out = run("bench", "--model", llama, "--engine", "static,paged", "--peers", "hf_generate",
              "--num-requests", "4", "--scale", "0.03", "--cap", "256")
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.strip()}
    assert {"static", "paged", "hf_generate"} <= set(rows)
    assert "transformers on the same requests" in out
    # The same requests: every row of the throughput table generated as many tokens.
    table = out[out.index("transformers on the same requests"):].splitlines()
    counts = {line.split()[0]: line.split()[3] for line in table[3:] if line.strip()}
    assert counts["static"] == counts["paged"] == counts["hf_generate"]


def test_bench_repeats_in_rounds_and_gives_each_run_per_round(llama):
    out = run("bench", "--model", llama, "--engine", "continuous,paged", "--num-requests", "3", "--scale", "0.03",
              "--cap", "256", "--repeat", "2", "--threads", "1", "--max-num-batched-tokens", "64")
    assert "round 2 of 2" in out and "1 torch threads" in out
    per_round = out[out.index("output tok/s in each round"):].splitlines()[1:]
    rows = {line.split()[0]: line.split() for line in per_round if line.strip()}
    assert set(rows) == {"continuous", "paged"}
    ratios = {name: row[row.index("continuous:") + 1:] for name, row in rows.items()}
    assert ratios["continuous"] == ["1.00", "1.00", "median", "x", "1.00"]   # each round's ratio to the first run
    assert all(float(x) > 0 for x in rows["paged"][1:3])

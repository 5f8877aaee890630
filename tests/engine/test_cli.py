"""The command line, run as a user would run it."""
import argparse
import json
import re
import subprocess
import sys

import pytest
import torch


def run(*args):
    result = subprocess.run([sys.executable, "-m", "minicb", *args], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_generate_prints_each_completion_and_what_happened(llama):
    out = run("generate", "--model", llama, "--engine", "static", "--prompt", "Hello",
              "--prompt", "Batching is", "--max-tokens", "5", "--ignore-eos")
    status = re.findall(r"^\[5 tokens, stopped at --max-tokens, \d+\.\d\d s\]$", out, re.M)
    assert out.startswith("Hello") and "\nBatching is" in out and len(status) == 2, out


def test_generate_matches_the_python_api(llama):
    from minicb import LLM, SamplingParams

    [expected] = LLM(llama, engine="single").generate(["Hi there"], SamplingParams(max_tokens=6,
                                                                                    ignore_eos=True))
    out = run("generate", "--model", llama, "--engine", "single", "--prompt", "Hi there",
              "--max-tokens", "6", "--ignore-eos")
    assert out.startswith(f"Hi there{expected.text}\n[6 tokens, stopped at --max-tokens, "), out


def test_chat_streams_answers_in_the_chat_template(smollm2):
    result = subprocess.run([sys.executable, "-m", "minicb", "chat", "--max-tokens", "8"], capture_output=True,
                            text=True, timeout=300, input="What is the capital of France?\nAnd of Italy?\n")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "minicb chat: smollm2, stage paged. An empty line ends."
    assert lines[1].startswith("> The capital of France is Paris")
    assert lines[2].startswith("> ") and "Rome" in lines[2]          # the first turn is in its context


def test_generate_knows_the_real_model_by_its_short_name(smollm2):
    out = run("generate", "--model", "smollm2", "--prompt", "The capital of France is", "--max-tokens", "3")
    assert out.startswith("The capital of France is Paris.")


def test_bad_engine_is_refused():
    result = subprocess.run([sys.executable, "-m", "minicb", "generate", "--model", "x", "--engine", "nope",
                             "--prompt", "a"], capture_output=True, text=True)
    assert result.returncode == 2 and result.stderr.splitlines() == [
        "minicb generate: error: argument --engine: invalid choice: 'nope' (choose from 'single', "
        "'static', 'dynamic', 'continuous', 'paged')", "(minicb generate --help lists every option)"]


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


def test_chat_starts_over_when_the_conversation_outgrows_the_context(smollm2):
    result = subprocess.run([sys.executable, "-m", "minicb", "chat", "--max-tokens", "8", "--max-model-len", "48"],
                            capture_output=True, text=True, timeout=300,
                            input="What is the capital of France?\nAnd of Italy?\nWhat is the capital of Japan?\n")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[2] == "> [the conversation outgrew max_model_len; starting a new one]"
    assert lines[3]                                       # the question is answered in the new one
    assert "The capital of Japan is Tokyo" in lines[-2]   # and the engine keeps serving


@pytest.mark.parametrize("flags,message", [
    (["--max-tokens", "-3"], "minicb generate: error: --max-tokens must be an integer >= 1, got -3"),
    (["--max-num-seqs", "0"], "minicb generate: error: --max-num-seqs must be an integer >= 1, got 0"),
    (["--max-wait-ms", "nan"], "minicb generate: error: --max-wait-ms must be a finite number, got nan"),
    (["--gpu-memory-utilization", "inf"], "minicb generate: error: --gpu-memory-utilization must be a finite "
                                          "number, got inf"),
    (["--kv-cache-memory-bytes", "-1"], "minicb generate: error: --kv-cache-memory-bytes must be an integer "
                                        ">= 1, got -1"),
    (["--model", "nowhere"], "minicb generate: error: model 'nowhere': no such folder. Give a checkpoint "
                             "folder, or a built-in model: smollm2."),
    (["--model", "smollm"], "minicb generate: error: model 'smollm': no such folder. Give a checkpoint "
                            "folder, or a built-in model: smollm2. Did you mean 'smollm2'?"),
] + ([] if torch.cuda.is_available() else [
    (["--device", "cuda"], "minicb generate: error: device 'cuda': CUDA is not available here"),
]))
def test_bad_flags_get_one_line_naming_the_value(llama, flags, message):
    result = subprocess.run([sys.executable, "-m", "minicb", "generate", "--model", llama, "--prompt", "Hi", *flags],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and result.stderr.strip().startswith(message), result.stderr
    assert "Traceback" not in result.stderr


def test_every_engine_option_is_a_flag():
    from minicb.tools.serve.options import add_engine_options, engine_options
    from minicb.config import EngineConfig

    parser = argparse.ArgumentParser()
    add_engine_options(parser)
    options = engine_options(parser.parse_args([]))
    # All but the three other flags own: --engine, sampling's --seed, bench's --threads.
    assert set(vars(EngineConfig(engine="static"))) - set(options) == {"engine", "seed", "num_threads"}
    defaults = EngineConfig.__dataclass_fields__
    assert all(options[name] == defaults[name].default for name in options)
    help = parser.format_help()
    for name, doc in EngineConfig.field_docs().items():       # each flag says what its field's docstring says
        if name in options:
            assert " ".join(doc.split()[:4]) in " ".join(help.split()), name


def test_a_python_without_torch_is_told_where_minicb_s_python_is():
    hide_torch = "import sys, runpy; sys.modules['torch'] = None; runpy.run_module('minicb')"
    result = subprocess.run([sys.executable, "-c", hide_torch], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode != 0
    assert "minicb needs torch" in result.stderr and ".venv/bin/python -m minicb" in result.stderr


def test_every_flag_of_every_command_has_help_and_shows_its_default():
    from minicb.tools.bench.serving import build_parser as bench_serve_parser
    from minicb.cli import build_parser
    from minicb.tools.serve.options import no_default

    top = build_parser()
    commands = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    assert set(commands.choices) == {"generate", "chat", "demo", "serve", "bench", "check"}
    assert all(name in top.description for name in commands.choices)
    for name, parser in [*commands.choices.items(), ("bench serve", bench_serve_parser())]:
        for action in parser._actions:
            if not action.option_strings or action.dest == "help":
                continue
            assert action.help, (name, action.option_strings)
            if not no_default(action):
                text = parser._get_formatter()._get_help_string(action) % vars(action)
                assert "default" in text.lower(), (name, action.option_strings, text)


def test_bench_runs_the_host_ahead_for_the_paged_engine_alone(llama, tmp_path):
    """--async-scheduling belongs to stage 5; the other engines in the same bench run as they are."""
    out = tmp_path / "bench.json"
    result = subprocess.run([sys.executable, "-m", "minicb", "bench", "--model", llama, "--engine", "static,paged",
                             "--num-requests", "4", "--scale", "0.05", "--async-scheduling", "--out", str(out)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text())["engine_options"] == {"paged": {"async_scheduling": True}}
    table = [line.split() for line in result.stdout.splitlines()]
    assert {row[0] for row in table if row and row[0] in ("static", "paged")} == {"static", "paged"}


def test_a_chat_line_refused_for_its_own_reason_keeps_the_conversation(llama, monkeypatch, capsys):
    """Only a conversation that outgrew max_model_len starts over; a line that no
    conversation could take (too long alone, not text) is refused as it is."""
    from minicb import cli

    lines = iter(["Hi", "x " * 200, "bad \udcff byte", "Again", ""])
    monkeypatch.setattr(cli, "read_line", lambda prompt: next(lines))
    prompts, answer = [], cli.stream_answer
    monkeypatch.setattr(cli, "stream_answer", lambda engine, prompt, params: prompts.append(prompt) or answer(
        engine, prompt, params))
    cli.chat(cli.build_parser().parse_args(["chat", "--model", llama, "--max-model-len", "64",
                                            "--max-tokens", "4", "--ignore-eos"]))
    out = capsys.readouterr().out.splitlines()
    assert "outgrew" not in "\n".join(out)
    assert out[2].startswith("[request: prompt of ") and "exceeds max_model_len 64" in out[2], out
    assert out[3].startswith("[request: prompt: character ") and "not text" in out[3], out
    assert len(prompts) == 2, out
    assert prompts[1].startswith("Hi\n") and prompts[1].endswith("\nAgain")    # the first turn is still there


@pytest.mark.parametrize("flags,message", [
    (["--temperature", "nan"], "minicb generate: error: --temperature must be a finite number >= 0, got nan"),
    (["--seed", "-1"], "minicb generate: error: --seed must be an integer in [0, 2**64) or None, got -1"),
    (["--device", "mps"], "minicb generate: error: device 'mps': minicb runs on 'cpu' or 'cuda', not 'mps'"),
    (["--engine", "paged", "--num-blocks", "2147483647"], "minicb generate: error: a KV cache of "),
])
def test_sampling_and_engine_refusals_name_the_flag(llama, flags, message, capsys):
    from minicb.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["generate", "--model", llama, "--prompt", "Hi", *flags])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err.startswith(message) and len(err.splitlines()) == 1, err


def test_check_with_a_file_that_is_not_there_is_refused_in_one_line(capsys):
    from minicb.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["check", "tpot", "--file", "no/such/tpot.py"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err == "minicb check: error: --file 'no/such/tpot.py': there is no such file\n"

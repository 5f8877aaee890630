"""The README's commands and Python examples, run as written: a new user copies them
from there, so each must work in a fresh clone (CI runs this with the venv's Python,
which is what `.venv/bin/python` names)."""
import json
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def blocks(language):
    return re.findall(rf"```{language}\n(.*?)```", README, re.S)


def minicb_commands():
    """Every `.venv/bin/python -m minicb ...` line of the README's shell blocks, comment removed."""
    lines = [line for block in blocks("(?:bash|sh)") for line in block.splitlines()]
    return [shlex.split(line, comments=True) for line in lines if line.startswith(".venv/bin/python -m minicb")]


def test_the_readme_has_commands_to_run():
    assert {argv[3] for argv in minicb_commands()} >= {"chat", "generate", "demo", "bench"}


def needs_a_server(argv) -> bool:
    return argv[3] == "serve" or argv[3:5] == ["bench", "serve"]


@pytest.mark.parametrize("argv", [a for a in minicb_commands() if not needs_a_server(a)],
                         ids=lambda argv: " ".join(argv[3:6]))
def test_each_readme_command_works_as_written(argv, smollm2):
    result = subprocess.run([sys.executable, *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=900,
                            input="What is the capital of France?\n\n")      # chat: one question, then an empty line
    if argv[3] == "check" and len(argv) > 4 and not argv[4].startswith("--"):
        # An exercise the reader has not written yet: its check says so, and fails.
        assert result.returncode == 1 and "not written yet" in result.stdout, result.stdout
        return
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    if argv[3] == "chat":
        assert "> The capital of France is Paris" in result.stdout, result.stdout
    if argv[3] == "generate":
        prompt = argv[argv.index("--prompt") + 1]
        assert result.stdout.startswith(prompt) and "\n[" in result.stdout \
            and " tokens, " in result.stdout, result.stdout
    if argv[3] == "demo":                    # real answers, every stage's same tokens, the figure
        out = result.stdout
        assert "Q: What is the capital of France?\nA: The capital of France is Paris." in out, out
        assert "Every stage (single, static, dynamic, continuous, paged) gave exactly these tokens" in out
        rows = [line.split() for line in out.splitlines()]
        table = {r[0]: r for r in rows if len(r) > 2 and r[1].isdigit() and r[2].isdigit()}
        assert set(table) == {"single", "static", "dynamic", "continuous", "paged"}, out
        assert {r[1] for r in table.values()} == {"8"}                   # requests
        assert len({r[2] for r in table.values()}) == 1                   # the same generated tokens
        assert "figure: " in out and "demo_schedules.png" in out
    if argv[3] == "bench":
        assert "paged" in result.stdout and "out tok/s" in result.stdout, result.stdout
    if argv[3:] == ["check"]:                # progress: nothing started, nothing failing
        assert result.stdout.splitlines()[-1].endswith("passed, 0 failing"), result.stdout


def test_the_readme_python_examples_run_in_order(tmp_path):
    """The examples build on each other (the second uses the first's path), so they run as one script."""
    script = "\n".join(blocks("python"))
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "'requests': 2" in result.stdout, result.stdout         # llm.last_run.summary() of two prompts


def test_the_readme_server_answers_its_curl_and_bench_serve_examples_and_stops_on_ctrl_c(smollm2):
    [argv] = [a for a in minicb_commands() if a[3] == "serve"]
    [bench] = [a for a in minicb_commands() if a[3:5] == ["bench", "serve"]]
    curl = re.search(r"curl -s (\S+) .*?-d '(.*?)'", README, re.S)
    url, body = "http://" + curl.group(1), curl.group(2)
    port = int(re.search(r":(\d+)/", url).group(1))
    with socket.socket() as probe:          # else another server would answer in its place
        assert probe.connect_ex(("127.0.0.1", port)) != 0, f"port {port} is in use: stop what holds it"
    server = subprocess.Popen([sys.executable, *argv[1:]], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 300
        while True:
            assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
            try:
                urllib.request.urlopen(url.replace("/v1/chat/completions", "/health"), timeout=5)
                break
            except OSError:
                time.sleep(0.5)
        request = urllib.request.Request(url, data=body.encode(), headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=300) as response:
            answer = json.loads(response.read())
        assert answer["choices"][0]["message"]["content"].strip(), answer
        measured = subprocess.run([sys.executable, *bench[1:]], cwd=ROOT, capture_output=True, text=True,
                                  timeout=600)
        assert measured.returncode == 0, measured.stderr[-3000:]
        num_prompts = bench[bench.index("--num-prompts") + 1]
        assert re.search(rf"^completed +{num_prompts}$", measured.stdout, re.M), measured.stdout
        assert re.search(r"^failed +0$", measured.stdout, re.M), measured.stdout
    finally:
        server.send_signal(signal.SIGINT)                  # what Ctrl-C sends
        output = server.communicate(timeout=60)[0]
    assert server.returncode == 0 and "Traceback" not in output, output

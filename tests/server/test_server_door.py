"""What minicb serve checks at its door: who may ask (an API key), where it may
listen (before the model loads), what one request can hold (the KV cache, not
only max_model_len), and that /metrics has settled before a response returns."""
import socket
import subprocess
import sys
import urllib.error
import urllib.request

import openai
import pytest

from minicb import LLMEngine, SamplingParams
from minicb.tools.serve.door import check_address
from minicb.tools.serve.engine_loop import EngineLoop, Submission
from minicb.tools.serve.server import ServerThread, make_app

from .test_server import NAME, OPTIONS, client, expected_text, metric, post

KEY = "sk-minicb-test-key"


@pytest.fixture(scope="module")
def keyed(checkpoints):
    engine = LLMEngine(checkpoints["llama"], engine="paged", **OPTIONS)
    with ServerThread(engine, NAME, api_key=KEY) as server:
        yield server


def test_with_a_key_every_v1_route_asks_for_it(keyed):
    good = openai.OpenAI(base_url=f"{keyed.url}/v1", api_key=KEY, max_retries=0)
    answer = good.completions.create(model=NAME, prompt="Hi", max_tokens=2, extra_body={"ignore_eos": True})
    assert answer.usage.completion_tokens == 2
    assert [m.id for m in good.models.list()] == [NAME]
    for wrong in ("none", KEY[:-1], KEY + "x", ""):
        with pytest.raises(openai.AuthenticationError) as refused:
            client(keyed.url).with_options(api_key=wrong).chat.completions.create(
                model=NAME, messages=[{"role": "user", "content": "Hi"}], max_tokens=2)
        assert refused.value.status_code == 401
        assert refused.value.body["code"] == "invalid_api_key", refused.value.body
    for path in ("/v1/completions", "/v1/chat/completions"):        # no header at all
        status, body = post(keyed.url, path, {"model": NAME, "prompt": "Hi"})
        assert status == 401 and body["error"]["code"] == "invalid_api_key", body
    assert metric(keyed.url, 'minicb_requests_rejected_total{status="401"}') >= 6   # /health, /metrics: open


@pytest.mark.parametrize("header,status", [(f"Bearer {KEY}", 200), (f"bearer {KEY}", 200), (f"BEARER {KEY}", 200),
                                           (KEY, 401), (f"Basic {KEY}", 401), ("Bearer", 401)])
def test_the_scheme_is_bearer_in_any_case_and_the_key_follows_it(keyed, header, status):
    request = urllib.request.Request(keyed.url + "/v1/models", headers={"Authorization": header})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            assert response.status == status
    except urllib.error.HTTPError as error:
        assert error.code == status


def test_an_empty_key_is_refused(checkpoints):
    with LLMEngine(checkpoints["llama"], engine="paged", **OPTIONS) as engine, \
            pytest.raises(ValueError, match="api_key must be a non-empty string"):
        make_app(engine, NAME, api_key="")


@pytest.mark.parametrize("key,says", [
    ("", "--api-key must be a non-empty string, got ''"),
    ("sk-key\r", r"--api-key has '\r' at position 6: a key is printable ASCII"),
    ("sk-clé", "--api-key has 'é' at position 5: a key is printable ASCII"),
    (" sk-key", "--api-key starts or ends with a space"),
])
def test_serve_refuses_a_key_no_client_can_send_in_one_line(llama, key, says, capsys):
    """An empty --api-key (KEY unset in --api-key "$KEY") is not "no key", and a key
    HTTP cannot carry would start a server that refuses everyone; the key itself is
    never printed."""
    from minicb.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["serve", "--model", llama, "--port", str(free_port()), "--api-key", key])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err.startswith(f"minicb serve: error: {says}"), err
    assert len(err.splitlines()) == 1 and (not key.strip() or key.strip() not in err)


def test_serve_refuses_an_empty_key_from_the_environment(llama, capsys, monkeypatch):
    from minicb.cli import main

    monkeypatch.setenv("MINICB_API_KEY", "")
    with pytest.raises(SystemExit) as stopped:
        main(["serve", "--model", llama, "--port", str(free_port())])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.startswith("minicb serve: error: MINICB_API_KEY must be a non-empty string")


def test_a_served_engine_is_freed_once_its_server_has_stopped(checkpoints):
    """FastAPI keeps every endpoint function for the life of the process: routes that
    closed over the engine would keep its weights and KV cache alive for good."""
    import gc
    import weakref

    engines = []
    for _ in range(2):
        engine = LLMEngine(checkpoints["llama"], engine="paged", **OPTIONS)
        engines.append(weakref.ref(engine))
        with ServerThread(engine, NAME, api_key=KEY) as server:
            good = openai.OpenAI(base_url=f"{server.url}/v1", api_key=KEY, max_retries=0)
            assert good.completions.create(model=NAME, prompt="Hi", max_tokens=2).usage.completion_tokens >= 1
        del engine, server, good
    gc.collect()
    assert [ref() for ref in engines] == [None, None]


def test_bench_serve_brings_the_key(keyed):
    from minicb.tools.bench.serving import measure
    from minicb.tools.bench.workload import preset_workload

    workload = preset_workload("chat", num_requests=2, scale=0.1)
    assert measure(keyed.url, NAME, workload, float("inf"), api_key=KEY)["errors"] == []
    refused = measure(keyed.url, NAME, workload, float("inf"))["errors"]
    assert refused and "401" in refused[0], refused


def test_serve_warns_when_it_listens_beyond_loopback_with_no_key(llama):
    serve = subprocess.Popen([sys.executable, "-m", "minicb", "serve", "--model", llama, "--host", "0.0.0.0",
                              "--port", str(free_port())], stderr=subprocess.PIPE, text=True)
    try:
        first = serve.stderr.readline()         # said before the model loads
    finally:
        serve.kill()
        serve.wait()
    assert first.startswith("minicb serve: warning: listening on 0.0.0.0 with no --api-key"), first


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("port,says", [(99999, "--port must be in 1..65535, got 99999"),
                                       (0, "--port must be in 1..65535, got 0"),
                                       ("in use", "cannot listen on 127.0.0.1:")])
def test_a_port_it_cannot_listen_on_is_one_line_before_any_model_loads(port, says):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        if port == "in use":
            port = taken.getsockname()[1]
        # The model does not exist: the port is what is refused, so it was checked first.
        result = subprocess.run([sys.executable, "-m", "minicb", "serve", "--model", "nowhere",
                                 "--port", str(port)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and result.stderr.startswith(f"minicb serve: error: {says}"), result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1


def test_an_ipv6_host_is_checked_as_uvicorn_would_listen_on_it():
    if not socket.has_ipv6:
        pytest.skip("this machine has no IPv6")
    check_address("::1", free_port())            # raises if it cannot listen there


def test_a_stop_strings_abort_is_answered_even_when_the_engine_fails_it(checkpoints):
    """abort_and_wait must not wait forever: the engine loop calls back whatever happens."""
    engine = LLMEngine(checkpoints["llama"], engine="paged", **OPTIONS)
    loop = EngineLoop(engine)
    called = []
    submission = Submission([5, 6], SamplingParams(max_tokens=2), None, None, request_id="r")
    loop.submissions["r"] = submission
    loop.in_flight = 1

    def broken(request_id):
        raise RuntimeError("the engine failed the abort")

    engine.abort = broken
    with pytest.raises(RuntimeError, match="failed the abort"):
        loop.handle("abort", ("r", lambda: called.append(True)))
    assert called == [True]
    engine.close()


def test_a_kv_cache_smaller_than_max_model_len_caps_the_default_answer(checkpoints):
    """96 tokens of max_model_len, but 10 blocks of 4: one request holds 40 tokens.
    A chat request without max_tokens gets the rest of those 40, not a refusal."""
    engine = LLMEngine(checkpoints["llama"], engine="paged", **{**OPTIONS, "num_blocks": 10})
    with ServerThread(engine, NAME) as server:
        assert server.app.state.longest_request == 40
        answer = client(server.url).chat.completions.create(
            model=NAME, messages=[{"role": "user", "content": "Hi"}], extra_body={"ignore_eos": True})
        assert answer.choices[0].finish_reason == "length"
        assert answer.usage.total_tokens == 40


def test_an_engine_that_can_hold_no_request_is_refused_at_the_start(checkpoints):
    """Stage 4 reserves a whole max_model_len slot per request; a cache smaller than one slot holds none."""
    engine = LLMEngine(checkpoints["llama"], engine="continuous", max_model_len=96,
                       kv_cache_memory_bytes=50 * 512)     # 50 tokens: 2 layers x K, V x 2 heads x 16 x fp32
    assert engine.stage.kv.capacity < 96
    with engine, pytest.raises(ValueError, match=r"^this engine can serve no request at all \(request: a "
                                                 r"slot of 96 tokens .* does not fit the KV cache's \d+ tokens\)$"):
        make_app(engine, NAME)


def test_metrics_have_settled_when_a_stop_string_answer_returns(checkpoints):
    """The stop string aborts the request; the answer is sent once the engine let go of it."""
    engine = LLMEngine(checkpoints["llama"], engine="paged", **OPTIONS)
    [text] = expected_text(checkpoints["llama"], ["Hello there"], 12)
    stop = text[len(text) // 2:len(text) // 2 + 2]
    with ServerThread(engine, NAME) as server:
        for _ in range(20):
            status, answer = post(server.url, "/v1/completions", dict(
                model=NAME, prompt="Hello there", max_tokens=12, stop=[stop], temperature=0, ignore_eos=True))
            assert status == 200 and answer["choices"][0]["text"] == text[:text.index(stop)]
            assert metric(server.url, "minicb_requests_running") == 0
            assert metric(server.url, "minicb_kv_blocks_used") == 0

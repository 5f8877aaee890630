"""minicb serve, through the openai client people use and through raw HTTP: the
answers are LLM.generate's, a dropped stream frees its request, bad input is a 400
naming the field and costs nothing else, and too many requests get a 429."""
import asyncio
import contextlib
import json
import socket
import time
import urllib.error
import urllib.request

import openai
import pytest

from minicb import LLM, LLMEngine, SamplingParams

NAME = "tiny"
OPTIONS = dict(max_model_len=96, max_num_seqs=8, block_size=4)
STREAMS = 32                     # concurrent streams, a third of them dropped mid-answer


@contextlib.contextmanager
def running_server(model, max_queued=256, max_request_bytes=2**21, **options):
    from minicb.tools.serve.server import ServerThread

    engine = LLMEngine(model, engine="paged", **{**OPTIONS, **options})
    with ServerThread(engine, NAME, max_queued, max_request_bytes) as server:
        yield server.url, engine, server.engine_loop


@pytest.fixture(scope="module")
def server(checkpoints):
    with running_server(checkpoints["llama"]) as running:
        yield running


def expected_text(model, prompts, max_tokens):
    llm = LLM(model, engine="single", max_model_len=OPTIONS["max_model_len"])
    outputs = llm.generate(prompts, SamplingParams(max_tokens=max_tokens, ignore_eos=True))
    return [llm.tokenizer.decode(o.output_token_ids, skip_special_tokens=True) for o in outputs]


def client(url):
    return openai.OpenAI(base_url=f"{url}/v1", api_key="none", max_retries=0)


def post(url, path, body: bytes | dict):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def wait_until_idle(engine, timeout=30):
    """The engine loop handles aborts at its next turn: give it that turn."""
    deadline = time.monotonic() + timeout
    while engine.requests or len(engine.stage.kv.free_blocks) != engine.stage.kv.num_blocks:
        assert time.monotonic() < deadline, (list(engine.requests), len(engine.stage.kv.free_blocks))
        time.sleep(0.05)


def test_completions_whole_and_streamed_are_llm_generate(server, checkpoints):
    url, engine, _ = server
    prompts = ["Hello there", "Batching is"]
    expected = expected_text(checkpoints["llama"], prompts, 12)
    c = client(url)
    extra = dict(temperature=0, max_tokens=12, extra_body={"ignore_eos": True})
    for prompt, text in zip(prompts, expected):
        whole = c.completions.create(model=NAME, prompt=prompt, **extra)
        assert whole.choices[0].text == text and whole.choices[0].finish_reason == "length"
        assert whole.usage.completion_tokens == 12
        streamed = "".join(chunk.choices[0].text for chunk in
                           c.completions.create(model=NAME, prompt=prompt, stream=True, **extra))
        assert streamed == text
    assert [m.id for m in c.models.list().data] == [NAME]


def test_chat_whole_and_streamed_are_llm_generate(server, checkpoints):
    from minicb.llm import chat_prompt

    url, engine, _ = server
    messages = [{"role": "user", "content": "What is batching?"}]
    [text] = expected_text(checkpoints["llama"], [chat_prompt(engine.tokenizer, messages)], 10)
    c = client(url)
    extra = dict(temperature=0, max_tokens=10, extra_body={"ignore_eos": True})
    whole = c.chat.completions.create(model=NAME, messages=messages, **extra)
    assert whole.choices[0].message.content == text and whole.choices[0].message.role == "assistant"
    chunks = list(c.chat.completions.create(model=NAME, messages=messages, stream=True, **extra))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(ch.choices[0].delta.content or "" for ch in chunks) == text
    assert chunks[-1].choices[0].finish_reason == "length"


def test_a_stop_string_ends_the_answer_before_it(server, checkpoints):
    url, engine, _ = server
    [text] = expected_text(checkpoints["llama"], ["Hello there"], 12)
    stop = text[len(text) // 2:len(text) // 2 + 2]
    assert stop and stop in text
    c = client(url)
    for stream in (False, True):
        answer = c.completions.create(model=NAME, prompt="Hello there", temperature=0, max_tokens=12,
                                      stop=[stop], stream=stream, extra_body={"ignore_eos": True})
        got = "".join(ch.choices[0].text for ch in answer) if stream else answer.choices[0].text
        assert got == text[:text.index(stop)]
    wait_until_idle(engine)            # the request was aborted at the stop: its blocks are free


def test_dropped_streams_free_their_requests_and_the_rest_complete(server, checkpoints):
    url, engine, engine_loop = server
    prompts = [f"Request number {i} says" for i in range(STREAMS)]
    expected = expected_text(checkpoints["llama"], prompts, 24)
    aborted_before = engine_loop.aborted

    async def one(c, i):
        # The dropped ones ask for many tokens, so that they are still running when dropped.
        stream = await c.completions.create(model=NAME, prompt=prompts[i], temperature=0,
                                            max_tokens=64 if i % 3 == 0 else 24,
                                            stream=True, extra_body={"ignore_eos": True})
        text = ""
        async for chunk in stream:
            text += chunk.choices[0].text
            if i % 3 == 0 and len(text) > 0:          # a third of the clients go away mid-answer
                await stream.close()
                return None
        return text

    async def all_of_them():
        c = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="none", max_retries=0)
        return await asyncio.gather(*(one(c, i) for i in range(STREAMS)))

    texts = asyncio.run(all_of_them())
    for i, (text, want) in enumerate(zip(texts, expected)):
        assert text == (None if i % 3 == 0 else want), i
    wait_until_idle(engine)
    assert not engine.has_unfinished_requests()
    dropped = len(range(0, STREAMS, 3))
    assert engine_loop.aborted - aborted_before >= dropped // 2, engine_loop.aborted   # aborted, not run out


@pytest.mark.parametrize("body,field", [
    (b"{not json", None),
    ({"model": "gpt-4", "prompt": "Hi"}, "model"),
    ({"model": NAME, "prompt": "Hi", "max_tokens": 0}, "max_tokens"),
    ({"model": NAME, "prompt": "Hi", "max_tokens": 10_000}, "prompt"),
    ({"model": NAME, "prompt": "Hi", "temperature": -1}, "temperature"),
    ({"model": NAME, "prompt": ""}, "prompt"),
    ({"model": NAME, "prompt": "Hi", "max_tokens": "ten"}, "max_tokens"),
    ({"model": NAME, "prompt": "Hi", "n": 2}, "n"),
    ({"model": NAME}, "prompt"),
])
def test_bad_input_is_a_400_naming_the_field_and_costs_nothing(server, body, field):
    url, engine, _ = server
    status, answer = post(url, "/v1/completions", body)
    assert status == 400 and answer["error"]["type"] == "invalid_request_error", answer
    if field:
        assert answer["error"]["param"] == field or answer["error"]["param"].startswith(field), answer
    status, answer = post(url, "/v1/completions", {"model": NAME, "prompt": "Hi", "max_tokens": 2})
    assert status == 200 and answer["choices"][0]["text"] is not None        # still serving
    wait_until_idle(engine)


def test_a_conversation_the_chat_template_refuses_is_a_400(checkpoints):
    from minicb.tools.serve.server import ServerThread

    engine = LLMEngine(checkpoints["llama"], engine="paged", **OPTIONS)
    with ServerThread(engine, NAME) as server:
        server.prompt_encoder.tokenizer.chat_template = (      # prompts are encoded with this one
            "{% for m in messages %}{% if m.role not in ['system', 'user', 'assistant'] %}"
            "{{ raise_exception('unknown role ' + m.role) }}{% endif %}{{ m.content }}{% endfor %}")
        status, answer = post(server.url, "/v1/chat/completions", {
            "model": NAME, "messages": [{"role": "wizard", "content": "Hi"}]})
        assert status == 400 and answer["error"]["param"] == "messages", answer
        assert "unknown role wizard" in answer["error"]["message"], answer
        assert post(server.url, "/v1/completions", {"model": NAME, "prompt": "Hi", "max_tokens": 2})[0] == 200


def send_and_hang_up(url, body, after_s):
    """A raw HTTP request whose client closes the connection before the answer."""
    host, port = url.removeprefix("http://").split(":")
    data = json.dumps(body).encode()
    with socket.create_connection((host, int(port))) as connection:
        connection.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: minicb\r\n"
                           b"Content-Type: application/json\r\n"
                           + f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
        time.sleep(after_s)


@pytest.mark.parametrize("stream", [False, True])
def test_a_client_that_hangs_up_before_its_first_token_is_aborted(checkpoints, stream):
    """Twice a second, while a request waits for its outputs, the server asks whether
    its client is still there, and aborts it if not, without waiting for an output:
    for a whole answer nothing else would notice; for a stream, Starlette would, but
    only once the stream has begun."""
    with running_server(checkpoints["llama"]) as (url, engine, engine_loop):
        step, steps_done, aborts = engine.step, [], []

        def slow_step():          # the first output after 1.5 s, past the first check
            time.sleep(1.5 if not steps_done else 0.3)
            outputs = step()
            steps_done.append(1)
            return outputs

        def abort(request_id, abort=engine_loop.abort):
            aborts.append(len(steps_done))         # how many steps had run when asked
            abort(request_id)

        engine.step, engine_loop.abort = slow_step, abort
        send_and_hang_up(url, {"model": NAME, "prompt": "Hi", "max_tokens": 20, "stream": stream,
                               "ignore_eos": True}, after_s=0.1)
        deadline = time.monotonic() + 4
        while engine_loop.aborted == 0:
            assert time.monotonic() < deadline, "the request was not aborted"
            time.sleep(0.05)
        wait_until_idle(engine)
        assert aborts[0] == 0, aborts              # asked during the first step
        assert metric(url, "minicb_requests_finished_total") == 0


def test_more_requests_than_the_server_holds_get_a_429(checkpoints):
    with running_server(checkpoints["llama"], max_queued=2) as (url, engine, _):
        async def one(c):
            try:
                await c.completions.create(model=NAME, prompt="Hi", max_tokens=60, temperature=0,
                                           extra_body={"ignore_eos": True})
                return 200
            except openai.RateLimitError:
                return 429

        async def many():
            c = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="none", max_retries=0)
            return await asyncio.gather(*(one(c) for _ in range(8)))

        codes = asyncio.run(many())
        assert codes.count(200) >= 2 and 429 in codes, codes
        wait_until_idle(engine)
        status, _ = post(url, "/v1/completions", {"model": NAME, "prompt": "Hi", "max_tokens": 2})
        assert status == 200                                     # the bound frees as requests finish


def metric(url, name) -> float:
    """A value from GET /metrics (Prometheus' text format), summed over its labels."""
    with urllib.request.urlopen(url + "/metrics", timeout=30) as response:
        text = response.read().decode()
    return sum(float(line.split()[-1]) for line in text.splitlines()
               if line.startswith(name) and not line.startswith("#"))


def test_metrics_count_what_the_server_did(checkpoints):
    with running_server(checkpoints["llama"]) as (url, engine, _):
        for n in (3, 5):
            status, _ = post(url, "/v1/completions", {"model": NAME, "prompt": "Hi", "max_tokens": n,
                                                     "ignore_eos": True})
            assert status == 200
        assert post(url, "/v1/completions", {"model": NAME, "prompt": "Hi", "top_p": 7})[0] == 400
        wait_until_idle(engine)
        assert metric(url, "minicb_requests_finished_total") == 2
        assert metric(url, "minicb_generation_tokens_total") == 3 + 5
        assert metric(url, "minicb_time_to_first_token_seconds_count") == 2
        assert metric(url, "minicb_time_per_output_token_seconds_count") == 2
        assert metric(url, 'minicb_requests_rejected_total{status="400"}') == 1
        assert metric(url, "minicb_requests_running") == 0 and metric(url, "minicb_requests_waiting") == 0
        assert metric(url, "minicb_kv_blocks_used") == 0
        assert metric(url, "minicb_kv_blocks_free") == engine.stage.kv.num_blocks


def test_a_speculative_server_streams_the_offline_text_and_counts_its_drafts(checkpoints):
    """Stage 6 behind the server: several tokens a step reach the stream as text, the
    same as offline, and /metrics counts the drafts each finished request had."""
    prompt, spec = "abcabcabcabcabc", {"num_speculative_tokens": 3}
    llm = LLM(checkpoints["llama"], engine="paged", max_model_len=OPTIONS["max_model_len"],
              speculative_config=spec)
    [offline] = llm.generate([prompt], SamplingParams(max_tokens=24, ignore_eos=True))
    assert offline.metrics.num_accepted_tokens > 0
    with running_server(checkpoints["llama"], speculative_config=spec) as (url, engine, _):
        chunks = list(client(url).completions.create(
            model=NAME, prompt=prompt, temperature=0, max_tokens=24, stream=True,
            extra_body={"ignore_eos": True}))
        assert "".join(ch.choices[0].text for ch in chunks) == llm.tokenizer.decode(
            offline.output_token_ids, skip_special_tokens=True)
        assert len(chunks) < 24                       # some chunk carried several tokens
        wait_until_idle(engine)
        assert metric(url, "minicb_spec_decode_num_draft_tokens_total") == offline.metrics.num_draft_tokens
        assert metric(url, "minicb_spec_decode_num_accepted_tokens_total") == offline.metrics.num_accepted_tokens
        # bench serve reports the drafts of its own run: the counters' growth over it
        from minicb.tools.bench.serving import build_parser, run
        drafted = metric(url, "minicb_spec_decode_num_draft_tokens_total")
        numbers = run(build_parser().parse_args(["--base-url", url, "--num-prompts", "4", "--scale",
                                                 "0.0625", "--workload", "anyscale"]))["results"]
        wait_until_idle(engine)
        # (reported where the run drafted any: absent, it counts as 0)
        assert numbers.get("spec_decode_draft_tokens", 0) == metric(
            url, "minicb_spec_decode_num_draft_tokens_total") - drafted
        assert 0 <= numbers.get("spec_decode_acceptance_rate", 0) <= 1


def test_bench_serve_counts_what_the_server_counts(checkpoints, tmp_path):
    from minicb.tools.bench.serving import main as bench_serve
    from minicb.tools.bench.workload import preset_workload

    with running_server(checkpoints["llama"], max_model_len=256) as (url, engine, _):
        out = tmp_path / "bench.json"
        bench_serve(["--base-url", url, "--num-prompts", "12", "--scale", "0.0625", "--request-rate", "50",
                     "--workload", "anyscale", "--seed", "3", "--out", str(out)])
        wait_until_idle(engine)
        numbers = json.loads(out.read_text())["results"]
        asked = preset_workload("anyscale", num_requests=12, scale=0.0625, seed=3).output_lens
        assert numbers["completed"] == 12 and numbers["failed"] == 0
        assert "spec_decode_draft_tokens" not in numbers          # a server that does not speculate
        assert numbers["total_output_tokens"] == sum(asked) == metric(url, "minicb_generation_tokens_total")
        assert metric(url, "minicb_requests_finished_total") == 12
        server_ttft = metric(url, "minicb_time_to_first_token_seconds_sum") / 12
        client_ttft = numbers["mean_ttft_ms"] / 1e3
        # The client's clock starts before the server's and stops after it. By how much
        # hangs on the machine's load (a busy one delays the client's reading), so the
        # bound is loose: it catches a wrong unit or a wrong clock, not a slow machine.
        assert server_ttft <= client_ttft + 0.005 and client_ttft - server_ttft < 2.0, (server_ttft, client_ttft)
        # TPOT: the server's gaps between tokens, the client's between chunks arriving;
        # the same tokens, so the same pace within the jitter of the delivery, which a
        # busy machine widens: again loose enough for load, tight enough for a wrong unit.
        server_tpot = (metric(url, "minicb_time_per_output_token_seconds_sum")
                       / metric(url, "minicb_time_per_output_token_seconds_count"))
        client_tpot = numbers["mean_tpot_ms"] / 1e3
        assert server_tpot / 10 < client_tpot < 10 * server_tpot + 0.01, (server_tpot, client_tpot)
        assert numbers["request_throughput"] > 0


def test_a_failing_step_ends_the_live_requests_with_an_error_and_the_server_keeps_serving(checkpoints):
    with running_server(checkpoints["llama"]) as (url, engine, _):
        step = engine.step
        calls = []

        def broken_once():
            calls.append(1)
            if len(calls) == 1:
                raise RuntimeError("a bug in a step")
            return step()

        engine.step = broken_once
        status, answer = post(url, "/v1/completions", {"model": NAME, "prompt": "Hi", "max_tokens": 4})
        assert status == 500 and "a bug in a step" in answer["error"]["message"], answer
        wait_until_idle(engine)
        status, answer = post(url, "/v1/completions", {"model": NAME, "prompt": "Hi", "max_tokens": 4,
                                                       "ignore_eos": True})
        assert status == 200 and answer["usage"]["completion_tokens"] == 4
        calls.clear()                 # and streamed: an error event, not a quiet end
        with pytest.raises(openai.APIError, match="a bug in a step"):
            for _ in client(url).completions.create(model=NAME, prompt="Hi", max_tokens=4,
                                                    stream=True):
                pass
        wait_until_idle(engine)


def test_a_server_process_answers_like_llm_generate_and_stops_on_exit(checkpoints):
    from minicb.tools.serve.server import ServerProcess

    model = checkpoints["llama"]
    (text,) = expected_text(model, ["Hello there"], 8)
    with ServerProcess(model, engine="continuous", model_name=NAME, max_model_len=OPTIONS["max_model_len"],
                       enable_prefix_caching=False) as server:
        answer = client(server.url).completions.create(model=NAME, prompt="Hello there", max_tokens=8,
                                                       temperature=0, extra_body={"ignore_eos": True})
        assert answer.choices[0].text == text
    assert server.process.poll() is not None


def test_a_server_process_that_cannot_start_says_why(checkpoints):
    from minicb.tools.serve.server import ServerProcess

    with pytest.raises(RuntimeError, match="minicb serve: error: --max-model-len must be >= 2, got 0"):
        with ServerProcess(checkpoints["llama"], max_model_len=0):
            pass

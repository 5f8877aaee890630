"""What a hostile client can send minicb serve, and what it costs: a 4xx in
OpenAI's error shape naming the field, before anything slow happens; the
prompt tokenized once, on a worker thread; the answer detokenized a token at a
time, off the event loop; and the server serving the next request as before."""
import json
import random
import socket
import threading

import pytest

from minicb import LLMEngine
from minicb.tools.serve.engine_loop import Detokenizer
from minicb.tools.serve.protocol import TextStream
from minicb.tools.serve.server import ServerThread
from minicb.request import StepOutput
from .test_server import NAME, OPTIONS, client, expected_text, metric, post, wait_until_idle

LIMIT = 64 * 1024             # bytes: a small body limit, to test it cheaply


@pytest.fixture(scope="module")
def server(checkpoints):
    engine = LLMEngine(checkpoints["llama"], engine="paged", **OPTIONS)
    with ServerThread(engine, NAME, max_request_bytes=LIMIT) as running:
        yield running


def good_request_works(url):
    status, answer = post(url, "/v1/completions", {"model": NAME, "prompt": "Hi", "max_tokens": 2})
    return status == 200 and answer["usage"]["completion_tokens"] == 2


def assert_openai_error(status, answer, want_status, param=None, says=""):
    assert status == want_status and set(answer) == {"error"}, (status, answer)
    assert {"message", "type", "param", "code"} <= set(answer["error"]), answer
    if param is not None:
        assert answer["error"]["param"] is not None and answer["error"]["param"].startswith(param), answer
    assert says in answer["error"]["message"], answer


@pytest.mark.parametrize("path,body,param", [
    ("/v1/completions", '{"model": "tiny", "prompt": "a\\ud800b"}', "prompt"),
    ("/v1/completions", '{"model": "tiny", "prompt": "ab", "stop": ["\\udfff"]}', "stop"),
    ("/v1/chat/completions", '{"model": "tiny", "messages": [{"role": "user", "content": "\\ud800"}]}',
     "messages.0.content"),
])
def test_a_lone_surrogate_is_a_400_naming_its_field(server, path, body, param):
    status, answer = post(server.url, path, body.encode())
    assert_openai_error(status, answer, 400, param, "a lone surrogate")
    assert good_request_works(server.url)


@pytest.mark.parametrize("sampling", [dict(temperature=1e-300), dict(temperature=5e-324),
                                      dict(temperature=1.0, top_p=1e-300)], ids=str)
def test_a_temperature_or_top_p_that_underflows_answers_with_the_best_tokens(server, checkpoints, sampling):
    [text] = expected_text(checkpoints["llama"], ["Hello there"], 6)
    status, answer = post(server.url, "/v1/completions", dict(model=NAME, prompt="Hello there", max_tokens=6,
                                                              ignore_eos=True, **sampling))
    assert status == 200 and answer["choices"][0]["text"] == text, answer


def raw_post(url, path, head: bytes, body_parts: list[bytes]) -> tuple[int, dict]:
    """A POST written by hand: head holds any framing headers, body_parts are sent in turn."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        connection.sendall(f"POST {path} HTTP/1.1\r\nHost: minicb\r\n".encode() + head + b"\r\n")
        for part in body_parts:
            connection.sendall(part)
        reply = b""
        while b"\r\n\r\n" not in reply or len(reply.split(b"\r\n\r\n", 1)[1]) < content_length(reply):
            chunk = connection.recv(65536)
            if not chunk:
                break
            reply += chunk
    head, body = reply.split(b"\r\n\r\n", 1)
    return int(head.split()[1]), json.loads(body)


def content_length(reply: bytes) -> int:
    for line in reply.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":")[1])
    return 1 << 30


def test_a_body_over_the_limit_is_a_413_and_never_parsed(server):
    before = metric(server.url, 'minicb_requests_rejected_total{status="413"}')
    big = json.dumps({"model": NAME, "prompt": "x" * (4 * LIMIT)}).encode()
    length = f"Content-Type: application/json\r\nContent-Length: {len(big)}\r\n".encode()
    # Sent whole, as most clients do: the server reads the rest and drops it, so that
    # the client gets its 413 rather than a connection reset.
    status, answer = raw_post(server.url, "/v1/completions", length, [big])
    assert_openai_error(status, answer, 413, says=f"larger than {LIMIT} bytes")
    # A client that asks first ("Expect: 100-continue") is refused at once, sending nothing.
    status, answer = raw_post(server.url, "/v1/completions", length + b"Expect: 100-continue\r\n", [])
    assert_openai_error(status, answer, 413, says=f"larger than {LIMIT} bytes")
    # Chunked, with no length given: refused once what arrived passes the limit.
    chunks = [f"{len(part):x}\r\n".encode() + part + b"\r\n" for part in
              (big[i:i + 8192] for i in range(0, len(big), 8192))] + [b"0\r\n\r\n"]
    status, answer = raw_post(server.url, "/v1/completions",
                              b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n", chunks)
    assert_openai_error(status, answer, 413, says=f"larger than {LIMIT} bytes")
    assert metric(server.url, 'minicb_requests_rejected_total{status="413"}') == before + 3
    assert good_request_works(server.url)


@pytest.mark.parametrize("path,body", [
    ("/v1/completions", lambda n: {"prompt": "x" * n}),
    ("/v1/completions", lambda n: {"prompt": "世" * (n // 3 + 1)}),          # 3 bytes a character
    ("/v1/chat/completions", lambda n: {"messages": [{"role": "u" * n, "content": "Hi"}]}),
    ("/v1/chat/completions", lambda n: {"messages": [{"role": "user", "content": "x"}] * n}),
], ids=["ascii", "cjk", "long role", "many messages"])
def test_text_too_long_for_max_model_len_is_refused_without_tokenizing(server, path, body):
    encoder, calls = server.prompt_encoder, []
    encode = encoder.tokenizer.encode
    encoder.tokenizer.encode = lambda *a, **k: calls.append(1) or encode(*a, **k)
    try:
        request = {"model": NAME, **body(encoder.max_bytes + 1)}
        assert len(json.dumps(request)) < LIMIT            # not the body limit's refusal
        status, answer = post(server.url, path, request)
        assert_openai_error(status, answer, 400, None, f"cannot fit in max_model_len {OPTIONS['max_model_len']}")
        assert calls == []
    finally:
        encoder.tokenizer.encode = encode
    assert good_request_works(server.url)


def test_token_ids_that_fill_max_model_len_are_refused_before_the_engine_loop(server):
    """The engine loop would check each id; the handler refuses the length first."""
    adds = []
    handle = server.engine_loop.handle
    server.engine_loop.handle = lambda command, item: adds.append(command) or handle(command, item)
    try:
        ids = [5] * OPTIONS["max_model_len"] + [10**9]
        status, answer = post(server.url, "/v1/completions", {"model": NAME, "prompt": ids})
        assert_openai_error(status, answer, 400, "prompt", "leave no room for an answer")
    finally:
        server.engine_loop.handle = handle
    assert "add" not in adds


def test_a_prompt_is_tokenized_once_on_a_worker_thread(server):
    """Not on the event loop that every client shares (uvicorn's thread here), nor
    on the engine loop, and never twice."""
    encoder, engine = server.prompt_encoder, server.engine_loop.engine
    threads, engine_encodes = [], []
    encode, engine_encode = encoder.tokenizer.encode, engine.tokenizer.encode
    encoder.tokenizer.encode = lambda *a, **k: threads.append(threading.current_thread()) or encode(*a, **k)
    engine.tokenizer.encode = lambda *a, **k: engine_encodes.append(1) or engine_encode(*a, **k)
    try:
        assert good_request_works(server.url)
        status, _ = post(server.url, "/v1/chat/completions", {"model": NAME, "max_tokens": 2,
                                                             "messages": [{"role": "user", "content": "Hi"}]})
        assert status == 200
    finally:
        encoder.tokenizer.encode, engine.tokenizer.encode = encode, engine_encode
    assert len(threads) == 2 and engine_encodes == []
    assert all(t not in (server.thread, server.engine_loop.thread) for t in threads), threads


def test_an_answer_is_decoded_a_token_at_a_time(server):
    """Whole or streamed, 40 tokens cost one decode of the whole answer (at its end), not 40."""
    tokenizer, calls = server.engine_loop.engine.tokenizer, []
    decode = tokenizer.decode
    tokenizer.decode = lambda ids, *a, **k: calls.append(len(ids)) or decode(ids, *a, **k)
    try:
        extra = dict(model=NAME, prompt="Hi", max_tokens=40, extra_body={"ignore_eos": True})
        assert client(server.url).completions.create(**extra).usage.completion_tokens == 40
        assert list(client(server.url).completions.create(stream=True, **extra))[-1].choices[0].finish_reason
    finally:
        tokenizer.decode = decode
    assert calls == [40, 40], calls


def stream_text(tokenizer, token_ids, stops) -> str:
    """What the server sends for these tokens: one StepOutput a token, through the
    engine loop's Detokenizer and the handler's TextStream."""
    detokenizer, text, sent = Detokenizer(tokenizer), TextStream(stops), []
    for i in range(len(token_ids)):
        last = i == len(token_ids) - 1
        out = StepOutput("r", token_ids[i:i + 1], token_ids[:i + 1], last, "length" if last else None)
        stopped = text.add(detokenizer.text(out))
        sent.append(text.take(final=last))
        if stopped:
            break
    return "".join(sent)


MULTIBYTE_TEXTS = ["héllo 世界 🎉 naïve café", "🎉🎉🎉 end", "ab" * 20]
RANDOM_ANSWERS = 200             # answers of random token ids, besides the texts above


def test_streamed_text_is_whole_decoding_with_multibyte_characters_and_stop_strings(server):
    tokenizer = server.engine_loop.engine.tokenizer
    rng = random.Random(0)
    cases = [tokenizer.encode(t, add_special_tokens=False) for t in MULTIBYTE_TEXTS]
    cases += [[rng.randrange(len(tokenizer)) for _ in range(rng.randrange(1, 60))] for _ in range(RANDOM_ANSWERS)]
    for ids in cases:
        whole = tokenizer.decode(ids, skip_special_tokens=True)
        assert stream_text(tokenizer, ids, []) == whole, ids
        if len(whole) > 4:
            start = rng.randrange(len(whole) - 3)
            stop = whole[start:start + rng.randrange(1, 4)]
            other = "never there \U0001F600"
            assert stream_text(tokenizer, ids, [other, stop]) == whole[:whole.find(stop)], (ids, stop)


@pytest.mark.parametrize("body,says", [
    (b"[" * 10_000, ""),                                         # nested too deep for the parser
    (b'{"model": "tiny", "prompt": "\xff\xfe"}', ""),           # not UTF-8
    (b"{not json", "the body is not valid JSON"),
    (b"", ""),
])
def test_a_body_that_is_not_json_gets_openai_s_error_shape(server, body, says):
    status, answer = post(server.url, "/v1/completions", body)
    assert_openai_error(status, answer, 400, says=says)
    if body != b"":
        assert answer["error"]["param"] is None, answer
    assert good_request_works(server.url)


def test_unknown_paths_and_methods_get_openai_s_error_shape(server):
    import urllib.error
    import urllib.request

    for url, data, status in [("/v1/embeddings", b"{}", 404), ("/v1/completions", None, 405)]:
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(urllib.request.Request(server.url + url, data=data), timeout=30)
        assert_openai_error(error.value.code, json.loads(error.value.read()), status)
        if status == 405:
            assert error.value.headers["Allow"] == "POST"


def test_a_failure_in_one_request_s_decoding_costs_only_that_request(server):
    """A bug in the engine loop's own work for one request (its detokenizer here, or
    starting it) fails that request with a 500; the loop goes on serving."""
    from minicb.tools.serve import engine_loop as module

    original = module.Detokenizer.text

    def broken(self, out):
        if len(out.output_token_ids) == 2:
            raise RuntimeError("a bug in decoding")
        return original(self, out)

    module.Detokenizer.text = broken
    try:
        status, answer = post(server.url, "/v1/completions", {"model": NAME, "prompt": "Hi", "max_tokens": 4,
                                                              "ignore_eos": True})
    finally:
        module.Detokenizer.text = original
    assert_openai_error(status, answer, 500, says="a bug in decoding")
    assert good_request_works(server.url)
    wait_until_idle(server.engine_loop.engine)

    module.Detokenizer.__init__, init = (lambda self, tokenizer: 1 / 0), module.Detokenizer.__init__
    try:
        status, answer = post(server.url, "/v1/completions", {"model": NAME, "prompt": "Hi"})
    finally:
        module.Detokenizer.__init__ = init
    assert_openai_error(status, answer, 500, says="ZeroDivisionError")
    assert server.engine_loop.thread.is_alive() and good_request_works(server.url)
    wait_until_idle(server.engine_loop.engine)


@pytest.mark.parametrize("path,extra,param", [
    ("/v1/completions", {"logprobs": 5}, "logprobs"),
    ("/v1/completions", {"best_of": 3}, "best_of"),
    ("/v1/completions", {"echo": True}, "echo"),
    ("/v1/completions", {"frequency_penalty": 0.5}, "frequency_penalty"),
    ("/v1/completions", {"logit_bias": {"5": 100}}, "logit_bias"),
    ("/v1/completions", {"stop": ""}, "stop.0"),
    ("/v1/completions", {"stop": ["a", "b", "c", "d", "e"]}, "stop"),
    ("/v1/completions", {"stop": ["x" * 257]}, "stop.0"),
    ("/v1/completions", {"stop_token_ids": list(range(65))}, "stop_token_ids"),
    ("/v1/completions", {"stop_token_ids": [3, 259]}, "stop_token_ids"),
    ("/v1/completions", {"seed": -1}, "seed"),
    ("/v1/completions", {"temperatur": 0.5}, "temperatur"),
    ("/v1/chat/completions", {"tools": [{"type": "function", "function": {"name": "f"}}]}, "tools"),
    ("/v1/chat/completions", {"logprobs": True, "top_logprobs": 2}, "logprobs"),
    ("/v1/chat/completions", {"response_format": {"type": "json_object"}}, "response_format"),
])
def test_an_openai_field_minicb_lacks_is_a_400_naming_it(server, path, extra, param):
    prompt = {"prompt": "Hi"} if "chat" not in path else {"messages": [{"role": "user", "content": "Hi"}]}
    status, answer = post(server.url, path, {"model": NAME, **prompt, **extra})
    assert_openai_error(status, answer, 400, param)
    assert answer["error"]["param"] == param, answer


def test_openai_fields_sent_switched_off_are_accepted(server):
    off = {"logprobs": None, "echo": False, "best_of": 1, "frequency_penalty": 0, "presence_penalty": 0.0,
           "logit_bias": {}, "suffix": None, "user": "someone"}
    status, answer = post(server.url, "/v1/completions", {"model": NAME, "prompt": "Hi", "max_tokens": 3,
                                                          "ignore_eos": True, **off})
    assert status == 200 and answer["usage"]["completion_tokens"] == 3, answer
    status, answer = post(server.url, "/v1/chat/completions", {
        "model": NAME, "messages": [{"role": "user", "content": "Hi", "name": "ann"}], "logprobs": False,
        "tools": [], "tool_choice": "none", "response_format": {"type": "text"},
        "max_completion_tokens": 3, "max_tokens": 5, "ignore_eos": True})
    assert status == 200 and answer["usage"]["completion_tokens"] == 3, answer     # max_completion_tokens wins
    wait_until_idle(server.engine_loop.engine)

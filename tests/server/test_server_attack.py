"""minicb serve under attack on 127.0.0.1: seeded random bad input, concurrency,
slow writers and readers, and clients that hang up, all at once. Every
response must be a clean 4xx in OpenAI's error shape or a correct answer;
afterwards the server holds no request, every KV block is free, its memory
has not grown without bound, and it still answers."""
import asyncio
import gc
import json
import random
import time

import psutil
import pytest

from minicb import LLM, LLMEngine, SamplingParams
from minicb.tools.serve.server import ServerThread

from .test_server import NAME, metric

OPTIONS = dict(max_model_len=96, max_num_seqs=8, block_size=4)
LIMIT = 64 * 1024                 # the body limit
MAX_TOKENS = 16
OPERATIONS, CLIENTS, DEADLINE_S = 1600, 64, 60
MEMORY_SLACK = 64 * 2**20        # bytes the server's memory may grow by over the whole attack
PROMPTS = ["Hello there", "Batching is", "héllo 世界 🎉", "a b c d e f g", "The cat sat on"]


@pytest.fixture(scope="module")
def greedy(checkpoints):
    """Each prompt's greedy answer of MAX_TOKENS tokens (ignoring EOS), whose first
    n tokens are the answer to max_tokens=n."""
    llm = LLM(checkpoints["llama"], engine="single", max_model_len=OPTIONS["max_model_len"])
    outputs = llm.generate(PROMPTS, SamplingParams(max_tokens=MAX_TOKENS, ignore_eos=True))
    return {p: o.output_token_ids for p, o in zip(PROMPTS, outputs)}, llm.tokenizer


# ---------------------------------------------------------------- a raw HTTP client
async def exchange(port, path, body: bytes, *, chunked=False, declared=None, write_gaps=0.0,
                   read_gaps=0.0, hang_up_after=None, method="POST"):
    """One request on its own connection (Connection: close). Returns (status, body),
    or None when this client hung up after hang_up_after bytes of the answer (0:
    before it began). A declared length that is not the body's own is sent with
    "Expect: 100-continue" and no body: the server must answer without waiting for it."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        length = len(body) if declared is None else declared
        framing = (b"Transfer-Encoding: chunked\r\n" if chunked else f"Content-Length: {length}\r\n".encode()
                   + (b"Expect: 100-continue\r\n" if declared is not None else b""))
        head = (f"{method} {path} HTTP/1.1\r\nHost: attack\r\nConnection: close\r\n".encode()
                + b"Content-Type: application/json\r\n" + framing + b"\r\n")
        if declared is not None:
            writer.write(head)
        elif not (write_gaps or chunked):        # at once, as most clients send a small body
            writer.write(head + body)
        else:
            writer.write(head)
            step = max(1, -(-len(body) // 3))
            for piece in (body[i:i + step] for i in range(0, len(body), step)):
                writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n" if chunked else piece)
                await writer.drain()
                await asyncio.sleep(write_gaps)
            if chunked:
                writer.write(b"0\r\n\r\n")
        await writer.drain()
        if hang_up_after == 0:              # gone before the answer began
            await asyncio.sleep(0.01)
            return None
        reply = b""
        while True:
            chunk = await reader.read(256 if read_gaps else 65536)
            if not chunk:
                break
            reply += chunk
            if hang_up_after is not None and len(reply) > hang_up_after:
                return None
            await asyncio.sleep(read_gaps)
    except (ConnectionError, OSError) as error:
        return (0, repr(error).encode())
    finally:
        writer.close()
    head, _, rest = reply.partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in head.lower():
        rest = dechunk(rest)
    return int(head.split()[1]), rest


def dechunk(data: bytes) -> bytes:
    out = b""
    while data:
        size, _, data = data.partition(b"\r\n")
        n = int(size, 16)
        if n == 0:
            break
        out, data = out + data[:n], data[n + 2:]
    return out


# ---------------------------------------------------------------- what the attacker sends
def good_request(rng, greedy):
    """A valid request and the text a correct answer holds (None: sampled, not checked)."""
    tokens, tokenizer = greedy
    prompt = rng.choice(PROMPTS)
    n = rng.randint(1, MAX_TOKENS)
    body = {"model": NAME, "max_tokens": n, "ignore_eos": True, "temperature": 0}
    chat = rng.random() < 0.3
    if chat:
        body["messages"] = [{"role": "user", "content": prompt}]   # no template: the text itself
    else:
        body["prompt"] = prompt
    text = tokenizer.decode(tokens[prompt][:n], skip_special_tokens=True)
    if rng.random() < 0.3 and len(text) > 2:                       # a stop string from the answer
        start = rng.randrange(len(text) - 1)
        stop = text[start:start + rng.randint(1, 3)]
        body["stop"] = [stop]
        text = text[:text.find(stop)]
    if rng.random() < 0.2:                                          # sampled: any text is right
        body.update(temperature=rng.choice([0.5, 1.0, 1e-300]), top_p=rng.choice([1.0, 0.9, 1e-300]),
                    top_k=rng.choice([0, 5]), seed=rng.randrange(2**32))
        body.pop("stop", None)
        text = None if body["temperature"] != 1e-300 and body["top_p"] != 1e-300 else \
            tokenizer.decode(tokens[prompt][:n], skip_special_tokens=True)
    return ("/v1/chat/completions" if chat else "/v1/completions"), body, text


BAD_BODIES = [
    b"{not json", b"", b"null", b"[]", b'"text"', b"[" * 5000, b'{"model": "tiny", "prompt": "\xff\xfe"}',
    b'{"model": "tiny", "prompt": "a\\ud800"}', b'{"model": "tiny", "prompt": "hi", "temperature": NaN}',
    b'{"model": "tiny", "prompt": "hi", "max_tokens": 1e400}',
    b'{"model": "tiny", "messages": [{"role": "user", "content": "\\udfff"}]}',
]


def bad_request(rng):
    """A request that must be refused with a 4xx: (path, body bytes, extra exchange options)."""
    field, value = rng.choice([
        ("model", "gpt-4"), ("model", 5), ("prompt", ""), ("prompt", []), ("prompt", [1, 10**9]),
        ("prompt", [-1]), ("prompt", [True]), ("prompt", {"a": 1}), ("prompt", None), ("prompt", "x" * 60_000),
        ("max_tokens", 0), ("max_tokens", 10**30), ("max_tokens", "ten"), ("temperature", -1),
        ("temperature", "hot"), ("top_p", 0), ("top_p", 7), ("top_k", -5), ("seed", 2**70), ("n", 2),
        ("stop", ""), ("stop", [1]), ("stop_token_ids", [10**9]), ("stop_token_ids", ["x"]),
        ("ignore_eos", "yes"), ("stream", 1), ("logprobs", 5), ("best_of", 4), ("echo", True),
        ("tools", [{"type": "function"}]), ("frequency_penalty", 1.5), ("unknown_field", 1),
        ("stream_options", "usage"), ("prompt", [[1, 2], [3]]),
    ])
    roll = rng.random()
    if roll < 0.2:
        return "/v1/completions", rng.choice(BAD_BODIES), {}
    if roll < 0.25:                               # over the body limit, declared or chunked
        big = json.dumps({"model": NAME, "prompt": "y" * (2 * LIMIT)}).encode()
        return "/v1/completions", big, {"chunked": rng.random() < 0.5}
    if roll < 0.3:
        return "/v1/completions", b'{"model": "tiny", "prompt": "hi"}', {"declared": 10**9}
    if roll < 0.35:
        return rng.choice(["/v1/nothing", "/v1/embeddings"]), b"{}", {}
    body = {"model": NAME, "prompt": "Hi", "max_tokens": 4}
    body[field] = value
    if field == "prompt" and rng.random() < 0.3:
        body = {"model": NAME, "messages": [{"role": "user", "content": value}]}
        return "/v1/chat/completions", json.dumps(body).encode(), {}
    return "/v1/completions", json.dumps(body).encode(), {}


def answer_text(path, body: bytes, stream: bool) -> str:
    """The text of a whole answer, or of a stream's events, which must end in [DONE]."""
    key = "text" if path == "/v1/completions" else "content"
    if not stream:
        choice = json.loads(body)["choices"][0]
        return choice["text"] if key == "text" else choice["message"]["content"]
    events = [line[6:] for line in body.decode().split("\n") if line.startswith("data: ")]
    assert events[-1] == "[DONE]", events[-3:]
    chunks = [json.loads(e) for e in events[:-1]]
    assert all("error" not in c for c in chunks), chunks
    return "".join(c["choices"][0]["text"] if key == "text" else c["choices"][0]["delta"].get("content", "")
                   for c in chunks if c["choices"])


# ---------------------------------------------------------------- the attack
async def attack(port, greedy, seed):
    rng = random.Random(seed)
    counts = dict(operations=0, bad=0, answers=0, checked=0, streams=0, cut=0, hung_up=0, slow=0, refused=0)
    queue = list(range(OPERATIONS))
    deadline = time.monotonic() + DEADLINE_S
    # A few connections that send half a request and say no more (slowloris).
    idle = [await asyncio.open_connection("127.0.0.1", port) for _ in range(4)]
    for _, writer in idle:
        writer.write(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Len")

    async def client(worker):
        crng = random.Random(seed * 1000 + worker)
        while queue and time.monotonic() < deadline:
            queue.pop()
            counts["operations"] += 1
            if crng.random() < 0.4:
                path, body, options = bad_request(crng)
                result = await exchange(port, path, body, **options)
                counts["bad"] += 1
                assert result is not None and 400 <= result[0] < 500, (path, body[:200], result)
                error = json.loads(result[1])["error"]
                assert {"message", "type", "param", "code"} <= set(error), error
                continue
            path, request, text = good_request(crng, greedy)
            stream = crng.random() < 0.5
            request["stream"] = stream
            options = {}
            style = crng.random()
            if style < 0.15:
                options["hang_up_after"] = 0 if not stream else crng.randint(1, 400)
            elif style < 0.25:
                options.update(write_gaps=0.05, chunked=crng.random() < 0.5)
                counts["slow"] += 1
            elif style < 0.3 and stream:
                options["read_gaps"] = 0.02
                counts["slow"] += 1
            counts["streams"] += stream
            result = await exchange(port, path, json.dumps(request).encode(), **options)
            if result is None:
                counts["cut" if stream else "hung_up"] += 1
                continue
            status, reply = result
            if status == 429:                 # the server holds max_queued already
                assert json.loads(reply)["error"]["type"] == "rate_limit_exceeded", reply
                counts["refused"] += 1
                continue
            assert status == 200, (request, status, reply[:300])
            got = answer_text(path, reply, stream)
            counts["answers"] += 1
            if text is not None:
                assert got == text, (request, got, text)
                counts["checked"] += 1

    try:
        await asyncio.gather(*(client(i) for i in range(CLIENTS)))
    finally:
        for _, writer in idle:
            writer.close()
    return counts


def test_random_bad_input_concurrency_and_hang_ups_leave_the_server_whole(checkpoints, greedy):
    engine = LLMEngine(checkpoints["llama"], engine="paged", **OPTIONS)
    process = psutil.Process()
    with ServerThread(engine, NAME, max_queued=64, max_request_bytes=LIMIT) as server:
        port = int(server.url.rsplit(":", 1)[1])
        asyncio.run(attack(port, greedy, seed=1))            # warm up, then measure
        gc.collect()
        before = process.memory_info().rss
        counts = asyncio.run(attack(port, greedy, seed=2))
        deadline = time.monotonic() + 30
        while engine.requests or metric(server.url, "minicb_kv_blocks_used") != 0:
            assert time.monotonic() < deadline, (list(engine.requests), metric(server.url, "minicb_kv_blocks_used"))
            time.sleep(0.05)
        gc.collect()
        after = process.memory_info().rss
        assert metric(server.url, "minicb_requests_running") == 0
        assert metric(server.url, "minicb_requests_waiting") == 0
        assert metric(server.url, "minicb_kv_blocks_free") == engine.stage.kv.num_blocks
        assert not engine.has_unfinished_requests() and server.engine_loop.in_flight == 0
        final = asyncio.run(exchange(port, "/v1/completions", json.dumps(
            {"model": NAME, "prompt": PROMPTS[0], "max_tokens": 4, "temperature": 0, "ignore_eos": True}).encode()))
    print(f"\nattack: {counts}; memory {before / 2**20:.0f} -> {after / 2**20:.0f} MiB")
    assert final[0] == 200
    assert counts["bad"] >= 50 and counts["checked"] >= 50 and counts["cut"] + counts["hung_up"] >= 10, counts
    assert after - before < MEMORY_SLACK, (before, after)

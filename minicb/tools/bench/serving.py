"""``python -m minicb bench serve``: measure any OpenAI-compatible server the
way ``vllm bench serve`` does.

It replays a seeded workload (prompts as token ids, each asking for exactly its
drawn length with ``ignore_eos``) against ``/v1/completions``, streamed, at a
request rate, and reports completed and failed requests, throughput, and TTFT,
TPOT, inter-token latency and end-to-end latency (mean, median, p99). The
server may be minicb's, or vLLM's or SGLang's anywhere else.
"""
import argparse
import asyncio
import json
import math
import os
import statistics
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
from tqdm.auto import tqdm

from ..serve.options import WORKLOAD_HELP, Help, Parser, as_flags, check_out_path
from .run_record import machine, this_run
from .workload import PRESETS, preset_workload


@dataclass
class RequestResult:
    ok: bool = False
    prompt_tokens: int = 0
    output_tokens: int = 0
    ttft: float | None = None        # None until the first chunk with a choice
    latency: float = 0.0
    itl: list[float] = field(default_factory=list)      # gaps between streamed chunks
    error: str = ""

    @property
    def tpot(self) -> float:
        n = self.output_tokens - 1
        return (self.latency - self.ttft) / n if n > 0 else 0.0


# ANCHOR: send
async def send(client, model, prompt, max_tokens) -> RequestResult:
    """One streamed completion; times the first chunk, every gap, and the end."""
    result, started = RequestResult(prompt_tokens=len(prompt)), time.perf_counter()
    last = started
    try:
        stream = await client.completions.create(
            model=model, prompt=prompt, max_tokens=max_tokens, temperature=0,
            stream=True, stream_options={"include_usage": True},
            extra_body={"ignore_eos": True})
        async for chunk in stream:
            now = time.perf_counter()
            if chunk.choices and result.ttft is None:    # even if its text is held back
                result.ttft, last = now - started, now
            elif chunk.choices and chunk.choices[0].text:
                result.itl.append(now - last)
                last = now
            if chunk.usage:
                result.output_tokens = chunk.usage.completion_tokens
        result.latency = time.perf_counter() - started
        result.ok = result.output_tokens == max_tokens and result.ttft is not None
        if result.ttft is None:
            result.error = "the stream carried no choice"
        elif not result.ok:
            result.error = f"got {result.output_tokens} tokens, asked for {max_tokens}"
    except Exception as error:         # a failed request is counted, not fatal
        result.error = f"{type(error).__name__}: {error}"
    return result
# ANCHOR_END: send


# ANCHOR: arrivals
def arrival_gaps(num_requests, request_rate, burstiness, seed) -> list[float]:
    """Seconds before each request: Poisson at ``request_rate`` when burstiness
    is 1, burstier below 1 and steadier above (gamma-distributed gaps with the
    same mean, as vLLM's benchmark draws them); all at once for an infinite rate."""
    if math.isinf(request_rate):
        return [0.0] * num_requests
    rng = np.random.default_rng(seed)
    mean_gap = 1.0 / request_rate
    return rng.gamma(burstiness, mean_gap / burstiness, size=num_requests).tolist()
# ANCHOR_END: arrivals


async def replay(base_url, model, workload, gaps, max_concurrency=None, progress=None, api_key="none"):
    """Send every request at its time (at most ``max_concurrency`` at once)."""
    import openai             # slow to import: only a client run waits for it

    limit = asyncio.Semaphore(max_concurrency or len(workload.prompts))

    async def one(client, prompt, max_tokens):
        async with limit:
            result = await send(client, model, prompt, max_tokens)
        if progress is not None:
            progress.update(1)
        return result

    # Closed inside this event loop, before asyncio.run closes it.
    async with openai.AsyncOpenAI(base_url=f"{base_url.rstrip('/')}/v1", api_key=api_key, max_retries=0,
                                  timeout=3600) as client:
        tasks = []
        for prompt, max_tokens, gap in zip(workload.prompts, workload.output_lens, gaps):
            await asyncio.sleep(gap)
            tasks.append(asyncio.create_task(one(client, prompt, max_tokens)))
        return await asyncio.gather(*tasks)


def measure(base_url, model, workload, request_rate, burstiness=1.0, max_concurrency=None, seed=0,
            progress=None, api_key="none") -> dict:
    """Replay ``workload`` against the server and return ``report``'s numbers.
    The client's event loop runs in a thread of its own, so this works where
    one is already running (a notebook)."""
    gaps = arrival_gaps(len(workload.prompts), request_rate, burstiness, seed)

    def timed():
        started = time.perf_counter()
        results = asyncio.run(replay(base_url, model, workload, gaps, max_concurrency, progress, api_key))
        return results, time.perf_counter() - started

    with ThreadPoolExecutor(1) as pool:
        results, duration = pool.submit(timed).result()
    return report(results, duration) | {"errors": sorted({r.error for r in results if not r.ok})}


# ANCHOR: report
def report(results: list[RequestResult], duration: float) -> dict:
    """What vllm bench serve reports, over the requests that completed."""
    done = [r for r in results if r.ok]

    def stats(values, name):
        values = [1e3 * v for v in values] or [math.nan]
        return {f"mean_{name}_ms": statistics.fmean(values),
                f"median_{name}_ms": statistics.median(values),
                f"p99_{name}_ms": float(np.percentile(values, 99))}

    output_tokens = sum(r.output_tokens for r in done)
    input_tokens = sum(r.prompt_tokens for r in done)
    return dict(completed=len(done), failed=len(results) - len(done),
                duration_s=duration,
                request_throughput=len(done) / duration,
                output_throughput=output_tokens / duration,
                total_token_throughput=(output_tokens + input_tokens) / duration,
                total_input_tokens=input_tokens, total_output_tokens=output_tokens,
                **stats([r.ttft for r in done], "ttft"),
                **stats([r.tpot for r in done if r.output_tokens > 1], "tpot"),
                **stats([gap for r in done for gap in r.itl], "itl"),
                **stats([r.latency for r in done], "e2el"))
# ANCHOR_END: report


def format_report(numbers: dict) -> str:
    lines = []
    for key, value in numbers.items():
        shown = f"{value:.2f}" if isinstance(value, float) else str(value)
        lines.append(f"{key.replace('_', ' '):<28} {shown:>12}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="minicb bench serve", description=__doc__.split("\n\n")[0], formatter_class=Help)
    parser.add_argument("--base-url", default="http://127.0.0.1:8000", help="the server")
    parser.add_argument("--model", default=None, help="the name to send (default: the server's first model)")
    parser.add_argument("--workload", default="anyscale", choices=list(PRESETS), help=WORKLOAD_HELP)
    parser.add_argument("--num-prompts", type=int, default=64, help="requests to send")
    parser.add_argument("--cap", type=int, default=512, help="anyscale: cap on output lengths")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every length (e.g. 0.125 on a CPU)")
    parser.add_argument("--request-rate", type=float, default=math.inf,
                        help="requests per second (inf: all at once)")
    parser.add_argument("--burstiness", type=float, default=1.0,
                        help="1: Poisson arrivals; below 1 burstier, above 1 steadier")
    parser.add_argument("--max-concurrency", type=int, default=None, help="requests in flight at most")
    parser.add_argument("--seed", type=int, default=0, help="seeds the workload and the arrivals")
    parser.add_argument("--api-key", default=os.environ.get("MINICB_API_KEY", "none"),
                        help="the server's key, if it asks for one (default: $MINICB_API_KEY)")
    parser.add_argument("--out", default=None, help="also write the results as JSON here")
    return parser


def main(argv=None):
    """Every flag is checked before the first request; bad input and a server that
    cannot be reached or refuses the key get one line and exit status 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        run(args)
    except ValueError as error:
        parser.exit(2, f"minicb bench serve: error: {as_flags(str(error), args)}\n")


def check_flags(args):
    if args.num_prompts < 1:
        raise ValueError(f"--num-prompts must be >= 1, got {args.num_prompts}")
    if not args.request_rate > 0:
        raise ValueError(f"--request-rate must be > 0 (inf: all at once), got {args.request_rate}")
    if not 0 < args.burstiness < math.inf:
        raise ValueError(f"--burstiness must be a finite number > 0, got {args.burstiness}")
    if args.max_concurrency is not None and args.max_concurrency < 1:
        raise ValueError(f"--max-concurrency must be >= 1, got {args.max_concurrency}")
    if not args.base_url.startswith(("http://", "https://")):
        raise ValueError(f"--base-url {args.base_url!r} must start with http:// or https://")
    check_out_path(args.out)


# A server's counters of speculative decoding, by minicb's names or vLLM's.
DRAFT_COUNTERS = {"draft_tokens": ("minicb_spec_decode_num_draft_tokens_total",
                                   "vllm:spec_decode_num_draft_tokens_total"),
                  "accepted_tokens": ("minicb_spec_decode_num_accepted_tokens_total",
                                      "vllm:spec_decode_num_accepted_tokens_total")}


def draft_counts(base_url) -> dict | None:
    """The server's drafted and accepted tokens so far, read from its /metrics;
    None where it serves no such counters (no speculative decoding, or no
    /metrics). They count every client's requests, not only this run's."""
    try:
        with urllib.request.urlopen(base_url.rstrip("/") + "/metrics", timeout=10) as response:
            lines = response.read().decode().splitlines()
    except (OSError, ValueError):
        return None
    counts = {}
    for key, names in DRAFT_COUNTERS.items():
        values = [float(line.split()[-1]) for line in lines
                  if line.split(" ")[0].split("{")[0] in names]
        if not values:
            return None
        counts[key] = sum(values)
    return counts


def served_model(args) -> str:
    """--model, else the server's first: either way, the server is asked once
    before the run, so that one that cannot be reached or refuses the key is one
    line and not a failure per request."""
    import openai             # slow to import: only a client run waits for it

    client = openai.OpenAI(base_url=f"{args.base_url.rstrip('/')}/v1", api_key=args.api_key, max_retries=0,
                           timeout=30)
    try:
        models = [m.id for m in client.models.list().data]
    except openai.APIConnectionError as error:
        raise ValueError(f"cannot reach a server at {args.base_url}: {error.__cause__ or error}") from None
    except openai.APIStatusError as error:
        raise ValueError(f"the server at {args.base_url} answered /v1/models with {error.status_code}: "
                         f"{error.message}") from None
    if not models:
        raise ValueError(f"the server at {args.base_url} serves no model")
    return args.model or models[0]


def run(args) -> dict:
    check_flags(args)
    workload = preset_workload(args.workload, num_requests=args.num_prompts, cap=args.cap, scale=args.scale,
                               seed=args.seed)          # its lengths checked too, before the server is asked
    model = served_model(args)
    before = draft_counts(args.base_url)
    with tqdm(total=args.num_prompts, desc="requests") as progress:
        numbers = measure(args.base_url, model, workload, args.request_rate, args.burstiness,
                          args.max_concurrency, args.seed, progress, args.api_key)
    after = draft_counts(args.base_url)
    if before is not None and after is not None and after["draft_tokens"] > before["draft_tokens"]:
        # a server that drafted tokens while this run was served
        numbers |= {f"spec_decode_{key}": int(after[key] - before[key]) for key in DRAFT_COUNTERS}
        numbers["spec_decode_acceptance_rate"] = (numbers["spec_decode_accepted_tokens"]
                                                  / numbers["spec_decode_draft_tokens"])
    errors = numbers.pop("errors")
    print(format_report(numbers))
    if errors:
        print("failures:", *errors[:5], sep="\n  ")
    result = dict(base_url=args.base_url, model=model, workload=workload.description,
                  request_rate=args.request_rate, burstiness=args.burstiness,
                  max_concurrency=args.max_concurrency, results=numbers,
                  client=dict(this_run(), machine=machine()))    # the server's is its own
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2, default=str)
            f.write("\n")
        print(f"results: {args.out}")
    return result

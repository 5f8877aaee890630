"""Command line: ``python -m minicb generate ...`` and ``python -m minicb demo``."""
import argparse

from .config import ATTENTION_BACKENDS, SCHEDULING_POLICIES, EngineConfig
from .stages import STAGES
from .workload import PRESETS


def main(argv=None):
    parser = argparse.ArgumentParser(prog="minicb", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    gen = commands.add_parser("generate", help="generate text for one or more prompts")
    gen.add_argument("--model", required=True, help="a local Hugging Face checkpoint folder")
    gen.add_argument("--engine", default="static", choices=list(STAGES))
    gen.add_argument("--prompt", action="append", required=True, help="repeat for several prompts")
    gen.add_argument("--max-tokens", type=int, default=32)
    gen.add_argument("--temperature", type=float, default=0.0)
    gen.add_argument("--top-k", type=int, default=0)
    gen.add_argument("--top-p", type=float, default=1.0)
    gen.add_argument("--seed", type=int, default=None)
    gen.add_argument("--ignore-eos", action="store_true")
    add_engine_options(gen)

    demo = commands.add_parser("demo", help="run the stages on a tiny model and compare them")
    demo.add_argument("--requests", type=int, default=16)
    demo.add_argument("--max-batch-size", type=int, default=8)
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--checkpoint-dir", default="scratch/tiny-llama")

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
    if args.command == "demo":
        from .demo import main as demo_main
        return demo_main(args)
    if args.command == "bench":
        from .bench import main as bench_main
        return bench_main(args)
    return generate(args)


def add_engine_options(parser):
    parser.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    parser.add_argument("--device", default=None, help="cuda or cpu (default: cuda if present)")
    parser.add_argument("--attention-backend", default=None, choices=ATTENTION_BACKENDS)
    parser.add_argument("--max-batch-size", type=int, default=8)
    parser.add_argument("--bucket-by-length", action="store_true")
    parser.add_argument("--max-num-seqs", type=int, default=EngineConfig.max_num_seqs)
    parser.add_argument("--max-num-batched-tokens", type=int, default=None)
    parser.add_argument("--max-wait-ms", type=float, default=50.0)
    parser.add_argument("--scheduling-policy", default="mixed", choices=SCHEDULING_POLICIES)
    parser.add_argument("--block-size", type=int, default=16)
    parser.add_argument("--num-blocks", type=int, default=None)
    parser.add_argument("--enable-chunked-prefill", action="store_true")
    parser.add_argument("--enable-prefix-caching", action="store_true")


def generate(args):
    from .llm import LLM
    from .sampling import SamplingParams

    llm = LLM(args.model, engine=args.engine, dtype=args.dtype, device=args.device,
              attention_backend=args.attention_backend, max_batch_size=args.max_batch_size,
              bucket_by_length=args.bucket_by_length, max_num_seqs=args.max_num_seqs,
              max_num_batched_tokens=args.max_num_batched_tokens,
              max_wait_ms=args.max_wait_ms, scheduling_policy=args.scheduling_policy,
              block_size=args.block_size, num_blocks=args.num_blocks,
              enable_chunked_prefill=args.enable_chunked_prefill, enable_prefix_caching=args.enable_prefix_caching)
    params = SamplingParams(max_tokens=args.max_tokens, temperature=args.temperature, top_k=args.top_k,
                            top_p=args.top_p, seed=args.seed, ignore_eos=args.ignore_eos)
    outputs = llm.generate(args.prompt, params, use_tqdm=len(args.prompt) > 1)
    for out in outputs:
        print(f"{out.prompt!r} -> {out.text!r}  ({len(out.output_token_ids)} tokens, {out.finish_reason})")

"""Speculative decoding on the real model, measured: tokens a second with and
without prompt-lookup drafts, on a task whose answer repeats its prompt (a
rename in a piece of code) and on one whose answer does not (a poem), at a
batch of one or more. The two engines take turns, round after round, so that
whatever else the machine does falls on both; each round gives a ratio, and
the claim "speculation is faster" is judged from the rounds' spread
(minicb.tools.bench.claims.judge), or left undecided.

    python -m workshop.measure.speculative --model smollm2 --rounds 5 --out run.json
"""
import argparse
import json
import statistics
import time

from minicb.llm import LLM, chat_prompt
from minicb.sampling_params import SamplingParams
from minicb.tools.bench.claims import judge
from minicb.tools.bench.run_record import machine

CODE = ("def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\n"
        "def mul(a, b):\n    return a * b\n")
TASKS = {"repeats": "Rename the function add to plus in this Python code, and show the "
                    "whole code:\n" + CODE,
         "fresh": "Write a short poem about the sea."}


def engines(model: str, k: int, **options) -> dict:
    """The two engines, stage 5 plain and with k drafts a step."""
    return {"plain": LLM(model, engine="paged", **options),
            "speculative": LLM(model, engine="paged", **options,
                               speculative_config={"num_speculative_tokens": k})}


def one_run(llm, prompts, params) -> dict:
    start = time.perf_counter()
    outputs = llm.generate(prompts, params)
    seconds = time.perf_counter() - start
    run = llm.last_run
    tokens = sum(len(o.output_token_ids) for o in outputs)
    return dict(tokens_per_s=tokens / seconds, tokens=tokens, steps=run.num_steps,
                drafted=run.num_draft_tokens, accepted=run.num_accepted_tokens,
                answers=[o.output_token_ids for o in outputs])


# ANCHOR: measure
def measure(model="smollm2", k=4, batch=1, rounds=5, max_tokens=96) -> dict:
    """Each task: ``rounds`` turns of plain then speculative (greedy, so both give
    the same tokens, which is checked), tokens a second each, and their ratios."""
    pair = engines(model, k, max_num_seqs=max(batch, 1))
    tokenizer = pair["plain"].llm_engine.tokenizer
    params = SamplingParams(max_tokens=max_tokens)
    results = {}
    for task, ask in TASKS.items():
        prompts = [chat_prompt(tokenizer, [{"role": "user", "content": ask}])] * batch
        for llm in pair.values():
            llm.generate(prompts[:1], SamplingParams(max_tokens=4))       # warm-up
        runs = {name: [] for name in pair}
        for _ in range(rounds):
            for name, llm in pair.items():
                runs[name].append(one_run(llm, prompts, params))
        answers = {name: runs[name][0]["answers"] for name in pair}
        if answers["plain"] != answers["speculative"]:
            raise AssertionError(f"{task}: speculative decoding changed the greedy answer")
        speeds = {name: [r["tokens_per_s"] for r in runs[name]] for name in pair}
        last, verdict = runs["speculative"][-1], judge(speeds["speculative"], ">", speeds["plain"])
        results[task] = dict(
            tokens_per_s=speeds,
            ratios=[s / p for s, p in zip(speeds["speculative"], speeds["plain"])],
            faster=verdict.holds, undecided_because=verdict.reason,
            acceptance=last["accepted"] / last["drafted"] if last["drafted"] else 0.0,
            tokens_per_step={name: runs[name][-1]["tokens"] / runs[name][-1]["steps"] for name in pair},
            tokens=last["tokens"])
    return dict(model=model, k=k, batch=batch, rounds=rounds, max_tokens=max_tokens,
                machine=machine(), tasks=results)
# ANCHOR_END: measure


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--k", type=int, default=4, help="tokens drafted a step")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--out", default=None, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    result = measure(args.model, args.k, args.batch, args.rounds, args.max_tokens)
    for task, r in result["tasks"].items():
        print(f"{task}: speculative / plain tokens a second, median of {args.rounds} rounds "
              f"{statistics.median(r['ratios']):.2f} (rounds {min(r['ratios']):.2f}-{max(r['ratios']):.2f}; "
              f"faster: {r['faster']}), acceptance {r['acceptance']:.2f}, tokens a step "
              f"{r['tokens_per_step']['speculative']:.2f} against {r['tokens_per_step']['plain']:.2f}")
    if args.out:
        with open(args.out, "w") as out:
            json.dump(result, out, indent=1)


if __name__ == "__main__":
    main()

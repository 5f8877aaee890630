"""Speculative decoding measured, two ways.

``answers``: on the real model, tokens a second without drafts and with each
drafter (prompt lookup; a draft model), on a task whose answers repeat their
prompts (renames in a piece of code) and on one whose answers do not (poems),
at each batch. The engines take turns, round after round, so that whatever else the
machine does falls on both; each round gives a ratio, and the claim
"speculation is faster" is judged from the rounds' spread
(minicb.tools.bench.claims.judge), or left undecided.

``steps`` (the GPU run's part): what a verify step of k drafts costs beside a
decode step, at each batch, for each model shape; from the two, the speedup a
drafter of each acceptance rate would give, and the batch where it stops
paying, beside the cost model's prediction. Drafts are given, k a step, so the
step's cost does not depend on what a random model keeps.

    python -m workshop.measure.speculative answers --model smollm2 --batch 1 4 --rounds 5 --out run.json
    python -m workshop.measure.speculative steps --out folder
"""
import argparse
import json
import statistics
import time
from pathlib import Path

from minicb.costmodel import HARDWARE, MODEL_SHAPES, expected_tokens, speculative_speedup
from minicb.llm import LLM, LLMEngine, chat_prompt
from minicb.sampling_params import SamplingParams
from minicb.tools.bench.claims import judge
from minicb.stages.drafting import Draft
from minicb.tools.bench.run_record import machine, this_run
from workshop.measure.decode_step import decode_steps_at
from workshop.report.scale import run_scale

CODE = ("def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\n"
        "def mul(a, b):\n    return a * b\n")
# Each task's prompts: a batch of b takes the first b, round and round.
TASKS = {"repeats": [f"Rename the function {old} to {new} in this Python code, and show the "
                     f"whole code:\n{CODE}" for old, new in (("add", "plus"), ("sub", "minus"),
                                                              ("mul", "times"), ("add", "total"))],
         "fresh": [f"Write a short poem about {topic}." for topic in
                   ("the sea", "a mountain", "the rain", "a city at night")]}
# The drafters measured by default: prompt lookup, and the target's own first 16 of
# SmolLM2-135M's 30 layers as a draft model (no smaller model with its tokenizer ships
# in a package).
DRAFTERS = {"prompt lookup": {"method": "ngram", "num_speculative_tokens": 4},
            "draft model": {"method": "draft", "num_speculative_tokens": 3, "draft_layers": 16}}


def engines(model: str, drafters: dict, **options) -> dict:
    """Stage 5 plain, and with each drafter."""
    return {"plain": LLM(model, engine="paged", **options),
            **{name: LLM(model, engine="paged", **options, speculative_config=spec)
               for name, spec in drafters.items()}}


def one_run(llm, prompts, params) -> dict:
    start = time.perf_counter()
    outputs = llm.generate(prompts, params)
    seconds = time.perf_counter() - start
    run = llm.last_run
    tokens = sum(len(o.output_token_ids) for o in outputs)
    # a request's tokens from each step it was in, prompt steps included
    request_steps = sum(step.useful_rows for step in run.steps)
    return dict(tokens_per_s=tokens / seconds, tokens=tokens, steps=run.num_steps,
                tokens_per_step=tokens / request_steps,
                drafted=run.num_draft_tokens, accepted=run.num_accepted_tokens,
                answers=[o.output_token_ids for o in outputs])


# ANCHOR: measure
def measure(model="smollm2", drafters=None, batches=(1,), rounds=5, max_tokens=96,
            **options) -> dict:
    """Each task at each batch: ``rounds`` turns of plain decoding and then each
    drafter (greedy, so all give the same tokens, which is checked), tokens a
    second each, and each drafter's ratios to plain. ``options``: the engines'
    (on a GPU, each its share of the memory)."""
    drafters = DRAFTERS if drafters is None else drafters
    every = engines(model, drafters, max_num_seqs=max(batches), **options)
    tokenizer = every["plain"].llm_engine.tokenizer
    layers = every["plain"].llm_engine.executor.config.num_hidden_layers
    params = SamplingParams(max_tokens=max_tokens)
    results = {}
    for task, asks in TASKS.items():
        prompts = [chat_prompt(tokenizer, [{"role": "user", "content": ask}]) for ask in asks]
        for llm in every.values():
            llm.generate(prompts[:1], SamplingParams(max_tokens=4))       # warm-up
        results[task] = {}
        for batch in batches:
            batch_prompts = [prompts[i % len(prompts)] for i in range(batch)]
            runs = {name: [] for name in every}
            for _ in range(rounds):
                for name, llm in every.items():
                    runs[name].append(one_run(llm, batch_prompts, params))
            results[task][str(batch)] = compared(task, runs)
    for llm in every.values():
        llm.close()                     # on a GPU, its memory free for what runs next
    return dict(model=model, target_layers=layers, drafters=drafters, batches=list(batches), rounds=rounds,
                max_tokens=max_tokens, machine=machine(), tasks=results)


def compared(task, runs) -> dict:
    """Each engine's tokens a second, acceptance and a request's tokens a step; each drafter's
    ratios to plain, round by round, and the verdict on "it is faster"."""
    plain = runs["plain"]
    found = {}
    for name, each in runs.items():
        if each[0]["answers"] != plain[0]["answers"]:
            raise AssertionError(f"{task}: {name} changed the greedy answer")
        speeds = [r["tokens_per_s"] for r in each]
        last = each[-1]
        found[name] = dict(tokens_per_s=speeds, tokens=last["tokens"], steps=last["steps"],
                           drafted=last["drafted"], accepted=last["accepted"],
                           acceptance=last["accepted"] / last["drafted"] if last["drafted"] else None,
                           tokens_per_step=last["tokens_per_step"])
        if name != "plain":
            verdict = judge(speeds, ">", [r["tokens_per_s"] for r in plain])
            found[name].update(ratios=[s / r["tokens_per_s"] for s, r in zip(speeds, plain)],
                               faster=verdict.holds, undecided_because=verdict.reason)
    return found
# ANCHOR_END: measure


# ANCHOR: steps
# The GPU run's part: each shape's decode and verify steps at these batches, a context
# of this many tokens, k drafts a verify step; the speedup at these acceptance rates.
STEPS = dict(batches=[1, 8, 32, 64, 128, 256], context=1024, k=4, steps=12,
             shapes=["llama-3.2-1b", "llama-3.1-8b"], acceptance=[0.5, 0.7, 0.9],
             rounds=3, max_tokens=128)
REHEARSAL_STEPS = dict(STEPS, batches=[1, 2, 4], context=32, steps=4, rounds=1, max_tokens=16)


class GivenDrafts:
    """k drafts at every step, whatever the model would keep: a verify step's cost."""

    def __init__(self, k: int, token: int = 3):
        self.k, self.token = k, token

    def propose(self, wanted: dict) -> dict:
        return {request: Draft([self.token] * min(self.k, most)) for request, most in wanted.items()}

    def forget(self, request):
        """Nothing kept per request."""


def step_ms(engine, batch, context, steps) -> float:
    """The median interval between the starts of ``steps`` steps that ran all
    ``batch`` requests (the first, which may capture graphs, left out)."""
    records = decode_steps_at(engine, batch, context, steps + 2)[1:]
    return 1e3 * statistics.median(b.started - a.started for a, b in zip(records, records[1:]))


def verify_steps(path, shape, batches, context, k, steps, **options) -> list[dict]:
    """Each batch's decode step and verify step of k drafts, in ms."""
    rows = {batch: dict(batch=batch) for batch in batches}
    for name, spec in (("decode", None), ("verify", {"num_speculative_tokens": k})):
        engine = LLMEngine(path, engine="paged", max_num_seqs=max(batches), speculative_config=spec,
                           **options)
        if spec:
            engine.stage.drafter = GivenDrafts(k)
        for batch in batches:
            rows[batch][f"{name}_ms"] = step_ms(engine, batch, context, steps)
        engine.close()
    return list(rows.values())


def speedups(rows, k, acceptance) -> dict:
    """Measured: a drafter of each acceptance rate's tokens a second over plain
    decoding at each batch (its expected tokens a verify step, over the two
    steps' times), and the first measured batch where that falls below 1."""
    found = {}
    for a in acceptance:
        ratios = [expected_tokens(a, k) * r["decode_ms"] / r["verify_ms"] for r in rows]
        below = [r["batch"] for r, x in zip(rows, ratios) if x < 1]
        found[str(a)] = dict(speedup=ratios, stops_paying_at=below[0] if below else None)
    return found


def predicted(shape, context, k, acceptance, batches, hardware) -> dict:
    """The cost model's speedups at the same batches, on ``hardware`` (simulated)."""
    hw = HARDWARE[hardware]
    return {str(a): [speculative_speedup(hw, MODEL_SHAPES[shape], 2, batch, context, k, a)
                     for batch in batches] for a in acceptance}


def measure_steps(out: Path, scale, answers=True) -> Path:
    """The part: every shape this GPU holds (the tiny model in a rehearsal), into
    ``out``/speculative_steps.json. ``answers``: also each shape's tokens a second
    at batch 1 with and without prompt lookup, in turns (``measure``; its random
    weights answer in loops, which prompt lookup finds)."""
    sizes = STEPS if scale.name == "full" else REHEARSAL_STEPS
    result = dict(run=this_run(), machine=machine(), scale=scale.name,
                  **{key: sizes[key] for key in ("context", "k", "acceptance", "batches")}, shapes={})
    for shape in sizes["shapes"]:
        if scale.name == "full" and not scale.fits(shape):
            continue
        model = scale.model(shape)
        rows = verify_steps(scale.checkpoint(model), shape, sizes["batches"], sizes["context"], sizes["k"],
                            sizes["steps"], dtype=model["dtype"], max_model_len=2 * sizes["context"] + 512)
        if answers:                     # two engines at once: each a share of a GPU
            share = dict(gpu_memory_utilization=0.4) if scale.device == "cuda" else {}
            answered = measure(scale.checkpoint(model), {"prompt lookup": {"num_speculative_tokens": sizes["k"]}},
                               [1], sizes["rounds"], sizes["max_tokens"], dtype=model["dtype"], **share)
        result["shapes"][shape] = dict(
            answers={task: by_batch["1"] for task, by_batch in answered["tasks"].items()} if answers else None,
            rows=rows, measured=speedups(rows, sizes["k"], sizes["acceptance"]),
            predicted={hw: predicted(shape, sizes["context"], sizes["k"], sizes["acceptance"],
                                     sizes["batches"], hw) for hw in ("h200", "h200-measured")})
        print(f"{shape}: " + ", ".join(f"batch {r['batch']} decode {r['decode_ms']:.2f} ms, verify "
                                       f"{r['verify_ms']:.2f} ms" for r in rows), flush=True)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "speculative_steps.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    return path
# ANCHOR_END: steps


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    answers = commands.add_parser("answers", help="tokens a second with and without drafts, the real model")
    answers.add_argument("--model", default="smollm2")
    answers.add_argument("--drafter", choices=list(DRAFTERS), action="append",
                         help="a drafter to measure (again for another; default: every one)")
    answers.add_argument("--batch", type=int, nargs="+", default=[1], help="the batches to run")
    answers.add_argument("--rounds", type=int, default=5)
    answers.add_argument("--max-tokens", type=int, default=96)
    answers.add_argument("--out", default=None, help="also write the results as JSON here")
    steps = commands.add_parser("steps", help="decode and verify steps at each batch (a GPU run's part)")
    steps.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)
    if args.command == "steps":
        print(measure_steps(args.out, run_scale()))
        return
    drafters = {name: DRAFTERS[name] for name in args.drafter or DRAFTERS}
    result = measure(args.model, drafters, args.batch, args.rounds, args.max_tokens)
    for task, by_batch in result["tasks"].items():
        for batch, found in by_batch.items():
            for name in drafters:
                r = found[name]
                print(f"{task}, batch {batch}, {name}: over plain tokens a second, median of "
                      f"{args.rounds} rounds {statistics.median(r['ratios']):.2f} (rounds "
                      f"{min(r['ratios']):.2f}-{max(r['ratios']):.2f}; faster: {r['faster']}), "
                      f"acceptance {r['acceptance'] or 0:.2f}, tokens a step {r['tokens_per_step']:.2f}")
    if args.out:
        with open(args.out, "w") as out:
            json.dump(result, out, indent=1)


if __name__ == "__main__":
    main()

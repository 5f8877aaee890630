"""The configurations a student's code runs under: every stage, with each option
that changes which code runs or when (bucketing, the batch window, slot
reservations, the rescheduling knobs, chunked prefill, the prefill-first policy,
block sizes, preemption, prefix caching, async scheduling, speculative decoding,
and the Triton kernels: fused layer operations, split-KV decodes).

An exercise's check runs the stage with the student's function swapped in under
every configuration here that calls it (``calling``), and compares each run
with the engine's own, step by step. Which configurations call which function
is a fact of the engine, found by running it (``runs.probe``): a test holds each
exercise's list to what the probe finds, so a configuration added here reaches
every exercise whose code it runs.

Each configuration's requests mix the sampling a student's code must honour:
greedy and sampled rows (top-k, top-p, seeded), several eos ids, stop tokens,
ignore_eos set with stop tokens, and outputs cut by max_tokens.
"""
from dataclasses import dataclass

from ...sampling_params import SamplingParams

KV_BYTES = 512                   # the tiny Llama's K and V of one token in fp32: 2 x 2 x 2 x 16 x 4
EOS_IDS = (2, 40, 97, 150, 211)   # several end-of-sequence ids, as Llama 3's generation config has
STOP_IDS = [40, 66, 123, 180]     # one of them also an eos id: "stop" comes first


@dataclass(frozen=True)
class Configuration:
    name: str
    engine: dict                      # LLMEngine's options
    workload: dict                    # synthetic_workload's arguments
    model: str | None = None          # None: the tiny checkpoint; else a shape the simulated executor runs
    shared_prefix: int = 0            # tokens every other prompt copies from the first (prefix caching)
    split_kv: bool = False            # decodes split their keys (as a GPU with 132 processors would)

    @property
    def triton(self) -> bool:
        return self.engine.get("attention_backend") == "triton"


def config(name, engine, model=None, shared_prefix=0, split_kv=False, **workload) -> Configuration:
    workload = dict(dict(num_requests=12, prompt_len=(2, 24), output_len=(1, 16)), **workload)
    return Configuration(name, engine, workload, model, shared_prefix, split_kv)


TRITON, PAGED = dict(attention_backend="triton"), dict(engine="paged", max_num_seqs=6)
SPECULATIVE = {"method": "ngram", "num_speculative_tokens": 3}
# ANCHOR: configurations
CONFIGURATIONS = [
    config("single", dict(engine="single"), num_requests=6),
    config("static", dict(engine="static", max_batch_size=3)),
    config("static, bucketed by length",
           dict(engine="static", max_batch_size=3, bucket_by_length=True),
           output_len=(1, 24)),
    config("dynamic", dict(engine="dynamic", max_batch_size=4, max_wait_ms=20),
           num_requests=16, qps=60.0),
    config("dynamic, bucketed by length",
           dict(engine="dynamic", max_batch_size=3, max_wait_ms=10,
                bucket_by_length=True),
           num_requests=14, qps=150.0),
    config("continuous",
           dict(engine="continuous", max_num_seqs=3, max_num_batched_tokens=48),
           num_requests=16, prompt_len=(4, 40), qps=2000.0),
    # sized so that finished slots leave holes a newcomer fits in
    config("continuous, oracle slots",
           dict(engine="continuous", max_num_seqs=8, kv_reservation="oracle",
                kv_cache_memory_bytes=240 * KV_BYTES),
           num_requests=20, prompt_len=(2, 20), output_len=(1, 40), qps=400.0),
    config("continuous, admitting every 3 steps",
           dict(engine="continuous", max_num_seqs=4, schedule_interval=3,
                waiting_served_ratio=1.5), num_requests=16, qps=300.0),
    config("continuous, chunked prefill",
           dict(engine="continuous", max_num_seqs=4, enable_chunked_prefill=True,
                max_num_batched_tokens=16), prompt_len=(4, 40), qps=500.0),
    config("continuous, prefill first",
           dict(engine="continuous", max_num_seqs=4, scheduling_policy="prefill_first"),
           qps=500.0),
    config("paged, blocks of 1", dict(PAGED, block_size=1, num_blocks=256)),
    config("paged, blocks of 16", dict(PAGED, block_size=16, num_blocks=24)),
    config("paged, preempting", dict(PAGED, block_size=4, num_blocks=20),
           num_requests=16, prompt_len=(4, 24), output_len=(4, 24)),
    # a 16-token chunk of a prompt needs four blocks of 4 in one call
    config("paged, chunked prefill, preempting",
           dict(PAGED, block_size=4, num_blocks=20, enable_chunked_prefill=True,
                max_num_batched_tokens=16),
           num_requests=16, prompt_len=(4, 30), output_len=(4, 24)),
    config("paged, admitting every 3 steps",
           dict(PAGED, max_num_seqs=4, block_size=4, num_blocks=40, schedule_interval=3,
                waiting_served_ratio=1.5), num_requests=16, qps=300.0),
    config("paged, prefix caching",
           dict(PAGED, block_size=4, num_blocks=40, enable_prefix_caching=True),
           shared_prefix=10, qps=400.0),
    config("paged, async scheduling",
           dict(PAGED, block_size=4, num_blocks=20, async_scheduling=True),
           num_requests=16, prompt_len=(4, 24), output_len=(4, 24)),
    # stage 6: prompts of few distinct tokens, so that prompt lookup drafts for every
    # kind of request; blocks of 4 and too few of them, so that rejected drafts give
    # blocks back and requests are preempted between verify steps
    config("paged, speculative (prompt lookup), preempting",
           dict(PAGED, block_size=4, num_blocks=20, speculative_config=SPECULATIVE),
           vocab_size=8, output_len=(4, 24)),
    # prefix caching's blocks, which rejected drafts give back past the published ones
    config("paged, speculative, prefix caching",
           dict(PAGED, block_size=4, num_blocks=40, enable_prefix_caching=True,
                speculative_config=SPECULATIVE),
           shared_prefix=10, qps=400.0, vocab_size=8, output_len=(4, 24)),
    # no model: each step costs what the cost model predicts for Llama 3.2 1B on an
    # H100, and the KV cache is what its memory leaves once the weights are in
    config("paged, simulated on an H100",
           dict(PAGED, executor="simulated", hardware="h100-sxm", max_num_seqs=8,
                block_size=16, gpu_memory_utilization=0.5), model="llama-3.2-1b",
           num_requests=16, prompt_len=(16, 400), output_len=(4, 40), qps=200.0),
    # Triton's kernels, in its interpreter on a CPU: fewer, shorter requests
    config("static, Triton kernels", dict(engine="static", max_batch_size=3, **TRITON),
           num_requests=4, prompt_len=(1, 20), output_len=(2, 6)),
    config("paged, Triton kernels, fused layer ops",
           dict(PAGED, max_num_seqs=4, block_size=4, num_blocks=40, fused_ops=True,
                **TRITON),
           num_requests=4, prompt_len=(3, 20), output_len=(2, 6)),
    # long contexts and few sequences: decodes split their keys into ranges
    config("paged, Triton kernels, split-KV decodes",
           dict(PAGED, max_num_seqs=2, block_size=16, num_blocks=48, **TRITON),
           split_kv=True, num_requests=2, prompt_len=(40, 60), output_len=(3, 6)),
]
# ANCHOR_END: configurations
BY_NAME = {c.name: c for c in CONFIGURATIONS}


def sampling(i: int, max_tokens: int) -> SamplingParams:
    """Request i's sampling: four kinds in turn, so every configuration mixes them."""
    kind = i % 4
    if kind == 0:
        return SamplingParams(max_tokens=max_tokens, ignore_eos=True)           # greedy, to the end
    if kind == 1:
        return SamplingParams(max_tokens=max_tokens, stop_token_ids=STOP_IDS)   # greedy, stops
    if kind == 2:
        return SamplingParams(max_tokens=max_tokens, temperature=1.0, top_p=0.6, seed=i,
                              ignore_eos=True, stop_token_ids=STOP_IDS)
    return SamplingParams(max_tokens=max_tokens, temperature=0.8, top_k=50, top_p=0.9)


def prompts(workload, shared_prefix: int) -> list:
    """The workload's prompts; with a shared prefix, every other one begins with the
    first prompt's opening tokens (and every fourth repeats it whole)."""
    first = workload.prompts[0]
    out = []
    for i, prompt in enumerate(workload.prompts):
        if shared_prefix and i % 4 == 3:
            prompt = list(first)
        elif shared_prefix and i % 2:
            prompt = first[:shared_prefix] + prompt
        out.append(prompt)
    return out


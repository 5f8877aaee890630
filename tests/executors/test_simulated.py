"""The simulated executor: the engine's own stages on a cost model's clock.

Steps do not depend on the cost model: for the same lengths, every stage takes
the same steps with the same batches and the same KV accounting whether the
model runs or not. Only the times differ, and those are the cost model's."""
import dataclasses

import pytest
import torch

from minicb import LLM, LLMEngine, SamplingParams
from minicb.costmodel import HARDWARE, MODEL_SHAPES, OPT_13B, kv_budget, step_seconds
from minicb.executors.simulated import split_sequences
from minicb.tools.bench.driver import replay
from minicb.tools.bench.workload import preset_workload

from ..conftest import MAX_TOKENS, PROMPTS

# An H100 whose model runs in fp32, as the real tiny model here does: the same KV
# budget in bytes then holds the same tokens in both engines.
H100_FP32 = dataclasses.replace(HARDWARE["h100-sxm"], dtype="float32")
TINY_KV_BYTES = MODEL_SHAPES["tiny-llama"].kv_bytes_per_token(4)

SETUPS = {
    "single": dict(engine="single"),
    "static": dict(engine="static", max_batch_size=2),
    "dynamic": dict(engine="dynamic", max_batch_size=2, max_wait_ms=5),
    "continuous": dict(engine="continuous", max_num_seqs=3),
    # Slots of each request's own length in 60 tokens: holes between them.
    "continuous, oracle slots": dict(engine="continuous", max_num_seqs=4, kv_reservation="oracle",
                                     kv_cache_memory_bytes=60 * TINY_KV_BYTES, hardware=H100_FP32),
    "paged, preempting": dict(engine="paged", max_num_seqs=4, block_size=4, num_blocks=12),
    "paged, chunked": dict(engine="paged", max_num_seqs=4, block_size=4, num_blocks=32,
                           enable_chunked_prefill=True, max_num_batched_tokens=8),
    "paged, prefix caching": dict(engine="paged", max_num_seqs=4, block_size=4, num_blocks=32,
                                  enable_prefix_caching=True),
    "paged, async": dict(engine="paged", max_num_seqs=4, block_size=4, num_blocks=32,
                         async_scheduling=True),
}


def the_steps(run):
    """Every step's kind, rows, tokens and KV accounting, each request named by
    its place among the run's requests (ids differ from engine to engine)."""
    number = {}
    for step in run.steps:
        for rid in step.rows:
            number.setdefault(rid, len(number))
    name = lambda rid: None if rid is None else number.setdefault(rid, len(number))  # noqa: E731
    return [(s.kind, [name(r) for r in s.rows], s.num_tokens, s.kv_reserved, s.kv_used,
             [(name(r), cached, held) for r, cached, held in s.kv_held]) for s in run.steps]


@pytest.mark.parametrize("name", SETUPS)
def test_the_simulated_engine_takes_the_real_engines_steps(llama, name):
    prompts = PROMPTS + [PROMPTS[2][:20] + [7, 7]]         # a shared prefix, for prefix caching
    params = [SamplingParams(max_tokens=n, ignore_eos=True) for n in MAX_TOKENS + [4]]
    real = LLM(llama, device="cpu", **SETUPS[name])
    simulated = LLM("tiny-llama", executor="simulated", **SETUPS[name])
    outputs = {"real": real.generate(prompts, params), "simulated": simulated.generate(prompts, params)}
    assert the_steps(simulated.last_run) == the_steps(real.last_run)
    assert [len(o.output_token_ids) for o in outputs["simulated"]] == MAX_TOKENS + [4]
    if name == "paged, preempting":
        assert simulated.last_run.num_preemptions == real.last_run.num_preemptions > 0


def test_each_step_takes_what_the_cost_model_says():
    llm = LLM("llama-3.1-8b", engine="paged", executor="simulated", hardware="a100-80gb")
    llm.generate([[3] * 100, [4] * 50], SamplingParams(max_tokens=3))
    hw, shape = HARDWARE["a100-80gb"], MODEL_SHAPES["llama-3.1-8b"]
    prefill, decode = llm.last_run.steps[:2]
    assert prefill.forward_time == pytest.approx(step_seconds(hw, shape, 2, [(100, 100), (50, 50)], 2))
    assert decode.forward_time == pytest.approx(step_seconds(hw, shape, 2, [(1, 101), (1, 51)], 2))
    # The host does its work in no virtual time: a step is its forward pass.
    for step in llm.last_run.steps:
        assert step.host_time == 0 and step.duration == pytest.approx(step.forward_time)
    assert llm.last_run.wall_time == pytest.approx(sum(s.duration for s in llm.last_run.steps))


def test_the_kv_cache_is_what_the_simulated_gpu_leaves_beside_the_weights():
    engine = LLMEngine("opt-13b", engine="paged", executor="simulated", hardware="a100-40gb")
    per_block = 16 * OPT_13B.kv_bytes_per_token(2)
    assert engine.stage.num_blocks == int(kv_budget(HARDWARE["a100-40gb"], OPT_13B, 2, 0.9) // per_block)


def test_poisson_arrivals_are_replayed_in_virtual_time():
    workload = preset_workload("anyscale", num_requests=40, cap=64, qps=4.0, seed=1)
    engine = LLMEngine("llama-3.1-8b", engine="paged", executor="simulated")
    run = replay(engine, workload)
    # 40 arrivals at 4 a second take about ten seconds of the simulated GPU's time,
    # while this process spends far less.
    assert run.wall_time > max(workload.arrival_times)
    assert all(m.ttft > 0 for m in run.request_metrics)


def test_bad_simulation_settings_are_refused_by_name():
    with pytest.raises(ValueError, match="'gpt-5'"):
        LLM("gpt-5", executor="simulated")
    with pytest.raises(ValueError, match="'h900'"):
        LLM("llama-3.1-8b", executor="simulated", hardware="h900")
    with pytest.raises(ValueError, match="'virtual'"):
        LLM("llama-3.1-8b", executor="virtual")
    llm = LLM("llama-3.1-8b", executor="simulated")
    with pytest.raises(ValueError, match="give its prompt as token ids"):
        llm.generate("Hello")


def test_a_profile_names_the_dtype_its_model_runs_in(monkeypatch):
    fp32 = dataclasses.replace(HARDWARE["a100-40gb"], name="A100 in fp32", dtype="float32")
    monkeypatch.setitem(HARDWARE, "a100-fp32", fp32)
    engines = {gpu: LLMEngine("llama-3.1-8b", engine="paged", executor="simulated", hardware=gpu)
               for gpu in ("a100-40gb", "a100-fp32")}
    assert engines["a100-fp32"].executor.dtype == torch.float32
    # Four bytes a value: twice the weights, twice the K/V a token, far fewer blocks.
    shape = MODEL_SHAPES["llama-3.1-8b"]
    assert engines["a100-fp32"].stage.num_blocks == \
        int(kv_budget(fp32, shape, 4, 0.9) // (16 * shape.kv_bytes_per_token(4)))
    assert engines["a100-fp32"].stage.num_blocks < engines["a100-40gb"].stage.num_blocks / 2


def test_a_steps_sequences_are_read_from_its_positions_and_sampled_rows():
    # A 3-token prompt, a decode at position 5, a 2-token chunk ending at position 8.
    assert split_sequences([0, 1, 2, 5, 7, 8], [2, 3, 5]) == [(3, 3), (1, 6), (2, 9)]
    # Two decodes whose positions happen to follow each other are two sequences.
    assert split_sequences([10, 11], [0, 1]) == [(1, 11), (1, 12)]
    # A chunk that does not sample yet, then another request's prompt.
    assert split_sequences([0, 1, 2, 3, 0, 1], [5]) == [(4, 4), (2, 2)]


def test_a_verify_step_is_priced_as_its_sequences_replayed_from_a_graph(monkeypatch):
    """Stage 6 on a simulated GPU: a verify step samples every row of a sequence, so its
    sequences are read from its boundaries (from the sampled rows, each row would be a
    sequence of its own), and it replays a graph as a decode step does: the profile's
    prompt_step_overhead is not paid (planted: splitting on sampled rows fails)."""
    from minicb.executors import simulated

    priced, price = [], simulated.step_seconds
    monkeypatch.setattr(simulated, "step_seconds", lambda profile, shape, size, sequences, sampled: (
        priced.append((profile.prompt_step_overhead, sequences, sampled)),
        price(profile, shape, size, sequences, sampled))[1])
    llm = LLM("llama-3.2-1b", engine="paged", executor="simulated", hardware="h200-measured",
              speculative_config={"num_speculative_tokens": 3})
    llm.generate([[1, 2, 3] * 3] * 2, SamplingParams(max_tokens=12, ignore_eos=True))
    verify = [(overhead, seqs) for overhead, seqs, sampled in priced if sampled > len(seqs)]
    assert verify and all(overhead == 0 and len(seqs) == 2 and all(1 < n <= 4 for n, _ in seqs)
                          for overhead, seqs in verify)

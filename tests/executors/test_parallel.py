"""Tensor parallelism on a CPU: two gloo workers give the tokens one process
gives, for every architecture, both stages that support it, both attention
backends, aborts and preemption; bad sizes fail before a process starts, and
no worker outlives its engine."""
import gc
import multiprocessing

import pytest

from minicb import LLM, LLMEngine, SamplingParams

from ..conftest import MAX_TOKENS, PROMPTS

OPTIONS = dict(max_model_len=64, max_num_seqs=4, block_size=4)
SMOLLM2_HEADS = (9, 3)           # SmolLM2-135M's query heads and KV heads: 3 ranks divide both


def greedy(path, **options):
    """The tokens, and with tensor parallelism, rank 0's seconds in forward passes and collectives."""
    llm = LLM(path, **{**OPTIONS, **options})
    params = [SamplingParams(max_tokens=n, ignore_eos=True) for n in MAX_TOKENS]
    try:
        tokens = [o.output_token_ids for o in llm.generate(PROMPTS, params)]
        parallel = options.get("tensor_parallel_size", 1) > 1
        return tokens, llm.llm_engine.executor.communication() if parallel else None
    finally:
        llm.close()


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["llama", "qwen2", "qwen3"])
def test_two_ranks_give_one_rank_s_tokens(checkpoints, arch):
    """Qwen2's tiny model has one KV head: both ranks keep a copy of it."""
    expected, _ = greedy(checkpoints[arch], engine="paged")
    got, split = greedy(checkpoints[arch], engine="paged", tensor_parallel_size=2)
    assert got == expected
    assert 0 < split["collective_s"] < split["model_s"], split


@pytest.mark.slow
@pytest.mark.parametrize("engine,backend", [("continuous", "sdpa"), ("paged", "triton"), ("continuous", "triton")])
def test_every_stage_and_backend_that_supports_it(llama, engine, backend):
    expected, _ = greedy(llama, engine=engine, attention_backend=backend)
    got, _ = greedy(llama, engine=engine, attention_backend=backend, tensor_parallel_size=2)
    assert got == expected


@pytest.mark.slow
@pytest.mark.parametrize("options", [dict(fused_ops=True), dict(fused_ops=True, async_scheduling=True)],
                         ids=["fused", "fused+async"])
def test_the_fast_paths_split_too(checkpoints, options):
    """Each rank cuts its q, k and v (and gate and up) before joining them, and runs
    the fused kernels; Qwen2's tiny model adds a bias to the joined q, k and v and
    has one KV head, which both ranks keep."""
    for arch in ("llama", "qwen2"):
        expected, _ = greedy(checkpoints[arch], engine="paged", attention_backend="triton")
        got, _ = greedy(checkpoints[arch], engine="paged", attention_backend="triton",
                        tensor_parallel_size=2, **options)
        assert got == expected, arch


@pytest.mark.slow
def test_preemption_and_aborts_online(llama):
    """Few blocks force preemption; an abort frees its blocks in every rank's cache alike."""
    def run(**options):
        engine = LLMEngine(llama, engine="paged", **{**OPTIONS, "num_blocks": 12, **options})
        ids = [engine.add_request(p, SamplingParams(max_tokens=12, ignore_eos=True)) for p in PROMPTS]
        tokens, steps = {}, 0
        while engine.has_unfinished_requests():
            for out in engine.step():
                tokens[out.request_id] = out.output_token_ids
            steps += 1
            if steps == 3:
                engine.abort(ids[1])
        stage = engine.stage
        assert len(stage.kv.free_blocks) == stage.kv.num_blocks
        engine.close()
        return [tokens.get(i) for i in ids if i != ids[1]], stage.scheduler.num_preemptions

    expected, preempted = run()
    got, preempted_too = run(tensor_parallel_size=2)
    assert preempted > 0 and preempted_too == preempted
    assert got == expected


@pytest.mark.parametrize("options,message", [
    (dict(engine="paged", tensor_parallel_size=3), "must divide the model's 4 attention heads"),
    (dict(engine="static", tensor_parallel_size=2), "needs engine 'continuous' or 'paged'"),
    (dict(engine="paged", tensor_parallel_size=0), "tensor_parallel_size must be an integer >= 1"),
    (dict(engine="paged", tensor_parallel_size=2, cuda_graphs=True),
     "cuda_graphs=True does not work with tensor_parallel_size=2: the model runs in the ranks' processes"),
])
def test_bad_sizes_fail_before_any_process_starts(llama, options, message):
    with pytest.raises(ValueError, match=message):
        LLMEngine(llama, **{**OPTIONS, **options})
    assert not multiprocessing.active_children()


def test_more_ranks_than_gpus_is_refused(monkeypatch):
    """Checked on a CPU by pretending to have one GPU."""
    import torch

    from minicb import EngineConfig

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(ValueError, match="tensor_parallel_size=2 needs 2 GPUs, this machine has 1"):
        EngineConfig(engine="paged", device="cuda", tensor_parallel_size=2)


@pytest.mark.slow
def test_no_worker_outlives_its_engine(llama):
    closed = LLMEngine(llama, engine="paged", tensor_parallel_size=2, **OPTIONS)
    workers = closed.executor.workers
    closed.close()
    assert not any(w.is_alive() for w in workers)
    dropped = LLMEngine(llama, engine="continuous", tensor_parallel_size=2, **OPTIONS)
    workers = dropped.executor.workers
    assert all(w.is_alive() for w in workers)
    del dropped
    gc.collect()
    assert not any(w.is_alive() for w in workers)
    assert not multiprocessing.active_children()


@pytest.mark.slow
def test_a_call_that_fails_part_way_stops_the_workers(llama):
    """A worker's error, or an interrupt between a call and its answers, leaves the
    ranks out of step: the caller gets the error, every worker stops, and the
    engine refuses what follows instead of reading stale answers."""
    failing = LLMEngine(llama, engine="paged", tensor_parallel_size=2, **OPTIONS)
    failing.add_request([3, 4, 5], SamplingParams(max_tokens=4))
    failing.step()
    with pytest.raises(TypeError):           # a cache whose shape is not a number, on each rank
        failing.executor.call("new_kv_cache", 99, ("not a size",))
    interrupted = LLMEngine(llama, engine="paged", tensor_parallel_size=2, **OPTIONS)
    interrupted.add_request([3, 4, 5], SamplingParams(max_tokens=4))

    def ctrl_c():
        raise KeyboardInterrupt

    interrupted.executor.answers = ctrl_c       # Ctrl-C after the call went out
    with pytest.raises(KeyboardInterrupt):
        interrupted.step()
    for engine in (failing, interrupted):
        assert not any(w.is_alive() for w in engine.executor.workers)
        with pytest.raises(RuntimeError, match="the engine is closed"):
            engine.executor.communication()
    assert not multiprocessing.active_children()


def test_a_short_last_vocabulary_share_is_padded():
    """9 tokens on 4 ranks: shares of 3, the last one empty but the same shape."""
    import torch

    from minicb.executors.parallel import vocab_share

    weight = torch.arange(18.0).reshape(9, 2)
    shares = [vocab_share(weight, rank, 4) for rank in range(4)]
    assert [(start, end) for start, end, _ in shares] == [(0, 3), (3, 6), (6, 9), (9, 9)]
    assert all(rows.shape == (3, 2) for _, _, rows in shares)
    assert torch.equal(torch.cat([rows for _, _, rows in shares])[:9], weight)
    assert not shares[3][2].any()


@pytest.mark.slow
def test_the_collectives_carry_what_collective_bytes_computes(llama):
    from minicb.executors.parallel import collective_bytes

    engine = LLMEngine(llama, engine="paged", tensor_parallel_size=2, **OPTIONS)
    try:
        before = engine.executor.communication()
        engine.add_request(list(range(3, 40)), SamplingParams(max_tokens=1))   # one step: 37 tokens, 1 sampled
        engine.step()
        after = engine.executor.communication()
    finally:
        engine.close()
    carried = {kind: after[f"{kind}_bytes"] - before[f"{kind}_bytes"] for kind in ("all_reduce", "all_gather")}
    config = engine.executor.config            # one rank's heads; hidden and vocabulary are whole
    assert carried == collective_bytes(config, num_tokens=37, num_sampled=1, n=2, bytes_per_value=4)


@pytest.mark.slow
def test_the_real_model_splits_three_ways_and_refuses_two(smollm2):
    """SmolLM2-135M has 9 query heads and 3 KV heads: 3 ranks divide them, 2 do not."""
    with pytest.raises(ValueError, match=f"must divide the model's {SMOLLM2_HEADS[0]} attention heads"):
        LLMEngine(smollm2, engine="paged", tensor_parallel_size=2)

    def answer(**options):
        llm = LLM(smollm2, engine="paged", max_model_len=128, **options)
        try:
            return llm.generate(["The capital of France is"], SamplingParams(max_tokens=8))[0].text
        finally:
            llm.close()

    expected = answer()
    assert "Paris" in expected and answer(tensor_parallel_size=SMOLLM2_HEADS[1]) == expected


def test_chapter_9_volumes_for_the_8b_shape():
    """The table in chapter 10: per rank, bf16, from collective_bytes."""
    from types import SimpleNamespace

    from minicb.shapes import SHAPES
    from minicb.executors.parallel import collective_bytes

    eight_b = SimpleNamespace(**SHAPES["llama-3.1-8b"])
    mb = lambda n, tokens, sampled: {k: round(v / 1e6, 1) for k, v in                  # noqa: E731
                                     collective_bytes(eight_b, tokens, sampled, n, 2).items()}
    assert mb(2, 64, 64) == dict(all_reduce=34.1, all_gather=8.2)
    assert mb(2, 2048, 1) == dict(all_reduce=1090.5, all_gather=0.1)
    assert mb(8, 64, 64) == dict(all_reduce=34.1, all_gather=2.1)

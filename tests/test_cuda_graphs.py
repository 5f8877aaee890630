"""Decode steps through the CUDA-graph executor's padded static buffers give
the same tokens as plain decode steps. On a CPU the executor calls the model on
those buffers without capturing (capture=False): everything but the capture."""
from types import SimpleNamespace

import pytest
import torch

from minicb import LLM, SamplingParams
from minicb.executors.cuda_graphs import GraphExecutor, bucket_sizes
from minicb.config import EngineConfig

from .conftest import PROMPTS

PROMPTS_7 = PROMPTS + [[11, 12], list(range(60, 80))]
MAX_TOKENS_7 = [5, 1, 8, 3, 6, 9, 2]


def use_decode_graphs(llm_engine):
    """Swap in the executor a GPU builds with cuda_graphs=True; on a CPU it pads
    the same buffers without capturing. Returns that executor."""
    stage = llm_engine.stage
    executor = GraphExecutor(stage.executor.model, stage.config, capture=False)
    # The stage's executor is timed for its step log (minicb.observer): swap what it times.
    llm_engine.executor = stage.executor.executor = executor
    return executor


def test_bucket_sizes_cover_every_batch():
    assert bucket_sizes(1) == [1]
    assert bucket_sizes(6) == [1, 2, 4, 6]
    assert bucket_sizes(16) == [1, 2, 4, 8, 16]
    assert bucket_sizes(40) == [1, 2, 4, 8, 16, 32, 40]


# Stage 4's packed steps read each request's slot (seq_starts), stage 5's its block table.
ENGINES = {"continuous": dict(engine="continuous", max_model_len=64),
           "paged": dict(engine="paged", block_size=4)}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("backend", ["sdpa", "reference", "triton"])
def test_padded_decode_steps_match_plain_ones(llama, backend, engine):
    params = [SamplingParams(max_tokens=n, ignore_eos=True) for n in MAX_TOKENS_7]
    options = dict(ENGINES[engine], attention_backend=backend, max_num_seqs=6)
    reference = LLM(llama, **options)
    plain = reference.generate(PROMPTS_7, params)
    llm = LLM(llama, **options)
    runner = use_decode_graphs(llm.llm_engine)
    buckets, forward = [], runner.forward
    runner.forward = lambda bucket, attn: (buckets.append(bucket), forward(bucket, attn))[1]
    padded = llm.generate(PROMPTS_7, params)
    assert [o.output_token_ids for o in padded] == [o.output_token_ids for o in plain]
    # Padding rows wrote no K/V: both caches hold the same values, block for block.
    torch.testing.assert_close(llm.stage.k_cache, reference.stage.k_cache, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(llm.stage.v_cache, reference.stage.v_cache, atol=1e-5, rtol=1e-5)
    decode_sizes = [s.num_tokens for s in llm.last_run.steps if s.kind == "decode"]
    assert len(buckets) == len(decode_sizes) > 0                  # every decode step went through it
    assert any(b > n for b, n in zip(buckets, decode_sizes))      # ...and some carried padding rows
    assert all(b == min(x for x in runner.buckets if x >= n) for b, n in zip(buckets, decode_sizes))


def test_cuda_graphs_need_cuda_and_triton():
    if torch.cuda.is_available():
        with pytest.raises(ValueError, match="attention_backend 'sdpa'"):
            EngineConfig(engine="paged", cuda_graphs=True, attention_backend="sdpa")
    else:
        with pytest.raises(ValueError, match="device 'cpu'"):
            EngineConfig(engine="paged", cuda_graphs=True)
        assert EngineConfig(engine="paged").cuda_graphs is False


@pytest.mark.parametrize("engine", ENGINES)
def test_every_bucket_is_captured_at_the_first_decode_step_largest_first(llama, monkeypatch, engine):
    """Capturing needs CUDA: here record stands in for it, and each "graph" replays
    by running the model on the static buffers, as a captured one would."""
    recorded, replayed = [], []

    def record(self, bucket, attn):
        recorded.append(bucket)

        def replay():
            replayed.append(bucket)
            self.outputs[bucket] = self.forward(bucket, attn)
        self.graphs[bucket] = SimpleNamespace(replay=replay)

    monkeypatch.setattr(GraphExecutor, "record", record)
    params = SamplingParams(max_tokens=4, ignore_eos=True)
    options = dict(ENGINES[engine], max_num_seqs=40)
    expected = LLM(llama, **options).generate(PROMPTS, params)
    llm = LLM(llama, **options)
    use_decode_graphs(llm.llm_engine).capture = True
    llm.generate([[5, 6, 7]], SamplingParams(max_tokens=1))   # a prefill alone captures nothing
    assert recorded == []
    outputs = llm.generate(PROMPTS, params)
    assert recorded == [40, 32, 16, 8, 4, 2, 1]       # every bucket, at the first decode step
    assert [o.output_token_ids for o in outputs] == [o.output_token_ids for o in expected]
    decode_steps = sum(s.kind == "decode" for s in llm.last_run.steps)
    assert len(replayed) == decode_steps > 0             # every decode step was a replay
    again = llm.generate(PROMPTS, params)
    assert recorded == [40, 32, 16, 8, 4, 2, 1] and len(replayed) == 2 * decode_steps   # captured once
    assert [o.output_token_ids for o in again] == [o.output_token_ids for o in expected]

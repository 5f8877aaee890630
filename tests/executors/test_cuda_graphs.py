"""Decode steps through the CUDA-graph executor's padded static buffers give
the same tokens as plain decode steps. On a CPU the executor calls the model on
those buffers without capturing (capture=False): everything but the capture."""
from types import SimpleNamespace

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from minicb import LLM, SamplingParams
from minicb.executors import describe, make_executor
from minicb.executors.cuda_graphs import PROMPT_BUCKETS, GraphExecutor, bucket_sizes, prompt_buckets
from minicb.config import EngineConfig
from minicb.stages import engine_class

from ..conftest import PROMPTS

PROMPTS_7 = PROMPTS + [[11, 12], list(range(60, 80))]
MAX_TOKENS_7 = [5, 1, 8, 3, 6, 9, 2]


def use_decode_graphs(llm_engine):
    """Swap in the executor a GPU builds with cuda_graphs=True; on a CPU it pads
    the same buffers without capturing. Returns that executor."""
    stage = llm_engine.stage
    executor = GraphExecutor(llm_engine.executor.model, stage.config, type(stage).sequences_per_step(stage.config),
                             capture=False)
    # The stage's executor is timed for its step log (minicb.observer): swap what it times.
    llm_engine.executor = stage.executor.executor = executor
    return executor


def test_bucket_sizes_cover_every_batch():
    assert bucket_sizes(1) == [1]
    assert bucket_sizes(6) == [1, 2, 4, 6]
    assert bucket_sizes(16) == [1, 2, 4, 8, 16]
    assert bucket_sizes(40) == [1, 2, 4, 8, 16, 32, 40]


# Stage 1 runs one sequence (its length), stages 2-3 pad a batch (each row's length and
# padding), stage 4's packed steps read each request's slot (seq_starts), stage 5's its
# block table.
ENGINES = {"single": dict(engine="single", max_model_len=64),
           "static": dict(engine="static", max_model_len=64),
           "dynamic": dict(engine="dynamic", max_model_len=64, max_wait_ms=0),
           "continuous": dict(engine="continuous", max_model_len=64),
           "paged": dict(engine="paged", block_size=4)}
PACKED = ("continuous", "paged")


def one_token_each(step) -> bool:
    """A decode step, or stages 1-3's prefill of one-token prompts: what graphs replay."""
    return step.kind == "decode" or step.num_tokens == len(step.rows)


def batch_size(engine, n):
    """The option that sets how many sequences a step holds (stage 1: always one)."""
    return {"max_num_seqs" if engine in PACKED else "max_batch_size": n}


# Stage 3 runs stage 2's batches, and stage 1 its kernel's tile: in the interpreter (slow),
# the Triton backend runs stages 2, 4 and 5.
@pytest.mark.parametrize("engine,backend", [(e, b) for e in ENGINES for b in ("sdpa", "reference", "triton")
                                            if b != "triton" or e not in ("single", "dynamic")])
def test_padded_decode_steps_match_plain_ones(llama, backend, engine):
    params = [SamplingParams(max_tokens=n, ignore_eos=True) for n in MAX_TOKENS_7]
    # 7 requests: stage 4-5 steps of up to 6; batches of 4 and 3 (both in the bucket of 4)
    options = dict(ENGINES[engine], attention_backend=backend,
                   **batch_size(engine, 6 if engine in PACKED else 4))
    reference = LLM(llama, **options, cuda_graphs=False)
    plain = reference.generate(PROMPTS_7, params)
    llm = LLM(llama, **options)
    runner = use_decode_graphs(llm.llm_engine)
    buckets, forward = [], runner.forward
    runner.forward = lambda shape, attn: (buckets.append(shape.sequences), forward(shape, attn))[1]
    padded = llm.generate(PROMPTS_7, params)
    assert [o.output_token_ids for o in padded] == [o.output_token_ids for o in plain]
    if engine in PACKED:
        # Padding rows wrote no K/V: both caches hold the same values, block for block.
        torch.testing.assert_close(llm.stage.k_cache, reference.stage.k_cache, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(llm.stage.v_cache, reference.stage.v_cache, atol=1e-5, rtol=1e-5)
    else:
        # Every batch's K/V was a view of the executor's one buffer.
        rows = 1 if engine == "single" else 4
        assert runner.padded_kv is not None and runner.padded_kv[0].shape[1] == rows
    # a decode step, or a prefill of one-token prompts: one token per sequence
    decode_sizes = [s.num_tokens for s in llm.last_run.steps if one_token_each(s)]
    assert len(buckets) == len(decode_sizes) > 0                  # every such step went through it
    if engine != "single":                                        # ...and some carried padding rows
        assert any(b > n for b, n in zip(buckets, decode_sizes))
    assert all(b == min(x for x in runner.buckets if x >= n) for b, n in zip(buckets, decode_sizes))


@pytest.mark.parametrize("chunked", [False, True], ids=["mixed", "chunked"])
def test_padded_prompt_steps_over_listed_tiles_match_plain_ones(llama, chunked):
    """Stage 5 with prompt_graphs: every step that carries prompt tokens goes through
    buffers padded to 64 (32) tokens and 6 sequences, its attention over listed query
    tiles (paged_attention_tiles); the tokens and the K/V equal plain steps'."""
    params = [SamplingParams(max_tokens=n, ignore_eos=True) for n in MAX_TOKENS_7]
    options = dict(engine="paged", block_size=4, max_num_seqs=6, attention_backend="triton",
                   max_num_batched_tokens=64 if not chunked else 16, enable_chunked_prefill=chunked)
    reference = LLM(llama, **options, cuda_graphs=False)
    plain = reference.generate(PROMPTS_7, params)
    llm = LLM(llama, **options)
    llm.stage.config.prompt_graphs = True          # (a CPU config refuses it: no graphs)
    runner = use_decode_graphs(llm.llm_engine)
    assert runner.prompt_buckets == [64]             # the smallest: it holds the whole budget
    if chunked:                   # (the buckets start at 64: here one of 32, padding chunks of 16)
        runner.prompt_buckets = [32]
    buckets, steps, forward, execute = [], [], runner.forward, runner.execute

    def spied(shape, attn):
        if shape.max_query_len > 1:                 # a prompt step's shape
            buckets.append(shape.tokens)
            assert shape.sequences == 6             # every sequence row
        return forward(shape, attn)
    runner.forward = spied
    # (each step's tokens, and its longest query: more than one is a step that carries a prompt)
    runner.execute = lambda ids, *rest: (steps.append((len(ids), rest[1].max_query_len)), execute(ids, *rest))[1]
    padded = llm.generate(PROMPTS_7, params)
    assert [o.output_token_ids for o in padded] == [o.output_token_ids for o in plain]
    torch.testing.assert_close(llm.stage.k_cache, reference.stage.k_cache, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(llm.stage.v_cache, reference.stage.v_cache, atol=1e-5, rtol=1e-5)
    prompt_steps = [n for n, longest in steps if longest > 1]
    assert len(buckets) == len(prompt_steps) > 1                  # every such step went through it
    assert all(n <= b for b, n in zip(buckets, prompt_steps)) and any(n < b for b, n in zip(buckets, prompt_steps))
    if chunked:
        assert any(s.kind == "mixed" for s in llm.last_run.steps)   # chunks beside decodes


def test_prompt_buckets_reach_a_step_of_the_whole_token_budget():
    def buckets(budget):
        return prompt_buckets(EngineConfig(engine="paged", executor="simulated", prompt_graphs=True,
                                           max_num_batched_tokens=budget))
    assert buckets(256) == [64, 128, 256]
    assert buckets(384) == [64, 128, 256, 512]      # a 384-token chunk step replays too
    assert buckets(16) == [64]
    assert buckets(5000) == list(PROMPT_BUCKETS)    # a larger step runs eagerly
    assert prompt_buckets(EngineConfig(engine="paged", max_num_batched_tokens=384)) == []


def test_prompt_graphs_need_the_paged_stage_and_graphs():
    with pytest.raises(ValueError, match="prompt_graphs=True needs engine 'paged' with cuda_graphs=True"):
        EngineConfig(engine="continuous", prompt_graphs=True)
    with pytest.raises(ValueError, match="cuda_graphs=False"):
        EngineConfig(engine="paged", prompt_graphs=True, cuda_graphs=False)


def test_the_simulated_executor_prices_prompt_graphs_as_steps_without_the_launch_cost():
    """Simulated, prompt_graphs=True prices a step that carries a prompt without
    prompt_step_overhead, as the real executor replays it, up to its largest token
    bucket (2,048); a larger step, launched eagerly there, keeps the cost."""
    from minicb import LLMEngine
    from minicb.costmodel import HARDWARE
    from minicb.tools.bench.driver import replay
    from minicb.tools.bench.workload import preset_workload
    workload = preset_workload("reading", num_requests=8, seed=2)
    options = dict(engine="paged", executor="simulated", hardware="h200-measured", max_num_batched_tokens=2600)
    launched = replay(LLMEngine("llama-3.2-1b", **options), workload)
    graphs = replay(LLMEngine("llama-3.2-1b", **options, prompt_graphs=True), workload)
    assert [s.num_tokens for s in graphs.steps] == [s.num_tokens for s in launched.steps]
    saved = [a.duration - b.duration for a, b in zip(launched.steps, graphs.steps)]
    overhead = HARDWARE["h200-measured"].prompt_step_overhead
    replayed = [s.kind != "decode" and s.num_tokens <= 2048 for s in launched.steps]
    assert all(abs(d - (overhead if r else 0)) < 1e-9 for d, r in zip(saved, replayed))
    assert any(replayed) and any(s.num_tokens > 2048 for s in launched.steps) and overhead > 0
    # with the token budget left to its default, known once the model is: every bucket
    engine = LLMEngine("llama-3.2-1b", engine="paged", executor="simulated", hardware="h200-measured",
                       prompt_graphs=True)
    assert engine.stage.executor.executor.graph_tokens == 2048


def test_cuda_graphs_need_cuda_and_triton():
    if torch.cuda.is_available():
        with pytest.raises(ValueError, match="attention_backend 'sdpa'"):
            EngineConfig(engine="paged", cuda_graphs=True, attention_backend="sdpa")
    else:
        with pytest.raises(ValueError, match="device 'cpu'"):
            EngineConfig(engine="paged", cuda_graphs=True)
        assert EngineConfig(engine="paged").cuda_graphs is False


def stand_in_capture(executor):
    """Capturing needs CUDA: here a stand-in captures, on this executor only (on a
    GPU the reference engines capture real graphs of their own), and each "graph"
    replays by running the model on the static buffers into the output it
    captured, as a captured one would. Returns the lists of the token rows of the
    shapes captured and replayed."""
    recorded, replayed = [], []

    def capture(run):
        output = run()
        recorded.append(output.shape[0])

        def replay():
            replayed.append(output.shape[0])
            with torch.inference_mode():
                output.copy_(run())
        return SimpleNamespace(replay=replay), output

    executor.captured, executor.capture = capture, True
    return recorded, replayed


@pytest.mark.parametrize("engine", ENGINES)
def test_every_bucket_is_captured_at_the_first_decode_step_largest_first(llama, engine):
    params = SamplingParams(max_tokens=4, ignore_eos=True)
    options = dict(ENGINES[engine], **batch_size(engine, 40))
    expected = LLM(llama, **options, cuda_graphs=False).generate(PROMPTS, params)
    llm = LLM(llama, **options)
    recorded, replayed = stand_in_capture(use_decode_graphs(llm.llm_engine))
    llm.generate([[5, 6, 7]], SamplingParams(max_tokens=1))   # a prefill alone captures nothing
    assert recorded == []
    outputs = llm.generate(PROMPTS, params)
    buckets = [1] if engine == "single" else [40, 32, 16, 8, 4, 2, 1]
    assert recorded == buckets                        # every bucket, at the first decode step
    assert [o.output_token_ids for o in outputs] == [o.output_token_ids for o in expected]
    decode_steps = sum(map(one_token_each, llm.last_run.steps))
    assert len(replayed) == decode_steps > 0             # every decode step was a replay
    again = llm.generate(PROMPTS, params)
    assert recorded == buckets and len(replayed) == 2 * decode_steps   # captured once
    assert [o.output_token_ids for o in again] == [o.output_token_ids for o in expected]


# Stage 5 with prompt_graphs, its buckets 64 and 128: a 90-token prompt first (the first
# step fills the bucket of 128, later ones 64), then PROMPTS_7.
PROMPT_STEPS = dict(engine="paged", block_size=4, max_num_seqs=6, attention_backend="triton",
                    max_num_batched_tokens=128)
PROMPT_STEPS_RUN = dict(prompts=[list(range(100, 190))] + PROMPTS_7,
                        params=[SamplingParams(max_tokens=n, ignore_eos=True) for n in [4] + MAX_TOKENS_7])


def plain_run(llama):
    """The outputs of PROMPT_STEPS_RUN on the plain executor."""
    return LLM(llama, **PROMPT_STEPS, cuda_graphs=False).generate(PROMPT_STEPS_RUN["prompts"],
                                                                   PROMPT_STEPS_RUN["params"])


def with_prompt_graphs(llama, **options):
    """An LLM of PROMPT_STEPS with prompt_graphs on the graph executor (which, on a
    CPU, pads its buffers but captures nothing), and that executor."""
    llm = LLM(llama, **PROMPT_STEPS, **options)
    llm.stage.config.prompt_graphs = True          # (a CPU config refuses it: no graphs)
    return llm, use_decode_graphs(llm.llm_engine)


def prompt_shapes(executor) -> list[int]:
    """The token buckets of the prompt steps' graphs the executor holds."""
    return sorted(shape.tokens for shape in executor.graphs if shape.max_query_len > 1)


def decode_shapes(executor) -> list[int]:
    """The sequence buckets of the decode steps' graphs the executor holds."""
    return sorted(shape.sequences for shape in executor.graphs if shape.max_query_len == 1)


def test_every_prompt_bucket_is_captured_at_the_first_prompt_step_largest_first(llama):
    """Capturing stands in as in stand_in_capture, for both kinds of step: a "graph"
    replays by running the step on the static buffers into the output it captured.
    A 90-token prompt first: the first step fills the bucket of 128, later ones 64."""
    prompts, params, expected = PROMPT_STEPS_RUN["prompts"], PROMPT_STEPS_RUN["params"], plain_run(llama)
    llm, runner = with_prompt_graphs(llama)
    captured, replayed, own = [], [], []

    def capture(run):
        output = run()
        captured.append(output.shape[0])
        # captured on a step of its own shape: no sequence's tokens past its token rows,
        # and no K/V written but the real step's (slot -1: none)
        buf, tokens = runner.buffers, output.shape[0]
        sequences = 6 if len(captured) <= 2 else tokens      # a prompt shape has every row
        ends, slots = buf["cu_seqlens_q"][:sequences + 1], buf["slot_mapping"][:tokens]
        own.append(bool(ends.max() <= tokens and (slots[ends[-1]:] == -1).all()))

        def replay():
            replayed.append(output.shape[0])
            with torch.inference_mode():
                output.copy_(run())
        return SimpleNamespace(replay=replay), output
    runner.captured, runner.capture = capture, True
    outputs = llm.generate(prompts, params)
    # the prompt buckets at the first step, then the decode buckets at the first decode
    assert captured == [128, 64, 6, 4, 2, 1] and all(own)
    assert prompt_shapes(runner) == runner.prompt_buckets == [64, 128]
    assert replayed[0] == 128 and 64 in replayed             # each replays its own bucket
    assert [o.output_token_ids for o in outputs] == [o.output_token_ids for o in expected]
    llm.generate(prompts, params)
    assert len(captured) == 6                                       # captured once


@pytest.mark.parametrize("failing", [2, 4], ids=["prompt-bucket", "decode-bucket"])
def test_a_capture_that_fails_keeps_no_graph_and_the_next_step_captures_again(llama, failing):
    """Stand-in captures (the prompt buckets 128 and 64 at the first step, then the
    decode buckets 6, 4, 2, 1), one of which fails as a GPU out of memory would: the
    step raises, no graph of that kind is kept, and the engine's next run captures
    them again and gives the plain run's tokens."""
    prompts, params, expected = PROMPT_STEPS_RUN["prompts"], PROMPT_STEPS_RUN["params"], plain_run(llama)
    llm, runner = with_prompt_graphs(llama)
    calls = []

    def capture(run):
        calls.append(run)
        if len(calls) == failing:
            raise RuntimeError("stand-in: out of memory capturing a bucket")
        output = run()

        def replay():
            with torch.inference_mode():
                output.copy_(run())
        return SimpleNamespace(replay=replay), output
    runner.captured, runner.capture = capture, True
    with pytest.raises(RuntimeError, match="capturing a bucket"):
        llm.generate(prompts, params)
    if failing == 2:
        assert runner.graphs == runner.outputs == {}
    else:
        assert prompt_shapes(runner) == [64, 128] and decode_shapes(runner) == []
    outputs = llm.generate(prompts, params)
    assert prompt_shapes(runner) == [64, 128] and decode_shapes(runner) == [1, 2, 4, 6]
    assert [o.output_token_ids for o in outputs] == [o.output_token_ids for o in expected]


class HostReads(TorchDispatchMode):
    """Names the operations that read a tensor's values back on the host, or whose
    output's shape depends on them: a CUDA graph captures neither (it would fail, or
    replay the value it saw while captured)."""
    DATA_DEPENDENT = {"_local_scalar_dense", "nonzero", "masked_select", "unique", "_unique2",
                      "repeat_interleave", "item"}

    def __init__(self):
        super().__init__()
        self.found = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.overloadpacket.__name__ in self.DATA_DEPENDENT:
            self.found.append(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


def test_a_captured_step_reads_nothing_back_to_the_host(llama):
    """What each graph holds, run on a CPU under a dispatch mode: the decode step's
    and the prompt step's forward passes, fused operations both ways. A stand-in
    capture reruns the Python at every replay, so only this shows such a read."""
    for fused in (False, True):
        llm, runner = with_prompt_graphs(llama, fused_ops=fused)
        reads, ran, forward = HostReads(), [], runner.forward

        def watched(shape, attn):
            ran.append("decode" if shape.max_query_len == 1 else "prompt")
            with reads:
                return forward(shape, attn)
        runner.forward = watched
        llm.generate(PROMPT_STEPS_RUN["prompts"], PROMPT_STEPS_RUN["params"])
        assert set(ran) == {"decode", "prompt"} and reads.found == []


def test_the_profiled_step_runs_eagerly(llama):
    """Stage 5 sizes its KV cache on a GPU by running the largest step the token budget
    allows with attention left out: the executor runs it as the plain one would, never
    a graph (its metadata is a function, with nothing to pad)."""
    llm = LLM(llama, engine="paged", block_size=4, max_num_seqs=6, attention_backend="triton",
              max_num_batched_tokens=64)
    llm.stage.config.prompt_graphs = True
    runner = use_decode_graphs(llm.llm_engine)
    runner.capture = True                     # a capture on a CPU would fail: none may start
    positions = torch.arange(64)
    logits = runner.profile_step(positions, torch.arange(6))
    assert logits.shape[0] == 6 and runner.graphs == {} and runner.buffers == {}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="captures CUDA graphs")
def test_prompt_steps_replayed_from_cuda_graphs_match_eager_ones(llama):
    """On a GPU, real graphs: chunks of long prompts beside decodes, each step
    replayed from the graph of its token bucket, give the eager steps' tokens and
    K/V. (Two engines in one process: each gets a KV pool of its own size.)"""
    prompts = [[(10 + i) % 250 for i in range(n)] for n in (300, 20, 90, 5, 150)]    # tiny vocab: 259
    params = [SamplingParams(max_tokens=n, ignore_eos=True) for n in (6, 30, 12, 40, 3)]
    options = dict(engine="paged", block_size=16, max_num_seqs=8, max_num_batched_tokens=256,
                   enable_chunked_prefill=True, dtype="float32", num_blocks=64)
    reference = LLM(llama, **options)
    expected = reference.generate(prompts, params)
    llm = LLM(llama, **options, prompt_graphs=True)
    runner = llm.stage.executor.executor
    ran, forward = [], runner.forward
    # (the prompt steps' shapes: their token rows)
    runner.forward = lambda shape, attn: (ran.extend([shape.tokens] * (shape.max_query_len > 1)),
                                          forward(shape, attn))[1]
    got = llm.generate(prompts, params)
    assert prompt_shapes(runner) == runner.prompt_buckets == [64, 128, 256]
    # each bucket run twice (warmed up, captured), largest first, at the first prompt step;
    # every later prompt step replays a graph, which runs no Python
    assert ran == [256, 256, 128, 128, 64, 64]
    assert [o.output_token_ids for o in got] == [o.output_token_ids for o in expected]
    for mine, theirs in ((llm.stage.k_cache, reference.stage.k_cache), (llm.stage.v_cache, reference.stage.v_cache)):
        torch.testing.assert_close(mine, theirs, atol=1e-4, rtol=1e-4)
    assert "CUDA graphs with prompt steps" in describe(runner, llm.stage.config)


def test_a_batch_wider_than_the_padded_buffer_replaces_it_and_its_graphs(llama):
    """A static batch's width is its longest prompt plus its longest output, which may
    come from two requests and exceed max_model_len; the graphs wrote to the old
    buffer, so they are captured again on the new one."""
    options = dict(ENGINES["static"], max_batch_size=2)
    narrow = ([list(range(10, 20))] * 2, [SamplingParams(max_tokens=4, ignore_eos=True)] * 2)
    wide = ([list(range(10, 60)), [7, 8]], [SamplingParams(max_tokens=n, ignore_eos=True)
                                           for n in (3, 50)])                  # 50 + 50 > 64
    expected = [LLM(llama, **options, cuda_graphs=False).generate(*batch) for batch in (narrow, wide)]
    llm = LLM(llama, **options)
    runner = use_decode_graphs(llm.llm_engine)
    recorded, _ = stand_in_capture(runner)
    got = [llm.generate(*narrow)]
    assert recorded == [2, 1] and runner.padded_kv[0].shape[2] == 64
    got.append(llm.generate(*wide))
    assert recorded == [2, 1, 2, 1] and runner.padded_kv[0].shape[2] == 100
    assert [[o.output_token_ids for o in run] for run in got] == \
        [[o.output_token_ids for o in run] for run in expected]


@pytest.mark.parametrize("engine", ENGINES)
def test_with_graphs_on_every_stage_gets_the_graph_executor(llama, engine):
    """What a GPU builds by default (cuda_graphs is on there): one executor for all."""
    config = EngineConfig(engine=engine, max_model_len=64)
    config.cuda_graphs = True                 # as on a GPU; a CPU's config refuses it
    executor = make_executor(llama, config, max_sequences=engine_class(config).sequences_per_step(config))
    assert isinstance(executor, GraphExecutor)
    assert "CUDA graphs" in describe(executor, config)


@pytest.mark.parametrize("engine,most", [("single", 1), ("static", 3), ("dynamic", 3), ("continuous", 5), ("paged", 5)])
def test_each_stage_says_how_many_sequences_its_steps_hold_and_the_graphs_fit_them(llama, engine, most):
    """A stage, not a table of engine names, says the most sequences one of its steps
    holds; the graph executor's largest bucket holds that many."""
    llm = LLM(llama, engine=engine, max_batch_size=3, max_num_seqs=5)
    assert type(llm.stage).sequences_per_step(llm.config) == most
    executor = use_decode_graphs(llm.llm_engine)
    assert executor.buckets[-1] >= most and (len(executor.buckets) == 1 or executor.buckets[-2] < most)


def test_verify_steps_are_padded_to_buckets_of_sequences_and_match_plain_ones(llama):
    """Stage 6 on the graph executor: a verify step (each sequence's last token and up
    to k drafts) is padded to a bucket of sequences with k + 1 token rows each; its
    tokens, and the K/V both caches hold, equal the plain executor's."""
    prompts = [[5, 6, 7, 8, 9] * 2 + [5, 6, 7], [1, 2, 3, 4] * 2, list(range(20, 60)), [7, 7, 7, 7]]
    params = [SamplingParams(max_tokens=n, ignore_eos=True) for n in (24, 17, 30, 5)]
    options = dict(engine="paged", block_size=4, max_num_seqs=6, attention_backend="triton",
                   speculative_config={"num_speculative_tokens": 3})
    reference = LLM(llama, **options, cuda_graphs=False)
    plain = reference.generate(prompts, params)
    llm = LLM(llama, **options)
    runner = use_decode_graphs(llm.llm_engine)
    shapes, forward = [], runner.forward
    runner.forward = lambda shape, attn: (shapes.append(shape), forward(shape, attn))[1]
    padded = llm.generate(prompts, params)
    assert [o.output_token_ids for o in padded] == [o.output_token_ids for o in plain]
    assert llm.last_run.num_accepted_tokens > 0
    torch.testing.assert_close(llm.stage.k_cache, reference.stage.k_cache, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(llm.stage.v_cache, reference.stage.v_cache, atol=1e-5, rtol=1e-5)
    verify = [s for s in shapes if s.max_query_len == 4]
    assert verify and all(s.tokens == 4 * s.sequences and s.sequences in runner.buckets for s in verify)

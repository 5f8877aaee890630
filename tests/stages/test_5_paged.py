"""Stage 5: the paged kernel, the block manager, and the paged engine's output
under preemption, chunked prefill and prefix caching."""
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from minicb import LLM, LLMEngine, SamplingParams
from minicb.executors import Executor
from minicb.kernels import reference
from minicb.kernels.paged_attention import combine_splits, paged_attention
from minicb.request import Request

from ..conftest import ARCHS, DEVICE, MAX_TOKENS, PROMPTS
from ..kernels.test_kernels import DTYPES, HEADS, TOLERANCE, rand
from .test_4_continuous import EOS, FakeModel, drive

GREEDY = [SamplingParams(max_tokens=n, ignore_eos=True) for n in MAX_TOKENS]

# (new tokens, context) per sequence: a prefill, decodes, chunks of a prefill
# (new tokens < context, more than one), lengths on and off block boundaries.
PAGED_SEQS = [(33, 33), (1, 40), (7, 7), (1, 32), (8, 48), (16, 17), (1, 1)]
# Tokens per block, from one token (every block a boundary) to more than a short sequence.
BLOCK_SIZES = (1, 16, 32)
HEAD_DIMS = (64, 128)


def paged_inputs(query_lens, context_lens, num_heads, num_kv_heads, head_dim, dtype, block_size):
    """One step over a paged cache: sequence s brings query_lens[s] new tokens
    over a context of context_lens[s]; its blocks are scattered through a
    shuffled pool with a few blocks to spare."""
    widest = max(-(-c // block_size) for c in context_lens)
    num_blocks = len(context_lens) * widest + 3
    block_tables = torch.randperm(num_blocks, device=DEVICE)[:len(context_lens) * widest]
    block_tables = block_tables.view(len(context_lens), widest).to(torch.int32)
    cu_seqlens_q = torch.tensor([0, *torch.tensor(query_lens).cumsum(0).tolist()], device=DEVICE,
                                dtype=torch.int32)
    seq_lens = torch.tensor(context_lens, device=DEVICE, dtype=torch.int32)
    q = rand(sum(query_lens), num_heads, head_dim, dtype=dtype)
    k_cache = rand(num_blocks * block_size, num_kv_heads, head_dim, dtype=dtype)
    v_cache = rand(num_blocks * block_size, num_kv_heads, head_dim, dtype=dtype)
    return q, k_cache, v_cache, cu_seqlens_q, seq_lens, block_tables, block_size


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("block_size", BLOCK_SIZES)
@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("heads", HEADS, ids=lambda h: f"gqa{h[0] // h[1]}")
def test_paged_attention_matches_reference(dtype, block_size, head_dim, heads):
    torch.manual_seed(4)
    args = paged_inputs(*zip(*PAGED_SEQS), *heads, head_dim, dtype, block_size)
    torch.testing.assert_close(paged_attention(*args), reference.paged_attention(*args), **TOLERANCE[dtype])


@pytest.mark.parametrize("block_size", [1, 16])
@pytest.mark.parametrize("num_splits", [2, 5])
@pytest.mark.parametrize("heads", HEADS, ids=lambda h: f"gqa{h[0] // h[1]}")
def test_split_kv_matches_reference(block_size, num_splits, heads):
    """Flash decoding: one query per sequence, contexts split into key ranges
    (some ranges empty for the short contexts), merged by log-sum-exp."""
    torch.manual_seed(5)
    args = paged_inputs([1] * 4, [300, 17, 1, 129], *heads, 64, torch.float32, block_size)
    out = paged_attention(*args, num_splits=num_splits)
    torch.testing.assert_close(out, reference.paged_attention(*args), **TOLERANCE[torch.float32])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("heads", HEADS, ids=lambda h: f"gqa{h[0] // h[1]}")
def test_listed_tiles_match_reference_on_a_step_padded_for_a_graph(dtype, heads):
    """A prompt-carrying step as a CUDA graph replays it: 9 query rows of padding
    past the real ones and 2 sequences with no queries, the grid sized for 128
    queries: the real rows equal the reference's."""
    from minicb.kernels.paged_attention import paged_attention_tiles, query_tiles
    torch.manual_seed(6)
    q, k, v, cu, lens, tables, block_size = paged_inputs(*zip(*PAGED_SEQS), *heads, 64, dtype, 16)
    n = q.shape[0]
    padded_q = torch.cat([q, rand(9, *q.shape[1:], dtype=dtype)])
    padded_cu = torch.cat([cu, cu[-1:].repeat(2)])
    padded_lens = torch.cat([lens, torch.ones(2, dtype=lens.dtype, device=DEVICE)])
    padded_tables = torch.cat([tables, torch.zeros(2, tables.shape[1], dtype=tables.dtype, device=DEVICE)])
    out = paged_attention_tiles(padded_q, k, v, padded_cu, padded_lens, padded_tables, block_size, 128)
    expected = reference.paged_attention(q, k, v, cu, lens, tables, block_size)
    torch.testing.assert_close(out[:n], expected, **TOLERANCE[dtype])
    # Each sequence's tiles in order; programs past the last run nothing.
    seqs, blocks = query_tiles(torch.tensor([0, 33, 34, 34, 50], dtype=torch.int32), 16, 7)
    assert seqs.tolist() == [0, 0, 0, 1, 3, -1, -1]
    assert blocks.tolist()[:5] == [0, 1, 2, 0, 0]


def test_splits_are_chosen_to_fill_the_gpu_and_only_for_decodes():
    from minicb.kernels.paged_attention import MAX_SPLITS, MIN_SPLIT_KEYS, choose_splits
    h100 = 132                                          # streaming multiprocessors
    # batch 1 of the 8B shape (8 KV heads), 4,096 keys: one split per 256 keys
    assert choose_splits(8, 4096, 1, h100) == 4096 // MIN_SPLIT_KEYS == 16
    assert choose_splits(8, 65536, 1, h100) == MAX_SPLITS     # at most 32, however long
    assert choose_splits(64, 4096, 1, h100) == 5          # 8 sequences: two programs an SM
    assert choose_splits(512, 4096, 1, h100) == 1         # batch 64 fills the GPU alone
    assert choose_splits(8, 200, 1, h100) == 1            # too few keys to cut
    assert choose_splits(8, 4096, 2, h100) == 1           # a prefill chunk: never
    assert choose_splits(8, 4096, 1, 0) == 1              # no GPU


def test_a_decode_tile_walks_more_keys_a_trip_only_where_programs_are_few(monkeypatch):
    """As on an H100 (132 multiprocessors): 16-bit decode tiles of a launch with
    fewer than two programs a multiprocessor walk 64 keys a trip, those of a
    full launch 32 (more of them fit at once); other tiles never change."""
    from minicb.kernels import online_softmax
    monkeypatch.setattr(online_softmax, "TARGET_PROCESSORS", 132)

    def keys(dtype, sequences, num_queries=1, head_dim=128):
        q = torch.empty(sequences * num_queries, 32, head_dim, dtype=dtype)
        cache = torch.empty(16, 8, head_dim, dtype=dtype)
        return online_softmax.launch_options(q, cache, num_queries, sequences=sequences)["BLOCK_N"]

    assert keys(torch.bfloat16, 1) == keys(torch.float16, 32) == 64    # 8 and 256 programs
    assert keys(torch.bfloat16, 33) == keys(torch.bfloat16, 64) == 32  # 264 and 512 programs
    assert keys(torch.bfloat16, 1, head_dim=256) == 32                 # no registers to spare
    assert keys(torch.bfloat16, 1, num_queries=16) == 32               # a prefill tile
    assert keys(torch.float32, 1) == 16                                # an exact fp32 tile
    monkeypatch.setattr(online_softmax, "TARGET_PROCESSORS", 0)
    assert keys(torch.bfloat16, 1) == 32                               # no GPU to fill


# The splits a GPU with 132 multiprocessors chooses for one sequence of the 8B shape.
BATCH_1_SPLITS = 16


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_many_splits_of_a_decode_tile_match_the_reference(dtype):
    """The splits a GPU would choose for batch 1 (16), over the tile a GPU's
    16-bit decode then walks (64 keys a trip), contexts on and off its boundaries."""
    torch.manual_seed(9)
    args = paged_inputs([1] * 3, [1000, 64, 257], 8, 2, 128, dtype, block_size=16)
    out = paged_attention(*args, max_query_len=1, num_splits=BATCH_1_SPLITS, tile_keys=64)
    torch.testing.assert_close(out, reference.paged_attention(*args), **TOLERANCE[dtype])


# (query heads, KV heads): GQA 1, 2, 3, 4 and 8
DECODE_HEADS = HEADS + [(6, 2)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("heads", DECODE_HEADS, ids=lambda h: f"gqa{h[0] // h[1]}")
@pytest.mark.parametrize("num_splits", [1, 3])
def test_packed_decode_matches_reference(dtype, heads, num_splits):
    """A decode step: one program per (sequence, KV head) carries all of that
    KV head's query heads. Sequences of different lengths, shuffled blocks."""
    torch.manual_seed(6)
    args = paged_inputs([1] * 6, [45, 1, 16, 130, 7, 64], *heads, 64, dtype, block_size=16)
    out = paged_attention(*args, max_query_len=1, num_splits=num_splits)
    torch.testing.assert_close(out, reference.paged_attention(*args), **TOLERANCE[dtype])


@pytest.mark.parametrize("tile_keys", [16, 32, 64])
@pytest.mark.parametrize("num_splits", [1, 3])
def test_a_tile_of_any_length_gives_the_reference(tile_keys, num_splits):
    """Notebook 08 times the decode tile at other lengths than the rule's: each
    walks the same keys, blocks of 16 shuffled through the pool."""
    torch.manual_seed(8)
    args = paged_inputs([1] * 4, [45, 1, 130, 64], 8, 2, 64, torch.float16, block_size=16)
    out = paged_attention(*args, max_query_len=1, num_splits=num_splits, tile_keys=tile_keys)
    torch.testing.assert_close(out, reference.paged_attention(*args), **TOLERANCE[torch.float16])


# (query heads, KV heads): GQA 3, 8 and 64, a group taller than an fp32 tile.
PACKING_HEADS = [(6, 2), (8, 1), (64, 1)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("heads", PACKING_HEADS, ids=lambda h: f"gqa{h[0] // h[1]}")
def test_packing_changes_which_program_computes_a_head_not_its_value(dtype, heads):
    """Packed and one-head-per-program launches agree, for prefill chunks and
    decodes, also when a group (64) is taller than one fp32 tile holds (32)."""
    torch.manual_seed(7)
    args = paged_inputs(*zip(*PAGED_SEQS), *heads, 64, dtype, block_size=16)
    packed, one_head = paged_attention(*args), paged_attention(*args, pack_heads=False)
    torch.testing.assert_close(packed, one_head, **TOLERANCE[dtype])
    torch.testing.assert_close(packed, reference.paged_attention(*args), **TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("num_splits", [1, 2, 5, 16])
def test_combine_splits_matches_reference(dtype, num_splits):
    """The split-KV merge as one kernel. Some ranges saw no key (lse -inf,
    part 0); in row 0 no range saw any key, so its output is 0."""
    torch.manual_seed(8)
    parts = rand(num_splits, 5, 3, 80, dtype=torch.float32)
    lse = rand(num_splits, 5, 3, dtype=torch.float32) * 4
    empty = torch.rand(num_splits, 5, 3, device=DEVICE) < 0.4
    empty[:, 0] = True
    lse[empty], parts[empty] = float("-inf"), 0.0
    out = combine_splits(parts, lse, dtype)
    expected = reference.combine_splits(parts, lse, dtype)
    torch.testing.assert_close(out, expected, **TOLERANCE[dtype])
    assert out.dtype == dtype and torch.isfinite(out).all()
    assert out[0].abs().max() == 0


def test_combine_splits_rejects_mismatched_lse():
    with pytest.raises(ValueError, match=r"lse \(2, 5, 4\) does not match parts \(2, 5, 3, 64\)"):
        combine_splits(rand(2, 5, 3, 64, dtype=torch.float32), rand(2, 5, 4, dtype=torch.float32), torch.float32)


def test_split_kv_refuses_more_queries_than_one_tile():
    q = rand(70, 4, 64, dtype=torch.float32)                      # a prefill longer than one tile
    cache = rand(128, 2, 64, dtype=torch.float32)
    cu = torch.tensor([0, 70], dtype=torch.int32, device=DEVICE)
    tables = torch.arange(8, dtype=torch.int32, device=DEVICE)[None]
    with pytest.raises(ValueError, match="split-KV serves decode-like steps"):
        paged_attention(q, cache, cache.clone(), cu, cu[1:], tables, 16, num_splits=2)


def test_paged_attention_rejects_partial_blocks():
    q = rand(2, 4, 64, dtype=torch.float32)
    cache = rand(30, 2, 64, dtype=torch.float32)
    cu = torch.tensor([0, 2], dtype=torch.int32, device=DEVICE)
    with pytest.raises(ValueError, match="cache of 30 rows is not whole blocks of 16"):
        paged_attention(q, cache, cache.clone(), cu, cu[1:], torch.zeros(1, 2, dtype=torch.int32), 16)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("backend", ["sdpa", "reference", "triton"])
def test_paged_matches_transformers(checkpoints, hf_greedy, arch, backend):
    llm = LLM(checkpoints[arch], engine="paged", attention_backend=backend, max_num_seqs=3, block_size=4)
    assert [o.output_token_ids for o in llm.generate(PROMPTS, GREEDY)] == hf_greedy[arch]


def paged_run(path, prompts, params, **options):
    llm = LLM(path, engine="paged", **options)
    outputs = llm.generate(prompts, params)
    kv = llm.stage.kv
    assert len(kv.free_blocks) == kv.num_blocks and not kv.block_tables         # nothing leaked
    return [o.output_token_ids for o in outputs], llm


# Chapter 6's preemption run: requests, prompt and output tokens each, tokens per block,
# and the blocks of the cache, fewer than the requests need at the end.
PREEMPTION_REQUESTS, PREEMPTION_PROMPT, PREEMPTION_OUTPUT = 4, 8, 20
PREEMPTION_BLOCK_SIZE, PREEMPTION_CACHE_BLOCKS = 4, 16


def test_preemption_recomputes_to_the_same_output(llama):
    # Four requests of 8 + 20 tokens need 7 blocks of 4 each at the end: 28 blocks,
    # but the cache has 16. All four start (2 blocks each) and grow together.
    prompts = [list(range(3 + i, 3 + PREEMPTION_PROMPT + i)) for i in range(PREEMPTION_REQUESTS)]
    params = [SamplingParams(max_tokens=PREEMPTION_OUTPUT, ignore_eos=True)] * PREEMPTION_REQUESTS
    expected = [o.output_token_ids for o in LLM(llama, engine="single").generate(prompts, params)]
    outputs, llm = paged_run(llama, prompts, params, block_size=PREEMPTION_BLOCK_SIZE,
                             num_blocks=PREEMPTION_CACHE_BLOCKS, max_num_seqs=PREEMPTION_REQUESTS)
    assert outputs == expected
    assert llm.last_run.num_preemptions > 0


def test_a_recompute_longer_than_any_step_runs_in_chunks(llama):
    # A preempted request recomputes prompt + output. Here that outgrows the step
    # budget of 12 tokens, so without chunked prefill it runs in chunks (else it
    # would wait forever).
    prompts = [list(range(3 + i, 13 + i)) for i in range(4)]
    params = SamplingParams(max_tokens=12, ignore_eos=True)
    expected = [o.output_token_ids for o in LLM(llama, engine="single").generate(prompts, params)]
    engine = LLMEngine(llama, engine="paged", block_size=4, num_blocks=12, max_num_seqs=4, max_num_batched_tokens=12)
    requests = [engine.requests[engine.add_request(p, params)] for p in prompts]
    for _ in range(200):
        if engine.has_unfinished_requests():
            engine.step()
    assert not engine.has_unfinished_requests(), "a preempted request waited forever"
    assert [r.output_token_ids for r in requests] == expected
    assert sum(r.num_preemptions for r in requests) > 0
    assert max(s.num_tokens for s in engine.stage.steps) <= 12


def test_chunked_prefill_runs_prompts_in_chunks_beside_decodes(llama, hf_greedy):
    outputs, llm = paged_run(llama, PROMPTS, GREEDY, enable_chunked_prefill=True, max_num_batched_tokens=8,
                             max_num_seqs=5)
    assert outputs == hf_greedy["llama"]
    steps = llm.last_run.steps
    assert max(s.num_tokens for s in steps) <= 8
    assert any(s.kind == "mixed" for s in steps)                   # chunks rode along with decodes


def test_paged_agrees_with_continuous(llama):
    from minicb.tools.bench.workload import synthetic_workload

    workload = synthetic_workload(12, prompt_len=(1, 40), output_len=(1, 20), seed=5)
    continuous = LLM(llama, engine="continuous", max_num_seqs=4).generate(workload.prompts, workload.params)
    paged, _ = paged_run(llama, workload.prompts, workload.params, max_num_seqs=6, block_size=8, num_blocks=20,
                         enable_chunked_prefill=True, max_num_batched_tokens=32)
    assert paged == [o.output_token_ids for o in continuous]


def test_a_request_that_could_never_fit_is_refused(llama):
    engine = LLMEngine(llama, engine="paged", block_size=4, num_blocks=10)
    running = engine.requests[engine.add_request([5, 6, 7], SamplingParams(max_tokens=6, ignore_eos=True))]
    engine.step()
    with pytest.raises(ValueError, match="prompt of 38 tokens \\+ max_tokens 3 needs 11 blocks of 4 tokens, "
                                         "but the KV cache has only 10"):
        engine.add_request([3] * 38, SamplingParams(max_tokens=3))
    while engine.has_unfinished_requests():
        engine.step()
    assert len(running.output_token_ids) == 6
    assert len(engine.stage.kv.free_blocks) == 10


# --- block manager properties, through the real engine with the fake model ---

def fake_paged_engine(**options):
    from minicb.config import EngineConfig
    from minicb.stages import engine_class

    config = EngineConfig(engine="paged", device="cpu", attention_backend="sdpa", max_model_len=64, **options)
    config.settle_max_model_len(64)
    return engine_class(config)(Executor(FakeModel()), config)


def check_blocks(kv):
    owners = {}
    for table in kv.block_tables.values():
        for block in table:
            owners[block] = owners.get(block, 0) + 1
    assert len(kv.free_blocks) + len(owners) == kv.num_blocks          # free + used == num_blocks
    if not hasattr(kv, "ref_counts"):                                  # paging alone shares nothing
        assert set(owners.values()) <= {1} and not set(owners) & set(kv.free_blocks)
        return
    for block in range(kv.num_blocks):
        assert kv.ref_counts[block] == owners.get(block, 0)           # refcount == number of owners
        if owners.get(block, 0) > 1:
            assert block in kv.cached_as                                  # shared only through the cache
        assert (block in kv.free_blocks) == (kv.ref_counts[block] == 0)


# Chapter 5's worked example, in the style of the vLLM paper's figures: blocks of 4 tokens on an empty pool of 4,
# "Four score and seven years ago our" (7 tokens) and "you only live" (3), and the block
# tables and free list the block manager gives them.
FOUR_SCORE_BLOCK_SIZE, FOUR_SCORE_BLOCKS, FOUR_SCORE_LENGTHS = 4, 4, (7, 3)
FOUR_SCORE_TABLES, FOUR_SCORE_FREE = ([0, 1], [2]), [3]


def test_the_four_score_block_table():
    """Chapter 5's worked example: blocks of 4 tokens, "Four score and seven years ago
    our" (7 tokens) and "you only live" (3). Each request leaves one empty slot, in its
    last block, where a contiguous reservation of its maximum length would leave thousands."""
    from minicb.stages.paged import BlockManager

    kv = BlockManager(num_blocks=FOUR_SCORE_BLOCKS, block_size=FOUR_SCORE_BLOCK_SIZE)
    a, b = (Request(list(range(n)), SamplingParams(), (EOS,)) for n in FOUR_SCORE_LENGTHS)
    for request in (a, b):
        assert kv.can_allocate(request, len(request.prompt_token_ids))
        kv.allocate(request, len(request.prompt_token_ids))
    assert kv.block_tables == {a: FOUR_SCORE_TABLES[0], b: FOUR_SCORE_TABLES[1]}
    assert list(kv.free_blocks) == FOUR_SCORE_FREE
    assert kv.cache_rows(a, 4, 3) == [4, 5, 6]         # "years ago our": block 1, offsets 0-2
    empty = {r: len(kv.block_tables[r]) * kv.block_size - len(r.prompt_token_ids) for r in (a, b)}
    assert empty == {a: 1, b: 1}


@settings(max_examples=120, deadline=None)
@given(workload=st.lists(st.tuples(st.integers(0, 3), st.integers(1, 16), st.integers(1, 10),
                                   st.integers(0, 20), st.one_of(st.none(), st.integers(0, 30))),
                         min_size=1, max_size=10),
       block_size=st.sampled_from([1, 2, 4]), spare_blocks=st.integers(0, 12),
       chunked=st.booleans(), prefix=st.booleans(), max_num_seqs=st.integers(1, 5))
def test_block_manager_invariants_on_random_workloads(workload, block_size, spare_blocks, chunked, prefix,
                                                      max_num_seqs):
    """Prompts start with one of four shared prefixes so prefix caching has something to share."""
    needed = max(-(-(8 + p + n) // block_size) for _, p, n, _, _ in workload)
    engine = fake_paged_engine(block_size=block_size, num_blocks=needed + spare_blocks, max_num_seqs=max_num_seqs,
                               enable_chunked_prefill=chunked, max_num_batched_tokens=12 if chunked else 24,
                               enable_prefix_caching=prefix)
    requests = []
    for family, p, n, _, _ in workload:
        requests.append(Request([2 + family] * 8 + [5] * p, SamplingParams(max_tokens=n, ignore_eos=True), (EOS,)))
    timing = [(arrival, abort_at) for *_, arrival, abort_at in workload]
    finished = drive(engine, requests, timing, lambda e: check_blocks(e.kv), max_steps=2000)
    assert len(engine.kv.free_blocks) == engine.kv.num_blocks and not engine.kv.block_tables
    for r in requests:
        if r.finish_reason != "abort":
            assert finished[r.request_id] == 1
            assert len(r.output_token_ids) == r.params.max_tokens or r.output_token_ids[-1] == EOS


def test_kv_breakdown_across_stages(llama):
    from minicb.tools.bench.workload import synthetic_workload

    workload = synthetic_workload(10, prompt_len=(5, 30), output_len=(1, 30), seed=6)
    breakdowns, running = {}, {}
    for name, options in [("static", dict(max_batch_size=5)), ("continuous", dict(max_num_seqs=5, max_model_len=64)),
                          ("paged", dict(max_num_seqs=10, max_model_len=64, block_size=8, num_blocks=40)),
                          ("paged-1", dict(max_num_seqs=10, max_model_len=64, block_size=1, num_blocks=320))]:
        llm = LLM(llama, engine=name.split("-")[0], **options)
        llm.generate(workload.prompts, workload.params)
        breakdowns[name], running[name] = llm.last_run.kv_breakdown(), llm.last_run.max_running()
    for b in breakdowns.values():
        assert sum(b.values()) == pytest.approx(1.0)
    assert breakdowns["paged-1"]["never_used"] == 0                    # one-token blocks: no tails
    assert breakdowns["paged"]["never_used"] < breakdowns["static"]["never_used"]
    assert breakdowns["paged"]["never_used"] < breakdowns["continuous"]["never_used"]
    assert running["continuous"] == 5 and running["paged"] > 5           # same 320 slots, more requests


def test_the_profiled_step_runs_the_largest_prefill_and_sampling(llama, monkeypatch):
    """On a GPU it runs before the KV cache is sized; here only that it runs, and
    what it feeds the model and the sampler."""
    engine = LLMEngine(llama, engine="paged", max_num_batched_tokens=300, max_num_seqs=5, max_model_len=128)
    stage, seen = engine.stage, {}
    forward, sample = engine.executor.model.forward, type(stage.sampler).__call__

    def seen_forward(ids, positions, attn):
        seen["positions"] = positions
        return forward(ids, positions, attn)

    def seen_sample(sampler, logits, params, generators):
        seen["logits"] = logits
        return sample(sampler, logits, params, generators)

    monkeypatch.setattr(engine.executor.model, "forward", seen_forward)
    monkeypatch.setattr(type(stage.sampler), "__call__", seen_sample)
    stage.profile_step()
    assert seen["positions"].tolist() == [i % 128 for i in range(300)]
    assert seen["logits"].shape == (5, stage.executor.config.vocab_size)

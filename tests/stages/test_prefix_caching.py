"""Prefix caching: prompts that share a prefix share its blocks and keep their
output. A prompt cannot reach another prompt's K/V through the prefix cache: a hash
may find a cached block, the tokens decide (the design's correctness rule 5)."""
import pytest

from minicb import LLM, SamplingParams
from minicb.request import Request
from minicb.stages import prefix_caching
from minicb.stages.prefix_caching import PrefixCachingBlockManager

from .test_5_paged import paged_run

# Two different blocks of 16 token ids below 128,256 (Llama 3's vocabulary) whose
# Python hash() values are equal, as tuples and as (parent, tokens) pairs. Found
# in under a minute by a birthday search over CPython's tuple hash: the last token
# enters the hash as last_token x a constant, added to the state of the first 15,
# so two blocks collide when their 15-token states, divided by that constant, lie
# less than the vocabulary apart; among 2^25 random heads such a pair is all but sure.
BLOCK_A = (25560, 105414, 44785, 71717, 47081, 78851, 5907, 53454,
           34001, 61230, 125013, 79567, 107964, 50922, 15740, 92027)
BLOCK_B = (74869, 39277, 123802, 90646, 17252, 13105, 123882, 85241,
           101838, 1824, 61150, 6861, 30272, 68463, 46638, 0)
EOS = 2


def test_the_two_blocks_collide_under_pythons_hash():
    assert BLOCK_A != BLOCK_B
    assert hash(BLOCK_A) == hash(BLOCK_B)
    assert hash((None, BLOCK_A)) == hash((None, BLOCK_B))      # the key the cache once used


def computed_request(kv, tokens) -> Request:
    """A request whose prompt has been computed and published in the cache."""
    request = Request(list(tokens), SamplingParams(), (EOS,))
    kv.allocate(request, len(tokens))
    request.num_computed_tokens = len(tokens)
    kv.computed(request)
    return request


def test_a_block_whose_python_hash_collides_is_not_shared():
    kv = PrefixCachingBlockManager(num_blocks=8, block_size=16)
    first = computed_request(kv, BLOCK_A + (7,))
    crafted = Request(list(BLOCK_B) + [7], SamplingParams(), (EOS,))
    assert kv.cached_prefix(crafted) == [] and kv.num_cached_tokens(crafted) == 0
    honest = Request(list(BLOCK_A) + [8], SamplingParams(), (EOS,))
    assert [hit.block for hit in kv.cached_prefix(honest)] == kv.block_tables[first][:1]


def test_a_block_whose_parent_was_handed_out_is_cached_again_when_recomputed():
    """y publishes the shared prefix, x its next block after y's; y is preempted and
    its blocks handed out. x's block can no longer be found (its parent is gone), so
    when w computes the same prefix again, w's blocks take the hashes, and a later
    request finds all three."""
    kv = PrefixCachingBlockManager(num_blocks=12, block_size=2)
    y, x = (Request([1, 2, 3, 4, 5, 6, tail], SamplingParams(), (EOS,)) for tail in (100, 200))
    kv.allocate(y, 7)
    kv.allocate(x, 7)
    y.num_computed_tokens = 4                      # y's first chunk: blocks 0 and 1
    kv.computed(y)
    x.num_computed_tokens = 7                      # x: blocks 0 and 1 found, its block 2 published
    kv.computed(x)
    kv.free(y)
    others = computed_request(kv, range(1000, 1000 + 2 * len(kv.free_blocks)))   # every free block
    kv.free(others)
    w = computed_request(kv, (1, 2, 3, 4, 5, 6, 300))
    later = Request([1, 2, 3, 4, 5, 6, 400], SamplingParams(), (EOS,))
    assert [hit.block for hit in kv.cached_prefix(later)] == kv.block_tables[w][:3]


def test_the_paged_engine_computes_a_crafted_prompt_instead_of_serving_it():
    """At Llama 3.1 8B's scale (the simulated executor: its vocabulary, no weights),
    the crafted prompt's first step computes all of its tokens."""
    llm = LLM("llama-3.1-8b", engine="paged", executor="simulated", enable_prefix_caching=True)
    params = SamplingParams(max_tokens=2)
    llm.generate([list(BLOCK_A) + [7]], params)
    llm.generate([list(BLOCK_B) + [7]], params)
    assert llm.stage.kv.prefix_hits == 0
    assert llm.last_run.steps[0].num_tokens == 17
    llm.generate([list(BLOCK_A) + [9]], params)                     # the honest prefix is still shared
    assert llm.stage.kv.prefix_hits == 1 and llm.last_run.steps[0].num_tokens == 1


@pytest.mark.parametrize("weak_hash", [
    pytest.param(lambda parent, tokens: b"", id="one-hash-for-all"),
    pytest.param(lambda parent, tokens: repr(tokens).encode(), id="blind-to-the-parent"),
])
def test_the_tokens_decide_even_under_a_weak_hash(llama, monkeypatch, weak_hash):
    """With the hash made worthless, a block is still taken only for the same tokens
    after the same cached parent: every output is the single engine's."""
    x, z = [3, 4, 5, 6], [7, 8, 9, 10]
    prompts = [x + z + [11], [20, 21, 22, 23] + [12], z + [13], [30] + z + [14], x + z + [15]]
    params = SamplingParams(max_tokens=4, ignore_eos=True)
    expected = [o.output_token_ids for o in LLM(llama, engine="single").generate(prompts, params)]
    monkeypatch.setattr(prefix_caching, "block_hash", weak_hash)
    llm = LLM(llama, engine="paged", block_size=4, max_num_seqs=1, enable_prefix_caching=True)
    outputs = []
    for prompt in prompts:                       # one at a time: each finds what the last left
        outputs.append(llm.generate([prompt], params)[0].output_token_ids)
    assert outputs == expected
    # Only the last prompt repeats a cached prefix; under one hash for all, only the first block is kept.
    assert llm.stage.kv.prefix_hits == (1 if weak_hash(None, (1,)) == b"" else 2)


def test_prefix_caching_shares_blocks_and_keeps_the_output(llama):
    shared = list(range(3, 40))                                     # 37 tokens: 9 full blocks of 4
    prompts = [shared + [50, 51], shared + [60], shared[:20], shared + [50, 51]]   # the last: fully cached
    params = [SamplingParams(max_tokens=4, ignore_eos=True)] * len(prompts)
    expected = [o.output_token_ids for o in LLM(llama, engine="single").generate(prompts, params)]
    outputs, llm = paged_run(llama, prompts, params, block_size=4, enable_prefix_caching=True, max_num_seqs=1)
    assert outputs == expected
    assert llm.stage.kv.prefix_hits >= 9 + 4 + 9                   # blocks reused by requests 2, 3 and 4

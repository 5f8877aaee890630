"""The cost model: a roofline whose numbers a reader can check by hand."""
import dataclasses

import pytest

from minicb.costmodel import (HARDWARE, MODEL_SHAPES, OPT_13B, Hardware, break_even_batch, expected_tokens, kv_budget,
                              speculative_speedup, step_seconds)

# A round machine, to check the arithmetic: 1 TB/s and 100 TFLOP/s, all of it achieved.
ROUND = Hardware("round", 80e9, 1e12, 100e12, "a test's", bandwidth_fraction=1.0,
                 flops_fraction=1.0, step_overhead=1e-3)
# A linear layer's multiply and add: FLOPs per weight per token. Attention's q.k and p.v:
# FLOPs per head dimension per query head per (query, key) pair.
FLOPS_PER_WEIGHT = 2
ATTENTION_FLOPS_PER_DIM = 4
# The decodes batched in one step, checked on every GPU to cost little more than one.
DECODE_BATCH = 32


def test_the_shapes_count_their_parameters_as_published():
    assert MODEL_SHAPES["llama-3.1-8b"].params == pytest.approx(8.03e9, rel=0.01)
    assert MODEL_SHAPES["llama-3.2-1b"].params == pytest.approx(1.24e9, rel=0.01)
    assert OPT_13B.params == pytest.approx(12.85e9, rel=0.01)
    # OPT-13B keeps a K and a V of 40 heads x 128 in each of 40 layers: 800 KiB a token in fp16.
    assert OPT_13B.kv_bytes_per_token(2) == 2 * 40 * 40 * 128 * 2 == 819200


def test_a_decode_step_is_its_weights_read_once():
    shape = MODEL_SHAPES["llama-3.1-8b"]
    weights = 2 * shape.params / 1e12
    one = step_seconds(ROUND, shape, 2, [(1, 1)], sampled=1)
    assert one == pytest.approx(weights + 1e-3, rel=1e-3)
    # 64 sequences of 1,024 tokens add their K/V, not 64 times the weights
    kv = 64 * 1024 * shape.kv_bytes_per_token(2) / 1e12
    assert step_seconds(ROUND, shape, 2, [(1, 1024)] * 64, sampled=64) == \
        pytest.approx(weights + kv + 1e-3, rel=1e-3)


def test_each_overhead_is_paid_per_what_it_names():
    shape = MODEL_SHAPES["tiny-llama"]
    batch = [(5, 5), (1, 40), (1, 12)]           # a 5-token prompt and two decodes
    roofline = step_seconds(ROUND, shape, 4, batch, sampled=3) - 1e-3
    costs = dataclasses.replace(ROUND, step_overhead=1.0, sequence_overhead=0.1,
                                token_overhead=0.01, cached_token_overhead=0.001)
    # 1 step, 3 sequences, 7 new tokens, 39 + 11 cached tokens read
    assert step_seconds(costs, shape, 4, batch, sampled=3) == \
        pytest.approx(roofline + 1.0 + 3 * 0.1 + 7 * 0.01 + 50 * 0.001, rel=1e-9)


def test_a_long_prefill_is_its_arithmetic():
    shape, n = MODEL_SHAPES["llama-3.1-8b"], 8192
    linear = (FLOPS_PER_WEIGHT * shape.layers * shape.layer_params * n
              + FLOPS_PER_WEIGHT * shape.vocab * shape.hidden)
    attention = ATTENTION_FLOPS_PER_DIM * shape.layers * shape.heads * shape.head_dim * n * (n + 1) // 2
    assert step_seconds(ROUND, shape, 2, [(n, n)], sampled=1) == \
        pytest.approx((linear + attention) / 100e12 + 1e-3, rel=1e-9)
    # twice the tokens, more than twice the time: attention is quadratic
    assert step_seconds(ROUND, shape, 2, [(2 * n, 2 * n)], 1) > \
        2 * step_seconds(ROUND, shape, 2, [(n, n)], 1)


def test_batching_decodes_is_nearly_free_on_every_gpu():
    shape = MODEL_SHAPES["llama-3.1-8b"]
    for hw in HARDWARE.values():
        alone = step_seconds(hw, shape, 2, [(1, 512)], 1)
        together = step_seconds(hw, shape, 2, [(1, 512)] * DECODE_BATCH, DECODE_BATCH)
        assert alone < together < 1.5 * alone, hw.name


def test_opt_13b_leaves_an_a100_40gb_about_12_000_tokens_of_kv():
    # The vLLM paper's setting: 26 GB of weights in fp16 on a 40 GB GPU.
    tokens = kv_budget(HARDWARE["a100-40gb"], OPT_13B, 2) / OPT_13B.kv_bytes_per_token(2)
    assert 11_000 < tokens < 14_000


def test_a_verify_step_gives_the_expected_tokens_of_its_acceptance():
    """1 + a + ... + a^k: no drafts give one token, every draft kept gives k + 1."""
    assert expected_tokens(0.5, 0) == 1 and expected_tokens(0.0, 4) == 1
    assert expected_tokens(1.0, 4) == 5 and expected_tokens(0.5, 2) == 1.75


def test_speculation_pays_where_a_step_is_memory_bound_and_stops_where_it_is_not():
    """By hand: one sequence's verify step of 5 queries reads the same weights as
    its decode step, so on the datasheet H200 its speedup is the tokens it gives;
    a batch large enough that 5 queries a sequence are arithmetic-bound loses; the
    break-even batch is the first below 1, and none with no drafts to lose on."""
    hw, shape = HARDWARE["h200"], MODEL_SHAPES["llama-3.1-8b"]
    one = speculative_speedup(hw, shape, 2, 1, 1024, 4, 0.5)
    assert one == pytest.approx(expected_tokens(0.5, 4), rel=0.01)
    assert speculative_speedup(hw, shape, 2, 1024, 1024, 4, 0.5) < 1
    batch = break_even_batch(hw, shape, 2, 1024, 4, 0.5)
    assert speculative_speedup(hw, shape, 2, batch, 1024, 4, 0.5) < 1
    assert speculative_speedup(hw, shape, 2, batch - 1, 1024, 4, 0.5) >= 1
    assert break_even_batch(hw, shape, 2, 1024, 0, 0.5, largest=64) is None
    # a better drafter pays up to a larger batch
    assert break_even_batch(hw, shape, 2, 1024, 4, 0.7) > batch

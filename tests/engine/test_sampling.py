"""SamplingParams checks itself; the sampler honours every knob."""
import pytest
import torch

from minicb import LLM, SamplingParams
from minicb.sampling import Sampler, keep_top_k, keep_top_p
from minicb.stages.base import read_tokens

from ..conftest import DEVICE


@pytest.mark.parametrize("kwargs,message", [
    (dict(max_tokens=0), "max_tokens must be an integer >= 1, got 0"),
    (dict(max_tokens=2.5), "max_tokens must be an integer >= 1, got 2.5"),
    (dict(temperature=-0.1), "temperature must be a finite number >= 0, got -0.1"),
    (dict(temperature=float("inf")), "temperature must be a finite number >= 0, got inf"),
    (dict(max_tokens=True), "max_tokens must be an integer >= 1, got True"),
    (dict(top_k=True), "top_k must be an integer >= 0 .0 = off., got True"),
    (dict(top_p=True), r"top_p must be in \(0, 1\], got True"),
    (dict(seed=1.5), r"seed must be an integer in \[0, 2\*\*64\) or None, got 1.5"),
    (dict(seed=2**64), r"seed must be an integer in \[0, 2\*\*64\) or None, got 18446744073709551616"),
    (dict(seed=-1), r"seed must be an integer in \[0, 2\*\*64\) or None, got -1"),
    (dict(stop_token_ids=5), "stop_token_ids must be a list of token ids, got 5"),
    (dict(stop_token_ids="x"), "stop_token_ids must be a list of token ids, got 'x'"),
    (dict(stop_token_ids=[3, 2.0]), r"stop_token_ids: 2.0 is not a token id \(an integer >= 0\)"),
    (dict(stop_token_ids=[True]), r"stop_token_ids: True is not a token id"),
    (dict(ignore_eos="no"), "ignore_eos must be True or False, got 'no'"),
    (dict(top_p=0.0), r"top_p must be in \(0, 1\], got 0.0"),
    (dict(top_p=1.5), r"top_p must be in \(0, 1\], got 1.5"),
    (dict(top_k=-1), "top_k must be an integer >= 0"),
])
def test_sampling_params_reject_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SamplingParams(**kwargs)


def test_top_p_keeps_the_smallest_set_reaching_p_in_each_row():
    probs = torch.tensor([[0.1, 0.5, 0.3, 0.1]] * 3)
    kept = keep_top_p(probs, torch.tensor([0.7, 0.01, 1.0]))
    torch.testing.assert_close(kept, torch.tensor([[0, 0.625, 0.375, 0], [0.0, 1.0, 0.0, 0.0],
                                                   [0.1, 0.5, 0.3, 0.1]]))


def test_top_k_keeps_each_row_s_k_best():
    scaled = torch.tensor([[1.0, 4.0, 3.0, 2.0]] * 3)
    kept = keep_top_k(scaled, [2, 0, 1])
    inf = float("-inf")
    assert kept.tolist() == [[inf, 4.0, 3.0, inf], [1.0, 4.0, 3.0, 2.0], [inf, 4.0, inf, inf]]


def test_top_k_one_and_tiny_top_p_are_greedy():
    logits = torch.randn(6, 50, generator=torch.Generator().manual_seed(0))
    greedy = logits.argmax(-1).tolist()
    for params in [SamplingParams(temperature=1.0, top_k=1), SamplingParams(temperature=2.0, top_p=1e-6)]:
        assert Sampler("cpu", 0)(logits, [params] * 6, [None] * 6).tolist() == greedy


@pytest.mark.parametrize("seeded", [False, True])
def test_temperature_sampling_follows_the_distribution_in_every_row(seeded):
    """2000 rows of one batch, or of one seeded request each: each token as often
    as its probability, greedy rows beside them untouched."""
    logits = torch.log(torch.tensor([[0.7, 0.2, 0.1]])).repeat(2001, 1)
    params = [SamplingParams(temperature=1.0)] * 2000 + [SamplingParams()]
    generators = [torch.Generator().manual_seed(i) if seeded else None for i in range(2000)] + [None]
    logits[-1] = torch.tensor([0.0, 0.0, 9.0])                       # the greedy row
    tokens = Sampler("cpu", 0)(logits, params, generators)
    freq = torch.bincount(tokens[:-1], minlength=3) / 2000
    torch.testing.assert_close(freq, torch.tensor([0.7, 0.2, 0.1]), atol=0.04, rtol=0)
    assert tokens[-1] == 2


# The token the sampler gives a row whose logits are not finite: its request fails alone.
NOT_FINITE_TOKEN = -1


@pytest.mark.parametrize("fused", [False, True], ids=["plain", "fused"])
def test_a_row_whose_logits_are_not_finite_gets_no_token(fused):
    from minicb.layer_ops import layer_ops
    logits = torch.randn(3, 10, generator=torch.Generator().manual_seed(0)).to(DEVICE)
    logits[1, 4] = float("nan")
    for params in [SamplingParams(), SamplingParams(temperature=1.0, top_p=0.9, top_k=3)]:
        tokens = Sampler(DEVICE, 0, layer_ops(fused).finite_argmax)(logits, [params] * 3, [None] * 3)
        assert tokens[1] == NOT_FINITE_TOKEN and tokens[0] >= 0 and tokens[2] >= 0
        tokens = read_tokens(tokens)
        assert isinstance(tokens[1], RuntimeError) and "not finite" in str(tokens[1])


@pytest.mark.parametrize("engine", ["single", "static"])
def test_seed_reproduces_a_request_whatever_shares_its_batch(llama, engine):
    llm = LLM(llama, engine=engine, max_batch_size=4)
    seeded = SamplingParams(max_tokens=12, temperature=1.0, top_k=50, seed=7, ignore_eos=True)
    alone = llm.generate([[1, 2, 3]], seeded)[0].output_token_ids
    others = SamplingParams(max_tokens=5, temperature=1.0, ignore_eos=True)
    crowded = llm.generate([[9, 9], [1, 2, 3], [4] * 20], [others, seeded, others])
    assert crowded[1].output_token_ids == alone
    different = llm.generate([[1, 2, 3]], SamplingParams(max_tokens=12, temperature=1.0, seed=8,
                                                         ignore_eos=True))
    assert different[0].output_token_ids != alone


@pytest.mark.parametrize("engine", ["single", "static"])
def test_stop_token_ends_the_request_and_is_kept(llama, engine):
    llm = LLM(llama, engine=engine)
    free = llm.generate([[5, 6, 7]], SamplingParams(max_tokens=10, ignore_eos=True))[0]
    stop = free.output_token_ids[3]
    first = free.output_token_ids.index(stop)
    out = llm.generate([[5, 6, 7], [8, 9]], [SamplingParams(max_tokens=10, stop_token_ids=[stop]),
                                             SamplingParams(max_tokens=6, ignore_eos=True)])
    assert out[0].output_token_ids == free.output_token_ids[:first + 1]
    assert out[0].finish_reason == "stop"
    assert len(out[1].output_token_ids) == 6 and out[1].finish_reason == "length"


def test_eos_stops_unless_ignored(tmp_path):
    """Make a checkpoint whose EOS is a token greedy decoding produces, then
    check EOS ends the request, and ignore_eos runs on to max_tokens."""
    import json

    from minicb import make_tiny_checkpoint

    path = make_tiny_checkpoint(tmp_path / "eos", seed=0)
    free = LLM(path).generate([[5, 6, 7]], SamplingParams(max_tokens=8, ignore_eos=True))[0]
    eos = free.output_token_ids[2]
    config = json.loads((tmp_path / "eos" / "config.json").read_text())
    config["eos_token_id"] = eos
    (tmp_path / "eos" / "config.json").write_text(json.dumps(config))
    llm = LLM(path)
    stopped = llm.generate([[5, 6, 7]], SamplingParams(max_tokens=8))[0]
    assert stopped.finish_reason == "eos"
    assert stopped.output_token_ids == free.output_token_ids[:free.output_token_ids.index(eos) + 1]
    ignored = llm.generate([[5, 6, 7]], SamplingParams(max_tokens=8, ignore_eos=True))[0]
    assert ignored.output_token_ids == free.output_token_ids

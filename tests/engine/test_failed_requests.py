"""A request that fails before its first token (its logits are not finite) is
returned like any other failed request, by every front door: ``generate``,
``stream`` and the server. Its metrics have no time to first token."""
import json
import math
import shutil
import urllib.request
from pathlib import Path

import pytest
from safetensors.torch import load_file, save_file

from minicb import LLM, LLMEngine, SamplingParams
from minicb.config import ENGINES
from minicb.tools.serve.server import ServerThread

from ..server.test_server import NAME, OPTIONS, metric, post, wait_until_idle
from .test_step_safety import assert_nothing_held, fail_sampling_for_seed

PROMPTS = [[5, 6, 7], [9], list(range(10, 30))]
PARAMS = SamplingParams(max_tokens=4, ignore_eos=True)


@pytest.fixture(scope="module")
def nan_llama(checkpoints, tmp_path_factory) -> str:
    """The tiny Llama with its final norm's weights nan: every logit it gives is nan."""
    path = tmp_path_factory.mktemp("nan") / "nan-llama"
    shutil.copytree(checkpoints["llama"], path)
    [weights] = Path(path).glob("*.safetensors")
    tensors = load_file(weights)
    tensors["model.norm.weight"].fill_(float("nan"))
    save_file(tensors, weights, metadata={"format": "pt"})
    return str(path)


def assert_failed_before_its_first_token(output):
    assert output.finish_reason == "error" and "logits are not finite" in output.error
    assert output.output_token_ids == [] and output.metrics.ttft is None
    assert output.metrics.finish_time is not None


@pytest.mark.parametrize("engine", ENGINES)
def test_generate_returns_every_request_of_a_nan_model(nan_llama, engine):
    llm = LLM(nan_llama, engine=engine, max_num_seqs=2, max_batch_size=2)
    outputs = llm.generate(PROMPTS, PARAMS)
    assert [o.prompt_token_ids for o in outputs] == PROMPTS
    for output in outputs:
        assert_failed_before_its_first_token(output)
    run = llm.last_run
    assert run.num_requests == 3 and run.output_tokens == 0
    assert math.isnan(run.ttft["p50"]) and math.isnan(run.tpot["p50"])     # nothing to measure
    assert not math.isnan(run.latency["p50"])                               # they did end
    assert_nothing_held(llm.llm_engine)


@pytest.mark.parametrize("engine", ["static", "paged"])
def test_in_a_batch_only_the_failed_requests_lack_a_first_token(llama, monkeypatch, engine):
    fail_sampling_for_seed(monkeypatch, seed=13)
    llm = LLM(llama, engine=engine, max_num_seqs=4, max_batch_size=4)
    bad = SamplingParams(max_tokens=4, temperature=1.0, seed=13)
    outputs = llm.generate(PROMPTS, [PARAMS, bad, PARAMS])
    assert_failed_before_its_first_token(outputs[1])
    assert [len(outputs[i].output_token_ids) for i in (0, 2)] == [4, 4]
    good_ttfts = sorted(outputs[i].metrics.ttft for i in (0, 2))
    assert llm.last_run.ttft["p50"] == pytest.approx(sum(good_ttfts) / 2)  # the two that had one


def test_a_stream_ends_with_the_error(nan_llama):
    engine = LLMEngine(nan_llama, engine="paged", max_num_seqs=2)
    [last] = list(engine.stream([5, 6, 7], PARAMS))
    assert last.finished and last.finish_reason == "error" and last.new_token_ids == []
    assert "logits are not finite" in last.error and last.metrics.ttft is None
    assert_nothing_held(engine)


def test_the_server_answers_a_500_in_openais_shape_and_counts_it(nan_llama):
    engine = LLMEngine(nan_llama, engine="paged", **OPTIONS)
    with ServerThread(engine, NAME) as server:
        for stream in (False, True):
            status, answer = post_maybe_streamed(server.url, stream)
            assert status == (200 if stream else 500), answer
            assert answer["error"]["type"] == "server_error", answer
            assert "logits are not finite" in answer["error"]["message"]
        wait_until_idle(engine)
        assert metric(server.url, 'minicb_requests_finished_total{reason="error"}') == 2


def post_maybe_streamed(url, stream: bool):
    """A completion; streamed, the error event's body (it comes after a 200)."""
    body = {"model": NAME, "prompt": [5, 6, 7], "max_tokens": 3, "stream": stream}
    if not stream:
        return post(url, "/v1/completions", body)
    request = urllib.request.Request(url + "/v1/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        events = [line[6:] for line in response.read().decode().splitlines() if line.startswith("data: ")]
        errors = [json.loads(e) for e in events if e != "[DONE]" and "error" in json.loads(e)]
        return response.status, errors[0] if errors else {"events": events}

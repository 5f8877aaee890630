"""Bad input gets a ValueError naming the request and the value, before any
work runs, and the LLM serves the next good call as if nothing happened."""
import os

import pytest
import torch

from minicb import LLM, SamplingParams

GOOD_PROMPTS = [[5, 6, 7], [8]]
GOOD = SamplingParams(max_tokens=4, ignore_eos=True)


@pytest.fixture(scope="module", params=["single", "static"])
def llm(request, llama):
    return LLM(llama, engine=request.param, max_model_len=64)


@pytest.fixture(scope="module")
def expected(llm):
    return [o.output_token_ids for o in llm.generate(GOOD_PROMPTS, GOOD)]


@pytest.mark.parametrize("prompts,params,message", [
    ([[1, 2], []], GOOD, "request 1: the prompt is empty"),
    ([[1, 2], ""], GOOD, "request 1: the prompt is empty"),
    ([[1, 2], [3, 999]], GOOD, r"request 1: token id 999 is outside the vocabulary \[0, 259\)"),
    ([[-1]], GOOD, r"request 0: token id -1 is outside the vocabulary"),
    ([[1, 2], [3, 4.0]], GOOD, "request 1: token id 4.0 is not an integer"),
    ([[1] * 61], GOOD, "request 0: prompt of 61 tokens \\+ max_tokens 4 exceeds max_model_len 64"),
    ([[1], [2]], [GOOD], "got 1 sampling_params for 2 prompts"),
    ([[1], [2]], [GOOD, dict(max_tokens=3)], "request 1: sampling params must be SamplingParams"),
])
def test_bad_request_is_named_and_the_llm_keeps_serving(llm, expected, prompts, params, message):
    last_run = llm.last_run
    with pytest.raises(ValueError, match=message):
        llm.generate(prompts, params)
    assert llm.last_run is last_run                       # nothing ran
    after = llm.generate(GOOD_PROMPTS, GOOD)
    assert [o.output_token_ids for o in after] == expected


@pytest.mark.parametrize("options,message", [
    (dict(engine="paged-v9"), "unknown engine 'paged-v9'"),
    (dict(attention_backend="cuda-magic"), "unknown attention_backend 'cuda-magic'"),
    (dict(max_batch_size=0), "max_batch_size must be an integer >= 1, got 0"),
    (dict(dtype="int8"), "unsupported dtype 'int8'"),
    (dict(max_model_len=10**6), "max_model_len 1000000 exceeds the model's maximum context 2048"),
    (dict(kv_reservation="exact"), "unknown kv_reservation 'exact'; choose one of"),
    (dict(num_threads=0), "num_threads must be an integer >= 1, got 0"),
    (dict(num_threads=True), "num_threads must be an integer or None, got True"),
    (dict(num_threads=10**6), r"num_threads must be at most the \d+ CPUs of this machine, got 1000000"),
    (dict(device="foo"), "device 'foo' is not a device: use 'cpu' or 'cuda'"),
    (dict(device="mps"), "device 'mps': minicb runs on 'cpu' or 'cuda', not 'mps'"),
    (dict(device="xpu"), "device 'xpu': minicb runs on 'cpu' or 'cuda', not 'xpu'"),
    (dict(device="meta"), "device 'meta': minicb runs on 'cpu' or 'cuda', not 'meta'"),
    (dict(engine="paged", num_blocks=2**31 - 1), r"a KV cache of \d+ token rows would take .* GiB, more than the "
                                                  r".* GiB free on cpu: lower num_blocks or kv_cache_memory_bytes"),
    (dict(engine="continuous", kv_cache_memory_bytes=2**62), r"a KV cache of \d+ token rows would take"),
    (dict(engine="paged", kv_cache_memory_bytes=2**62), r"a KV cache of \d+ token rows would take"),
] + ([] if torch.cuda.is_available() else [
    (dict(device="cuda"), "device 'cuda': CUDA is not available here"),
    (dict(device="cuda:1"), "device 'cuda:1': CUDA is not available here"),
]))
def test_bad_engine_options_are_named(llama, options, message):
    with pytest.raises(ValueError, match=message):
        LLM(llama, **options)


def test_bf16_on_a_gpu_without_it_is_refused_in_one_line(llama, monkeypatch):
    """A T4 (compute capability 7.5) has no bf16: the engine says so and names fp16."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (7, 5))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "Tesla T4")
    from minicb.config import EngineConfig

    with pytest.raises(ValueError, match=r"^dtype 'bfloat16' needs a GPU of compute capability 8.0 or newer; "
                                         r"this Tesla T4 is 7.5: use 'float16'$"):
        EngineConfig(engine="paged", dtype="bfloat16", device="cuda")


def test_not_a_checkpoint_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="no config.json"):
        LLM(str(tmp_path))


def test_numpy_token_ids_are_accepted(llm, expected):
    import numpy as np

    outputs = llm.generate([np.array(p) for p in GOOD_PROMPTS], GOOD)
    assert [o.output_token_ids for o in outputs] == expected
    assert all(type(t) is int for t in outputs[0].prompt_token_ids)


def test_the_engine_sets_torch_threads_on_a_cpu(llama):
    before = torch.get_num_threads()
    try:
        LLM(llama, engine="paged", device="cpu", num_threads=1)
        assert torch.get_num_threads() == 1
        expected = max(1, len(os.sched_getaffinity(0)) // 2)
        assert LLM(llama, engine="paged", device="cpu").llm_engine.config.num_threads == expected
        assert torch.get_num_threads() == expected
    finally:
        torch.set_num_threads(before)


def test_a_cpu_with_an_index_is_the_cpu(llama):
    assert LLM(llama, engine="paged", device="cpu:0").llm_engine.config.device == "cpu"


def test_a_model_that_is_not_a_path_is_named():
    from minicb import LLMEngine

    with pytest.raises(ValueError, match="model must be a checkpoint folder or a built-in model's name, got None"):
        LLMEngine(None)


def test_sampling_params_take_numpy_numbers_as_engine_config_does(llm, expected):
    import numpy as np

    params = SamplingParams(max_tokens=np.int64(4), temperature=np.float32(0.0), top_k=np.int32(0),
                            top_p=np.float32(1.0), seed=np.uint64(3), ignore_eos=np.bool_(True))
    assert (type(params.max_tokens), type(params.top_p), type(params.seed), type(params.ignore_eos)) == \
        (int, float, int, bool)
    assert [o.output_token_ids for o in llm.generate(GOOD_PROMPTS, params)] == expected
    for bad, says in [(dict(max_tokens=np.float64(4.5)), "max_tokens must be an integer >= 1, got np.float64"),
                      (dict(top_p=np.float32("nan")), "top_p must be in"),
                      (dict(ignore_eos=np.int64(1)), "ignore_eos must be True or False")]:
        with pytest.raises(ValueError, match=says):
            SamplingParams(**bad)

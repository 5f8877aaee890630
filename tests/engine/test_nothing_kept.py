"""What an engine gave back is gone: close() in the middle of a run frees the
KV cache on every stage and ends async work, and an engine refused once its
model is loaded frees the model even while the caller holds the error.
Checked with weak references, which die with the last real one."""
import gc
import weakref

import pytest

import minicb.llm
from minicb import LLMEngine, SamplingParams
from minicb.executors.plain import Executor

STAGES = {
    "single": dict(engine="single"),
    "static": dict(engine="static", max_batch_size=4),
    "dynamic": dict(engine="dynamic", max_batch_size=2, max_wait_ms=0.0),
    "continuous": dict(engine="continuous", max_num_seqs=4),
    "paged": dict(engine="paged", max_num_seqs=4, block_size=4),
    "paged, async": dict(engine="paged", max_num_seqs=4, block_size=4, async_scheduling=True),
}


@pytest.fixture
def kv_caches(monkeypatch) -> list:
    """Weak references to every K/V cache an engine asks its executor for."""
    refs, original = [], Executor.new_kv_cache

    def recorded(self, *leading):
        caches = original(self, *leading)
        refs.extend(weakref.ref(cache) for cache in caches)
        return caches

    monkeypatch.setattr(Executor, "new_kv_cache", recorded)
    return refs


@pytest.mark.parametrize("name", STAGES)
def test_close_in_the_middle_of_a_run_frees_the_kv_cache(llama, kv_caches, name):
    engine = LLMEngine(llama, **STAGES[name], max_model_len=64)
    for prompt in ([5, 6, 7], [9, 10], [11]):
        engine.add_request(prompt, SamplingParams(max_tokens=20, ignore_eos=True))
    for _ in range(3):                   # prefill and decodes: the run is half done
        engine.step()
    assert engine.has_unfinished_requests()
    assert kv_caches and any(ref() is not None for ref in kv_caches)
    engine.close()
    gc.collect()
    assert all(ref() is None for ref in kv_caches), f"{name}: a KV cache outlived close()"
    assert not engine.has_unfinished_requests()
    assert engine.executor.model is None


def test_an_engine_refused_once_loaded_frees_its_model_while_the_error_is_held(llama, monkeypatch):
    models, make = [], minicb.llm.make_executor

    def recorded(path, config, model_config=None, **sizes):
        executor = make(path, config, model_config, **sizes)
        models.append(weakref.ref(executor.model))
        return executor

    monkeypatch.setattr(minicb.llm, "make_executor", recorded)
    held = None
    try:
        LLMEngine(llama, engine="paged", kv_cache_memory_bytes=1)
    except ValueError as error:
        held = error                       # as a notebook keeps the last exception
    assert "holds no block" in str(held) and held.__traceback__ is not None
    gc.collect()
    assert models and models[0]() is None, "the refused engine's model outlived its refusal"

"""Engines that share a GPU, on a fake one. Stage 5 sizes its KV cache as vLLM
does (minicb.gpu_memory): gpu_memory_utilization of the GPU less its own weights
and profiled peak, refused with the numbers and the knobs when that is more than
is free. Here every CUDA memory query is answered by a fake GPU whose allocations
are the tensors alive in this process, so the sizing runs on a CPU as it would on
a GPU: two engines side by side, another process holding memory, a closed engine
giving its memory back."""
import gc

import pytest
import torch

from minicb import LLM, LLMEngine, SamplingParams, gpu_memory


def live_bytes() -> int:
    """Bytes of every tensor alive in this process, each storage counted once."""
    storages = {}
    for obj in gc.get_objects():
        if issubclass(type(obj), torch.Tensor) and obj.device.type == "cpu":      # type(): no lazy attributes touched
            storage = obj.untyped_storage()
            storages[storage.data_ptr()] = storage.nbytes()
    return sum(storages.values())


class FakeGpu:
    """A GPU of ``total`` bytes, ``elsewhere`` of them held by other processes,
    whose allocations are this process's tensors made since it was built."""

    def __init__(self, total, elsewhere=0):
        self.total, self.elsewhere = total, elsewhere
        gc.collect()
        self.baseline = live_bytes()
        self.highest = 0

    def is_gpu(self, device):
        return True

    def release(self, device):
        gc.collect()

    def allocated(self, device):
        return max(0, live_bytes() - self.baseline)

    reserved = allocated            # no caching allocator: what is held is what is allocated

    def total_and_free(self, device):
        return self.total, self.total - self.elsewhere - self.allocated(device)

    def reset_peak(self, device):
        self.highest = self.allocated(device)

    def peak(self, device):
        return max(self.highest, self.allocated(device))


@pytest.fixture
def weights(llama):
    """The tiny model's weight bytes: the fake GPUs are sized in them."""
    engine = LLMEngine(llama, engine="paged")
    model = engine.executor.model
    return sum(t.numel() * t.element_size() for t in [*model.parameters(), *model.buffers()])


@pytest.fixture
def fake_gpu(monkeypatch, weights):
    def install(total_in_weights, elsewhere_in_weights=0):
        gpu = FakeGpu(total_in_weights * weights, elsewhere_in_weights * weights)
        monkeypatch.setattr(gpu_memory, "CUDA", gpu)
        return gpu
    return install


def kv_bytes(engine) -> int:
    return engine.stage.k_cache.nbytes + engine.stage.v_cache.nbytes


def paged(llama, share):
    return LLMEngine(llama, engine="paged", gpu_memory_utilization=share)


def test_the_cache_gets_the_share_less_the_engine_s_own_weights(llama, fake_gpu, weights):
    gpu = fake_gpu(100)
    engine = paged(llama, 0.5)
    assert 0.5 * gpu.total - 2 * weights < kv_bytes(engine) <= 0.5 * gpu.total - weights


def test_the_profiled_step_s_peak_is_left_out_of_the_cache(llama, fake_gpu, weights, monkeypatch):
    """A profiled step that holds ten weights' worth of memory at its peak leaves the
    cache that much smaller (planted: a peak read as 0 fails)."""
    from minicb.stages.paged import PagedEngine

    gpu = fake_gpu(100)
    plain = kv_bytes(paged(llama, 0.5))
    profile = PagedEngine.profile_step

    def heavier(self):
        held = torch.empty(10 * weights, dtype=torch.uint8)       # alive during the step
        profile(self)
        gpu.highest = max(gpu.highest, gpu.allocated("cuda"))     # the peak CUDA would count
        del held
    monkeypatch.setattr(PagedEngine, "profile_step", heavier)
    assert plain - kv_bytes(paged(llama, 0.5)) == pytest.approx(10 * weights, rel=0.05)


def test_two_engines_share_a_gpu_and_a_third_is_told_why_it_does_not_fit(llama, fake_gpu, weights):
    gpu = fake_gpu(100)
    first, second = paged(llama, 0.45), paged(llama, 0.45)     # the second does not count the first's
    assert kv_bytes(second) == pytest.approx(kv_bytes(first), rel=0.02)
    with pytest.raises(ValueError) as refused:
        paged(llama, 0.45)
    message = str(refused.value)
    for said in ["no room for the KV cache: gpu_memory_utilization 0.45 of this GPU's",
                 "held by other tensors of this process", "Lower gpu_memory_utilization",
                 "kv_cache_memory_bytes or num_blocks", "close it first (engine.close()"]:
        assert said in message
    total_gib = gpu.total / 2**30
    assert f"{total_gib:.2f} GiB" in message
    first.close()
    assert abs(paged(llama, 0.45).stage.num_blocks - second.stage.num_blocks) <= 1     # its memory came back


def test_another_process_counts_only_when_it_leaves_too_little_free(llama, fake_gpu, weights):
    gpu = fake_gpu(100, elsewhere_in_weights=60)
    with pytest.raises(ValueError, match=r"GiB by other processes and CUDA"):
        paged(llama, 0.9)
    engine = paged(llama, 0.3)                                  # 0.3 of the GPU fits in the 40% left
    assert kv_bytes(engine) <= 0.3 * gpu.total - weights


def test_a_closed_engine_gives_its_memory_back_and_serves_no_more(llama, fake_gpu):
    fake_gpu(100)
    params = SamplingParams(max_tokens=3, ignore_eos=True)
    with LLM(llama, engine="paged", gpu_memory_utilization=0.9) as llm:
        expected = llm.generate([[5, 6, 7]], params)[0].output_token_ids
        with pytest.raises(ValueError, match="no room for the KV cache"):
            paged(llama, 0.9)
    with pytest.raises(RuntimeError, match="the engine is closed"):
        llm.generate([[5, 6, 7]], params)
    with LLM(llama, engine="paged", gpu_memory_utilization=0.9) as again:     # fits now
        assert again.generate([[5, 6, 7]], params)[0].output_token_ids == expected


def test_closing_aborts_what_is_in_flight_and_twice_is_harmless(llama):
    engine = LLMEngine(llama, engine="paged")
    engine.add_request([5, 6, 7], SamplingParams(max_tokens=8, ignore_eos=True))
    engine.step()
    engine.close()
    engine.close()
    assert not engine.has_unfinished_requests() and engine.stage.k_cache is None
    assert engine.executor.model is None

"""Where a decode step's time goes: the profile's table, and an engine left as it was."""
from types import SimpleNamespace

import pytest

from minicb import LLMEngine
from workshop.measure import step_profile
from workshop.measure.step_profile import per_step, profile_decode


def event(name, device, device_us, cpu_us, count):
    return SimpleNamespace(key=name, device_type=SimpleNamespace(name=device), count=count,
                           self_device_time_total=device_us, self_cpu_time_total=cpu_us)


def test_a_gpu_profile_keeps_the_kernels_per_step_most_first(monkeypatch):
    monkeypatch.setattr(step_profile, "TOP_KERNELS", 2)
    events = [event("aten::mm", "CPU", 0, 900, 40), event("gemm", "CUDA", 800, 0, 40),
              event("paged_attention", "CUDA", 1200, 0, 20), event("rms_norm", "CUDA", 200, 0, 40),
              event("argmax", "CUDA", 40, 0, 4), event("idle", "CUDA", 0, 0, 4)]
    rows = per_step(events, num_steps=4, on_device=True)
    assert rows == [dict(name="paged_attention", ms=pytest.approx(0.3), calls=5.0),
                    dict(name="gemm", ms=pytest.approx(0.2), calls=10.0),
                    dict(name="2 others", ms=pytest.approx(0.06), calls=11.0)]
    host = per_step(events, num_steps=4, on_device=False)
    assert host == [dict(name="aten::mm", ms=pytest.approx(0.225), calls=10.0)]


def test_the_profiled_steps_are_decodes_of_the_whole_batch_and_nothing_is_left_held(llama):
    engine = LLMEngine(llama, engine="paged", max_num_seqs=4, max_model_len=128, attention_backend="sdpa")
    run = profile_decode(engine, batch=4, context=40, num_steps=3)
    assert (run["batch"], run["context"], run["steps"]) == (4, 40, 3)
    assert run["kernels"] == []                                   # a CPU runs no kernels
    assert run["wall_ms"] >= sum(k["ms"] for k in run["host"]) / 2 > 0
    assert run["host"] and all(k["ms"] > 0 and k["calls"] > 0 for k in run["host"])
    named = [k["ms"] for k in run["host"] if not k["name"].endswith(" others")]
    assert named == sorted(named, reverse=True)
    assert any("mm" in k["name"] or "linear" in k["name"] for k in run["host"])
    kv = engine.stage.kv
    assert not engine.has_unfinished_requests()
    assert len(kv.free_blocks) == kv.num_blocks and not kv.block_tables         # nothing leaked

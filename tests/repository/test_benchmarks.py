"""The benchmark experiments measure what they say: every layout computes the
same attention, the roofline counts the right bytes, decode steps run full."""
from types import SimpleNamespace

import pytest
import torch

from minicb import LLMEngine
from workshop.measure import benchmarks, decode_step
from minicb.tools.bench.offline import format_rounds, warm_up
from minicb.checkpoint import load_model
from minicb.kernels.online_softmax import tile_options


def test_every_decode_attention_case_computes_the_same_output():
    cases, num_bytes = decode_step.decode_attention_cases(3, 48, 4, 2, 16, torch.float32, "cpu")
    outputs = {}
    for name, fn in cases.items():
        out = fn()
        if isinstance(out, list):                                  # stage 1: one call per sequence
            out = torch.cat(out)
        outputs[name] = out.reshape(3, 4, 16)                      # [batch, heads, d] whatever the layout
    expected = outputs.pop("naive reference")
    for name, out in outputs.items():
        torch.testing.assert_close(out, expected, atol=2e-5, rtol=2e-5, msg=name)
    assert num_bytes == 4 * (2 * 3 * 48 * 2 * 16 + 2 * 3 * 4 * 16)


def test_tile_lengths_time_the_paged_kernel_at_each_length_in_turns():
    """On a GPU the timer replays a CUDA graph (graph_ms); here the CPU's, on the
    interpreter: what is checked is which kernel runs with which tile, and the rows."""
    seen = []

    def timer(fn):
        seen.append(fn)
        return benchmarks.time_ms(fn, reps=1)

    rows = decode_step.tile_lengths(2, 64, 4, 2, 16, torch.float32, "cpu", bandwidth=1e9,
                                   lengths=(16, 32), repeats=2, timer=timer)
    assert [r["tile_keys"] for r in rows] == [16, 32] and all(len(r["ms"]) == 2 for r in rows)
    assert seen[0] is seen[2] and seen[1] is seen[3] and seen[0] is not seen[1]      # in turns
    assert all(r["of_copy"] > 0 and r["head_dim"] == 16 for r in rows)


def test_time_ms_and_copy_bandwidth_are_positive():
    assert benchmarks.time_ms(lambda: torch.ones(1000).sum()) > 0
    assert benchmarks.copy_bandwidth("cpu", 2**20) > 0


def test_interleaved_ms_times_every_case_in_turns():
    calls = []
    times = benchmarks.interleaved_ms({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, repeats=2)
    assert {name: len(ms) for name, ms in times.items()} == {"a": 2, "b": 2}
    assert all(ms > 0 for each in times.values() for ms in each)
    assert calls[:12] == ["a"] * 6 + ["b"] * 6 and calls[12:] == ["a"] * 6 + ["b"] * 6   # warm-up + 5, in turns


@pytest.mark.parametrize("arch", ["llama", "qwen3"])          # untied, and tied embeddings
def test_decode_weight_bytes_count_the_lm_head_and_not_the_embedding(checkpoints, arch):
    """A step reads the lm_head whole and one embedding row per token. Tied, the
    two share one memory, which counts once (as the lm_head)."""
    model = load_model(checkpoints[arch])
    tied = model.config.tie_word_embeddings
    assert tied == (arch == "qwen3")
    assert (model.lm_head.weight.data_ptr() == model.embed_tokens.weight.data_ptr()) == tied
    layers = sum(p.numel() * 4 for name, p in model.named_parameters()
                 if not name.startswith(("embed_tokens", "lm_head")))
    lm_head = model.lm_head.weight.numel() * 4
    assert decode_step.decode_weight_bytes(model) == layers + lm_head


@pytest.mark.parametrize("overlap", [False, True])
def test_decode_steps_run_the_whole_batch(llama, overlap):
    engine = LLMEngine(llama, engine="paged", attention_backend="sdpa", max_num_seqs=4, async_scheduling=overlap)
    steps = decode_step.decode_steps_at(engine, 4, 20, 5)
    assert len(steps) == 5
    assert all(a.started < b.started for a, b in zip(steps, steps[1:]))     # in the order they ran
    assert all(s.kind == "decode" and s.useful_rows == 4 and s.num_tokens == 4 for s in steps)
    assert all(0 < s.host_time < s.duration and 0 < s.forward_time < s.duration for s in steps)
    assert all(s.host_time + s.forward_time < s.duration for s in steps)
    assert not engine.has_unfinished_requests() and engine.stage.kv.num_used_blocks == 0


def test_decode_steps_run_the_whole_batch_when_prompts_take_many_steps_to_admit(llama):
    """Notebook 08's roofline at full scale: prompts of 1,024 tokens against a budget of
    2,048 tokens a step, so the batch of 8 joins over several steps."""
    engine = LLMEngine(llama, engine="paged", attention_backend="sdpa", max_num_seqs=8, max_model_len=2048)
    assert engine.config.max_num_batched_tokens == 2048
    steps = decode_step.decode_steps_at(engine, 8, 1024, 16)
    assert len(steps) == 16 and all(s.useful_rows == 8 for s in steps)


def test_the_first_decode_step_at_a_batch_size_is_not_timed(monkeypatch):
    """It may capture the batch size's CUDA graph (on an H200, 413 to 971 ms against
    about 3 ms a step): the roofline's steps start after it."""
    from minicb.metrics import StepRecord

    starts = [0.0, 0.9, 0.901, 0.902, 0.903, 0.904]         # a capture, then steps of 1 ms
    monkeypatch.setattr(decode_step, "decode_steps_at", lambda engine, batch, context, n: [
        StepRecord("decode", [0] * batch, batch, 0, 0, started=t) for t in starts[:n]])
    row = decode_step.roofline_row(None, 1, 16, weights=1e6, kv_per_token=100, bandwidth=1e9, decode_steps=3)
    assert row["step_ms_each"] == pytest.approx([1.0, 1.0, 1.0]) and row["step_ms"] == pytest.approx(1.0)


def test_load_rates_scale_the_saturation_rate():
    assert benchmarks.load_rates(8.0) == {"light": 2.0, "heavy": 7.2}


def test_warm_up_runs_every_tile_height_and_leaves_nothing_behind(llama):
    engine = LLMEngine(llama, engine="paged", max_model_len=64, block_size=4)
    cfg = engine.executor.config
    warm_up(engine)
    heights = {tile_options(torch.float32, cfg.head_dim, cfg.num_attention_heads // cfg.num_key_value_heads,
                            s.num_tokens)["BLOCK_M"] for s in engine.stage.steps if s.kind == "prefill"}
    assert heights == {16, 32}                        # every height an fp32 tile has
    assert not engine.has_unfinished_requests() and engine.stage.kv.num_used_blocks == 0

    small_steps = LLMEngine(llama, engine="continuous", max_num_seqs=4, max_num_batched_tokens=5)
    warm_up(small_steps)                              # no chunked prefill: a prompt must fit one step
    assert max(s.num_tokens for s in small_steps.stage.steps) <= 5 and not small_steps.has_unfinished_requests()


def test_rounds_table_gives_each_rounds_ratio_and_their_median():
    rounds = [{"paged": SimpleNamespace(output_throughput=p), "hf": SimpleNamespace(output_throughput=h)}
              for p, h in [(300.0, 100.0), (100.0, 100.0), (250.0, 125.0)]]
    paged, hf = format_rounds(rounds).splitlines()
    assert paged.split("x paged:")[1].split() == ["1.00", "1.00", "1.00", "median", "x", "1.00"]
    assert hf.split("x paged:")[1].split() == ["0.33", "1.00", "0.50", "median", "x", "0.50"]


def test_the_predicted_roofline_runs_the_paged_engine_on_a_simulated_gpu():
    """Chapter 8's predicted figure: no step beats reading its bytes once, and the
    fixed cost of a step weighs less the more the step reads."""
    from minicb.costmodel import HARDWARE, MODEL_SHAPES

    rows = decode_step.simulated_decode_roofline("llama-3.2-1b", "h100-sxm", [1, 64], context=256,
                                                max_model_len=512, decode_steps=4)
    assert [r["batch"] for r in rows] == [1, 64]
    assert all(r["step_ms"] > r["roofline_ms"] > 0 for r in rows)
    assert rows[0]["ratio"] > rows[1]["ratio"]
    shape, gpu = MODEL_SHAPES["llama-3.2-1b"], HARDWARE["h100-sxm"]
    kv = 64 * (256 + 4 / 2) * shape.kv_bytes_per_token(2)
    assert rows[1]["roofline_ms"] == pytest.approx(1e3 * (shape.params * 2 + kv) / gpu.bandwidth)


def test_the_study_setup_is_the_budget_opt_13b_left_on_an_a100():
    """12,596 tokens (chapter 11); a static batch holds a prompt and the cap per row."""
    kv_tokens = benchmarks.study_kv_tokens()
    assert kv_tokens == 12_596
    rows = {cap: benchmarks.study_options(cap, kv_tokens)["static"]["max_batch_size"]
            for cap in benchmarks.STUDY_CAPS}
    assert rows == {32: 23, 128: 19, 512: 12, 1536: 6}
    options = benchmarks.study_options(1536, kv_tokens)
    assert options["continuous"]["max_num_seqs"] * options["continuous"]["max_model_len"] <= kv_tokens
    assert options["paged"]["num_blocks"] * options["paged"]["block_size"] <= kv_tokens
    assert {o["max_model_len"] for o in options.values()} == {512 + 1536}


def test_the_spread_experiment_sizes_each_cap_and_serves_the_peers_a_prefix(llama, monkeypatch):
    built, served = [], []
    monkeypatch.setattr(benchmarks, "run_workloads", lambda path, engines, workloads, options, progress:
                        built.append({n: options[n]["max_batch_size"] for n in engines})
                        or {cap: {n: n for n in engines} for cap in workloads})
    monkeypatch.setattr(benchmarks, "load_hf_model", lambda *args: "model")
    monkeypatch.setattr(benchmarks, "run_loaded_peer", lambda peer, model, workload, rows, kv:
                        served.append((peer, len(workload.prompts), rows, kv)) or peer)

    def setup(cap):
        return {"static": dict(max_batch_size=cap // 8)}, 1000 + cap

    results = benchmarks.throughput_vs_spread(llama, [16, 64], ["static"], ["hf_generate"], 10, 1.0,
                                              setup, peer_requests=4)
    assert built == [{"static": 2}, {"static": 8}]                  # each cap its own sizes
    assert served == [("hf_generate", 4, 2, 1016), ("hf_generate", 4, 8, 1064)]
    assert results == {16: {"static": "static", "hf_generate": "hf_generate"},
                       64: {"static": "static", "hf_generate": "hf_generate"}}


def test_one_executor_refuses_stages_that_ran_on_different_ones(monkeypatch):
    monkeypatch.setattr("minicb.executors.BUILT", {"static": {"Executor (sdpa attention, eager)"},
                                                   "paged": {"Executor (sdpa attention, eager)"}})
    assert benchmarks.one_executor() == "Executor (sdpa attention, eager)"
    monkeypatch.setattr("minicb.executors.BUILT", {"static": {"Executor (sdpa attention, eager)"},
                                                   "paged": {"GraphExecutor (triton attention, CUDA graphs)"}})
    with pytest.raises(AssertionError, match="different executors"):
        benchmarks.one_executor()

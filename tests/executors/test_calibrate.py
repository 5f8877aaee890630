"""Calibrating this machine: the fit recovers costs it is given, and a profile
measured from a real run drives the simulated executor. (How well it predicts
other runs is a measurement: notebook 11 shows and checks it.)"""
import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from minicb import LLMEngine
from minicb.costmodel import HARDWARE, MODEL_SHAPES, step_seconds
from workshop.measure.decode_step import simulated_decode_roofline
from workshop.measure.calibrate import (OVERHEADS, SequenceLog, calibrate, decode_errors, decode_profile,
                                    decode_runs, fit_costs, fit_decode_sidecar, fit_nonnegative,
                                    launch_cost, spread_errors, step_features)
from minicb.tools.bench.driver import replay
from minicb.tools.bench.workload import synthetic_workload

RATES = dict(copy_gb_s=50.0, matmul_tflops=0.1, matmul_dtype="float32")


def steps_costing(costs, seed=0, num_steps=200):
    """Feature rows of made-up steps, and what ``costs`` makes each cost."""
    rng = np.random.default_rng(seed)
    features = np.column_stack([np.ones(num_steps), rng.integers(1, 16, num_steps),
                                rng.integers(1, 512, num_steps), rng.integers(0, 4096, num_steps)])
    return features, features @ np.asarray(costs)


def test_the_fit_recovers_the_costs_that_made_the_steps():
    costs = [5e-4, 2e-5, 4e-6, 1e-7]
    features, seconds = steps_costing(costs)
    assert fit_costs(features, seconds, seconds) == pytest.approx(costs, rel=1e-6)


def test_a_cost_the_steps_do_not_pay_is_zero_not_negative():
    features, seconds = steps_costing([5e-4, 0.0, 4e-6, 1e-7])
    noisy = seconds - 1e-6 * features[:, 1]             # a little less per sequence
    fitted = fit_nonnegative(features, noisy)
    assert fitted[1] == 0 and (fitted >= 0).all()
    assert fitted[[0, 2, 3]] == pytest.approx([5e-4, 4e-6, 1e-7], rel=0.05)


def test_steps_the_os_interrupted_do_not_move_the_fit():
    costs = [5e-4, 2e-5, 4e-6, 1e-7]
    features, seconds = steps_costing(costs)
    measured = seconds.copy()
    measured[::40] += 0.05                                # 5 steps each lose 50 ms
    assert fit_costs(features, measured, measured) == pytest.approx(costs, rel=1e-3)


def test_features_count_what_each_overhead_is_paid_per():
    # a 5-token prompt and two decodes at contexts of 40 and 12
    assert step_features([(5, 5), (1, 40), (1, 12)]) == [1, 3, 7, 39 + 11]


@pytest.mark.parametrize("engine", ["static", "paged"])
def test_a_profile_measured_from_a_real_run_drives_the_simulated_engine(llama, engine):
    workload = synthetic_workload(8, prompt_len=(4, 24), output_len=(2, 8), seed=1)
    profile = calibrate(llama, "tiny-llama", engine, workload, rates=RATES)
    assert profile.bandwidth == 50e9 and profile.flops == 0.1e12 and profile.dtype == "float32"
    overheads = [getattr(profile, name) for name in OVERHEADS]
    assert all(cost >= 0 for cost in overheads) and sum(overheads) > 0
    simulated = replay(LLMEngine("tiny-llama", engine=engine, executor="simulated",
                                 hardware=profile), workload)
    assert simulated.output_tokens == sum(workload.output_lens) and simulated.wall_time > 0


def test_calibrating_gives_the_engine_back_before_the_next_shape(llama, monkeypatch):
    """On a GPU an engine's KV cache takes most of it: measuring the next shape needs
    the memory back, so the engine is closed once its run is measured."""
    import workshop.measure.calibrate as module

    built = []

    class Kept(LLMEngine):
        def __init__(self, *args, **options):
            super().__init__(*args, **options)
            built.append(self)

    monkeypatch.setattr(module, "LLMEngine", Kept)
    workload = synthetic_workload(4, prompt_len=(4, 8), output_len=(2, 4), seed=1)
    calibrate(llama, "tiny-llama", "paged", workload, rates=RATES)
    assert len(built) == 1 and built[0].closed


def test_the_sequence_log_sees_each_pass_as_the_simulated_executor_does(llama):
    engine = LLMEngine(llama, engine="continuous", max_num_seqs=2)
    timed = engine.stage.executor
    timed.executor = log = SequenceLog(timed.executor)
    run = replay(engine, synthetic_workload(3, prompt_len=4, output_len=2, seed=0))
    # Two 4-token prompts, then their last decodes; the third prompt, then its decode.
    assert log.passes == [([(4, 4), (4, 4)], 2), ([(1, 5), (1, 5)], 2), ([(4, 4)], 1), ([(1, 5)], 1)]
    assert len(run.steps) == len(log.passes)


# ---------------------------------------------------------------- a GPU's decode steps
SIDECAR = Path(__file__).resolve().parents[2] / "figures" / "gpu" / "08_decode_roofline.json"
SPREAD = SIDECAR.parent / "07_throughput_vs_spread.json"
# The engine a GPU runs by default (fused ops, CUDA graphs), without and with async scheduling.
MODES = {"h200-measured": "paged, fused ops", "h200-measured-async": "paged, fused ops, async scheduling"}


def test_a_decode_fit_recovers_the_profile_that_priced_the_steps():
    """Steps the simulated executor priced with a known profile give that profile back."""
    truth = dataclasses.replace(HARDWARE["h200"], bandwidth_fraction=0.55, step_overhead=1.5e-3,
                                sequence_overhead=2e-5)
    runs = {shape: simulated_decode_roofline(shape, truth, batches, 1024, 2048)
            for shape, batches in {"llama-3.2-1b": [1, 16, 128], "llama-3.1-8b": [1, 32]}.items()}
    fitted = decode_profile(HARDWARE["h200"], runs, "fitted", dict(gpu="none"))
    assert fitted.bandwidth_fraction == pytest.approx(0.55, rel=0.01)
    assert fitted.step_overhead == pytest.approx(1.5e-3, rel=0.03)
    assert fitted.sequence_overhead == pytest.approx(2e-5, rel=0.05)
    assert fitted.measured["assumed"] and "flops_fraction" in fitted.measured["assumed"]


def close(got, want, rel=1e-9) -> bool:
    """Equal, floats to within rel, through dicts and lists."""
    if isinstance(want, dict):
        return isinstance(got, dict) and got.keys() == want.keys() and all(close(got[k], want[k]) for k in want)
    if isinstance(want, (list, tuple)):
        return len(got) == len(want) and all(close(g, w) for g, w in zip(got, want))
    if isinstance(want, float):
        return math.isclose(got, want, rel_tol=rel)
    return got == want


@pytest.mark.parametrize("name", MODES)
def test_the_committed_h200_profiles_reproduce_the_runs_decode_steps_within_12_percent(name):
    """Each committed profile is what fitting the committed H200 sidecar gives, and the
    simulated engine with it lands within 12% of every measured decode step (chapter 11
    quotes each profile's worst); the datasheet's assumed profile misses by far more."""
    committed = HARDWARE[name]
    refitted, errors = fit_decode_sidecar(SIDECAR, "h200", MODES[name], committed.measured["commit"],
                                          launches=SPREAD)
    # The least-squares fit's last digits depend on the BLAS numpy was built with.
    assert close(dataclasses.asdict(refitted), dataclasses.asdict(committed)), (refitted, committed)
    assert committed.kind == "measured" and committed.measured["gpu"] == "NVIDIA H200"
    assert all(abs(e["error"]) <= 0.12 for rows in errors.values() for e in rows), errors
    assert {shape: [e["batch"] for e in rows] for shape, rows in errors.items()} == \
        {"llama-3.2-1b": [1, 8, 32, 64, 128, 256], "llama-3.1-8b": [1, 8, 32, 64]}
    datasheet = decode_errors(HARDWARE["h200"], decode_runs(json.loads(SIDECAR.read_text()), MODES[name]))
    assert HARDWARE["h200"].kind.startswith("datasheet")
    assert max(abs(e["error"]) for rows in datasheet.values() for e in rows) > 0.2


def test_a_step_that_carries_a_prompt_costs_what_the_launch_line_measured():
    spread = json.loads(SPREAD.read_text())
    [on], [off] = spread["launches"]["measurements"]["on"], spread["launches"]["measurements"]["off"]
    assert launch_cost(spread) == pytest.approx(off["static"]["median_step_s"] - on["static"]["median_step_s"])
    assert 1e-3 < launch_cost(spread) < 20e-3
    profile = HARDWARE["h200-measured"]
    assert profile.prompt_step_overhead == launch_cost(spread)
    shape = MODEL_SHAPES["llama-3.2-1b"]
    decode, prompt = [(1, 600)] * 4, [(1, 600)] * 3 + [(2, 600)]
    without = dataclasses.replace(profile, prompt_step_overhead=0.0)
    assert step_seconds(profile, shape, 2, decode, 4) == step_seconds(without, shape, 2, decode, 4)
    assert step_seconds(profile, shape, 2, prompt, 4) == pytest.approx(
        step_seconds(without, shape, 2, prompt, 4) + launch_cost(spread))


def test_the_simulated_spread_takes_the_h200s_steps_at_its_narrowest_cap():
    """Notebook 11 runs the whole spread experiment (every cap) and asserts its steps and its
    errors; here the narrowest cap, quickly: every stage takes exactly the steps it took on
    the H200, and ``engines`` and the options added run only what they name, as they name it."""
    spread = json.loads(SPREAD.read_text())
    narrow = dict(spread, setup={"32": spread["setup"]["32"]})
    errors = spread_errors(HARDWARE["h200-measured"], narrow)["32"]
    assert sorted(errors) == ["continuous", "paged", "static"]
    assert all(e["steps"][0] == e["steps"][1] for e in errors.values()), errors
    graphs = spread_errors(HARDWARE["h200-measured"], narrow, engines=("paged",), prompt_graphs=True)["32"]
    assert list(graphs) == ["paged"]
    assert graphs["paged"]["output_tok_s"][0] > errors["paged"]["output_tok_s"][0]     # no launch cost


def test_a_mode_the_sidecar_lacks_is_named_with_those_it_has():
    with pytest.raises(ValueError, match=r"mode 'fast': the sidecar has \['paged', 'paged, async scheduling', 'paged, fused ops', "
                                         r"'paged, fused ops, async scheduling'\]"):
        decode_runs(json.loads(SIDECAR.read_text()), "fast")

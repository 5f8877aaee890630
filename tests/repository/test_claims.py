"""The judge of the notebooks' claims about time, tested on made-up repeats: it
must decide a clear difference either way, refuse to decide a wide spread, and
never pass everything."""
import subprocess
import sys

import numpy as np
import pytest

from workshop.report import scale
from minicb.tools.bench.claims import MAX_OTHERS_CORES, CpuUse, judge, judge_steps
from workshop.report.scale import RUNNING, Scale

CPU, REHEARSAL = Scale("cpu", "cpu", "float32"), Scale("rehearsal", "cpu", "float32")


@pytest.fixture(autouse=True)
def quiet_machine(monkeypatch):
    """What these tests decide must not hang on what else this machine runs."""
    monkeypatch.setattr(scale, "others_cores", lambda: 0.0)


@pytest.mark.parametrize("left,op,right,holds", [
    ([10.0, 10.5, 9.8], "<", [20.0, 21.0, 19.5], True),        # clearly apart, as claimed
    ([10.0, 10.5, 9.8], ">", [20.0, 21.0, 19.5], False),       # clearly apart, the other way
    ([20.0, 21.0, 19.5], ">", [10.0, 10.5, 9.8], True),
    ([1.8, 1.9, 2.4], ">", [1.7, 2.1, 2.2], None),             # ranges overlap: not decided
    ([1.0, 3.0, 1.1], "<", [2.0, 2.1, 2.2], None),             # one outlier widens the margin
    ([2.0, 2.2, 2.1], ">", 1, True),                           # against a fixed bound
    ([0.25, 0.26, 0.24], "<", 0.2, False),
    ([0.15, 0.25, 0.18], "<", 0.2, None),
])
def test_a_clear_gap_is_decided_and_a_wide_spread_is_not(left, op, right, holds):
    assert judge(left, op, right).holds is holds


def test_the_margin_is_both_ranges_added():
    verdict = judge([1.0, 2.0], "<", [4.0, 7.0])               # medians 1.5 and 5.5, ranges 1 and 3
    assert (verdict.left, verdict.right, verdict.margin) == (1.5, 5.5, 4.0)
    assert verdict.holds is None                               # a gap of 4 is not more than 4
    assert judge([1.0, 2.0], "<", [4.1, 7.1]).holds is True


def test_one_repeat_measures_no_spread_so_decides_nothing():
    verdict = judge([1.0], "<", [100.0])
    assert verdict.holds is None and "1 repeat(s)" in verdict.reason


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="op must be '<' or '>', got '<='"):
        judge([1, 2], "<=", [3, 4])
    with pytest.raises(ValueError, match="at least one measured value"):
        judge([], "<", [3, 4])


WRONG_SHARE = 0.01               # with no effect, the share of verdicts "does not hold" it must stay under
EFFECT = 8                       # an effect, in standard deviations of the noise, it must find


def test_on_synthetic_noise_it_rarely_decides_wrongly_and_finds_a_real_effect():
    """Three repeats a side, normal noise of standard deviation 1: with no effect
    at all, a verdict 'does not hold' must be rare (it would fail a notebook for
    nothing); with an effect of 8, the claim must be found to hold almost always.
    A judge that passed everything, or decided nothing, fails one or the other."""
    rng = np.random.default_rng(0)
    trials = [(rng.standard_normal(3), rng.standard_normal(3)) for _ in range(2000)]
    wrong = sum(judge(a, "<", b).holds is False for a, b in trials)
    found = sum(judge(a, "<", b + EFFECT).holds is True for a, b in trials)
    undecided = sum(judge(a, "<", b).holds is None for a, b in trials)
    assert wrong / len(trials) < WRONG_SHARE
    assert found / len(trials) > 0.95
    assert undecided / len(trials) > 0.95                     # no effect: almost always "not decided"


def test_a_notebook_stops_on_a_time_claim_that_fails_and_a_rehearsal_reports_it(capsys):
    RUNNING.clear()
    with pytest.raises(AssertionError, match=r"does NOT hold: static slower"):
        CPU.time_claim([5.0, 5.1, 5.2], "<", [1.0, 1.1, 1.0], "static slower")
    REHEARSAL.time_claim([5.0, 5.1, 5.2], "<", [1.0, 1.1, 1.0], "static slower")
    assert "rehearsal, checked at full scale: does NOT hold: static slower" in capsys.readouterr().out
    assert CPU.time_claim([1.8, 1.9, 2.4], ">", [1.7, 2.1, 2.2], "lead grows").holds is None
    out = capsys.readouterr().out
    assert out.startswith("time claim not decided on this run (the medians differ by 0.2")
    assert "cores): lead grows [1.9 > 2.1, margin 1.1]" in out
    assert len(RUNNING["time_claims"]) == 3                   # every verdict goes into the sidecars


def test_a_busy_machine_decides_nothing(monkeypatch, capsys):
    clear = ([1.0, 1.1, 1.0], "<", [5.0, 5.1, 5.0])
    assert judge(*clear, others_cores=MAX_OTHERS_CORES).holds is True
    monkeypatch.setattr(scale, "others_cores", lambda: 1.9)
    assert CPU.time_claim(*clear, "static slower").holds is None
    assert "(other processes kept 1.9 cores busy; load" in capsys.readouterr().out


def test_other_processes_are_told_from_this_one_and_its_children():
    """CPU seconds, not wall time, so the same on an idle machine and a busy one."""
    assert CpuUse(0.0, 10.0, 4.0).others_cores(CpuUse(2.0, 13.0, 5.0)) == 1.0   # 3 s in all, 1 s of it ours
    burn = "import sys, time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
    before = CpuUse.now()
    done = subprocess.run([sys.executable, "-c", burn + "print(time.process_time())"], capture_output=True,
                          text=True, check=True)
    after_finished = CpuUse.now()
    assert after_finished.own - before.own >= float(done.stdout) - 0.05    # a finished child is ours
    alive = subprocess.Popen([sys.executable, "-c", burn + "print(time.process_time(), flush=True)\nsys.stdin.read()"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        burned = float(alive.stdout.readline())
        assert CpuUse.now().own - after_finished.own >= burned - 0.05     # so is a live one
    finally:
        alive.stdin.close()
        alive.wait()


# --- one run's steps: the block bootstrap ---

def steps(rng, n, median, noise=0.05, correlation=0.8):
    """n step times around median: noise of that relative size, each step like the one
    before it (an AR(1) series, as a run's steps are), and a few slow outliers."""
    walk = np.zeros(n)
    for i in range(1, n):
        walk[i] = correlation * walk[i - 1] + rng.normal(0, noise)
    times = median * (1 + walk)
    times[rng.choice(n, size=n // 50, replace=False)] *= 3      # a GC pause, a page fault
    return times


@pytest.mark.parametrize("effect", [0.05, 0.2])
def test_one_run_s_steps_never_call_a_true_claim_false_nor_a_false_one_true(effect):
    """100 made-up runs with a real gap between two settings' steps: the claim in the
    gap's direction is never called false, the claim against it never true."""
    verdicts = {"<": [], ">": []}
    for seed in range(100):
        rng = np.random.default_rng(seed)
        fast, slow = steps(rng, 400, 1.0), steps(rng, 300, 1.0 + effect)
        for op in verdicts:
            verdicts[op].append(judge_steps(fast, op, slow, seed=seed).holds)
    assert False not in verdicts["<"] and True not in verdicts[">"]
    assert verdicts["<"].count(True) >= (45 if effect == 0.05 else 97)      # and it does decide


def test_one_run_s_steps_with_no_gap_are_rarely_decided():
    decided = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        decided += judge_steps(steps(rng, 400, 1.0), "<", steps(rng, 300, 1.0), seed=seed).decided
    assert decided <= 6         # a 99% interval: about 2 in 200 by chance, correlated steps or not


def test_too_few_steps_are_not_decided():
    verdict = judge_steps([1.0] * 29, "<", [2.0] * 100)
    assert verdict.holds is None and "29 samples: a side needs 30" in verdict.reason


def test_every_verdict_is_recorded_at_once_a_failed_one_too(tmp_path, monkeypatch, capsys):
    """A claim that fails stops the notebook before any later figure is saved: the
    notebook's claims file beside the figures records it all the same."""
    import json

    monkeypatch.setenv("MINICB_FIGURES_DIR", str(tmp_path))
    CPU.sizes("01_single")
    assert RUNNING["run_id"] == scale.this_run()["run_id"] and RUNNING["commit"]
    CPU.time_claim([1.0, 1.1, 1.0], "<", [5.0, 5.1, 5.0], "decode dearer")
    with pytest.raises(AssertionError):
        CPU.time_claim([5.0, 5.1, 5.2], "<", [1.0, 1.1, 1.0], "static slower")
    record = json.loads((tmp_path / "01_single_claims.json").read_text())
    assert record["run_id"] == RUNNING["run_id"] and record["commit"] == RUNNING["commit"]
    assert [(c["claim"], c["holds"]) for c in record["claims"]] == [("decode dearer", True), ("static slower", False)]

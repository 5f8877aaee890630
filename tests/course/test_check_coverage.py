"""The kinds of wrong answer the exercises' checks once let through, one test each: a
dtype never compared, one configuration per exercise, stand-ins that did nothing, when
steps happen, reads past a tensor's end, ranges the cases never reached, misleading
messages; and the checks' own rules: every configuration that calls a function is
run, every answer the contract allows passes, and a check that cannot fail is refused."""
import dataclasses
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl

from minicb.tools.course import check as checking
from minicb.tools.course import differential
from minicb.tools.course.check import check
from minicb.tools.course.student import engine_function, load_stub
from minicb.stages.static import StaticEngine
from minicb.tools.course.runs import probe
from minicb.tools.course.exercises import EXERCISES, CheckFailed

TRIAL = Path(__file__).resolve().parent / "trials" / "first"


def trial(name: str, stem: str):
    return load_stub(EXERCISES[name], TRIAL / name / f"{stem}.py")


def without_generated_inputs(monkeypatch):
    """Only the runs: to show what the engine's runs alone now catch."""
    monkeypatch.setattr(checking, "explore", lambda *args: 0)


# ---------------------------------------------------------------- every configuration
@pytest.mark.long
def test_each_exercise_runs_under_exactly_the_configurations_that_call_its_code(llama):
    calls = probe(llama)
    for name, ex in EXERCISES.items():
        assert set(ex.runs) == calls[name], (name, sorted(calls[name] ^ set(ex.runs)))
    assert len(calls["stop_reason"]) == len(checking.BY_NAME)      # every stage calls it


def test_several_eos_ids_and_ignore_eos_beside_stop_tokens_reach_the_run(llama, monkeypatch):
    without_generated_inputs(monkeypatch)
    with pytest.raises(CheckFailed, match=r"stop_reason \(under \w+.*\): request \d+ got .*\((length|None)\)"):
        check("stop_reason", trial("stop_reason", "wrong_2"), llama)     # ignore_eos hides stop tokens
    with pytest.raises(CheckFailed, match=r"stop_reason \(under .*\): "):
        check("stop_reason", trial("stop_reason", "wrong_3"), llama)     # only the first eos id


def test_a_chunk_that_needs_several_blocks_in_one_call_reaches_the_run(llama, monkeypatch):
    without_generated_inputs(monkeypatch)
    with pytest.raises(CheckFailed, match=r"block_allocation \(under paged, chunked prefill, preempting\)"):
        check("block_allocation", trial("block_allocation", "wrong_2"), llama)


def test_a_queue_bucketing_sorted_has_its_oldest_request_anywhere(llama):
    with pytest.raises(CheckFailed, match=r"dynamic_window \(the oldest not first in the queue\)"):
        check("dynamic_window", trial("dynamic_window", "wrong_1"), llama)


# ---------------------------------------------------------------- stand-ins and when steps happen
def test_a_stand_in_logs_the_calls_that_have_effects(llama):
    with pytest.raises(CheckFailed, match=r"yours called reserve \(what it held KV memory for\) twice"):
        check("admission", trial("admission", "wrong_3"), llama)   # KV held for one that then waits


def late_window(self):
    """Wrong: the window closes one poll after max_wait_ms, not at it."""
    if not self.waiting:
        return []
    oldest = min(r.metrics.arrival_time for r in self.waiting)
    waited = (self.clock() - oldest) * 1e3
    if len(self.waiting) >= self.config.max_batch_size or waited >= self.config.max_wait_ms + 0.1:
        return StaticEngine.next_batch(self)
    return []


def test_a_batch_that_waits_too_long_shows_in_when_its_step_ran(llama, monkeypatch):
    without_generated_inputs(monkeypatch)
    with pytest.raises(CheckFailed, match=r"step \d+ differs. The engine's own code ran at [\d.]+ ms a "
                                          r"\w+ step of requests (\[.*\]) .*; with yours it ran at [\d.]+ ms "
                                          r"a \w+ step of requests \1"):
        check("dynamic_window", late_window, llama)


# ---------------------------------------------------------------- kernels as a GPU sees them
def test_a_table_read_past_a_sequence_s_blocks_is_caught_though_masked_later(llama):
    with pytest.raises(CheckFailed, match=r"paged_rows \(.*\): your kernel read BLOCK_TABLES\[\d+, \d+\], "
                                          r"a block table entry past that sequence's blocks"):
        check("paged_rows", trial("paged_rows", "wrong_1"), llama)


@triton.jit
def _copy_one_too_many(X, OUT, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(OUT + offsets, tl.load(X + offsets, mask=offsets <= n), mask=offsets <= n)


def test_the_memory_guard_names_a_load_past_a_tensor_s_end():
    from minicb.tools.course.memory_guard import OutOfBounds, bounded
    x, out = torch.arange(8.0), torch.zeros(16)
    _copy_one_too_many[(1,)](x, out, 7, BLOCK=16)          # reads x[0..7]: inside
    with bounded(), pytest.raises(Exception) as raised:
        _copy_one_too_many[(1,)](x, out, 8, BLOCK=16)      # x[8]: one past its end
    assert isinstance(checking.innermost(raised.value), OutOfBounds)
    assert "1 element(s) past the end of X" in str(checking.innermost(raised.value))


def test_a_kernel_launched_with_a_num_warps_no_gpu_takes_fails_to_compile(tmp_path):
    norm = Path(checking.__file__).resolve().parents[3] / "kernels" / "norm.py"
    five = norm.read_text().replace("num_warps=8 if hidden >= 2048 else 4", "num_warps=8 if hidden >= 2048 else 5")
    (tmp_path / "rms_norm.py").write_text(five.replace("from .", "from minicb.kernels."))
    with pytest.raises(CheckFailed, match=r"rms_norm: with yours, add_rms_norm_kernel does not compile for "
                                          r"sm_90 \(an H100; num_warps 5.*num_warps must be a power of 2"):
        check("rms_norm", load_stub(EXERCISES["rms_norm"], tmp_path / "rms_norm.py"))


def combine_in_float32(parts, lse, dtype):
    """Wrong: the merge is returned in fp32 whatever dtype is asked for."""
    from minicb.kernels import reference
    return reference.combine_splits(parts, lse, torch.float32)


def test_a_kernel_output_of_the_wrong_dtype_fails_though_its_values_are_right():
    with pytest.raises(CheckFailed, match=r"combine_splits \(float16 out, .*\): is torch.float32; the "
                                          r"reference gives torch.float16"):
        check("combine_splits", combine_in_float32)


# ---------------------------------------------------------------- ranges the cases never reached
def test_log_sum_exps_near_100_and_an_epsilon_beside_rows_of_a_thousandth(llama):
    with pytest.raises(CheckFailed, match=r"combine_splits \(float32, log-sum-exps near 100\): .* is nan"):
        check("combine_splits", trial("combine_splits", "wrong_1"), llama)   # exp without the max
    with pytest.raises(CheckFailed, match=r"rms_norm \(float16, .*\): output 0 \d+% of its elements differ"):
        check("rms_norm", trial("rms_norm", "wrong_2"), llama)               # rounded after the weight


# ---------------------------------------------------------------- messages
def test_a_changed_argument_is_named_as_such_and_the_chapter_s_section_too(llama):
    with pytest.raises(CheckFailed) as failed:
        check("left_padding", trial("left_padding", "wrong_2"), llama)
    assert str(failed.value) == (
        "left_padding (one long, one short): your left_padded changed its argument token_lists: it was "
        "[[5, 6, 7], [8]], and is [[5, 6, 7], [0, 0, 8]] after the call (the engine's own code leaves it as "
        "it was) (chapter 2, \"Left padding\", says what left_padded must do)")


def test_stand_in_requests_are_requests(llama, monkeypatch):
    admit = engine_function(EXERCISES["admission"])
    monkeypatch.setitem(EXERCISES, "admission", dataclasses.replace(EXERCISES["admission"], runs=()))

    def admit_reading_prompts(self, budget):
        assert all(len(r.prompt_token_ids) > 0 for r in self.waiting)   # what a real request has
        return admit(self, budget)
    assert check("admission", admit_reading_prompts, llama).startswith("admission: passed")


def test_a_space_whose_engine_call_breaks_is_an_error_not_a_pass(monkeypatch):
    from minicb.tools.course import function_spaces
    broken = dataclasses.replace(function_spaces.tpot_space(), call=lambda function, d: differential.attempt(
        lambda: function(None)))                        # the harness passes nothing usable
    monkeypatch.setattr(function_spaces, "tpot_space", lambda: broken)
    with pytest.raises(RuntimeError, match="tpot: the check itself is broken"):
        check("tpot", lambda self: 0.0)


# ---------------------------------------------------------------- every correct answer passes
def test_nucleus_sampling_sorted_ascending_as_hugging_face_does_passes(llama):
    assert check("top_p", trial("top_p", "right"), llama).startswith("top_p: passed")


def test_which_tied_tokens_stay_at_the_nucleus_s_edge_is_the_student_s_choice():
    probs = torch.tensor([[0.25, 0.25, 0.25, 0.25]])
    engine, other = torch.tensor([[0.5, 0.5, 0.0, 0.0]]), torch.tensor([[0.0, 0.0, 0.5, 0.5]])
    from minicb.tools.course.function_spaces import same_nucleus
    assert same_nucleus(other, engine) and same_nucleus(engine, engine)
    assert not same_nucleus(torch.tensor([[1 / 3, 1 / 3, 1 / 3, 0.0]]), engine)      # one too many
    assert not same_nucleus(other.half(), engine)                                     # another dtype
    assert probs.sum() == 1

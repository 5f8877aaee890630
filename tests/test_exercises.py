"""The course's exercises: every reference passes its check, every stub fails
with a message a student can act on, and wrong answers are caught where they
go wrong."""
import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import triton
import triton.language as tl

from minicb import costmodel
from minicb.stages.base import stop_reason
from minicb.stages.iteration import Scheduler
from minicb.tools.course.exercises import (EXERCISES, CheckFailed, NotStarted, TimedOut, check,
                                    engine_function, ensure_workspace, in_order, load_stub,
                                    next_exercise, progress, reset, swapped_in)


@pytest.mark.parametrize("name", EXERCISES)
def test_the_engines_own_code_passes_its_check(llama, name):
    assert check(name, engine_function(EXERCISES[name]), llama).startswith(f"{name}: passed")


@pytest.mark.parametrize("name", EXERCISES)
def test_each_stub_fails_saying_it_is_not_written_and_where(llama, name):
    ex = EXERCISES[name]
    with pytest.raises(CheckFailed, match=f"{name}: not written yet. Write {ex.function_name} in "
                                          f".*notebooks/exercises/{name}.py"):
        check(name, load_stub(ex, ex.stub), llama)


def test_at_least_24_exercises_cover_every_chapter_four_of_them_kernels():
    from minicb.tools.course.exercises import KernelExercise
    chapters = [e.chapter for e in EXERCISES.values()]
    assert len(chapters) >= 24 and set(chapters) == set(range(1, 12))
    assert all(chapters.count(c) >= 2 for c in range(1, 7))
    assert sum(isinstance(e, KernelExercise) for e in EXERCISES.values()) >= 4


def admit_skipping_the_head(self, budget):
    """Wrong: a request that does not fit is skipped, so later ones overtake it."""
    if not self.admission_open():
        return []
    admitted = []
    for request in list(self.waiting):
        if len(self.running) >= self.config.max_num_seqs:
            break
        n = self.reserve(request, budget)
        if n:
            self.waiting.remove(request)
            self.running.append(request)
            admitted.append((request, n))
            budget -= n
    return admitted


def allocate_without_taking(self, request, num_tokens):
    """Wrong: blocks are handed out but stay on the free list."""
    table = self.block_tables.setdefault(request, [])
    while len(table) < self.blocks_for(num_tokens):
        table.append(self.free_blocks[len(table) % len(self.free_blocks)])


def cache_rows_off_by_one(self, request, start, count):
    table, size = self.block_tables[request], self.block_size
    return [table[p // size] * size + (p + 1) % size for p in range(start, start + count)]


def tpot_over_all_tokens(self):
    return (self.finish_time - self.first_token_time) / self.num_output_tokens


def next_batch_ignoring_time(self):
    if len(self.waiting) < self.config.max_batch_size:
        return []
    return [self.waiting.popleft() for _ in range(self.config.max_batch_size)]


def allocate_from_the_back(self, request, num_tokens):
    """Wrong: the same number of blocks, each taken from the back of the free list."""
    table = self.block_tables.setdefault(request, [])
    while len(table) < self.blocks_for(num_tokens):
        table.append(self.free_blocks.pop())


@triton.jit
def attend_block_without_rescaling(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    """Wrong: what earlier blocks summed is never rescaled to the new maximum."""
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    s = tl.where(visible, s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, 1))
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
    p = tl.exp(s - m_safe[:, None])
    return m_new, l_i + tl.sum(p, 1), acc + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)


@triton.jit
def attend_block_without_the_guard(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    """Wrong: a row that has seen no visible key subtracts a max of -inf, and gets nan."""
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    s = tl.where(visible, s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, 1))
    p = tl.exp(s - m_new[:, None])
    alpha = tl.exp(m_i - m_new)
    return m_new, l_i * alpha + tl.sum(p, 1), acc * alpha[:, None] + tl.dot(
        p.to(v.dtype), v, input_precision=PRECISION)


@triton.jit
def attend_block_shifting_by_the_minimum(q, k, v, visible, m_i, l_i, acc, scale, PRECISION: tl.constexpr):
    """Wrong: the shift is the block's smallest visible score, not the largest. Any shift
    gives the same softmax in exact arithmetic, but exp() overflows for large scores."""
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    s = tl.where(visible, s, float("-inf"))
    smallest = tl.min(tl.where(visible, s, float("inf")), 1)
    m_new = tl.maximum(m_i, tl.where(smallest == float("inf"), float("-inf"), smallest))
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
    p = tl.exp(s - m_safe[:, None])
    alpha = tl.exp(m_i - m_safe)
    return m_new, l_i * alpha + tl.sum(p, 1), acc * alpha[:, None] + tl.dot(
        p.to(v.dtype), v, input_precision=PRECISION)


@triton.jit
def key_rows_ignoring_the_table(BLOCK_TABLE, keys, block_size, context_len):
    """Wrong: as if the sequence's blocks were the pool's first, in order."""
    return keys


def combine_by_averaging(parts, lse, dtype):
    """Wrong: every range weighs the same, however many keys it saw."""
    return parts.mean(0).to(dtype)


def rms_norm_forgetting_the_residual(x, residual, weight, eps):
    """Wrong: the row is normalised before the residual is added."""
    from minicb.kernels import reference
    out, _ = reference.add_rms_norm(x, None, weight, eps)
    return out, x if residual is None else x + residual


def stop_reason_without_stop_tokens(request, token):
    """Wrong: the request's stop tokens are never looked at."""
    if token in request.eos_token_ids and not request.params.ignore_eos:
        return "eos"
    return "length" if len(request.output_token_ids) >= request.params.max_tokens else None


def keep_top_p_unfiltered(probs, top_p):
    """Wrong: nothing is dropped."""
    return probs


def right_padded(token_lists):
    """Wrong: the padding goes after the tokens."""
    longest = max(len(tokens) for tokens in token_lists)
    pad_lens = [longest - len(tokens) for tokens in token_lists]
    ids = [tokens + [0] * pad for pad, tokens in zip(pad_lens, token_lists)]
    positions = [list(range(longest)) for _ in token_lists]
    return ids, positions, pad_lens


def next_batch_unsorted(self):
    """Wrong: bucket_by_length ignored."""
    size = min(len(self.waiting), self.config.max_batch_size)
    return [self.waiting.popleft() for _ in range(size)]


def last_fit(self, request):
    """Wrong: the last hole that fits, not the first."""
    size = self.slot_size(request)
    fitting = [i for i, hole in enumerate(self.holes) if len(hole) >= size]
    return fitting[-1] if fitting else None


def preempt_to_the_back(self, request):
    """Wrong: the preempted request goes to the back of the queue."""
    self.running.remove(request)
    self.kv.free(request)
    request.num_computed_tokens = 0
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.preempted = True
    self.waiting.append(request)


def preempt_uncounted(self, request):
    """Wrong: the scheduler never counts the preemption (the server's /metrics reads it)."""
    self.running.remove(request)
    self.kv.free(request)
    request.num_computed_tokens = 0
    request.num_preemptions += 1
    self.preempted = True
    self.waiting.appendleft(request)


def preempt_unmarked(self, request):
    """Wrong: the scheduler is never told that this step preempted (self.preempted)."""
    self.running.remove(request)
    self.kv.free(request)
    request.num_computed_tokens = 0
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.waiting.appendleft(request)


def admission_open_never_resetting(self):
    """Wrong: the count of steps since the last admission never goes back to 0."""
    self.steps_since_admission += 1
    return not self.running or (
        self.steps_since_admission >= self.config.schedule_interval
        and len(self.waiting) >= self.config.waiting_served_ratio * len(self.running))


@pytest.mark.parametrize("name,function,message", [
    ("stop_reason", stop_reason_without_stop_tokens,
     r"stop_reason \(an eos token that is also a stop token\): yours gives 'eos'; the engine's own "
     r"code gives 'stop'"),
    ("top_p", keep_top_p_unfiltered, r"top_p \(a mass exactly at top_p\): yours gives "
     r"tensor\(\[\[0.5000, 0.2500, 0.2500\]\]\); the engine's own code gives tensor\(\[\[1., 0., 0.\]\]\)"),
    ("left_padding", right_padded, r"left_padding \(one long, one short\): yours gives "
     r"\(\[\[5, 6, 7\], \[8, 0, 0\]\], "),
    ("static_batches", next_batch_unsorted, r"static_batches \(with bucket_by_length=True\): step 1 "
     r"differs. The engine's own code ran a prefill step of requests \['9', '13', '6'\] \(\d+ tokens "
     r"fed, \d+ KV token slots held\); with yours it ran a prefill step of requests \['0', '1', '2'\]"),
    ("first_fit", last_fit, r"first_fit: after step \d+, request \d+ holds cache rows \[start, stop\) "
     r"\(\d+, \d+\); the engine's own code gives it \(\d+, \d+\) \(a slot goes in the first hole "
     r"it fits\)"),
    ("preemption", preempt_to_the_back, r"preemption( \(with [^)]*\))?: (step \d+ differs|after step \d+)"),
    ("preemption", preempt_unmarked,
     r"preemption \(with enable_chunked_prefill=True, max_num_batched_tokens=16\): step \d+ differs"),
    ("preemption", preempt_uncounted, r"preemption( \(with [^)]*\))?: with yours the scheduler counted 0 preemptions"),
    ("admission_trigger", admission_open_never_resetting,
     r"admission_trigger \(the interval reached exactly, the ratio met exactly\): yours gives "
     r"\(True, \(\['x', 'y'\], \['a', 'b', 'c'\], 3\)\); the engine's own code gives \(True, "),
    ("block_allocation", allocate_from_the_back,
     r"block_allocation \(with block_size=4, num_blocks=64\): "
     r"after step 1, request 0 holds blocks \[63, 62, .*, 50\]; the engine's own "
     r"code gives it \[0, 1, .*, 13\] \(new blocks come from the front of the free list, in order\)"),
    ("online_softmax", attend_block_without_rescaling,
     r"online_softmax \(float32, 1 queries over 37 keys, 4/2 heads\): element \[0, \d, \d+\] is "
     r"-?[\d.e-]+, the reference -?[\d.e-]+ \(\d+ of 64 elements outside atol 1e-05, rtol 0.0001\)"),
    ("online_softmax", attend_block_shifting_by_the_minimum,
     r"online_softmax \(float32, scores in the hundreds\): element \[\d, \d, \d+\] is nan"),
    ("online_softmax", attend_block_without_the_guard,
     r"online_softmax \(float32, a prompt left-padded by 5 beside one unpadded\): element "
     r"\[0, [0-4], \d, \d+\] is nan, the reference 0 "),
    ("paged_rows", key_rows_ignoring_the_table,
     r"paged_rows \(float32, blocks of 1, a prompt, a chunk and decodes\): element \[0, 0, \d+\]"),
    ("combine_splits", combine_by_averaging,
     r"combine_splits \(float32, 3 ranges, some empty\): element \[\d, \d, \d+\]"),
    ("rms_norm", rms_norm_forgetting_the_residual,
     r"rms_norm \(float32, 3 rows of 64, with a residual\): output 0 element \[0, \d+\]"),
])
def test_a_wrong_answer_breaks_the_exercise_s_own_rule(llama, name, function, message):
    with pytest.raises(CheckFailed, match=message):
        check(name, function, llama)


def judge_ignoring_the_spread(left, op, right, others_cores=None):
    """Wrong: any difference of the medians decides the claim."""
    from statistics import median
    from minicb.tools.report.claims import Verdict, samples, spread
    left, right = samples(left), samples(right)
    gap = median(right) - median(left) if op == "<" else median(left) - median(right)
    return Verdict(gap > 0, median(left), median(right), spread(left) + spread(right))


def judge_with_a_strict_spread(left, op, right, others_cores=None):
    """Wrong: medians apart by exactly the margin decide the claim (the contract: no more
    than the margin is not decided)."""
    return judge_with_boundaries(left, op, right, others_cores, lambda gap, margin: abs(gap) < margin,
                                 lambda cores: cores > 0.5)


def judge_busy_at_the_limit(left, op, right, others_cores=None):
    """Wrong: a machine exactly at MAX_OTHERS_CORES counts as busy (the contract: over it)."""
    return judge_with_boundaries(left, op, right, others_cores, lambda gap, margin: abs(gap) <= margin,
                                 lambda cores: cores >= 0.5)


def judge_with_boundaries(left, op, right, others_cores, too_close, busy):
    from statistics import median
    from minicb.tools.report.claims import Verdict, is_bound, samples, spread
    left, right = samples(left), samples(right)
    lows, highs = (left, right) if op == "<" else (right, left)
    margin = spread(lows) + spread(highs)
    gap = median(highs) - median(lows)
    repeats = [len(side) for side in (lows, highs) if not is_bound(side)]
    if min(repeats) < 2 or (others_cores is not None and busy(others_cores)) \
            or too_close(gap, margin):
        return Verdict(None, median(left), median(right), margin)
    return Verdict(gap > 0, median(left), median(right), margin)


def percentiles_by_rank(values):
    """Wrong: the nearest rank, not interpolated."""
    ordered = sorted(values) or [float("nan")]
    at = lambda q: float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])   # noqa: E731
    return dict(mean=sum(ordered) / len(ordered), p50=at(0.5), p90=at(0.9), p99=at(0.99))


def take_without_holding_back(self, final):
    """Wrong: everything pending goes out at once, a stop string's start included."""
    piece, self.pending = self.pending, ""
    return piece


def vocab_share_unpadded(weight, rank, n):
    """Wrong: the last rank's share is as short as its range."""
    import math
    from torch import nn
    share = math.ceil(weight.shape[0] / n)
    start = min(rank * share, weight.shape[0])
    end = min(start + share, weight.shape[0])
    return start, end, nn.Parameter(weight[start:end].clone(), requires_grad=False)


def collective_bytes_once_per_layer(cfg, num_tokens, num_sampled, n, bytes_per_value):
    """Wrong: one all-reduce per layer, not one after attention and one after the MLP."""
    import math
    row = cfg.hidden_size * bytes_per_value
    return dict(all_reduce=(1 + cfg.num_hidden_layers) * num_tokens * row,
                all_gather=num_sampled * math.ceil(cfg.vocab_size / n) * bytes_per_value)


def step_seconds_with_every_step_replayed(hw, shape, bytes_per_value, sequences, sampled):
    """Wrong: a step that carries a prompt priced as if it replayed a CUDA graph."""
    return ENGINE_STEP_SECONDS(dataclasses.replace(hw, prompt_step_overhead=0.0), shape,
                               bytes_per_value, sequences, sampled)


ENGINE_STEP_SECONDS = costmodel.step_seconds      # the check puts the one under test in its place


def step_seconds_adding_bytes_and_flops(hw, shape, bytes_per_value, sequences, sampled):
    """Wrong: memory and arithmetic added, as if a GPU could not overlap them."""
    new = sum(n for n, _ in sequences)
    cached = sum(c - n for n, c in sequences)
    memory = shape.params * bytes_per_value + (cached + new) * shape.kv_bytes_per_token(bytes_per_value)
    pairs = sum(n * (c - n) + n * (n + 1) // 2 for n, c in sequences)
    flops = (2 * shape.layers * shape.layer_params * new + 2 * shape.vocab * shape.hidden * sampled
             + 4 * shape.layers * shape.heads * shape.head_dim * pairs)
    return (memory / (hw.bandwidth * hw.bandwidth_fraction) + flops / (hw.flops * hw.flops_fraction)
            + hw.step_overhead + hw.sequence_overhead * len(sequences)
            + hw.token_overhead * new + hw.cached_token_overhead * cached)


def kv_budget_of_the_whole_gpu(hw, shape, bytes_per_value, utilization=0.9):
    """Wrong: utilization forgotten."""
    return hw.memory - shape.params * bytes_per_value


@pytest.mark.parametrize("name,function,message", [
    ("claim_verdict", judge_ignoring_the_spread,
     r"claim_verdict \(within the spread\): yours gives \(True, 1.2, 1.5, 1.2\d*\); the engine's "
     r"own code gives \(None, 1.2, 1.5, 1.2\d*\)"),
    ("claim_verdict", judge_with_a_strict_spread, r"claim_verdict \(medians apart by exactly the spread\): "
     r"yours gives \(True, 1.5, 3.5, 2.0\); the engine's own code gives \(None, 1.5, 3.5, 2.0\)"),
    ("claim_verdict", judge_busy_at_the_limit, r"claim_verdict \(others' cores exactly at the limit\): "
     r"yours gives \(None, "),
    ("percentiles", percentiles_by_rank, r"percentiles \(two values\): yours gives \{'mean': 2.0, "),
    ("stop_holdback", take_without_holding_back,
     r"stop_holdback \(a stop split across pieces\): yours gives \['abc E', 'N', 'D tail', ''\]; "
     r"the engine's own code gives \['abc', ' ', '', ''\]"),
    ("vocab_share", vocab_share_unpadded, r"vocab_share \(10 tokens, rank 2 of 3\): yours gives "
     r"\(8, 10, \(2, 3\), "),
    ("collective_bytes", collective_bytes_once_per_layer, r"collective_bytes \(1 tokens, 1 sampled"),
    ("step_cost", step_seconds_adding_bytes_and_flops, r"step_cost \(one decode\): yours gives "),
    ("step_cost", step_seconds_with_every_step_replayed,
     r"step_cost \(a measured profile, a prompt beside decodes\): yours gives "),
    ("kv_budget", kv_budget_of_the_whole_gpu, r"kv_budget \(OPT-13B on an A100 40 GB\): yours gives "),
])
def test_a_wrong_function_is_caught_on_the_case_that_shows_it(name, function, message):
    with pytest.raises(CheckFailed, match=message):
        check(name, function)


def test_each_kernel_stub_says_it_is_not_started():
    # The stub as the package ships it: a fresh clone has no notebooks/exercises/ copies yet.
    for name in ("online_softmax", "paged_rows", "combine_splits", "rms_norm"):
        with pytest.raises(NotStarted, match=f"{name}: not written yet"):
            check(name, load_stub(EXERCISES[name], EXERCISES[name].stub))


@pytest.mark.parametrize("name,function,message", [
    ("admission", admit_skipping_the_head,
     r"admission \(a head that does not fit\): yours gives \(\[\('b', 4\)\], "),
    ("block_allocation", allocate_without_taking,
     r"block_allocation \(with block_size=4, num_blocks=64\): "
     r"after step 1: blocks \[.*\] are given out twice"),
    ("slot_mapping", cache_rows_off_by_one,
     r"slot_mapping \(with block_size=4, num_blocks=64\): "
     r"request \d+ got \[.*\] \(length\); the engine's own code gives \[.*\] "
     r"\(length\): they part at output token \d+"),
    ("tpot", tpot_over_all_tokens, r"tpot \(two tokens\): yours gives 0.125; the engine's own code "
     r"gives 0.25"),
    ("dynamic_window", next_batch_ignoring_time,
     r"dynamic_window \(the oldest waited exactly the window\): yours gives \(\[\], \['0', '1'\]\); "
     r"the engine's own code gives \(\['0', '1'\], \[\]\)"),
])
def test_a_wrong_answer_is_caught_where_it_goes_wrong(llama, name, function, message):
    with pytest.raises(CheckFailed, match=message):
        check(name, function, llama)


def test_a_request_left_waiting_is_named_stranded(llama, monkeypatch):
    """The run's own rule, without the cases that now catch this answer first."""
    monkeypatch.setitem(EXERCISES, "dynamic_window",
                        dataclasses.replace(EXERCISES["dynamic_window"], cases=None))
    with pytest.raises(CheckFailed, match=r"dynamic_window: requests \['20', '21'\] were still "
                                          r"unfinished 10 s after the last arrival: stranded"):
        check("dynamic_window", next_batch_ignoring_time, llama)


def test_an_error_in_a_students_function_is_named_as_theirs(llama):
    def broken(request, token):
        return request.params.no_such_field
    with pytest.raises(CheckFailed, match=r"stop_reason \(an eos token\): your stop_reason raised "
                       r"AttributeError: 'SamplingParams' object has no attribute 'no_such_field' "
                       r"\(test_exercises.py, line \d+\)"):
        check("stop_reason", broken, llama)


BROKEN = {   # what a student's file may do wrong, and the one line that must say so
    "stop_reason": ("def stop_reason(request, token):\n    while True:\n        pass\n",
                    r"stop_reason: stopped after 10 s, its time limit \(a check takes a few "
                    r"seconds\): does your code loop forever\?"),
    "tpot": ("def tpot(self):\n    return float('nan')\n",
             r"tpot \(one token\): yours gives nan, where a number is due; the engine's own code "
             r"gives 0.0"),
    "admission": ("def admit(self, budget)\n    return []\n",
                  r"admission: .*admission.py, line 1: expected ':'"),
    "first_fit": ("import no_such_module\n", r"first_fit: .*first_fit.py, line 1: loading it "
                  r"raised ModuleNotFoundError: No module named 'no_such_module'"),
    "chunking": ("def fit(self, remaining, budget):\n    return None\n",
                 r"chunking \(16 remaining, 16 left, chunked prefill off\): yours gives None, where "
                 r"a number is due; the engine's own code gives 16"),
    "slot_mapping": ("def cache_rows(self, request, start, count):\n    return None\n",
                     r"slot_mapping \(with block_size=4, num_blocks=64\): "
                     r"the engine raised TypeError in step 1: 'NoneType' object is "
                     r"not iterable in iteration.py's prepare, after your cache_rows returned: what "
                     r"it returned or left behind is not what the engine can use"),
    "percentiles": ("def percentiles(values):\n    return None\n",
                    r"percentiles \(one value\): yours gives None; the engine's own code gives \{'mean': 2.5, .*"),
}


def test_student_code_that_loops_breaks_or_gives_nan_fails_in_one_line_and_the_rest_is_listed(
        llama, tmp_path):
    ensure_workspace(tmp_path)
    for name, (source, _) in BROKEN.items():
        (tmp_path / f"{name}.py").write_text(source)
    lines, failing = progress(tmp_path, llama, seconds=10)
    state = {line.split()[2]: line.split(None, 3)[3] for line in lines[:-1]}
    assert set(state) == set(EXERCISES) and failing == len(BROKEN)
    for name, (_, message) in BROKEN.items():
        assert re.fullmatch(f"FAILING: {message}", state[name]), state[name]
    assert all(state[n] == "not started" for n in EXERCISES if n not in BROKEN)
    with pytest.raises(CheckFailed, match=r"tpot \(one token\): yours gives None, where a number"):
        check("tpot", lambda self: None, llama)


def test_a_check_that_runs_past_its_limit_leaves_the_engine_as_it_was(llama):
    def loops(request, token):
        while True:
            pass
    with pytest.raises(TimedOut, match="stop_reason: stopped after 0.5 s"):
        check("stop_reason", loops, llama, seconds=0.5)
    import minicb.stages.base as base
    assert base.stop_reason is stop_reason
    assert check("stop_reason", None, llama).startswith("stop_reason: passed")


def test_reset_brings_the_stub_back_and_keeps_the_students_file(tmp_path):
    ex = EXERCISES["tpot"]
    assert ensure_workspace(tmp_path) == [e.name for e in in_order()]
    assert ensure_workspace(tmp_path) == []                   # a student's file is never replaced
    mine = tmp_path / "tpot.py"
    mine.write_text("def tpot(self):\n    return 0.0\n")
    assert reset(ex, tmp_path) == f"{mine} is the stub again; yours is in {tmp_path / 'tpot.before-reset-1.py'}"
    assert mine.read_text() == ex.stub.read_text()
    assert (tmp_path / "tpot.before-reset-1.py").read_text() == "def tpot(self):\n    return 0.0\n"
    mine.write_text("# again\n")
    reset(ex, tmp_path)
    assert (tmp_path / "tpot.before-reset-2.py").read_text() == "# again\n"
    assert reset(ex, tmp_path) == f"{mine} is the stub again"    # the stub: nothing to keep
    assert sorted(p.name for p in tmp_path.glob("tpot*")) == [
        "tpot.before-reset-1.py", "tpot.before-reset-2.py", "tpot.py"]


def test_the_engines_own_function_comes_back_after_a_check_even_a_failed_one(llama):
    with pytest.raises(CheckFailed):
        check("stop_reason", lambda request, token: 1 / 0, llama)
    import minicb.stages.base as base
    assert base.stop_reason is stop_reason
    with swapped_in("minicb.stages.iteration:Scheduler.fit", lambda self, r, b: 0):
        assert Scheduler.fit(None, 5, 5) == 0
    assert Scheduler.fit.__qualname__ == "Scheduler.fit"


def test_the_command_lists_and_checks(tmp_path):
    run = lambda *args: subprocess.run([sys.executable, "-m", "minicb", "check", *args],  # noqa: E731
                                       capture_output=True, text=True)
    listed = run("--list")
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == len(EXERCISES)
    assert listed.stdout.startswith("stop_reason        chapter 1  why a request ends")
    answer = tmp_path / "chunking.py"
    answer.write_text("def fit(self, remaining, budget):\n"
                      "    return min(remaining, budget)\n")             # always chunks: wrong
    wrong = run("chunking", "--file", str(answer))
    assert wrong.returncode == 1
    assert wrong.stdout == ("FAILED chunking (16 remaining, 15 left, chunked prefill off): yours gives 15; "
                            "the engine's own code gives 0\n")
    mine = run()                                  # the stubs as they come: nothing started
    assert mine.returncode == 0 and mine.stdout.splitlines()[-1] == f"0 of {len(EXERCISES)} passed, 0 failing"
    first = in_order()[0]                         # the book's first exercise is next
    assert mine.stdout.splitlines()[-2].startswith(f"next: {first.name} (chapter {first.chapter}): ")
    chapters = [int(line.split()[2]) for line in listed.stdout.splitlines()]
    assert chapters == sorted(chapters)           # --list in the book's order
    unknown = run("chunkin")
    assert unknown.returncode == 2 and "no exercise 'chunkin'; --list names them" in unknown.stderr


def test_progress_names_each_exercise_with_its_state_and_fails_while_a_started_one_fails(
        llama, tmp_path):
    """`python -m minicb check` alone: the stubs as they come are not started; one
    written right passes; one written wrong fails with why; the count says so."""
    for ex in EXERCISES.values():
        (tmp_path / f"{ex.name}.py").write_text(ex.stub.read_text())
    (tmp_path / "stop_reason.py").write_text(
        "from minicb.stages.base import stop_reason\n")                  # right: the engine's own
    (tmp_path / "chunking.py").write_text("def fit(self, remaining, budget):\n"
                                          "    return min(remaining, budget)\n")   # always chunks
    lines, failing = progress(tmp_path, llama)
    state = {line.split()[2]: " ".join(line.split()[3:]) for line in lines[:-1]}
    assert set(state) == set(EXERCISES) and failing == 1
    assert state["stop_reason"] == "passed"
    assert state["chunking"].startswith("FAILING: chunking (16 remaining, 15 left, chunked prefill off)")
    assert all(state[n] == "not started" for n in EXERCISES if n not in ("stop_reason", "chunking"))
    assert lines[-1] == f"1 of {len(EXERCISES)} passed, 1 failing"
    chapters = [int(line.split()[1]) for line in lines[:-1]]
    assert chapters == sorted(chapters)
    assert next_exercise(lines).startswith("next: chunking (chapter ")      # a failing one first
    (tmp_path / "chunking.py").write_text(EXERCISES["chunking"].stub.read_text())
    lines, _ = progress(tmp_path, llama)
    assert next_exercise(lines).startswith(f"next: {in_order()[1].name} ")   # then the first not started
    passed = [f"chapter {e.chapter:2d}  {e.name:18s} passed" for e in in_order()]
    assert next_exercise(passed + [f"{len(passed)} of {len(passed)} passed, 0 failing"]) is None


def test_each_chapter_ends_with_its_exercises():
    lessons = Path(__file__).resolve().parents[1] / "lessons"
    for ex in EXERCISES.values():
        chapter = next(lessons.glob(f"{ex.chapter:02d}_*.md")).read_text()
        listed = chapter.split("\n## Exercises\n", 1)[-1]
        assert "\n## Exercises\n" in chapter and f"- `{ex.name}`:" in listed, ex.name
        assert ex.stub.is_file(), ex.name           # what `check` copies into notebooks/exercises/


def test_each_notebook_is_course_material_and_links_its_exercises():
    linked = set()
    for path in sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[01]*.ipynb")):
        notebook = json.loads(path.read_text())["cells"]
        cells = ["".join(c["source"]) for c in notebook]
        # Saved from a run on a CPU (make figures-cpu), so that it reads without running.
        printed = ["".join(o.get("text", "")) for c in notebook for o in c.get("outputs", [])]
        assert any("CPU scale | CPU: " in text for text in printed), path.name
        assert cells[1].startswith("## What you will learn") and "**Before you run it:**" in cells[1] \
            and "?" in cells[1], path.name
        assert cells[-1].startswith("## Try this"), path.name
        linked |= set(re.findall(r"\]\(exercises/(\w+)\.py\)", cells[-1]))
    assert linked == set(EXERCISES)


def test_every_exercise_has_hints_in_tiers_asked_for_one_at_a_time():
    from minicb.tools.course.hints import HINTS, hint
    assert set(HINTS) == set(EXERCISES) and all(len(tiers) >= 2 for tiers in HINTS.values())
    assert hint("block_allocation", 1).startswith("block_allocation, hint 1 of 3 (--hint 2 for the next)")
    assert "the last" in hint("block_allocation", 3) and "popleft" in hint("block_allocation", 3)
    with pytest.raises(ValueError, match="block_allocation has hints 1 to 3, not 4"):
        hint("block_allocation", 4)
    asked = subprocess.run([sys.executable, "-m", "minicb", "check", "paged_rows", "--hint", "2"],
                           capture_output=True, text=True)
    assert asked.returncode == 0 and asked.stdout.startswith("paged_rows, hint 2 of 3")


def test_four_of_the_exercises_are_kernels_in_chapters_1_5_and_8():
    from minicb.tools.course.exercises import KernelExercise
    kernels = {e.name: e.chapter for e in EXERCISES.values() if isinstance(e, KernelExercise)}
    assert kernels == dict(online_softmax=1, paged_rows=5, combine_splits=5, rms_norm=8)


def test_each_notebook_s_question_links_its_answer_and_the_answers_cover_every_notebook():
    notebooks = Path(__file__).resolve().parents[1] / "notebooks"
    answers = (notebooks / "answers.md").read_text()
    for path in sorted(notebooks.glob("[01]*.ipynb")):
        question = "".join(json.loads(path.read_text())["cells"][1]["source"])
        assert "**Before you run it:**" in question and "](answers.md)" in question, path.name
        assert f"\n## {path.stem}: " in answers, path.stem
        try_this = [cell for cell in json.loads(path.read_text())["cells"]
                    if "".join(cell["source"]).startswith("## Try this")]
        assert len(try_this) == 1, path.name
        assert f"](answers.md#try-this-in-{path.stem})" in "".join(try_this[0]["source"]), path.name
        assert f"\n## Try this in {path.stem}\n" in answers, path.stem


# ---------------------------------------------------------------- the answers in the book
ROOT = Path(__file__).resolve().parent.parent
# Each exercise's answer: the listings of the engine's code that solve it, by chapter.
ANSWERS = {
    "01_single.md": [("stop_reason", ["../minicb/stages/base.py:stop_reason"]),
                     ("top_p", ["../minicb/stages/base.py:keep_top_p"]),
                     ("online_softmax", ["../kernels/online_softmax.py:attend_block"])],
    "02_static.md": [("left_padding", ["../minicb/stages/static.py:left_padded"]),
                     ("static_batches", ["../minicb/stages/static.py:next_batch"])],
    "03_dynamic.md": [("dynamic_window", ["../minicb/stages/dynamic.py:engine"]),
                      ("tpot", ["../minicb/request.py:tpot"])],
    "04_continuous.md": [("admission", ["../minicb/stages/iteration.py:admit"]),
                         ("first_fit", ["../minicb/stages/continuous.py:first_fit"])],
    "05_paged.md": [("block_allocation", ["../minicb/stages/paged.py:allocate"]),
                    ("slot_mapping", ["../minicb/stages/paged.py:cache_rows"]),
                    ("paged_rows", ["../kernels/paged_attention.py:key_rows"]),
                    ("combine_splits", ["../kernels/paged_attention.py:combine_kernel",
                                        "../kernels/paged_attention.py:combine"])],
    "06_memory_pressure.md": [("preemption", ["../minicb/stages/paged.py:preempt"]),
                              ("chunking", ["../minicb/stages/iteration.py:chunking"]),
                              ("admission_trigger", ["../minicb/stages/iteration.py:admission_open"])],
    "07_benchmarks.md": [("claim_verdict", ["../minicb/tools/report/claims.py:judge"]),
                         ("percentiles", ["../minicb/metrics.py:percentiles"])],
    "08_fast_step.md": [("rms_norm", ["../kernels/norm.py:kernel", "../kernels/norm.py:wrapper"])],
    "09_serving.md": [("stop_holdback", ["../minicb/tools/serve/server.py:text_stream"])],
    "10_parallelism.md": [("vocab_share", ["../minicb/executors/parallel.py:vocab_share"]),
                          ("collective_bytes", ["../minicb/executors/parallel.py:volume"])],
    "11_simulated.md": [("step_cost", ["../minicb/costmodel.py:step_seconds"]),
                        ("kv_budget", ["../minicb/costmodel.py:kv_budget"])],
}


@pytest.mark.parametrize("chapter", sorted(ANSWERS))
def test_each_answer_is_folded_after_its_exercise_and_not_shown_before(chapter):
    """A reader meets the exercise before the engine's answer, and opens the answer
    on purpose: it is in a <details> fold in the chapter's Exercises section."""
    text = (ROOT / "lessons" / chapter).read_text()
    before, exercises = text.split("\n## Exercises\n", 1)
    folds = re.findall(r"<details>(.*?)</details>", exercises, re.S)
    for name, targets in ANSWERS[chapter]:
        assert EXERCISES[name].chapter == int(chapter[:2]), name
        assert f"`{name}`" in exercises.split("<details>")[0], f"{name} is not set in {chapter}"
        for target in targets:
            include = f"{{{{#include {target}}}}}"
            assert include not in before, f"{chapter} shows {target} before its exercise {name}"
            assert any(include in fold and f"<code>{name}</code>" in fold for fold in folds), \
                f"{chapter}: no fold for {name} holds {target}"


def test_every_exercise_has_its_answer_folded_in_the_book():
    assert sorted(name for pairs in ANSWERS.values() for name, _ in pairs) == sorted(EXERCISES)


def test_mutants_are_the_wrong_answers_students_write():
    """Boundaries flipped, arithmetic turned round, constants off by one, a statement
    left out, min for max, a guard's test negated; never a swap of min's arguments."""
    from minicb.tools.course import mutants
    changes = [words for _, words, _ in mutants.mutants("tpot")]
    assert {"n > 0  ->  n >= 0", "self.num_output_tokens - 1  ->  self.num_output_tokens + 1",
            "1  ->  2", "return (self.finish_time - self.first_token_time) / n if n > 0 else 0.0  ->  "
            "(left out)"} <= set(changes)
    changes = [words for _, words, _ in mutants.mutants("left_padding")]
    assert any(words.startswith("max(") and "->  min(" in words for words in changes)
    assert not any(words.startswith("max(") and "->  max(" in words for words in changes)


def test_a_check_that_cannot_fail_kills_no_mutant(monkeypatch):
    from minicb.tools.course import mutants
    label, _, tree = mutants.mutants("kv_budget")[0]
    wrong = mutants.compiled("kv_budget", tree, label)
    assert mutants.killed("kv_budget", wrong, None, 30)
    monkeypatch.setattr(mutants, "check", lambda *args: "kv_budget: passed")
    assert not mutants.killed("kv_budget", wrong, None, 30)


def test_the_mutation_report_is_of_the_answers_as_they_are_and_a_sample_reruns_as_it_says():
    """tests/mutants.json (make mutants) lists every mutant the engine's answers give now,
    and a sample of them, run again, is killed or survives as it says."""
    from minicb.tools.course import mutants
    report = {row["exercise"]: row for row in json.loads(mutants.REPORT.read_text())}
    assert list(report) == [ex.name for ex in in_order()]
    for name, row in report.items():
        now = [(label, words) for label, words, _ in mutants.mutants(name)]
        assert [(r["label"], r["change"]) for r in row["results"]] == now, f"{name}: make mutants"
        assert row["killed"] == sum(r["killed"] is True for r in row["results"])
        assert row["share"] >= mutants.KILL_TARGET and not row["survivors"], (name, row["survivors"])
        assert all((name, r["change"]) in mutants.EQUIVALENT for r in row["results"]
                   if r["killed"] is False), name            # each survivor explained
    sample = [next(r for r in report[name]["results"] if r["killed"]) | dict(exercise=name)
              for name in ("tpot", "stop_reason", "kv_budget", "admission")]
    sample += [r | dict(exercise=row["exercise"]) for row in report.values()
               for r in row["results"] if r["killed"] is False][:2]
    assert len(sample) == 6
    for record in sample:
        name = record["exercise"]
        tree = next(t for label, _, t in mutants.mutants(name) if label == record["label"])
        function = mutants.compiled(name, tree, record["label"])
        assert mutants.killed(name, function, None, 60) is record["killed"], record

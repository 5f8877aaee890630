"""Wrong answers students write, each caught by its exercise's check where it
goes wrong, in a message that names the exercise, the case and the difference
(the course's checks themselves: tests/course/test_exercises.py)."""
import dataclasses

import pytest
import torch
import triton
import triton.language as tl

from minicb import costmodel
from minicb.tools.course.check import check
from minicb.tools.course.exercises import EXERCISES, CheckFailed




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


def admit_asking_once_a_request(self, budget):
    """Wrong: asks admission_open() before each request, so one step counts as several."""
    admitted = []
    while self.waiting and len(self.running) < self.config.max_num_seqs and self.admission_open():
        request = self.waiting[0]
        n = self.reserve(request, budget)
        if n == 0:
            break
        self.running.append(self.waiting.popleft())
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
     r"float32 tensor \[\[0.5, 0.25, 0.25\]\]; the engine's own code gives float32 tensor \[\[1.0, 0.0, 0.0\]\]"),
    ("left_padding", right_padded, r"left_padding \(one long, one short\): yours gives "
     r"\(\[\[5, 6, 7\], \[8, 0, 0\]\], "),
    ("static_batches", next_batch_unsorted, r"static_batches \(ties in max_tokens, bucketed\): yours gives "
     r"\['0', '1'\]; the engine's own code gives \['1', '3'\]"),
    ("first_fit", last_fit, r"first_fit \(a hole exactly the slot's size\): yours gives \[2\]; the engine's "
     r"own code gives \[1\]"),
    ("preemption", preempt_to_the_back, r"preemption \(the newest of three\): afterwards self.waiting is "
     r"\['w0', 'w1', 'r2'\]; the engine's own code leaves \['r2', 'w0', 'w1'\]"),
    ("preemption", preempt_unmarked, r"preemption \(the newest of three\): afterwards self.preempted is "
     r"False; the engine's own code leaves True"),
    ("preemption", preempt_uncounted, r"preemption \(the newest of three\): afterwards self.num_preemptions "
     r"is 0; the engine's own code leaves 1"),
    ("admission_trigger", admission_open_never_resetting,
     r"admission_trigger \(the interval reached exactly, the ratio met exactly\): yours gives "
     r"\[\(False, 1\), \(False, 2\), \(True, 3\)\]; the engine's own code gives \[\(False, 1\), "
     r"\(False, 2\), \(True, 0\)\]"),
    ("block_allocation", allocate_from_the_back,
     r"block_allocation \(a first table\): afterwards self.block_tables is \{'o0': \[0\], '0': "
     r"\[11, 10, 9\]\}; the engine's own code leaves \{'o0': \[0\], '0': \[1, 2, 3\]\}"),
    ("online_softmax", attend_block_without_rescaling,
     r"online_softmax \(float32, 1 query over 37 keys, 4/2 heads\): element \[0, \d, \d+\] is "
     r"-?[\d.e-]+, the reference -?[\d.e-]+ \(\d+ of 64 elements outside atol 1e-05, rtol 0.0001\)"),
    ("online_softmax", attend_block_shifting_by_the_minimum,
     r"online_softmax \(float32, scores in the hundreds\): element \[\d, \d, \d+\] is nan"),
    ("online_softmax", attend_block_without_the_guard,
     r"online_softmax \(float32, a prompt left-padded beside one unpadded\): element "
     r"\[0, [0-4], \d, \d+\] is nan, the reference 0 "),
    ("paged_rows", key_rows_ignoring_the_table,
     r"paged_rows \(float32, blocks of 1, a prompt, a chunk and decodes\): element \[0, 0, \d+\]"),
    ("combine_splits", combine_by_averaging,
     r"combine_splits \(float32, \d ranges, some empty\): element \[\d, \d, \d+\]"),
    ("rms_norm", rms_norm_forgetting_the_residual,
     r"rms_norm \(float32, 3 rows of 64, with a residual\): output 0 element \[0, \d+\]"),
])
def test_a_wrong_answer_breaks_the_exercise_s_own_rule(llama, name, function, message):
    with pytest.raises(CheckFailed, match=message):
        check(name, function, llama)


def judge_ignoring_the_spread(left, op, right, others_cores=None):
    """Wrong: any difference of the medians decides the claim."""
    from statistics import median
    from minicb.tools.bench.claims import Verdict, samples, spread
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
    from minicb.tools.bench.claims import Verdict, is_bound, samples, spread
    left, right = samples(left), samples(right)
    lows, highs = (left, right) if op == "<" else (right, left)
    margin = spread(lows) + spread(highs)
    gap = median(highs) - median(lows)
    repeats = [len(side) for side in (lows, highs) if not is_bound(side)]
    reason = (f"{min(repeats)} repeat(s): a spread takes 2" if min(repeats) < 2 else
              f"other processes kept {others_cores} cores busy" if others_cores is not None
              and busy(others_cores) else f"the medians differ by {abs(gap):.2g}, within the spread "
              f"{margin:.2g}" if too_close(gap, margin) else "")
    return Verdict(None if reason else gap > 0, median(left), median(right), margin, reason)


def judge_naming_the_most_repeats(left, op, right, others_cores=None):
    """Wrong: the reason names the most repeats a side has, not the fewest (a notebook
    prints it: "3 repeat(s): a spread takes 2" contradicts itself)."""
    from minicb.tools.bench.claims import judge
    verdict = judge(left, op, right, others_cores)
    if "repeat(s)" in verdict.reason:
        counts = [len(side) for side in (left, right) if isinstance(side, list)]
        verdict = dataclasses.replace(verdict, reason=f"{max(counts)} repeat(s): a spread takes 2")
    return verdict


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


def vocab_share_viewing_the_table(weight, rank, n):
    """Wrong: a full share is a view into the whole table, which its rank then keeps alive."""
    import math
    from torch import nn
    share = math.ceil(weight.shape[0] / n)
    start = min(rank * share, weight.shape[0])
    end = min(start + share, weight.shape[0])
    rows = weight[start:end] if end - start == share else torch.cat(
        [weight[start:end], weight.new_zeros(share - (end - start), weight.shape[1])])
    return start, end, nn.Parameter(rows, requires_grad=False)


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
     r"claim_verdict \(within the spread\): yours gives Verdict\(holds=True, left=1.2, right=1.5, "
     r"margin=1.2\d*, reason=''\); the engine's own code gives Verdict\(holds=None, "),
    ("claim_verdict", judge_with_a_strict_spread, r"claim_verdict \(medians apart by exactly the spread\): "
     r"yours gives Verdict\(holds=True, left=1.5, right=3.5, margin=2.0, reason=''\); the engine's own code "
     r"gives Verdict\(holds=None, left=1.5, right=3.5, margin=2.0, "),
    ("claim_verdict", judge_busy_at_the_limit, r"claim_verdict \(others' cores exactly at the limit\): "
     r"yours gives Verdict\(holds=None, "),
    ("claim_verdict", judge_naming_the_most_repeats, r"claim_verdict \(one repeat against three\): yours "
     r"gives Verdict\(holds=None, .*reason='3 repeat\(s\): a spread takes 2'\); the engine's own code "
     r"gives Verdict\(holds=None, .*reason='1 repeat\(s\): a spread takes 2'\)"),
    ("percentiles", percentiles_by_rank, r"percentiles \(two values\): yours gives \{'mean': 2.0, "),
    ("stop_holdback", take_without_holding_back,
     r"stop_holdback \(a stop split across pieces\): yours gives \['abc E', 'N', 'D tail', ''\]; "
     r"the engine's own code gives \['abc', ' ', '', ''\]"),
    ("vocab_share", vocab_share_unpadded, r"vocab_share \(10 tokens, rank 2 of 3\): yours gives "
     r"\{'start': 8, 'end': 10, 'rows': float32 tensor \[\[24.0, 25.0, 26.0\], \[27.0, 28.0, 29.0\]\], "),
    ("vocab_share", vocab_share_viewing_the_table, r"vocab_share \(12 tokens, rank 2 of 3\): yours gives "
     r"\{.*'bytes_held': 144\}; the engine's own code gives \{.*'bytes_held': 48\}"),
    ("collective_bytes", collective_bytes_once_per_layer, r"collective_bytes \(1 token, 1 sampled"),
    ("step_cost", step_seconds_adding_bytes_and_flops, r"step_cost \(one decode\): yours gives "),
    ("step_cost", step_seconds_with_every_step_replayed,
     r"step_cost \(every overhead, a two-token prompt\): yours gives "),
    ("kv_budget", kv_budget_of_the_whole_gpu, r"kv_budget \(OPT-13B on an A100 40 GB\): yours gives "),
])
def test_a_wrong_function_is_caught_on_the_case_that_shows_it(name, function, message):
    with pytest.raises(CheckFailed, match=message):
        check(name, function)


@pytest.mark.parametrize("name,function,message", [
    ("admission", admit_skipping_the_head,
     r"admission \(a head that does not fit\): yours gives \[\('1', 4\)\]; the engine's own code gives \[\]"),
    ("admission", admit_asking_once_a_request, r"admission \(a budget shared out\): yours called "
     r"admission_open 3 times \(\[\(\), \(\), \(\)\]\); the engine's own code calls it once"),
    ("block_allocation", allocate_without_taking,
     r"block_allocation \(a first table\): afterwards self.free_blocks is \[1, 2, 3, .*\]; the engine's "
     r"own code leaves \[4, 5, .*\]"),
    ("slot_mapping", cache_rows_off_by_one,
     r"slot_mapping \(one token at a block's last row\): yours gives \[36\]; the engine's own code "
     r"gives \[39\]"),
    ("tpot", tpot_over_all_tokens, r"tpot \(two tokens\): yours gives 0.125; the engine's own code "
     r"gives 0.25"),
    ("dynamic_window", next_batch_ignoring_time,
     r"dynamic_window \(the oldest waited exactly the window\): yours gives \[\]; "
     r"the engine's own code gives \['0', '1'\]"),
])
def test_a_wrong_answer_is_caught_where_it_goes_wrong(llama, name, function, message):
    with pytest.raises(CheckFailed, match=message):
        check(name, function, llama)


def test_a_request_left_waiting_is_named_stranded(llama, monkeypatch):
    """The run's own rule, without the generated inputs that now catch this answer first, under
    a configuration whose last batch never fills (14 requests, 3 a batch)."""
    from minicb.tools.course import check as checking
    monkeypatch.setattr(checking, "explore", lambda *args: 0)
    monkeypatch.setitem(EXERCISES, "dynamic_window", dataclasses.replace(
        EXERCISES["dynamic_window"], runs=("dynamic, bucketed by length",)))
    with pytest.raises(CheckFailed, match=r"dynamic_window \(under dynamic, bucketed by length\): requests \['\d+'(, '\d+')*\] "
                                          r"were still unfinished 10 s after the last arrival: stranded"):
        check("dynamic_window", next_batch_ignoring_time, llama)

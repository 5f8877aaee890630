"""Exercises: pieces of the engine a student writes, checked against the
engine's own. This file lists them; ``check.py`` checks one and ``progress.py``
is the ``minicb check`` command.

Each exercise is one function of the engine, its *target*: the scheduler's
admission, the block manager's allocate, the dynamic batcher's window. The
student's version lives in ``notebooks/exercises/NAME.py``, a copy of the stub
in ``minicb/tools/course/stubs/`` that raises NotImplementedError until it is written
(``check`` puts the copies there; ``check NAME --reset`` brings one back). The
student's code runs with a time limit, and whatever it does wrong (a syntax
error, an endless loop, a None where a number is due, a value the engine
cannot use) ends as one line that says so, naming the chapter's section that
explains what the function must do.

A check covers the space the function moves in, not a few cases:

- **generated inputs** (its ``space``): the student's function and the engine's
  own are called on the same inputs, drawn across everything the contract
  allows, and compared on everything it fixes: the value returned (its type,
  dtype, shape and device too), what the function did to its arguments and to
  the engine's state, and the calls it made of what it was given. A kernel is
  compared with its naive reference instead, each load and store checked to
  stay inside its tensors, and compiled for real GPUs;
- **every configuration that calls it** (``configurations.py``): the stage runs
  with the student's function swapped in under each, and the run is compared
  with the engine's own, step for step (when each step ran, which requests,
  how many tokens, the KV memory held and where) and request for request (its
  tokens, why it ended, the step of its first token, its TPOT). After every
  step the engine's rules hold: no more than ``max_num_seqs`` running, no step
  over the token budget, no KV memory held twice or lost; at the end, none
  held at all.

Both runs are on a virtual clock, on which every step takes a millisecond and
nothing else takes any time, so a decision that depends on time comes out the
same in both. The reference solution is the engine's own code.

    python -m minicb check --list
    python -m minicb check admission          # your notebooks/exercises/admission.py
    python -m minicb check --reference        # the engine's own code, every exercise
    python -m minicb check                    # your progress: every exercise's state
    python -m minicb check admission --hint   # a hint (--hint 2, --hint 3: the next ones)
    python -m minicb check admission --reset  # the stub again (yours is kept aside)
"""
from dataclasses import dataclass
from pathlib import Path

from .configurations import CONFIGURATIONS


STUBS = Path(__file__).resolve().parent / "stubs"        # as a student starts them
WORKSPACE = Path(__file__).resolve().parents[3] / "notebooks" / "exercises"   # theirs
TIME_LIMIT = 120.0           # seconds a check may run: each takes seconds on a laptop


class CheckFailed(AssertionError):
    """A check found a difference; its message says where, in the student's terms."""


class NotStarted(CheckFailed):
    """The student's function still raises NotImplementedError."""


class TimedOut(CheckFailed):
    """The check ran past its time limit: the student's code loops, most likely."""


@dataclass(frozen=True)
class Exercise:
    name: str
    chapter: int
    section: str                 # the chapter's section that says what the function must do
    target: str                  # "module:Class.function" or "module:function"
    task: str                    # one line: what to write
    space: str                   # its generated inputs: a space of function_spaces,
    #                              method_spaces or (a kernel) kernel_spaces
    runs: tuple = ()             # the configurations whose runs call it (configurations.py)
    kernel: bool = False         # Triton code: checked against its naive reference, compiled for GPUs
    also: tuple = ()             # other modules that import it by name (it is swapped in there too)

    @property
    def stub(self) -> Path:
        return STUBS / f"{self.name}.py"

    @property
    def mine(self) -> Path:
        """Where the student writes it."""
        return WORKSPACE / f"{self.name}.py"

    @property
    def function_name(self) -> str:
        return self.target.rpartition(".")[2].rpartition(":")[2]


def runs_of(*stages: str, triton=None, without=()) -> tuple:
    """The configurations of these stages (every stage, if none is named): with or
    without Triton's kernels (None: both), less those named in ``without``."""
    return tuple(c.name for c in CONFIGURATIONS
                 if (not stages or c.engine["engine"] in stages) and triton in (None, c.triton)
                 and not any(word in c.name for word in without))


SCHEDULER, PAGED = "minicb.stages.iteration:Scheduler", "minicb.stages.paged"
SIMULATED = ("paged, simulated on an H100",)
SPECULATIVE = tuple(c.name for c in CONFIGURATIONS if c.engine.get("speculative_config"))
# ANCHOR: exercises
EXERCISES = {e.name: e for e in [
    Exercise("stop_reason", 1, "Sampling and stopping", "minicb.stages.base:stop_reason",
             "why a request ends: a stop token, end of sequence, or max_tokens", "stop_reason", runs_of()),
    Exercise("top_p", 1, "Sampling and stopping", "minicb.sampling:keep_top_p",
             "nucleus sampling: keep each row's smallest set of tokens reaching top_p", "top_p",
             runs_of(without=("split-KV",))),       # (its two requests are greedy)
    Exercise("left_padding", 2, "Left padding", "minicb.stages.static:left_padded",
             "pad a static batch's prompts on the left, with their positions", "left_padding",
             runs_of("static", "dynamic")),
    Exercise("static_batches", 2, "Custom batching", "minicb.stages.static:StaticEngine.next_batch",
             "cut the next static batch, sorted by max_tokens when bucketing", "static_batches",
             runs_of("static", "dynamic")),
    Exercise("dynamic_window", 3, "The code", "minicb.stages.dynamic:DynamicEngine.next_batch",
             "close a batch when it is full or its oldest request has waited long enough",
             "dynamic_window", runs_of("dynamic")),
    Exercise("tpot", 3, "The knob", "minicb.request:RequestMetrics.tpot",
             "time per output token after the first", "tpot", runs_of()),
    Exercise("admission", 4, "The scheduler", f"{SCHEDULER}.admit",
             "admit waiting requests in order under max_num_seqs and the token budget", "admission",
             runs_of("continuous", "paged")),
    Exercise("first_fit", 4, "Reserved slots still waste memory", "minicb.stages.continuous:SlotManager.first_fit",
             "find the first hole a request's contiguous slot fits in", "first_fit", runs_of("continuous")),
    Exercise("block_allocation", 5, "The block manager", f"{PAGED}:BlockManager.allocate",
             "grow a request's block table to cover its tokens", "block_allocation",
             runs_of("paged", without=("prefix caching",))),
    Exercise("slot_mapping", 5, "The block manager", f"{PAGED}:BlockManager.cache_rows",
             "map token positions to cache rows through the block table", "slot_mapping", runs_of("paged")),
    Exercise("preemption", 6, "Preemption", f"{PAGED}:PagedScheduler.preempt",
             "preempt by recomputation: free a request's blocks and requeue it", "preemption",
             runs_of("paged", without=("blocks of", "every 3", "prefix", "simulated", "Triton"))),
    Exercise("chunking", 6, "Chunked prefill", f"{SCHEDULER}.fit",
             "how many of a request's tokens fit this step's budget (chunked prefill)", "chunking",
             runs_of("continuous", "paged")),
    Exercise("admission_trigger", 6, "Prefill-first, mixed and chunked, measured", f"{SCHEDULER}.admission_open",
             "admit only every schedule_interval steps, and when enough wait", "admission_trigger",
             runs_of("continuous", "paged")),
    Exercise("online_softmax", 1, "The attention kernel", "minicb.kernels.tile:attend_block",
             "one key block folded into a tile's running max, sum and output (Triton)", "attention",
             runs_of(triton=True), kernel=True, also=("minicb.kernels.online_softmax",)),
    Exercise("paged_rows", 5, "The kernel's indirection", "minicb.kernels.paged_attention:key_rows",
             "the cache rows of a tile's keys, through the block table (Triton)", "paged",
             runs_of("paged", triton=True), kernel=True),
    Exercise("combine_splits", 5, "Split-KV: when there are too few programs",
             "minicb.kernels.paged_attention:combine_splits",
             "merge split-KV's ranges by their log-sum-exps (a Triton kernel)", "combine",
             runs_of("paged", triton=True, without=("fused",)), kernel=True),
    Exercise("rms_norm", 8, "Fewer, fuller kernels", "minicb.kernels.norm:add_rms_norm",
             "the residual add and RMSNorm in one pass (a Triton kernel)", "norm",
             runs_of("paged", triton=True, without=("split",)), kernel=True),
    Exercise("claim_verdict", 7, "Claims about time", "minicb.tools.bench.claims:judge",
             "decide a claim about time from interleaved repeats, or leave it undecided", "judge"),
    Exercise("percentiles", 7, "Latency under load", "minicb.metrics:percentiles",
             "a run's mean, p50, p90 and p99 of a list of times", "percentiles", runs_of()),
    Exercise("stop_holdback", 9, "Streaming, stop strings and hanging up",
             "minicb.tools.serve.protocol:TextStream.take",
             "stream only text no stop string can still claim", "text_stream"),
    Exercise("vocab_share", 10, "Who holds what", "minicb.executors.parallel:vocab_share",
             "one rank's rows of the vocabulary, padded to an equal share", "vocab_share"),
    Exercise("collective_bytes", 10, "What a step communicates", "minicb.executors.parallel:collective_bytes",
             "the bytes a tensor-parallel forward pass hands its collectives", "collectives"),
    Exercise("step_cost", 11, "What a step costs", "minicb.costmodel:step_seconds",
             "a step's predicted time: the slower of its bytes and its FLOPs, plus overheads", "step",
             SIMULATED, also=("minicb.executors.simulated",)),
    Exercise("kv_budget", 11, "Where the KV memory goes", "minicb.costmodel:kv_budget",
             "the KV memory a GPU leaves once the weights are in", "budget", SIMULATED,
             also=("minicb.executors.simulated",)),
    Exercise("acceptance", 12, "The acceptance rule", "minicb.stages.speculative:accept",
             "keep each draft with probability min(1, p/q); at the first rejection draw from p - q",
             "acceptance", SPECULATIVE),
    Exercise("kv_rollback", 12, "Giving back the rejected drafts' KV",
             "minicb.stages.speculative:SpeculativeEngine.roll_back",
             "end a request's computed tokens before its rejected drafts and trim its blocks",
             "kv_rollback", SPECULATIVE),
]}
# ANCHOR_END: exercises


def in_order() -> list:
    """The exercises in the book's order: by chapter, then as each chapter lists them."""
    return sorted(EXERCISES.values(), key=lambda e: e.chapter)


def listing() -> list[str]:
    """One line per exercise, in the book's order: its name, chapter, task and the
    engine code it replaces."""
    return [f"{e.name:18s} chapter {e.chapter}  {e.task} ({e.target})" for e in in_order()]



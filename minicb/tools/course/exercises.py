"""Exercises: pieces of the engine a student writes, checked inside the engine.
This file lists them; ``check.py`` checks one and ``progress.py`` is the
``minicb check`` command.

Each exercise is one function of the engine, its *target*: the scheduler's
admission, the block manager's allocate, the dynamic batcher's window. The
student's version lives in ``notebooks/exercises/NAME.py``, a copy of the stub
in ``minicb/tools/course/stubs/`` that raises NotImplementedError until it is written
(``check`` puts the copies there; ``check NAME --reset`` brings one back). The
student's code runs with a time limit, and whatever it does wrong (a syntax
error, an endless loop, a None where a number is due, a value the engine
cannot use) ends as one line that says so. A check works the same way for every
exercise: it swaps the student's function in for the engine's own
(``swapped_in``), runs the stage on a real workload with the tiny model, and
compares with the run of the engine's own code, request for request and step
for step. After every step it also checks what the engine always holds to: no
more than ``max_num_seqs`` running, no step over the token budget, no KV
memory held twice or lost; and at the end, none held at all. Where a run seldom
reaches a case that matters (an eos token, a boundary met exactly), the exercise
also names ``cases`` (minicb/tools/course/function_cases.py): the student's function is
called on them first and what it returns is compared whole with the engine's.

Both runs are on a virtual clock, on which every step takes a millisecond and
nothing else takes any time, so a decision that depends on time comes out the
same in both. The
reference solution is the engine's own code.

    python -m minicb check --list
    python -m minicb check admission          # your notebooks/exercises/admission.py
    python -m minicb check --reference        # the engine's own code, every exercise
    python -m minicb check                    # your progress: every exercise's state
    python -m minicb check admission --hint   # a hint (--hint 2, --hint 3: the next ones)
    python -m minicb check admission --reset  # the stub again (yours is kept aside)
"""
from dataclasses import dataclass, field
from pathlib import Path

from ...checkpoint import make_tiny_checkpoint


STUBS = Path(__file__).resolve().parent / "stubs"        # as a student starts them
WORKSPACE = Path(__file__).resolve().parents[3] / "notebooks" / "exercises"   # theirs
TIME_LIMIT = 120.0           # seconds a check may run: each takes a few on a laptop
STEP_SECONDS = 1e-3          # what each step costs on the check's virtual clock
STRANDED_AFTER = 10.0        # virtual seconds: every check's workload ends well before
TINY_KV_BYTES = 512           # the tiny Llama's K and V of one token in fp32: 2 x 2 x 2 x 16 x 4


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
    target: str                  # "module:Class.function" or "module:function"
    task: str                    # one line: what to write
    engines: tuple               # the stage and its options: one run each
    workload: dict               # synthetic_workload's arguments
    sampling: dict = field(default_factory=dict)   # SamplingParams beyond max_tokens
    cases: str | None = None     # function_cases' cases, called first: where runs seldom go

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


def exercise(name, chapter, target, task, engine, sampling=None, cases=None,
             **workload) -> Exercise:
    engines = (engine,) if isinstance(engine, dict) else tuple(engine)
    return Exercise(name, chapter, target, task, engines, workload, sampling or {}, cases)


@dataclass(frozen=True)
class KernelExercise:
    """A Triton function or kernel the student writes: swapped in where the
    engine's kernels call it (``target``, and the same name in ``also``, modules
    that import it), then the kernels run in Triton's interpreter against their
    naive references on ``cases`` (minicb/tools/course/kernel_cases.py)."""
    name: str
    chapter: int
    target: str
    task: str
    cases: str
    also: tuple = ()

    stub, mine = Exercise.stub, Exercise.mine
    function_name = Exercise.function_name


@dataclass(frozen=True)
class FunctionExercise:
    """A function of the engine that no stage's step runs (a claim's verdict, a
    metric, the server's holdback, a tensor-parallel share, the cost model):
    each of its ``cases`` (minicb/tools/course/function_cases.py) is called with the
    student's function swapped in and with the engine's own, and compared."""
    name: str
    chapter: int
    target: str
    task: str
    cases: str

    stub, mine = Exercise.stub, Exercise.mine
    function_name = Exercise.function_name


SCHEDULER, PAGED = "minicb.stages.iteration:Scheduler", "minicb.stages.paged"
# ANCHOR: exercises
EXERCISES = {e.name: e for e in [
    exercise("stop_reason", 1, "minicb.stages.base:stop_reason",
             "why a request ends: a stop token, end of sequence, or max_tokens",
             dict(engine="single"), num_requests=12, output_len=(1, 12),
             sampling=dict(ignore_eos=False, stop_token_ids=list(range(3, 259, 16))),
             cases="stop_reason"),
    exercise("top_p", 1, "minicb.sampling:keep_top_p",
             "nucleus sampling: keep each row's smallest set of tokens reaching top_p",
             dict(engine="single"), num_requests=8, output_len=(4, 12),
             sampling=dict(temperature=1.0, top_p=0.6, seed=7), cases="top_p"),
    exercise("left_padding", 2, "minicb.stages.static:left_padded",
             "pad a static batch's prompts on the left, with their positions",
             dict(engine="static", max_batch_size=4), num_requests=12, prompt_len=(1, 40),
             cases="left_padding"),
    exercise("static_batches", 2, "minicb.stages.static:StaticEngine.next_batch",
             "cut the next static batch, sorted by max_tokens when bucketing",
             [dict(engine="static", max_batch_size=3, bucket_by_length=bucket)
              for bucket in (True, False)], num_requests=14, output_len=(1, 24)),
    exercise("dynamic_window", 3, "minicb.stages.dynamic:DynamicEngine.next_batch",
             "close a batch when it is full or its oldest request has waited long enough",
             dict(engine="dynamic", max_batch_size=4, max_wait_ms=20), num_requests=22,
             qps=60.0, cases="dynamic_window"),
    exercise("tpot", 3, "minicb.request:RequestMetrics.tpot",
             "time per output token after the first",
             dict(engine="dynamic", max_batch_size=4, max_wait_ms=10), num_requests=16,
             output_len=(1, 12), qps=200.0, cases="tpot"),
    exercise("admission", 4, f"{SCHEDULER}.admit",
             "admit waiting requests in order under max_num_seqs and the token budget",
             dict(engine="continuous", max_num_seqs=3, max_num_batched_tokens=48),
             num_requests=16, prompt_len=(4, 40), qps=2000.0, cases="admission"),
    exercise("first_fit", 4, "minicb.stages.continuous:SlotManager.first_fit",
             "find the first hole a request's contiguous slot fits in",
             # sized so that finished slots leave several holes a newcomer fits in
             dict(engine="continuous", max_num_seqs=8, kv_reservation="oracle",
                  kv_cache_memory_bytes=240 * TINY_KV_BYTES), num_requests=24,
             prompt_len=(2, 20), output_len=(1, 40), qps=400.0),
    exercise("block_allocation", 5, f"{PAGED}:BlockManager.allocate",
             "grow a request's block table to cover its tokens",
             [dict(engine="paged", max_num_seqs=6, block_size=size, num_blocks=256 // size)
              for size in (4, 1, 16)], num_requests=16),
    exercise("slot_mapping", 5, f"{PAGED}:BlockManager.cache_rows",
             "map token positions to cache rows through the block table",
             [dict(engine="paged", max_num_seqs=6, block_size=size, num_blocks=256 // size)
              for size in (4, 1, 16)], num_requests=16),
    exercise("preemption", 6, f"{PAGED}:PagedScheduler.preempt",
             "preempt by recomputation: free a request's blocks and requeue it",
             # With chunks, the request just preempted could come back at once in a
             # chunk that fits, unless the scheduler knows it preempted (self.preempted).
             [dict(engine="paged", max_num_seqs=6, block_size=4, num_blocks=24,
                   enable_chunked_prefill=chunked, max_num_batched_tokens=16 if chunked else None)
              for chunked in (False, True)],
             num_requests=16, prompt_len=(4, 24), output_len=(4, 24)),
    exercise("chunking", 6, f"{SCHEDULER}.fit",
             "how many of a request's tokens fit this step's budget (chunked prefill)",
             # Small enough to preempt: a request recomputed after a preemption may hold
             # more tokens than a step, and runs in chunks even with chunking off.
             [dict(engine="paged", max_num_seqs=4, enable_chunked_prefill=chunked,
                   max_num_batched_tokens=16, block_size=4, num_blocks=20)
              for chunked in (True, False)], num_requests=12, prompt_len=(4, 16),
             output_len=(8, 24), cases="chunking"),
    exercise("admission_trigger", 6, f"{SCHEDULER}.admission_open",
             "admit only every schedule_interval steps, and when enough wait",
             dict(engine="continuous", max_num_seqs=4, schedule_interval=3,
                  waiting_served_ratio=1.5), num_requests=20, qps=300.0,
             cases="admission_trigger"),
    KernelExercise("online_softmax", 1, "minicb.kernels.tile:attend_block",
                   "one key block folded into a tile's running max, sum and output (Triton)",
                   "attention", also=("minicb.kernels.online_softmax",)),
    KernelExercise("paged_rows", 5, "minicb.kernels.paged_attention:key_rows",
                   "the cache rows of a tile's keys, through the block table (Triton)", "paged"),
    KernelExercise("combine_splits", 5, "minicb.kernels.paged_attention:combine_splits",
                   "merge split-KV's ranges by their log-sum-exps (a Triton kernel)", "combine"),
    KernelExercise("rms_norm", 8, "minicb.kernels.norm:add_rms_norm",
                   "the residual add and RMSNorm in one pass (a Triton kernel)", "norm"),
    FunctionExercise("claim_verdict", 7, "minicb.tools.report.claims:judge",
                     "decide a claim about time from interleaved repeats, or leave it undecided",
                     "judge"),
    FunctionExercise("percentiles", 7, "minicb.metrics:percentiles",
                     "a run's mean, p50, p90 and p99 of a list of times", "percentiles"),
    FunctionExercise("stop_holdback", 9, "minicb.tools.serve.protocol:TextStream.take",
                     "stream only text no stop string can still claim", "text_stream"),
    FunctionExercise("vocab_share", 10, "minicb.executors.parallel:vocab_share",
                     "one rank's rows of the vocabulary, padded to an equal share", "vocab_share"),
    FunctionExercise("collective_bytes", 10, "minicb.executors.parallel:collective_bytes",
                     "the bytes a tensor-parallel forward pass hands its collectives",
                     "collectives"),
    FunctionExercise("step_cost", 11, "minicb.costmodel:step_seconds",
                     "a step's predicted time: the slower of its bytes and its FLOPs, plus "
                     "overheads", "step"),
    FunctionExercise("kv_budget", 11, "minicb.costmodel:kv_budget",
                     "the KV memory a GPU leaves once the weights are in", "budget"),
]}
# ANCHOR_END: exercises


def tiny_checkpoint() -> str:
    return str(make_tiny_checkpoint("scratch/checkpoints/tiny", arch="llama", seed=0))


def in_order() -> list:
    """The exercises in the book's order: by chapter, then as each chapter lists them."""
    return sorted(EXERCISES.values(), key=lambda e: e.chapter)


def listing() -> list[str]:
    """One line per exercise, in the book's order: its name, chapter, task and the
    engine code it replaces."""
    return [f"{e.name:18s} chapter {e.chapter}  {e.task} ({e.target})" for e in in_order()]



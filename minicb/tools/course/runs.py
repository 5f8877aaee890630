"""A stage's run under one configuration, on the check's virtual clock, with the
engine's invariants checked after every step, and the first difference between
two runs in words. ``check.py`` runs each exercise's configurations twice: with
the engine's own function, and with the student's swapped in.
"""
import math
from contextlib import ExitStack
from dataclasses import dataclass, field

from ...executors.simulated import VirtualClock
from ...kernels import online_softmax, paged_attention
from ...llm import LLMEngine
from ...metrics import RunMetrics
from ...stages.continuous import SlotManager
from ...stages.paged import BlockManager
from ..bench.workload import synthetic_workload
from .configurations import CONFIGURATIONS, EOS_IDS, Configuration, prompts, sampling
from .differential import same, shown
from .exercises import EXERCISES, CheckFailed
from .memory_guard import bounded
from .student import engine_function, swapped_in

STEP_SECONDS = 1e-3          # what each step costs on the check's virtual clock
STRANDED_AFTER = 10.0        # virtual seconds: every configuration's workload ends well before


@dataclass
class Run:
    tokens: dict            # request id -> output token ids
    reasons: dict           # request id -> finish reason
    tpot: dict              # request id -> seconds on the check's virtual clock
    steps: list             # (ms, kind, requests run, tokens fed, KV reserved) per step
    first_tokens: dict      # request id -> the step that gave it its first token
    preemptions: int
    tables: list = field(default_factory=list)   # stages 4-5: where each request's K/V is, per step
    counted: int = 0        # preemptions the scheduler counted (the server's /metrics reads it)
    summary: dict = field(default_factory=dict)   # the run's TTFT, TPOT and latency: mean, p50, p90, p99


def split_kv_as_on_a_gpu(stack: ExitStack):
    """Decodes split their keys into ranges, as on a GPU with 132 processors,
    and already at 16 keys a range, so that short contexts split too."""
    for module, name, value in ((online_softmax, "TARGET_PROCESSORS", 132),
                                (paged_attention, "MIN_SPLIT_KEYS", 16)):
        before = getattr(module, name)
        setattr(module, name, value)
        stack.callback(setattr, module, name, before)


def run(configuration: Configuration, checkpoint) -> Run:
    """The configuration's workload through its stage, on a virtual clock, with the
    engine's invariants checked after every step."""
    with ExitStack() as stack:
        if configuration.split_kv:
            split_kv_as_on_a_gpu(stack)
        if configuration.triton:                 # no kernel reads or writes past its tensors
            stack.enter_context(bounded())
        return run_on_a_virtual_clock(configuration, checkpoint)


def run_on_a_virtual_clock(configuration: Configuration, checkpoint) -> Run:
    workload = synthetic_workload(seed=0, **configuration.workload)
    texts = prompts(workload, configuration.shared_prefix)
    with swapped_in("minicb.executors.plain:Executor.clock", VirtualClock()):
        engine = LLMEngine(configuration.model or checkpoint, **configuration.engine)
    pending = sorted(zip(workload.arrival_times, range(len(texts))))
    requests, clock, tables, times, first_tokens = {}, engine.clock, [], [], {}
    deadline = max(workload.arrival_times) + STRANDED_AFTER
    with engine.stage.measuring() as steps:
        while pending or engine.has_unfinished_requests():
            if clock() > deadline:
                stranded = [i for i, r in requests.items() if not r.finished]
                raise CheckFailed(f"requests {stranded} were still unfinished "
                                  f"{STRANDED_AFTER:.0f} s after the last arrival: stranded")
            while pending and pending[0][0] <= clock():
                _, i = pending.pop(0)
                params = sampling(i, workload.params[i].max_tokens)
                engine.add_request(texts[i], params, arrival_time=clock(), request_id=str(i))
                requests[str(i)] = engine.requests[str(i)]
                requests[str(i)].eos_token_ids = EOS_IDS
            ran, started = len(steps), clock()
            try:
                engine.step()
            except Exception as error:
                error.add_note(f"in step {ran + 1}")
                raise
            if len(steps) > ran:
                invariant_problems(engine.stage, steps)
                tables.append(kv_layout(engine.stage))
                times.append(round(started * 1e3, 6))
                first_tokens.update({i: len(steps) for i, r in requests.items()
                                     if r.output_token_ids and i not in first_tokens})
                clock.sleep(STEP_SECONDS)
            elif pending and not engine.has_unfinished_requests():
                clock.sleep(pending[0][0] - clock())       # idle until the next arrival
            else:
                clock.sleep(2e-4)                           # a batch window still open
    held = kv_held(engine.stage)
    if held:
        raise CheckFailed(f"after the run, KV memory is still held: {held}")
    summary = RunMetrics.from_run(list(requests.values()), steps, clock())
    return Run({i: r.output_token_ids for i, r in requests.items()},
               {i: r.finish_reason for i, r in requests.items()},
               {i: r.metrics.tpot for i, r in requests.items()},
               [(ms, s.kind, [r for r in s.rows if r is not None], s.num_tokens, s.kv_reserved)
                for ms, s in zip(times, steps)], first_tokens,
               sum(r.num_preemptions for r in requests.values()), tables,
               getattr(getattr(engine.stage, "scheduler", None), "num_preemptions", 0),
               {key: getattr(summary, key) for key in ("ttft", "tpot", "latency")})


def kv_layout(stage) -> dict | None:
    """Where each request's K/V lives: stage 5's blocks, in order, or stage 4's
    slot of cache rows (None for stages 1-3)."""
    kv = getattr(stage, "kv", None)
    if isinstance(kv, BlockManager):
        return {r.request_id: list(table) for r, table in kv.block_tables.items()}
    if isinstance(kv, SlotManager):
        return {r.request_id: (rows.start, rows.stop) for r, rows in kv.slot_of.items()}
    return None


def invariant_problems(stage, steps: list):
    """What stages 4-5 hold to after each step; CheckFailed naming the step if not."""
    cfg, kv = stage.config, getattr(stage, "kv", None)
    if kv is None:
        return
    running = stage.scheduler.running
    problem = None
    if len(running) > cfg.max_num_seqs:
        problem = f"{len(running)} requests run, more than max_num_seqs {cfg.max_num_seqs}"
    elif steps[-1].num_tokens > cfg.max_num_batched_tokens:
        problem = (f"the step fed {steps[-1].num_tokens} tokens, more than "
                   f"max_num_batched_tokens {cfg.max_num_batched_tokens}")
    elif isinstance(kv, BlockManager):
        problem = block_problems(kv)
    elif isinstance(kv, SlotManager):
        problem = slot_problems(kv)
    if problem:
        raise CheckFailed(f"after step {len(steps)}: {problem}")


def block_problems(kv: BlockManager) -> str | None:
    held = [b for table in kv.block_tables.values() for b in table]
    free = list(kv.free_blocks)
    if hasattr(kv, "ref_counts"):             # prefix caching: a block may be shared
        held = list(set(held))
    twice = sorted({b for b in held if held.count(b) > 1} | set(held) & set(free))
    if twice:
        return f"blocks {twice} are given out twice (or held and free at once)"
    lost = sorted(set(range(kv.num_blocks)) - set(held) - set(free))
    return f"blocks {lost} are neither free nor held: lost" if lost else None


def slot_problems(kv: SlotManager) -> str | None:
    runs = sorted(kv.holes + list(kv.slot_of.values()), key=lambda rows: rows.start)
    for before, after in zip(runs, runs[1:]):
        if before.stop != after.start:
            return f"cache rows {before} and {after} overlap or leave a gap"
    if runs and (runs[0].start, runs[-1].stop) != (0, kv.capacity):
        return f"slots and holes cover rows {runs[0].start}..{runs[-1].stop}, not 0..{kv.capacity}"
    return None


def kv_held(stage) -> str | None:
    kv = getattr(stage, "kv", None)
    if isinstance(kv, BlockManager) and (kv.block_tables or len(kv.free_blocks) < kv.num_blocks):
        return f"{kv.num_blocks - len(kv.free_blocks)} blocks, by requests {list_ids(kv.block_tables)}"
    if isinstance(kv, SlotManager) and (kv.slot_of or kv.holes != [range(kv.capacity)]):
        return f"slots of requests {list_ids(kv.slot_of)}; free rows {kv.holes}"
    return None


def list_ids(held: dict) -> list:
    return [r.request_id for r in held]


def compare(name: str, expected: Run, got: Run):
    """The first difference between the engine's run and the student's, in words."""
    for i, (want, have) in enumerate(zip(expected.steps, got.steps)):
        if want != have:
            raise CheckFailed(f"{name}: step {i + 1} differs. The engine's own code ran "
                              f"{describe(want)}; with yours it ran {describe(have)}")
    for i, (want, have) in enumerate(zip(expected.tables, got.tables)):
        if want != have:
            rid = next(r for r in sorted(set(want) | set(have)) if want.get(r) != have.get(r))
            what, rule = (("blocks", "new blocks come from the front of the free list, in "
                           "order") if isinstance([*want.values(), *have.values()][0], list) else
                          ("cache rows [start, stop)", "a slot goes in the first hole it fits"))
            raise CheckFailed(f"{name}: after step {i + 1}, request {rid} holds {what} "
                              f"{have.get(rid)}; the engine's own code gives it "
                              f"{want.get(rid)} ({rule})")
    if len(expected.steps) != len(got.steps):
        raise CheckFailed(f"{name}: the engine's own code took {len(expected.steps)} steps; "
                          f"with yours, {len(got.steps)}")
    if expected.preemptions != got.preemptions:
        raise CheckFailed(f"{name}: the engine's own code preempted {expected.preemptions} "
                          f"times; with yours, {got.preemptions}")
    if expected.counted != got.counted:
        raise CheckFailed(f"{name}: with yours the scheduler counted {got.counted} preemptions "
                          f"(its num_preemptions, which the server's /metrics reports); the "
                          f"requests were preempted {got.preemptions} times")
    for rid, want in expected.tokens.items():
        compare_request(name, rid, expected, got)
    for key, want in expected.summary.items():
        have = got.summary[key]
        if not same(have, want):
            raise CheckFailed(f"{name}: the run's {key.upper()} summary is {shown(have)}; with the "
                              f"engine's own code, {shown(want)}")


def compare_request(name: str, rid: str, expected: Run, got: Run):
    want, have = expected.tokens[rid], got.tokens[rid]
    if want != have or expected.reasons[rid] != got.reasons[rid]:
        first = next((j for j, (a, b) in enumerate(zip(want, have)) if a != b), min(len(want), len(have)))
        raise CheckFailed(
            f"{name}: request {rid} got {have} ({got.reasons[rid]}); the engine's own "
            f"code gives {want} ({expected.reasons[rid]}): they part at output token {first}")
    if expected.first_tokens.get(rid) != got.first_tokens.get(rid):
        raise CheckFailed(f"{name}: request {rid}'s first token came in step "
                          f"{got.first_tokens.get(rid)}; with the engine's own code, in step "
                          f"{expected.first_tokens.get(rid)}")
    if not isinstance(got.tpot[rid], (int, float)) or math.isnan(got.tpot[rid]):
        raise CheckFailed(f"{name}: request {rid}'s TPOT is {got.tpot[rid]!r}, where a "
                          f"number of seconds is due; the engine's own code gives "
                          f"{expected.tpot[rid]:.6f} s")
    if abs(expected.tpot[rid] - got.tpot[rid]) > 1e-9:
        raise CheckFailed(f"{name}: request {rid}'s TPOT is {got.tpot[rid]:.6f} s; "
                          f"the engine's own code gives {expected.tpot[rid]:.6f} s")


def describe(step) -> str:
    ms, kind, rows, tokens, reserved = step
    return (f"at {ms:g} ms a {kind} step of requests {rows} ({tokens} tokens fed, "
            f"{reserved} KV token slots held)")


def probe(checkpoint) -> dict:
    """For each exercise, the configurations whose runs call its code: each
    configuration run once, every exercise's function (where the engine has it,
    and in each module that imports it) wrapped in a counter."""
    calls = {name: set() for name in EXERCISES}
    for configuration in CONFIGURATIONS:
        with ExitStack() as stack:
            for ex in EXERCISES.values():
                counted = counter(engine_function(ex), calls[ex.name], configuration.name)
                for place in (ex.target, *(f"{m}:{ex.function_name}" for m in ex.also)):
                    stack.enter_context(swapped_in(place, counted))
            run(configuration, checkpoint)
    return calls


def counter(function, seen: set, name: str):
    """``function``, noting ``name`` in ``seen`` when called."""
    def counted(*args, **kwargs):
        seen.add(name)
        return function(*args, **kwargs)
    return counted

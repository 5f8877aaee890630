"""Run-level measurements: what every step did, and what the run achieved.

An engine's step log (``minicb/observer.py``) keeps one ``StepRecord`` per
forward pass. From those and the requests' timestamps, ``RunMetrics`` derives throughput, latency percentiles,
batch occupancy and KV-cache use, the same way for every stage, so stages
can be compared number for number.
"""
from dataclasses import dataclass, field

import numpy as np


# ANCHOR: step_record
@dataclass
class StepRecord:
    """One forward pass of the model.

    rows: one entry per batch row the step computed: the id of the request
    that row advanced, or None for a row that did no useful work (padding,
    or a request that had already finished). kv_reserved / kv_used: KV-cache
    token slots allocated, and slots holding a real token, during the step.
    """
    kind: str                      # "prefill" or "decode"
    rows: list
    num_tokens: int                # tokens fed through the model, padding included
    kv_reserved: int
    kv_used: int
    duration: float = 0.0          # seconds, the whole step
    # (request id, tokens cached, token slots held)
    kv_held: list = field(default_factory=list)
    # seconds of it before the forward pass's launch: scheduling, building inputs
    host_time: float = 0.0
    # seconds the forward pass took on the device, output layer included
    forward_time: float = 0.0
    started: float = 0.0           # time.perf_counter() when the step began

    @property
    def useful_rows(self) -> int:
        return sum(r is not None for r in self.rows)
# ANCHOR_END: step_record


# ANCHOR: percentiles
def percentiles(values) -> dict:
    if len(values) == 0:
        nan = float("nan")
        return dict(mean=nan, p50=nan, p90=nan, p99=nan)
    v = np.asarray(values, dtype=float)
    return dict(mean=float(v.mean()), p50=float(np.percentile(v, 50)),
                p90=float(np.percentile(v, 90)), p99=float(np.percentile(v, 99)))
# ANCHOR_END: percentiles


# ANCHOR: run_metrics
class Throughput:
    """Rates of a run that counted num_requests, prompt_tokens and
    output_tokens over wall_time seconds (minicb's runs and the peers')."""

    @property
    def output_throughput(self) -> float:
        """Generated tokens per second."""
        return self.output_tokens / self.wall_time

    @property
    def total_throughput(self) -> float:
        """Prompt plus generated tokens per second."""
        return (self.prompt_tokens + self.output_tokens) / self.wall_time

    @property
    def request_throughput(self) -> float:
        return self.num_requests / self.wall_time


@dataclass
class RunMetrics(Throughput):
    num_requests: int
    prompt_tokens: int
    output_tokens: int
    wall_time: float
    ttft: dict
    tpot: dict
    latency: dict
    num_steps: int
    row_steps: int                 # batch rows computed, summed over steps
    useful_row_steps: int          # ... of which advanced a live request
    kv_peak_reserved: int          # most KV token slots allocated at once
    kv_peak_used: int              # most KV token slots holding real tokens at once
    kv_utilization: float          # slots holding real tokens / slots reserved, over all steps
    num_preemptions: int           # stage 5: times a request's KV was dropped and recomputed
    num_draft_tokens: int          # stage 6: tokens drafted
    num_accepted_tokens: int       # ... of which verified and kept
    steps: list = field(default_factory=list, repr=False)
    request_metrics: list = field(default_factory=list, repr=False)   # one RequestMetrics per request

    @classmethod
    def from_run(cls, requests, steps, wall_time) -> "RunMetrics":
        m = [r.metrics for r in requests]
        reserved = sum(s.kv_reserved for s in steps)
        return cls(
            num_requests=len(requests),
            prompt_tokens=sum(x.num_prompt_tokens for x in m),
            output_tokens=sum(x.num_output_tokens for x in m),
            wall_time=wall_time,
            ttft=percentiles([x.ttft for x in m if x.ttft is not None]),   # failed first: none
            tpot=percentiles([x.tpot for x in m if x.num_output_tokens > 1]),
            latency=percentiles([x.latency for x in m]),
            num_steps=len(steps),
            row_steps=sum(len(s.rows) for s in steps),
            useful_row_steps=sum(s.useful_rows for s in steps),
            kv_peak_reserved=max((s.kv_reserved for s in steps), default=0),
            kv_peak_used=max((s.kv_used for s in steps), default=0),
            kv_utilization=sum(s.kv_used for s in steps) / reserved if reserved else 0.0,
            num_preemptions=sum(r.num_preemptions for r in requests),
            num_draft_tokens=sum(x.num_draft_tokens for x in m),
            num_accepted_tokens=sum(x.num_accepted_tokens for x in m),
            steps=list(steps),
            request_metrics=m,
        )

    @property
    def acceptance_rate(self) -> float:
        """Stage 6: the share of drafted tokens kept (0 with none drafted)."""
        return self.num_accepted_tokens / self.num_draft_tokens if self.num_draft_tokens else 0.0

    @property
    def occupancy(self) -> float:
        """Share of computed batch rows that did useful work."""
        return self.useful_row_steps / self.row_steps if self.row_steps else 0.0
# ANCHOR_END: run_metrics

    def occupancy_grid(self, kind="decode"):
        """[steps, max rows] array for the steps of one kind: 1 = useful row,
        0 = wasted row, nan = no such row. The "white squares" picture."""
        steps = [s for s in self.steps if s.kind == kind]
        width = max((len(s.rows) for s in steps), default=0)
        grid = np.full((len(steps), width), np.nan)
        for i, s in enumerate(steps):
            grid[i, :len(s.rows)] = [r is not None for r in s.rows]
        return grid

    def schedule_grid(self):
        """[steps, max rows] array of request numbers (in order of first
        appearance), -1 where a row did no useful work: who ran where, when."""
        number, width = {}, max((len(s.rows) for s in self.steps), default=0)
        grid = np.full((len(self.steps), width), -1)
        for i, step in enumerate(self.steps):
            for j, rid in enumerate(step.rows):
                if rid is not None:
                    grid[i, j] = number.setdefault(rid, len(number))
        return grid

    # ANCHOR: kv_breakdown
    def kv_breakdown(self, capacity: int | None = None,
                     until: float | None = None) -> dict:
        """Every KV token slot held during the run, summed over steps, split by
        what it did: held a token ("used"), waited for a token its request
        produced later ("reserved"), or never held one because the request
        ended first ("never_used": padding, over-reservation, last-block tails).
        In the vLLM paper's terms: token states, reservation, internal fragmentation.
        Shares of all slots held; a request's final length is the most tokens
        it ever had cached. Given the cache's ``capacity`` in tokens, shares of
        the whole cache instead, with the slots no request held as "free" (the
        paper's external fragmentation and others). Given ``until``, only the
        steps that started before that time count."""
        final = {}
        for step in self.steps:
            for rid, used, _ in step.kv_held:
                final[rid] = max(final.get(rid, 0), used)
        steps = [s for s in self.steps if until is None or s.started < until]
        totals = dict(used=0, reserved=0, never_used=0)
        for step in steps:
            for rid, used, held in step.kv_held:
                reach = min(final[rid], held)
                totals["used"] += used
                totals["reserved"] += reach - used
                totals["never_used"] += held - reach
        if capacity is not None:
            totals["free"] = sum(capacity - s.kv_reserved for s in steps)
        slots = sum(totals.values())
        return {k: v / slots for k, v in totals.items()} if slots else totals
    # ANCHOR_END: kv_breakdown

    @property
    def host_share(self) -> float:
        """Share of the steps' time the host spent before launching the forward pass."""
        busy = sum(s.duration for s in self.steps)
        return sum(s.host_time for s in self.steps) / busy if busy else 0.0

    @property
    def median_step(self) -> float:
        return float(np.median([s.duration for s in self.steps])) if self.steps else float("nan")

    def max_running(self) -> int:
        """The most requests that held KV memory in one step."""
        return max((len(s.kv_held) for s in self.steps), default=0)

    def summary(self) -> dict:
        """The run in numbers, floats to 4 significant digits."""
        return rounded(dict(requests=self.num_requests, output_tokens=self.output_tokens,
                            wall_s=self.wall_time, output_tok_s=self.output_throughput,
                            total_tok_s=self.total_throughput, req_s=self.request_throughput,
                            ttft_p50_s=self.ttft["p50"], ttft_p99_s=self.ttft["p99"],
                            tpot_p50_s=self.tpot["p50"], latency_p50_s=self.latency["p50"],
                            latency_p99_s=self.latency["p99"], steps=self.num_steps,
                            occupancy=self.occupancy, kv_peak_reserved=self.kv_peak_reserved,
                            kv_peak_used=self.kv_peak_used, kv_utilization=self.kv_utilization,
                            preemptions=self.num_preemptions, median_step_s=self.median_step,
                            host_share=self.host_share, draft_tokens=self.num_draft_tokens,
                            accepted_tokens=self.num_accepted_tokens,
                            acceptance_rate=self.acceptance_rate))


def rounded(values: dict) -> dict:
    """Floats to 4 significant digits: more would be noise on any machine."""
    return {name: float(f"{value:.4g}") if isinstance(value, float) else value for name, value in values.items()}


# (header, format, value) for the tables the demo and the benchmark print.
RUN_COLUMNS = [
    ("requests", "{:d}", lambda r: r.num_requests), ("out tokens", "{:d}", lambda r: r.output_tokens),
    ("wall s", "{:.2f}", lambda r: r.wall_time), ("out tok/s", "{:.1f}", lambda r: r.output_throughput),
    ("steps", "{:d}", lambda r: r.num_steps), ("occupancy", "{:.0%}", lambda r: r.occupancy),
    ("KV reserved (peak)", "{:d}", lambda r: r.kv_peak_reserved),
    ("KV used (peak)", "{:d}", lambda r: r.kv_peak_used),
    ("KV used/reserved", "{:.0%}", lambda r: r.kv_utilization),
]
BENCH_COLUMNS = [
    ("out tok/s", "{:.1f}", lambda r: r.output_throughput), ("total tok/s", "{:.1f}", lambda r: r.total_throughput),
    ("req/s", "{:.2f}", lambda r: r.request_throughput), ("steps", "{:d}", lambda r: r.num_steps),
    ("TTFT p50 s", "{:.3f}", lambda r: r.ttft["p50"]), ("TTFT p99 s", "{:.3f}", lambda r: r.ttft["p99"]),
    ("TPOT p50 ms", "{:.2f}", lambda r: 1e3 * r.tpot["p50"]),
    ("latency p50 s", "{:.3f}", lambda r: r.latency["p50"]), ("latency p99 s", "{:.3f}", lambda r: r.latency["p99"]),
    ("occupancy", "{:.0%}", lambda r: r.occupancy), ("KV used/reserved", "{:.0%}", lambda r: r.kv_utilization),
    ("step p50 ms", "{:.2f}", lambda r: 1e3 * r.median_step), ("host share", "{:.0%}", lambda r: r.host_share),
]

# Stage 6's, where a run drafted tokens (speculative decoding).
SPECULATIVE_COLUMNS = [
    ("drafted", "{:d}", lambda r: r.num_draft_tokens), ("accepted", "{:d}", lambda r: r.num_accepted_tokens),
    ("acceptance", "{:.0%}", lambda r: r.acceptance_rate),
    ("out tokens/step", "{:.2f}", lambda r: r.output_tokens / r.num_steps if r.num_steps else 0.0),
]

THROUGHPUT_COLUMNS = [            # what every run reports, transformers' peers included
    ("out tok/s", "{:.1f}", lambda r: r.output_throughput), ("total tok/s", "{:.1f}", lambda r: r.total_throughput),
    ("out tokens", "{:d}", lambda r: r.output_tokens), ("wall s", "{:.2f}", lambda r: r.wall_time),
]


def format_table(runs: dict, columns=RUN_COLUMNS, max_width=None) -> str:
    """A plain-text table of RunMetrics, one row per engine name. With
    ``max_width`` (a notebook's output area), columns that would run past it
    go to a further table below, each starting with the engine column."""
    cells = [["engine"] + [header for header, _, _ in columns]]
    cells += [[name] + [fmt.format(value(r)) for _, fmt, value in columns] for name, r in runs.items()]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    parts, part = [], [0]
    for i in range(1, len(widths)):
        if max_width and len(part) > 1 and sum(widths[j] + 2 for j in part) + widths[i] > max_width:
            parts.append(part)
            part = [0]
        part.append(i)
    tables = []
    for part in parts + [part]:
        lines = ["  ".join(row[i].rjust(widths[i]) for i in part) for row in cells]
        lines.insert(1, "  ".join("-" * widths[i] for i in part))
        tables.append("\n".join(lines))
    return "\n\n".join(tables)

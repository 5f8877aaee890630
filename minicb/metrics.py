"""Run-level measurements: what every step did, and what the run achieved.

Every engine appends one ``StepRecord`` per forward pass. From those and the
requests' timestamps, ``RunMetrics`` derives throughput, latency percentiles,
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
    duration: float = 0.0

    @property
    def useful_rows(self) -> int:
        return sum(r is not None for r in self.rows)
# ANCHOR_END: step_record


def percentiles(values) -> dict:
    if len(values) == 0:
        return dict(mean=float("nan"), p50=float("nan"), p90=float("nan"), p99=float("nan"))
    v = np.asarray(values, dtype=float)
    return dict(mean=float(v.mean()), p50=float(np.percentile(v, 50)),
                p90=float(np.percentile(v, 90)), p99=float(np.percentile(v, 99)))


# ANCHOR: run_metrics
@dataclass
class RunMetrics:
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
    steps: list = field(default_factory=list, repr=False)

    @classmethod
    def from_run(cls, requests, steps, wall_time) -> "RunMetrics":
        m = [r.metrics for r in requests]
        reserved = sum(s.kv_reserved for s in steps)
        return cls(
            num_requests=len(requests),
            prompt_tokens=sum(x.num_prompt_tokens for x in m),
            output_tokens=sum(x.num_output_tokens for x in m),
            wall_time=wall_time,
            ttft=percentiles([x.ttft for x in m]),
            tpot=percentiles([x.tpot for x in m if x.num_output_tokens > 1]),
            latency=percentiles([x.latency for x in m]),
            num_steps=len(steps),
            row_steps=sum(len(s.rows) for s in steps),
            useful_row_steps=sum(s.useful_rows for s in steps),
            kv_peak_reserved=max((s.kv_reserved for s in steps), default=0),
            kv_peak_used=max((s.kv_used for s in steps), default=0),
            kv_utilization=sum(s.kv_used for s in steps) / reserved if reserved else 0.0,
            steps=list(steps),
        )

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

    def summary(self) -> dict:
        return dict(requests=self.num_requests, output_tokens=self.output_tokens,
                    wall_s=self.wall_time, output_tok_s=self.output_throughput,
                    total_tok_s=self.total_throughput, req_s=self.request_throughput,
                    ttft_p50_s=self.ttft["p50"], ttft_p99_s=self.ttft["p99"],
                    tpot_p50_s=self.tpot["p50"], latency_p50_s=self.latency["p50"],
                    latency_p99_s=self.latency["p99"], steps=self.num_steps,
                    occupancy=self.occupancy, kv_peak_reserved=self.kv_peak_reserved, kv_peak_used=self.kv_peak_used,
                    kv_utilization=self.kv_utilization)


def format_table(runs: dict) -> str:
    """A plain-text table of RunMetrics, one row per engine name."""
    cols = [("engine", "{}"), ("requests", "{:d}"), ("out tokens", "{:d}"), ("wall s", "{:.2f}"),
            ("out tok/s", "{:.1f}"), ("steps", "{:d}"), ("occupancy", "{:.0%}"),
            ("KV reserved (peak)", "{:d}"), ("KV used (peak)", "{:d}"), ("KV used/reserved", "{:.0%}")]
    rows = [[name, r.num_requests, r.output_tokens, r.wall_time, r.output_throughput,
             r.num_steps, r.occupancy, r.kv_peak_reserved, r.kv_peak_used, r.kv_utilization]
            for name, r in runs.items()]
    cells = [[c for c, _ in cols]] + [[f.format(v) for (_, f), v in zip(cols, row)] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(cols))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)

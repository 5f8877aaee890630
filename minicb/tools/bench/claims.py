"""Claims a notebook checks on its own run: counts exactly, times by their spread.

A notebook checks two kinds of claim about what it measured:

- a **count** (steps, rows, tokens, KV slots, bytes, which request ran where)
  is the same on every machine, so a plain ``assert`` checks it exactly;
- a **time** (a throughput, a latency, a step's milliseconds) depends on the
  machine and on whatever else it runs. The notebook measures it several
  times, the repeats interleaved (every setting once, then again), and
  ``judge`` decides a claim about it from that run alone: the claim holds
  when the medians differ in its direction by more than the repeats' spread
  (the two ranges added), fails when they differ as much the other way, and
  is *not decided* when they do not differ by that much.

A claim that is not decided is printed with its spread and the machine's load,
and does not stop the notebook: on a noisy machine, a small effect cannot be
told from noise, and saying so is the honest answer. Nor is a claim decided
while other processes kept a core busy: two programs that use the CPU
differently (two ranks against one, minicb against transformers' threads) do
not slow down alike when they share it, so the comparison would measure the
other processes as much as the programs.
"""
import math
import os
import time
from dataclasses import dataclass
from functools import partial
from statistics import median

import numpy as np

# The fewest repeats a side needs before its spread means anything.
MIN_REPEATS = 2
# The fewest samples a side needs before a bootstrap over them means anything.
MIN_STEPS = 30
# Other processes that kept more than this many cores busy, on average, make a
# machine busy: no time claim is decided on it.
MAX_OTHERS_CORES = 0.5


@dataclass(frozen=True)
class Verdict:
    holds: bool | None          # None: not decided on this run
    left: float                 # the medians compared
    right: float
    margin: float               # what the medians must differ by: the two ranges added
    reason: str = ""            # why it was not decided, when it was not

    @property
    def decided(self) -> bool:
        return self.holds is not None

    def describe(self, op: str, what) -> str:
        compared = f"{self.left:.4g} {op} {self.right:.4g}, margin {self.margin:.2g}"
        if self.holds is None:
            return f"not decided on this run ({self.reason}; {load()}): {what} [{compared}]"
        return f"{'holds' if self.holds else 'does NOT hold'}: {what} [{compared}]"


# ANCHOR: judge
def judge(left, op: str, right, others_cores: float | None = None) -> Verdict:
    """Whether ``left op right`` holds on this run, with op "<" or ">". Each side
    is a list of values, one per repeat, or a single number: a fixed bound, with
    no spread. ``others_cores``: the cores other processes kept busy meanwhile."""
    if op not in ("<", ">"):
        raise ValueError(f"op must be '<' or '>', got {op!r}")
    left, right = samples(left), samples(right)
    lows, highs = (left, right) if op == "<" else (right, left)
    margin = spread(lows) + spread(highs)
    undecided = partial(Verdict, None, median(left), median(right), margin)
    measured = [len(side) for side in (lows, highs) if not is_bound(side)]
    if min(measured, default=MIN_REPEATS) < MIN_REPEATS:
        return undecided(f"{min(measured)} repeat(s): a spread takes {MIN_REPEATS}")
    if others_cores is not None and others_cores > MAX_OTHERS_CORES:
        return undecided(f"other processes kept {others_cores:.1f} cores busy")
    gap = median(highs) - median(lows)
    if abs(gap) <= margin:
        return undecided(f"the medians differ by {abs(gap):.2g}, "
                         f"within the spread {margin:.2g}")
    return Verdict(gap > 0, median(left), median(right), margin)
# ANCHOR_END: judge


# ANCHOR: judge_steps
def judge_steps(left, op: str, right, confidence: float = 0.99, resamples: int = 2000,
                seed: int = 0) -> Verdict:
    """Whether ``left op right`` holds, with op "<" or ">", decided from one run's
    many samples a side (the times of its steps, warm-up and capture steps left
    out), where repeating the whole run is too dear. The difference of the two
    medians is bootstrapped by blocks of consecutive samples, since a step's time
    is like its neighbours' (the same batch, the same cache); the claim holds when
    the whole ``confidence`` interval lies on its side of 0, fails when it lies on
    the other, and is not decided when the interval holds 0."""
    if op not in ("<", ">"):
        raise ValueError(f"op must be '<' or '>', got {op!r}")
    left, right = np.asarray(left, dtype=float), np.asarray(right, dtype=float)
    fewest = min(len(left), len(right))
    if fewest < MIN_STEPS:
        return Verdict(None, math.nan, math.nan, math.nan,
                       f"{fewest} samples: a side needs {MIN_STEPS}")
    lows, highs = (left, right) if op == "<" else (right, left)
    rng = np.random.default_rng(seed)
    gaps = block_medians(highs, resamples, rng) - block_medians(lows, resamples, rng)
    low, high = np.quantile(gaps, [(1 - confidence) / 2, (1 + confidence) / 2])
    medians = float(np.median(left)), float(np.median(right))
    if low <= 0 <= high:
        return Verdict(None, *medians, float(high - low) / 2,
                       f"the {confidence:.0%} interval of the medians' gap, "
                       f"[{low:.3g}, {high:.3g}], holds 0")
    return Verdict(bool(low > 0), *medians, float(high - low) / 2)


def block_medians(values, resamples: int, rng) -> np.ndarray:
    """The median of each of ``resamples`` resamplings of values, made of blocks of
    about sqrt(n) consecutive values, each block starting anywhere: blocks that
    long keep a run's slow stretches whole, so the interval is not too narrow."""
    n = len(values)
    block = max(1, round(n ** 0.5))
    starts = rng.integers(0, n - block + 1, size=(resamples, -(-n // block)))
    index = (starts[:, :, None] + np.arange(block)).reshape(resamples, -1)[:, :n]
    return np.median(values[index], axis=1)
# ANCHOR_END: judge_steps


def per_repeat(rounds, *keys, metric="output_throughput") -> list:
    """One measurement from each repeat, in order: ``rounds[i][key0][key1]...``,
    then ``metric``, an attribute's name or a function of what the keys reach."""
    values = []
    for results in rounds:
        for key in keys:
            results = results[key]
        values.append(metric(results) if callable(metric) else getattr(results, metric))
    return values


def median_of(rounds, *keys, metric="output_throughput") -> float:
    """The median over the repeats of one measurement (as ``per_repeat``)."""
    return median(per_repeat(rounds, *keys, metric=metric))


class Bound(float):
    """A fixed number a time is compared with: it has no spread and needs no repeats."""


def samples(side) -> list:
    if isinstance(side, (int, float)):
        return [Bound(side)]
    values = [float(v) for v in side]
    if not values:
        raise ValueError("a time claim needs at least one measured value on each side")
    return values


def is_bound(values) -> bool:
    return len(values) == 1 and isinstance(values[0], Bound)


def spread(values) -> float:
    return max(values) - min(values)


def load() -> str:
    """The machine's load: the 1-minute load average over its cores."""
    return f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"


@dataclass(frozen=True)
class CpuUse:
    """CPU seconds spent so far, on the whole machine and by this process with
    its children, read from Linux's /proc; ``others_cores`` compares two."""
    wall: float
    machine: float
    own: float

    @classmethod
    def now(cls) -> "CpuUse | None":
        """None where /proc cannot say (not Linux)."""
        try:
            with open("/proc/stat") as f:
                user, nice, system, idle, iowait, irq, softirq, steal = map(int, f.readline().split()[1:9])
            ticks = os.sysconf("SC_CLK_TCK")
            machine = (user + nice + system + irq + softirq + steal) / ticks
            return cls(time.perf_counter(), machine, own_cpu_seconds(ticks))
        except (OSError, ValueError):
            return None

    def others_cores(self, later: "CpuUse") -> float:
        """Cores the other processes kept busy, on average, from this reading to a later one."""
        seconds = later.wall - self.wall
        return max(0.0, (later.machine - self.machine) - (later.own - self.own)) / seconds if seconds > 0 else 0.0


def own_cpu_seconds(ticks) -> float:
    """CPU seconds of this process, its finished children and its live descendants
    (a tensor-parallel rank, a server the notebook started)."""
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()   # after the name, which may hold spaces
            except OSError:                                         # the process ended meanwhile
                continue
            stats[int(entry)] = (int(fields[1]), sum(map(int, fields[11:15])))   # ppid; own and children's time
    children = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0, [os.getpid()]
    while todo:
        pid = todo.pop()
        total += stats.get(pid, (0, 0))[1]
        todo += children.get(pid, [])
    return total / ticks

"""Misconception: the op only matters once the claim is decided, so it is checked there,
after the early "not decided" returns. Goes wrong on judge([1.0], "<=", [2.0, 3.0]) (or any
bad op on a busy machine): it returns an undecided Verdict instead of raising ValueError."""
from statistics import median

from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict, samples, is_bound, spread


def judge(left, op, right, others_cores=None) -> Verdict:
    """Whether ``left op right`` holds, op "<" or ">"."""
    a, b = samples(left), samples(right)
    ma, mb = median(a), median(b)
    margin = spread(a) + spread(b)
    for values in (a, b):
        if not is_bound(values) and len(values) < MIN_REPEATS:
            return Verdict(None, ma, mb, margin, f"{len(values)} repeat(s): a side needs {MIN_REPEATS}")
    if others_cores is not None and others_cores > MAX_OTHERS_CORES:
        return Verdict(None, ma, mb, margin, f"other processes kept {others_cores:.2f} cores busy")
    if abs(ma - mb) <= margin:
        return Verdict(None, ma, mb, margin, "the medians differ by no more than the spread")
    if op == "<":
        return Verdict(ma < mb, ma, mb, margin)
    if op == ">":
        return Verdict(ma > mb, ma, mb, margin)
    raise ValueError(f"op must be '<' or '>', got {op!r}")

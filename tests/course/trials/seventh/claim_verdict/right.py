"""Right: each side is first turned into a small record (values, whether it is
a fixed bound) and the medians are computed by hand from the sorted values
(the mean of the two middle ones for an even count); the claim is then
rewritten as "upper - lower > margin", where upper and lower are the sides
the claim says are larger and smaller, instead of comparing in the claim's
own direction. Checks in the contract's order: repeats, then the other
processes' load, then the gap against the margin."""
import numbers

from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict


def _side(side):
    if isinstance(side, numbers.Real):
        return [float(side)], True                  # a fixed bound
    values = [float(v) for v in side]
    if not values:
        raise ValueError("a side of a time claim needs at least one value")
    return values, False


def _median(values):
    ordered = sorted(values)
    half = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[half]
    return (ordered[half - 1] + ordered[half]) / 2


def judge(left, op, right, others_cores=None) -> Verdict:
    if op == "<":
        lower_is_left = True
    elif op == ">":
        lower_is_left = False
    else:
        raise ValueError(f"op must be '<' or '>', not {op!r}")
    (lv, l_bound), (rv, r_bound) = _side(left), _side(right)
    l_med, r_med = _median(lv), _median(rv)
    margin = (max(lv) - min(lv)) + (max(rv) - min(rv))

    def undecided(reason):
        return Verdict(None, l_med, r_med, margin, reason)

    counts = [len(v) for v, bound in ((lv, l_bound), (rv, r_bound)) if not bound]
    if counts and min(counts) < MIN_REPEATS:
        return undecided(f"{min(counts)} repeat(s) on a measured side; "
                         f"a spread takes {MIN_REPEATS}")
    if others_cores is not None and others_cores > MAX_OTHERS_CORES:
        return undecided(f"other processes kept {others_cores:.1f} cores busy "
                         f"(more than {MAX_OTHERS_CORES})")
    upper, lower = (r_med, l_med) if lower_is_left else (l_med, r_med)
    gap = upper - lower
    if abs(gap) <= margin:
        return undecided(f"the medians differ by {abs(gap):.2g}, "
                         f"within the spread {margin:.2g}")
    return Verdict(gap > 0, l_med, r_med, margin)

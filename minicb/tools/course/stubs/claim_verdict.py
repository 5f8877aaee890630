"""Chapter 7: the verdict on a claim about time.

A notebook times each setting several times, the repeats interleaved, and
claims, say, that continuous batching's latency is below static's. Whether
the run supports the claim is decided from that run alone: the medians must
differ in the claim's direction by more than the repeats' spread.
Check: ``python -m minicb check claim_verdict``.
"""
from minicb.tools.bench.claims import MAX_OTHERS_CORES, MIN_REPEATS, Verdict


def judge(left, op, right, others_cores=None) -> Verdict:
    """Whether ``left op right`` holds, op "<" or ">". Each side is a list of
    measurements (one per repeat) or a single number, a fixed bound with no
    spread (it needs no repeats). Return Verdict(holds, median of left, median
    of right, margin, reason), where margin is the two sides' spreads (largest
    less smallest) added, and holds is:

    - None (not decided, with a reason) if a measured side has fewer than
      MIN_REPEATS values, or if others_cores (cores other processes kept busy)
      is over MAX_OTHERS_CORES, or if the medians differ by no more than the margin;
    - otherwise True when the medians differ in the claim's direction, else False.

    The reason, when holds is None, says why with the numbers that decided it,
    which notebooks print: the fewest repeats a measured side has and the fewest
    it needs; the cores other processes kept busy; or the gap between the
    medians and the margin. Raise ValueError for an op other than "<" and ">".
    """
    raise NotImplementedError

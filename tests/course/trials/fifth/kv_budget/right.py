"""Right: sums the two terms with math.fsum (usable memory, and the weights' bytes
negated) instead of a plain subtraction; the result is the same correctly rounded
difference, negative when the weights do not fit (no clamping)."""
import math


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes for the KV cache: ``utilization`` of ``hw.memory`` less the model's
    weights (``shape.params`` values of ``bytes_per_value`` bytes each).
    Activations are left out: a step's are small beside either.
    """
    usable = utilization * hw.memory
    weights = shape.params * bytes_per_value          # an exact integer count of bytes
    return math.fsum((usable, -weights))

"""Right: computed exactly in rational arithmetic (Fraction) and rounded to a float once,
instead of the float expression utilization * memory - params * bytes; negative when the weights do not fit.
"""
from fractions import Fraction


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes for the KV cache: ``utilization`` of ``hw.memory`` less the model's
    weights (``shape.params`` values of ``bytes_per_value`` bytes each).
    Activations are left out: a step's are small beside either.
    """
    allowed = Fraction(utilization) * Fraction(hw.memory)
    weights = Fraction(shape.params) * Fraction(bytes_per_value)
    return float(allowed - weights)

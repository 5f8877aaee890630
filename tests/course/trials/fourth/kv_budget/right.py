"""Right, written differently: it starts from the weights' bytes and negates the overshoot,
-(weights - utilization * memory), which rounds exactly as the plain difference does
(round-to-nearest-even is symmetric), instead of writing utilization * memory - weights."""
from minicb.costmodel import Hardware, ModelShape


def kv_budget(hw: Hardware, shape: ModelShape, bytes_per_value: int,
              utilization: float = 0.9) -> float:
    """Bytes for the KV cache: ``utilization`` of ``hw.memory`` less the model's
    weights (``shape.params`` values of ``bytes_per_value`` bytes each).
    Activations are left out: a step's are small beside either.
    """
    weight_bytes = shape.params * bytes_per_value
    allowed = hw.memory * utilization
    return -(weight_bytes - allowed)

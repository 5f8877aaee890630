"""Right: states the budget as what the engine may fill less what the weights
already fill, naming both before subtracting, and returns a float; the
weights are shape.params x bytes_per_value (the shape's own count, which
knows whether the embeddings are tied), the memory the profile's. A budget
that comes out negative is returned as it is: the weights do not fit."""


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    allowed = hw.memory * utilization
    weights = shape.params * bytes_per_value
    return float(allowed - weights)

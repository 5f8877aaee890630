"""Misconception: the output count lives in ``request.metrics.num_output_tokens``, so the length
rule reads it rather than the tokens themselves. Goes wrong whenever metrics lag the list, e.g. a
request with 4 output tokens, max_tokens=4 and metrics.num_output_tokens still 0 -> None, not "length"."""


def stop_reason(request, token: int) -> str | None:
    """Why ``token`` (just appended) ends the request, or None if it does not."""
    params = request.params
    if token in params.stop_token_ids:
        return "stop"
    if not params.ignore_eos and token in request.eos_token_ids:
        return "eos"
    if request.metrics.num_output_tokens >= params.max_tokens:
        return "length"
    return None

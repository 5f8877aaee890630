"""Misconception: the budget is checked first ("length" is the hard limit), so a stop/EOS
token sampled as the max_tokens-th token is reported as "length".
Goes wrong: max_tokens=3, third output token is a stop token -> "length" instead of "stop"."""


def stop_reason(request, token: int) -> str | None:
    """Why ``token`` (just appended) ends the request, or None if it does not."""
    params = request.params
    if len(request.output_token_ids) >= params.max_tokens:
        return "length"
    if token in params.stop_token_ids:
        return "stop"
    if not params.ignore_eos and token in request.eos_token_ids:
        return "eos"
    return None

"""Misconception: a model has one EOS id, so only ``eos_token_ids[0]`` ends a request.
Goes wrong: eos_token_ids=(2, 128009) and the sampled token is 128009 -> None instead of "eos"."""


def stop_reason(request, token: int) -> str | None:
    """Why ``token`` (just appended) ends the request, or None if it does not."""
    params = request.params
    if token in params.stop_token_ids:
        return "stop"
    eos = request.eos_token_ids[0] if request.eos_token_ids else None
    if not params.ignore_eos and token == eos:
        return "eos"
    if len(request.output_token_ids) >= params.max_tokens:
        return "length"
    return None

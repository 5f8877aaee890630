"""Misconception: with ignore_eos an EOS token is "not a stop", so the function answers None for it
at once, skipping the length rule. Goes wrong when ignore_eos is set and the EOS token is the
max_tokens-th output token: None instead of "length" (the request runs past max_tokens)."""


def stop_reason(request, token: int) -> str | None:
    """Why ``token`` (just appended) ends the request, or None if it does not."""
    params = request.params
    if token in params.stop_token_ids:
        return "stop"
    if token in request.eos_token_ids:
        return None if params.ignore_eos else "eos"
    if len(request.output_token_ids) >= params.max_tokens:
        return "length"
    return None

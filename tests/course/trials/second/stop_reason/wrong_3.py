"""Misconception: a request reaches max_tokens exactly once, so "length" is tested
with ==. Goes wrong when the request already holds more than max_tokens outputs
(e.g. max_tokens=2 and a third token appended): returns None instead of "length"."""


def stop_reason(request, token: int) -> str | None:
    params = request.params
    if token in params.stop_token_ids:
        return "stop"
    if token in request.eos_token_ids and not params.ignore_eos:
        return "eos"
    if len(request.output_token_ids) == params.max_tokens:
        return "length"
    return None

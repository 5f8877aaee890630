"""Misconception: ignore_eos means "ignore every stopping token", so with it set only
max_tokens ends a request. Wrong on: ignore_eos=True, stop_token_ids=[5], token 5
(output shorter than max_tokens) -> gives None, contract says "stop".
"""


def stop_reason(request, token: int) -> str | None:
    """Why ``token`` (just appended) ends the request, or None if it does not."""
    params = request.params
    if not params.ignore_eos:
        if token in params.stop_token_ids:
            return "stop"
        if token in request.eos_token_ids:
            return "eos"
    if len(request.output_token_ids) >= params.max_tokens:
        return "length"
    return None

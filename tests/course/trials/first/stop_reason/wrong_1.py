"""Misconception: "length" is checked first (the cheap, always-applicable limit), so a
last token that is also a stop/eos token reports "length". Wrong on: max_tokens=2,
stop_token_ids=[5], outputs [3, 5], token 5 -> gives "length", contract says "stop".
"""


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

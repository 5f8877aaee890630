"""Misconception: max_tokens is the hard limit, so "length" is checked first.
Wrong when the max_tokens-th token is also a stop/EOS token: max_tokens=2, output [7, 2],
stop_token_ids=[2] gives "length" instead of "stop"."""


def stop_reason(request, token: int) -> str | None:
    params = request.params
    if len(request.output_token_ids) >= params.max_tokens:
        return "length"
    if token in params.stop_token_ids:
        return "stop"
    if not params.ignore_eos and token in request.eos_token_ids:
        return "eos"
    return None

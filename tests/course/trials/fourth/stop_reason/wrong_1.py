"""Misconception: max_tokens is a hard cap, so "length" is checked first and wins.
Goes wrong when the max_tokens-th token is also a stop token or EOS, e.g.
max_tokens=3, output [4, 5, 9], stop_token_ids=[9]: returns "length", not "stop"."""


def stop_reason(request, token: int) -> str | None:
    params = request.params
    if len(request.output_token_ids) >= params.max_tokens:
        return "length"
    if token in params.stop_token_ids:
        return "stop"
    if not params.ignore_eos and token in request.eos_token_ids:
        return "eos"
    return None

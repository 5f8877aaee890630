"""Misconception: "length" is the hard limit, so it is checked first.
Goes wrong when the max_tokens-th token is also a stop or EOS token: e.g. max_tokens=1,
stop_token_ids=[7], token 7 gives "length" instead of "stop"."""


def stop_reason(request, token: int) -> str | None:
    params = request.params
    if len(request.output_token_ids) >= params.max_tokens:
        return "length"
    if token in params.stop_token_ids:
        return "stop"
    if token in request.eos_token_ids and not params.ignore_eos:
        return "eos"
    return None

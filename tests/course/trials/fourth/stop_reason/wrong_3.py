"""Misconception: the engine asks after every token, so the length limit is hit
exactly once: "length" only when len(output) == max_tokens. Wrong once a request
holds more than max_tokens outputs (e.g. max_tokens=2, output [1, 2, 3]): returns None."""


def stop_reason(request, token: int) -> str | None:
    params = request.params
    if token in params.stop_token_ids:
        return "stop"
    if token in request.eos_token_ids and not params.ignore_eos:
        return "eos"
    if len(request.output_token_ids) == params.max_tokens:
        return "length"
    return None

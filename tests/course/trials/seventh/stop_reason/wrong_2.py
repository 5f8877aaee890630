"""Misconception: ignore_eos means "generate exactly max_tokens tokens", so with it
set the student skips every token-based stop, stop_token_ids included. It only
disables EOS: a stop token still ends the request. Input: ignore_eos=True,
stop_token_ids=[5], max_tokens=10, output [3, 5], token 5 -> "stop" is required; this
returns None.
"""


def stop_reason(request, token: int) -> str | None:
    params = request.params
    if not params.ignore_eos:
        if token in params.stop_token_ids:
            return "stop"
        if token in request.eos_token_ids:
            return "eos"
    if len(request.output_token_ids) >= params.max_tokens:
        return "length"
    return None

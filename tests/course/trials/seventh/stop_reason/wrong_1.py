"""Misconception: max_tokens is a hard cap, so "length" is checked first and wins
over every other reason. The contract orders stop > eos > length: when the token that
brings the output to max_tokens is itself a stop (or EOS) token, the reason is "stop"
(or "eos"). Input: max_tokens=2, stop_token_ids=[9], output [4, 9], token 9 ->
"stop" is required; this returns "length".
"""


def stop_reason(request, token: int) -> str | None:
    params = request.params
    if len(request.output_token_ids) >= params.max_tokens:
        return "length"
    if token in params.stop_token_ids:
        return "stop"
    if token in request.eos_token_ids and not params.ignore_eos:
        return "eos"
    return None

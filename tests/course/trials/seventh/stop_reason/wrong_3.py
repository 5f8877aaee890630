"""Misconception: a model has one end-of-sequence token, the first entry of
request.eos_token_ids, so only that id is compared. Llama 3 style checkpoints have
several (e.g. <|end_of_text|> and <|eot_id|>); any of them ends the request. Input:
eos_token_ids=(2, 7), ignore_eos=False, no stop tokens, max_tokens=10, output [7],
token 7 -> "eos" is required; this returns None (and it raises IndexError on an empty
eos_token_ids).
"""


def stop_reason(request, token: int) -> str | None:
    params = request.params
    if token in params.stop_token_ids:
        return "stop"
    if not params.ignore_eos and token == request.eos_token_ids[0]:
        return "eos"
    if len(request.output_token_ids) >= params.max_tokens:
        return "length"
    return None

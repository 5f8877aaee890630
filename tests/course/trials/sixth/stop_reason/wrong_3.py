"""Misconception: a model has one EOS token, the first of ``eos_token_ids``. Goes wrong for a
model with several (Llama 3: 128001, 128008, 128009): eos_token_ids=(1, 3), token 3 gives None
(or "length") instead of "eos"."""


def stop_reason(request, token: int) -> str | None:
    """Why ``token`` (just appended) ends the request, or None if it does not."""
    params = request.params
    if token in params.stop_token_ids:
        return "stop"
    eos = request.eos_token_ids[0] if request.eos_token_ids else None
    if not params.ignore_eos and token == eos:
        return "eos"
    if len(request.output_token_ids) >= params.max_tokens:
        return "length"
    return None

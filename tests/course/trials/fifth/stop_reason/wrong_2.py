"""Misconception: a model has one EOS token, the first of eos_token_ids.
Wrong for models with several EOS ids (Llama 3): eos_token_ids=(1, 9), token 9 gives None
instead of "eos"."""


def stop_reason(request, token: int) -> str | None:
    params = request.params
    if token in params.stop_token_ids:
        return "stop"
    eos = request.eos_token_ids[0] if request.eos_token_ids else None
    if not params.ignore_eos and token == eos:
        return "eos"
    if len(request.output_token_ids) >= params.max_tokens:
        return "length"
    return None

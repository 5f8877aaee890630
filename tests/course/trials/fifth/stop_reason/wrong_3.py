"""Misconception: ignore_eos means "ignore every stop condition but max_tokens", so it
also silences stop_token_ids. Wrong with ignore_eos=True, stop_token_ids=[5], token 5:
gives None instead of "stop"."""


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

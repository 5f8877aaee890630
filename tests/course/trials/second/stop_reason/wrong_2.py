"""Misconception: ignore_eos means "run to max_tokens" (as in benchmarking), so it
also silences stop_token_ids. Goes wrong with ignore_eos=True, stop_token_ids=[7]
and token 7: returns None instead of "stop"."""


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

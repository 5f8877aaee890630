"""Misconception: ignore_eos means "an EOS token is never a reason to stop", so an
EOS token under ignore_eos returns None at once, before the stop and length rules.
Wrong when ignore_eos and the token is EOS *and* a stop token, or arrives at max_tokens."""


def stop_reason(request, token: int) -> str | None:
    params = request.params
    if token in request.eos_token_ids:
        if params.ignore_eos:
            return None            # ignore it: keep generating
        if token not in params.stop_token_ids:
            return "eos"
    if token in params.stop_token_ids:
        return "stop"
    if len(request.output_token_ids) >= params.max_tokens:
        return "length"
    return None

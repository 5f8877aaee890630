"""Misconception: end of sequence is the more fundamental reason, so "eos" is checked before "stop".
Goes wrong when the token is both a stop token and an EOS token: eos_token_ids=(2,),
stop_token_ids=[2], token 2 gives "eos" where the contract says "stop"."""


def stop_reason(request, token: int) -> str | None:
    """Why ``token`` (just appended) ends the request, or None if it does not."""
    params = request.params
    if token in request.eos_token_ids and not params.ignore_eos:
        return "eos"
    if token in params.stop_token_ids:
        return "stop"
    if len(request.output_token_ids) >= params.max_tokens:
        return "length"
    return None

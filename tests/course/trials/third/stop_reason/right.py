"""Right: builds the three rules as an ordered table of (reason, holds?) pairs, evaluated lazily,
and returns the first that holds with next(); no if-chain. Stop and EOS ids are looked up in sets."""


def stop_reason(request, token: int) -> str | None:
    """Why ``token`` (just appended) ends the request, or None if it does not."""
    params = request.params
    rules = (
        ("stop", lambda: token in set(params.stop_token_ids)),
        ("eos", lambda: not params.ignore_eos and token in set(request.eos_token_ids)),
        ("length", lambda: len(request.output_token_ids) >= params.max_tokens),
    )
    return next((reason for reason, holds in rules if holds()), None)

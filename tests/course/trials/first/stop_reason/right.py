"""Correct. Differs from the obvious if/elif chain: the three reasons are laid out
as an ordered table of (reason, holds?) pairs, evaluated lazily, and the first
that holds wins; membership is tested against sets built on the spot.
"""


def stop_reason(request, token: int) -> str | None:
    """Why ``token`` (just appended) ends the request, or None if it does not.

    - "stop" if it is one of ``request.params.stop_token_ids``;
    - "eos" if it is one of ``request.eos_token_ids``, unless
      ``request.params.ignore_eos`` is set;
    - "length" once the request has ``request.params.max_tokens`` output tokens.

    The order matters when more than one holds: the first reason in this list wins.
    """
    params = request.params
    rules = (
        ("stop", lambda: token in set(params.stop_token_ids)),
        ("eos", lambda: not params.ignore_eos and token in set(request.eos_token_ids)),
        ("length", lambda: len(request.output_token_ids) >= params.max_tokens),
    )
    return next((reason for reason, holds in rules if holds()), None)

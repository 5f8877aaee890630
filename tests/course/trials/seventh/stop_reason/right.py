"""Right: instead of a chain of ifs, it builds the three (reason, holds) pairs in the
contract's priority order, with the token sets as Python sets, and returns the first
reason that holds via next(); None when none does.
"""


def stop_reason(request, token: int) -> str | None:
    params = request.params
    candidates = (
        ("stop", lambda: token in set(params.stop_token_ids)),
        ("eos", lambda: (not params.ignore_eos) and token in set(request.eos_token_ids)),
        ("length", lambda: len(request.output_token_ids) >= params.max_tokens),
    )
    return next((reason for reason, holds in candidates if holds()), None)

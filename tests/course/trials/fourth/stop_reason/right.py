"""Right, written as a table of (reason, test) pairs scanned in priority order
with next(), each test evaluated lazily, instead of an if-chain."""


def stop_reason(request, token: int) -> str | None:
    params = request.params
    rules = (
        ("stop", lambda: token in set(params.stop_token_ids)),
        ("eos", lambda: not params.ignore_eos and token in set(request.eos_token_ids)),
        ("length", lambda: len(request.output_token_ids) >= params.max_tokens),
    )
    return next((reason for reason, holds in rules if holds()), None)

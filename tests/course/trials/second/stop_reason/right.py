"""Right, written as a table: every (reason, holds) pair is built in the contract's
order and the first that holds wins (no if-chain); token ids compared as sets of ints."""


def stop_reason(request, token: int) -> str | None:
    params = request.params
    stops = {int(t) for t in params.stop_token_ids}
    eos = set() if params.ignore_eos else {int(t) for t in request.eos_token_ids}
    reasons = (
        ("stop", token in stops),
        ("eos", token in eos),
        ("length", len(request.output_token_ids) >= params.max_tokens),
    )
    return next((reason for reason, holds in reasons if holds), None)

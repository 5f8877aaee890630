"""Right: builds the three reasons as (name, holds) pairs in the contract's order and
returns the first that holds; "length" compares with >= so an over-long output still ends.
Differs from the obvious if-chain by being table-driven and by checking membership via sets."""


def stop_reason(request, token: int) -> str | None:
    params = request.params
    reasons = (
        ("stop", token in set(params.stop_token_ids)),
        ("eos", not params.ignore_eos and token in set(request.eos_token_ids)),
        ("length", len(request.output_token_ids) >= params.max_tokens),
    )
    return next((name for name, holds in reasons if holds), None)

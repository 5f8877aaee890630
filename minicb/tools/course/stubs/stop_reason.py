"""Chapter 1: why a request ends.

After each sampled token is appended to ``request.output_token_ids``, the engine
asks whether that token ends the request. Check: ``python -m minicb check stop_reason``.
"""


def stop_reason(request, token: int) -> str | None:
    """Why ``token`` (just appended) ends the request, or None if it does not.

    - "stop" if it is one of ``request.params.stop_token_ids``;
    - "eos" if it is one of ``request.eos_token_ids``, unless
      ``request.params.ignore_eos`` is set;
    - "length" once the request has ``request.params.max_tokens`` output tokens.

    The order matters when more than one holds: the first reason in this list wins.
    """
    raise NotImplementedError

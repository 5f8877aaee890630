"""What is checked at the server's door, before a request reaches the engine:
the size of its body (``BodyLimit``), its key (``ApiKey``), and at start the
address and whether one ``max_model_len`` sequence fits (``longest_request``).
"""
import contextlib
import hmac
import ipaddress
import socket
from collections.abc import Callable

from fastapi.responses import Response
from starlette.exceptions import HTTPException

from ...sampling_params import SamplingParams
from .options import MAX_REQUEST_BYTES


DRAIN_BYTES = 2**26            # a refused body is read and dropped up to 64 MiB (BodyLimit)


# ANCHOR: body_limit
class BodyLimit:
    """ASGI middleware: a request body larger than max_bytes is refused (413)
    without being parsed or kept: at once when its Content-Length says so, or as
    soon as it grows past the limit (a chunked body has no length). It raises
    from the body's reader, so the refusal reaches the app's own handlers."""

    def __init__(self, app, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        # uvicorn's HTTP parser has checked that a Content-Length is a number
        declared = int(headers.get(b"content-length", 0))
        received, more = 0, True

        async def refuse():
            # A server that answers and closes while the client is still sending
            # resets the connection, and the client sees that instead of the 413:
            # so read the rest and drop it (up to DRAIN_BYTES), unless the client
            # asked to hear first ("Expect: 100-continue") and will send nothing.
            nonlocal received, more
            if headers.get(b"expect", b"").lower() == b"100-continue" and not received:
                more = False
            while more and received < DRAIN_BYTES:
                message = await receive()
                received += len(message.get("body", b""))
                more = message.get("more_body", False)
            raise HTTPException(413)

        async def limited_receive():
            nonlocal received, more
            if declared > self.max_bytes:
                await refuse()
            message = await receive()
            received += len(message.get("body", b""))
            more = message.get("more_body", False)
            if received > self.max_bytes:
                await refuse()
            return message

        await self.app(scope, limited_receive, send)
# ANCHOR_END: body_limit


# ANCHOR: api_key
class ApiKey:
    """ASGI middleware: a /v1 request must say "Authorization: Bearer <key>"
    (OpenAI's header), or it gets refused() (a 401) without reaching the app. The
    key is compared in constant time: how long a refusal takes tells nothing of
    how much of a guess was right."""

    def __init__(self, app, key: str, refused: Callable[[], Response]):
        self.app, self.key, self.refused = app, key.encode(), refused

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["path"].startswith("/v1"):
            header = dict(scope["headers"]).get(b"authorization", b"")
            scheme, _, given = header.partition(b" ")     # any case (RFC 9110)
            right = hmac.compare_digest(given, self.key)
            if not (scheme.lower() == b"bearer" and right):
                await drained(receive)    # else a client still sending sees a reset
                return await self.refused()(scope, receive, send)
        return await self.app(scope, receive, send)


async def drained(receive):
    """Read what is left of a request's body and drop it (BodyLimit, around it,
    refuses one that grows too large: then the refusal here goes out anyway)."""
    more = True
    with contextlib.suppress(HTTPException):
        while more:
            more = (await receive()).get("more_body", False)
# ANCHOR_END: api_key


def check_api_key(key: str, name: str = "api_key"):
    """A key that a client can send. HTTP strips the spaces and tabs around a
    header's value (so a key read from a file with Windows line ends, its "\r"
    kept, could never match), and clients send only ASCII: a key otherwise would
    start a server that refuses everyone. The error names the character, never
    the key."""
    if not isinstance(key, str) or not key:
        raise ValueError(f"{name} must be a non-empty string, got {key!r}: give a key, or "
                         "none at all to let anyone ask")
    for position, character in enumerate(key):
        if not (character.isascii() and character.isprintable()):
            raise ValueError(f"{name} has {character!r} at position {position}: a key is printable "
                             "ASCII, which is all that an HTTP client sends")
    if key != key.strip():
        raise ValueError(f"{name} starts or ends with a space, which HTTP strips from what a "
                         "client sends: no request could bring it")


# ANCHOR: longest_request
def longest_request(engine) -> int:
    """The most tokens, prompt and answer, that one request can hold: max_model_len,
    or fewer where the KV cache is smaller (a paged cache of few blocks, stage 4's
    slots). A request that does not say how long its answer may be gets what is
    left of this; a server where not even two tokens fit does not start."""
    def refusal(tokens: int) -> str | None:
        """Why a request of this many tokens is refused, or None if it is not."""
        try:
            engine.make_request([0], SamplingParams(max_tokens=tokens - 1))
        except ValueError as error:
            return str(error)
        return None

    if (why := refusal(2)) is not None:
        raise ValueError(f"this engine can serve no request at all ({why})")
    low, high = 2, engine.config.max_model_len      # low fits; find the most that does
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if refusal(middle) is None else (low, middle - 1)
    return low
# ANCHOR_END: longest_request


HIGHEST_PORT = 2**16 - 1      # a TCP port is 16 bits; 0 asks the system for any


def check_address(host: str, port: int):
    """Before a model loads: the port is one, and this process may listen there."""
    if not 0 < port <= HIGHEST_PORT:
        raise ValueError(f"--port must be in 1..{HIGHEST_PORT}, got {port}")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET      # as uvicorn chooses
    try:
        with socket.create_server((host, port), family=family):
            pass
    except OSError as error:          # in use, not ours to take, or no such host
        raise ValueError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None


def is_loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:                 # a host name: it may resolve to anything
        return False

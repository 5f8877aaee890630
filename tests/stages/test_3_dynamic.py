"""Stage 3: a batch waits for more requests while its window is open (max_wait_ms),
and a request aborted while it waits leaves nothing behind."""
from minicb import LLMEngine

from ..engine.test_online import params


def test_abort_a_waiting_request(llama):
    engine = LLMEngine(llama, engine="dynamic", max_batch_size=4, max_wait_ms=10_000)
    rid = engine.add_request([5, 6], params(3))
    assert engine.step() == []                                   # the batch window is open
    engine.abort(rid)
    assert not engine.has_unfinished_requests() and not engine.stage.waiting

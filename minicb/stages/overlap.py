"""Stage 5 with async scheduling: the host prepares step N+1 while the GPU runs step N.

In every other stage the host and the GPU take turns. The host schedules a
step, builds its inputs and launches it, then waits for the sampled tokens,
appends them, and only then starts on the next step. While it does, the GPU
is idle. With a small model on a fast GPU, that idle time can be a large
share of every step.

Here the host does not wait. A step's sampled tokens stay on the device, and
the next step reads its input tokens from there. So the host schedules and
launches step N+1 first, and only then reads step N's tokens (waiting for
step N alone, if it is still running). The GPU always has the next step
queued.

For the scheduler, a token still on the device counts as known (it reads as
``PENDING`` on the host). A request whose final token (by ``max_tokens``)
is in flight needs no more steps. A request that stops on an EOS or stop
token is found to have stopped only after its next step was launched: that
step's token for it is dropped, and its memory is freed then.

On a CPU, every operation finishes before the next starts, so nothing
overlaps: the tests check that the tokens are the same as in stage 5.
"""
from collections import Counter

import torch

from .base import read_tokens
from .paged import PagedEngine, PagedScheduler
from .prefix_caching import PrefixCachingEngine, PrefixCachingScheduler

PENDING = -1          # an input token sampled on the device, whose value the host has not read yet


# ANCHOR: tokens_in_flight
class TokensInFlight:
    """A step's sampled tokens: on the device for the next step's inputs, and
    on their way to the host for the requests."""

    def __init__(self, tokens: torch.Tensor):
        # A row that could not be sampled (-1) feeds token 0 to its next step,
        # which it never gets: its request fails when these tokens are read.
        self.on_device = tokens.clamp(min=0)
        # Into pinned memory, queued behind the step.
        self.on_host = tokens.to("cpu", non_blocking=True)
        self.copied = None
        if tokens.is_cuda:
            self.copied = torch.cuda.Event()
            self.copied.record()

    def tolist(self) -> list:
        # Wait for this copy only. A plain .tolist() would also wait for the step
        # queued after it.
        if self.copied is not None:
            self.copied.synchronize()
        return read_tokens(self.on_host)
# ANCHOR_END: tokens_in_flight


# ANCHOR: scheduler
class AsyncScheduler(PagedScheduler):
    """Stage 5's scheduler, counting each token still on the device as known."""

    def __init__(self, config, kv):
        super().__init__(config, kv)
        # request -> tokens sampled on the device, not yet read back
        self.in_flight = Counter()

    def tokens_to_compute(self, request, budget) -> int:
        """A token in flight is one more to compute."""
        in_flight = self.in_flight[request]
        if len(request.output_token_ids) + in_flight >= request.params.max_tokens:
            return 0    # its final token is in flight: it finishes when that lands
        remaining = len(request.all_token_ids) + in_flight - request.num_computed_tokens
        return self.fit(remaining, budget)

    def finish(self, request):
        super().finish(request)
        if request in self.waiting:    # preempted while its last token was in flight
            self.waiting.remove(request)
# ANCHOR_END: scheduler


# ANCHOR: engine
class AsyncPagedEngine(PagedEngine):
    scheduler_class = AsyncScheduler

    def __init__(self, executor, config):
        super().__init__(executor, config)
        # (LaunchedStep, TokensInFlight): the step whose tokens the host has not read
        self.in_flight = None

    def run_step(self):
        batch = self.scheduler.schedule()       # tokens in flight count as known
        launched = self.launch_async(batch) if batch.entries else None
        previous, self.in_flight = self.in_flight, launched
        if previous is None:
            return []
        step, tokens = previous
        # -= drops the counts that reach 0.
        self.scheduler.in_flight -= Counter(step.sampled)
        return self.finish_step(step, tokens.tolist())     # waits for step N only

    def launch_async(self, batch):
        with self.scheduler.undone_on_error(batch):
            step, logits = self.launch(batch)
            params, generators = ([r.params for r in step.sampled],
                                  [r.generator for r in step.sampled])
            tokens = TokensInFlight(self.sampler(logits, params, generators))
        self.scheduler.in_flight.update(step.sampled)
        return step, tokens

    def prepare(self, batch):
        """Stage 5's inputs, with each token in flight taken from the device. The
        host packs a placeholder (PENDING) where such a token goes, as the last
        of its request's tokens, so that request samples from this step too."""
        # A slice that stops short of its token in flight (a recompute after a
        # preemption, run in chunks) needs no placeholder.
        reaching = [r for r, n in batch.entries
                    if r.num_computed_tokens + n > len(r.all_token_ids)]
        for request in reaching:
            request.all_token_ids.append(PENDING)
        try:
            ids, positions, attn, sampled, sample_rows = super().prepare(batch)
        finally:
            for request in reaching:
                request.all_token_ids.pop()
        if reaching:
            step, tokens = self.in_flight
            index = {request: i for i, request in enumerate(step.sampled)}
            rows = [row for r, row in zip(sampled, sample_rows) if r in reaching]
            picks = [index[r] for r in sampled if r in reaching]
            ids[self.tensor(rows)] = tokens.on_device[self.tensor(picks)]
        return ids, positions, attn, sampled, sample_rows

    def deliver(self, requests, tokens):
        """A request that finished or was aborted while its token was in flight
        drops that token."""
        live = [(r, token) for r, token in zip(requests, tokens) if not r.finished]
        return super().deliver([r for r, _ in live], [token for _, token in live])
# ANCHOR_END: engine

    def has_unfinished_requests(self) -> bool:
        return super().has_unfinished_requests() or self.in_flight is not None

    def close(self):
        """The step in flight goes too: its requests were aborted, its tokens are nobody's."""
        super().close()
        self.in_flight = None
        self.scheduler.in_flight.clear()


class AsyncPrefixCachingScheduler(AsyncScheduler, PrefixCachingScheduler):
    """Both: tokens in flight count as known, and cached prefixes are shared."""


class AsyncPrefixCachingEngine(AsyncPagedEngine, PrefixCachingEngine):
    """Async scheduling over stage 5 with prefix caching."""
    scheduler_class = AsyncPrefixCachingScheduler

"""Stage 6: speculative decoding on stage 5 (Leviathan et al.; Chen et al.).

A decode step reads every weight to produce one token per sequence, and leaves
most of the GPU's arithmetic idle (chapter 8). Here each step spends some of it
on guesses. A drafter proposes up to k next tokens for every decoding request;
the step feeds the request's last token and its k drafts through the model at
once, k + 1 queries of one sequence, as a chunk of a prompt would be; and the
logits at those k + 1 positions say which drafts the model agrees with.

The rule that keeps the model's own distribution exactly: draft i is accepted
with probability min(1, p(x) / q(x)), where p is the model's distribution at
that position (after temperature, top_k and top_p) and q the drafter's. At the
first rejection the token is drawn from what is left of p, max(0, p - q)
normalised, and the step ends there; if every draft is accepted, a last token
is drawn from p at the position after them. Greedy requests accept the
longest prefix of drafts that match the model's picks, plus its next pick.
Either way a step gives a request between 1 and k + 1 tokens.

The drafters (drafting.py): prompt lookup, the tokens that followed the
latest earlier occurrence of the request's last n tokens, which needs no
other model and pays on text that repeats its prompt (code edits, summaries,
retrieval); its q is all on the one token it proposes, so a draft x is kept
with probability p(x). Or a draft model of the same vocabulary, a smaller one
or the target's own first layers, whose q is what it sampled from.

The rejected drafts' K/V were written to the cache: the request's computed
tokens roll back past them (the slots are overwritten by the next step), and
blocks that hold nothing but rejected drafts go back to the free list.
"""
import torch

from ..sampling import filtered_probabilities, greedy
from .base import read_tokens
from .drafting import Draft, make_drafter
from .iteration import ScheduledBatch
from .paged import BlockManager, PagedEngine, PagedScheduler
from .prefix_caching import PrefixCachingBlockManager, PrefixCachingEngine, PrefixCachingScheduler


# ANCHOR: accept
def accept(draft: Draft, probs: torch.Tensor, generator=None) -> list[int]:
    """The tokens a sampling request keeps from one verify step: probs
    [len(draft) + 1, V], the model's filtered distribution p at each position.
    Draft x, drawn from q, is kept with probability min(1, p(x) / q(x)); at the
    first rejection the token is drawn from max(0, p - q), normalised, and the
    step ends; with every draft kept, a last token is drawn from the next p. A
    draft with no q had all of it on x: kept with p(x), else drawn from p
    without x.

    The draws, in order, and no others (a seeded request's tokens depend on
    them): one torch.rand((), generator=generator) per draft examined, x kept
    if u * q(x) < p(x); at the first rejection one draw (``draw``) from
    max(0, p - q), or from p where rounding left that all zero; with every
    draft kept, one draw from the next position's p."""
    kept = []
    for i, token in enumerate(draft.tokens):
        p = probs[i]
        q = draft.probs[i] if draft.probs is not None else one_hot(token, p)
        if torch.rand((), generator=generator, device=p.device) * q[token] < p[token]:
            kept.append(token)
            continue
        rest = (p - q).clamp(min=0)
        return kept + [draw(rest if rest.sum() > 0 else p, generator)]
    return kept + [draw(probs[len(draft)], generator)]


def one_hot(token: int, like: torch.Tensor) -> torch.Tensor:
    q = torch.zeros_like(like)
    q[token] = 1.0
    return q


def draw(weights: torch.Tensor, generator=None) -> int:
    return int(torch.multinomial(weights / weights.sum(), 1, generator=generator))


def agreed(draft: list[int], picks: list[int]) -> list[int]:
    """A greedy request's tokens from one verify step: the model's picks at
    every position up to and including the first that differs from the draft."""
    kept = 0
    while kept < len(draft) and draft[kept] == picks[kept]:
        kept += 1
    return picks[:kept + 1]
# ANCHOR_END: accept


# ANCHOR: scheduler
class SpeculativeScheduler(PagedScheduler):
    """Stage 5's scheduler, with each decoding request's drafts among the tokens
    it computes this step, as many as the token budget leaves room for."""

    def __init__(self, config, kv):
        super().__init__(config, kv)
        self.drafts = {}                     # request -> this step's draft tokens

    def tokens_to_compute(self, request, budget) -> int:
        draft = self.drafts.get(request)
        if not draft:
            return super().tokens_to_compute(request, budget)
        return min(1 + len(draft), budget)   # its last token, then what fits

    def schedule(self) -> ScheduledBatch:
        batch = super().schedule()
        for request, n in batch.entries:     # drafts the budget cut
            if request in self.drafts:
                self.drafts[request] = self.drafts[request].cut(n - 1)
        # a step of decodes with their drafts is a decode step
        decoding = [(r, 1 if r in self.drafts else n) for r, n in batch.entries]
        batch.kind = ScheduledBatch(decoding).kind
        return batch
# ANCHOR_END: scheduler


# ANCHOR: engine
class SpeculativeEngine(PagedEngine):
    """Stage 5, each step verifying drafted tokens (module docstring)."""
    scheduler_class = SpeculativeScheduler

    def __init__(self, executor, config):
        super().__init__(executor, config)
        self.drafter = make_drafter(self, self.executor.config.vocab_size)

    def make_kv_manager(self):
        paged = super().make_kv_manager()          # sizes and allocates the cache
        return TrimmedBlocks(paged.num_blocks, paged.block_size)

    def run_step(self):
        drafts = self.scheduler.drafts = self.draft()
        batch = self.scheduler.schedule()
        if not batch.entries:
            return []
        with self.scheduler.undone_on_error(batch):
            step, logits = self.launch(batch)
            tokens = self.verify(step.sampled, logits, drafts)
        self.roll_back(step.sampled, tokens, drafts)
        return self.finish_step(step, tokens)

    def draft(self) -> dict:
        """Each decoding request's drafts: at most k, and never more than its
        max_tokens leaves room for after the token the step adds anyway."""
        k, wanted = self.config.speculative_config["num_speculative_tokens"], {}
        for request in self.scheduler.running:
            if request.num_computed_tokens == len(request.all_token_ids) - 1:
                room = request.params.max_tokens - len(request.output_token_ids) - 1
                wanted[request] = min(k, room)
        proposed = self.drafter.propose(wanted)
        return {request: draft for request, draft in proposed.items() if draft}
# ANCHOR_END: engine

    # ANCHOR: prepare
    def prepare(self, batch):
        """Stage 5's packing, each request's drafts appended to its tokens for
        the while (their K/V are computed as if they were its next tokens), and
        every position that verifies a draft among the rows that sample."""
        drafts = self.scheduler.drafts
        for request, draft in drafts.items():
            request.all_token_ids += draft.tokens
        try:
            ids, positions, attn, sampled, rows = super().prepare(batch)
        finally:
            for request, draft in drafts.items():
                del request.all_token_ids[len(request.all_token_ids) - len(draft):]
        verify_rows = []
        for request, row in zip(sampled, rows):
            verify_rows += range(row - len(drafts.get(request, ())), row + 1)
        return ids, positions, attn, sampled, verify_rows
    # ANCHOR_END: prepare

    # ANCHOR: verify
    def verify(self, requests, logits, drafts) -> list:
        """Each request's tokens from this step (a list), or the error that
        fails it alone (logits that are not finite)."""
        results, first = [], 0
        for request in requests:
            draft = drafts.get(request, Draft([]))
            rows = logits[first:first + len(draft) + 1]
            first += len(draft) + 1
            if not torch.isfinite(rows).all():
                results.append(RuntimeError("its logits are not finite (nan or inf): "
                                            "there is nothing to sample"))
            elif greedy(request.params):
                picks = read_tokens(self.sampler(rows, [request.params] * len(rows),
                                                 [request.generator] * len(rows)))
                results.append(agreed(draft.tokens, picks))
            else:
                probs = filtered_probabilities(rows, [request.params] * len(rows))
                generator = request.generator or self.sampler.generator
                results.append(accept(draft, probs, generator))
            request.metrics.num_draft_tokens += len(draft)
            if isinstance(results[-1], list):     # all but the model's own last token
                request.metrics.num_accepted_tokens += len(results[-1]) - 1
        return results
    # ANCHOR_END: verify

    # ANCHOR: roll_back
    def roll_back(self, requests, tokens, drafts):
        """The rejected drafts were computed: the request's cached tokens end
        before them, and the blocks past its end are given back."""
        for request, kept in zip(requests, tokens):
            draft = drafts.get(request)
            if draft and isinstance(kept, list):
                request.num_computed_tokens -= len(draft) - (len(kept) - 1)
                self.kv.trim(request, request.num_computed_tokens)
    # ANCHOR_END: roll_back

    def finish_step(self, step, tokens) -> list:
        delivered = super().finish_step(step, tokens)
        for request in step.batch.requests:
            if request.finished:
                self.drafter.forget(request)        # a draft model's cache for it
        return delivered

    def release(self, request):
        super().release(request)
        self.drafter.forget(request)

    def deliver(self, requests, tokens):
        """Each request's tokens one at a time, through stage 5's rules: a stop
        token, EOS or max_tokens among them ends the request there."""
        for request, kept in zip(requests, tokens):
            for token in (kept if isinstance(kept, list) else [kept]):
                if request.finished:
                    break
                super().deliver([request], [token])
        return requests


class TrimmedBlocks(BlockManager):
    """Stage 5's blocks, which a request's rejected drafts give back."""

    def trim(self, request, num_tokens):
        table = self.block_tables[request]
        while len(table) > self.blocks_for(num_tokens):
            self.free_blocks.append(table.pop())


class TrimmedPrefixBlocks(PrefixCachingBlockManager):
    """Prefix caching's blocks, which rejected drafts give back: only those past
    the request's published (full, cached) blocks, which drafts never fill."""

    def trim(self, request, num_tokens):
        table = self.block_tables[request]
        while len(table) > max(self.blocks_for(num_tokens), len(self.filled[request])):
            block = table.pop()
            self.ref_counts[block] -= 1
            if self.ref_counts[block] == 0:
                self.free_blocks[block] = None


class SpeculativePrefixCachingScheduler(SpeculativeScheduler, PrefixCachingScheduler):
    pass


class SpeculativePrefixCachingEngine(SpeculativeEngine, PrefixCachingEngine):
    """Speculative decoding with prefix caching: both schedulers, prefix caching's blocks."""
    scheduler_class = SpeculativePrefixCachingScheduler

    def make_kv_manager(self):
        paged = PagedEngine.make_kv_manager(self)     # sizes and allocates the cache
        return TrimmedPrefixBlocks(paged.num_blocks, paged.block_size)

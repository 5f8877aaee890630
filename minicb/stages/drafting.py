"""Stage 6's drafters: what proposes the tokens a verify step checks.

``PromptLookup`` (vLLM's "ngram") finds the request's last n tokens earlier in
its own tokens and proposes what followed them: no model, no memory, and
good guesses only where an answer repeats its prompt. ``DraftModel`` runs a
smaller model of the same vocabulary (or the target's own first layers,
loaded again: self-speculative decoding) a token at a time, every drafting
request in one pass, with a K/V cache of its own.

A drafter's ``propose`` takes every drafting request with the most tokens it
may get, and gives each its Draft; ``forget`` drops what it keeps for one.

A draft is its tokens and, for a model's sampled draft, the distribution each
was drawn from (q); prompt lookup's q is all on its token.
"""
import dataclasses
from dataclasses import dataclass

import numpy as np
import torch

from ..checkpoint import load_model
from ..sampling import filtered_probabilities, greedy
from .continuous import RaggedBatch


@dataclass
class Draft:
    tokens: list[int]
    probs: torch.Tensor | None = None      # [len(tokens), vocab]: q; None: all on the token

    def __len__(self):
        return len(self.tokens)

    def cut(self, n: int) -> "Draft":
        """Its first n tokens (the token budget's share)."""
        return Draft(self.tokens[:n], None if self.probs is None else self.probs[:n])


# ANCHOR: prompt_lookup
class PromptLookup:
    """Drafts by n-gram prompt lookup (vLLM's "ngram" method)."""

    def __init__(self, config):
        spec = config.speculative_config
        self.longest = spec["prompt_lookup_max"]
        self.shortest = spec["prompt_lookup_min"]

    def propose(self, wanted: dict) -> dict:
        """{request: the most tokens it may get} -> {request: its Draft}."""
        return {request: Draft(self.lookup(request.all_token_ids, most))
                for request, most in wanted.items()}

    def lookup(self, tokens: list[int], most: int) -> list[int]:
        """Up to ``most`` tokens to follow ``tokens``: those that followed the
        latest earlier occurrence of its last n tokens, the longest n that has
        one first; none if no n-gram recurs."""
        if most < 1:
            return []
        seen = np.asarray(tokens)
        for n in range(min(self.longest, len(seen) - 1), self.shortest - 1, -1):
            windows = np.lib.stride_tricks.sliding_window_view(seen[:-1], n)
            starts = np.flatnonzero((windows == seen[-n:]).all(axis=1))
            if len(starts):
                after = starts[-1] + n             # the latest occurrence's next token
                return seen[after:after + most].tolist()
        return []

    def forget(self, request):
        """Nothing kept per request."""
# ANCHOR_END: prompt_lookup


# ANCHOR: draft_model
class DraftModel:
    """Drafts with a model, every drafting request in one pass a token: first
    each request's tokens not yet in its cache, packed as stage 4 packs a
    step; then each request's latest pick, until it has as many as it may get.
    Each pick is the request's own (greedy, or sampled with its settings). The
    cache is stage 4's: a slot of max_model_len rows for each running request."""

    def __init__(self, engine, vocab_size: int):
        config, spec = engine.config, engine.config.speculative_config
        keep = spec["draft_layers"]
        cut = (lambda model: first_layers(model, keep)) if keep else None
        self.model = load_model(spec["model"], config.dtype, config.device, share=cut)
        if self.model.config.vocab_size != vocab_size:
            raise ValueError(f"speculative_config: the draft model's vocabulary has "
                             f"{self.model.config.vocab_size} tokens, the target's "
                             f"{vocab_size}")
        self.engine = engine          # its attention ops, its tensors, its sampler
        self.slot_len = config.max_model_len
        self.k, self.v = self.model.new_kv_cache(config.max_num_seqs * self.slot_len)
        self.free_slots = list(range(config.max_num_seqs))
        self.slots = {}               # request -> (its slot, the tokens its rows hold)

    def propose(self, wanted: dict) -> dict:
        """{request: the most tokens it may get} -> {request: its Draft}."""
        wanted = {request: most for request, most in wanted.items() if most > 0}
        picks = {request: [] for request in wanted}
        probs = {request: [] for request in wanted}
        new = {request: self.not_cached(request) for request in wanted}
        while new:
            logits = self.forward(new)
            for i, request in enumerate(new):
                token, q = self.pick(request, logits[i:i + 1])
                picks[request].append(token)
                probs[request].append(q)
            new = {r: [picks[r][-1]] for r in new if len(picks[r]) < wanted[r]}
        return {r: Draft(picks[r], None if probs[r][0] is None else torch.cat(probs[r]))
                for r in wanted}

    def not_cached(self, request) -> list[int]:
        """The request's tokens from the first its rows do not hold (its last, at
        least: its logits give the first pick)."""
        if request not in self.slots:
            self.slots[request] = (self.free_slots.pop(), [])
        tokens, (_, held) = request.all_token_ids, self.slots[request]
        del held[min(common_prefix(held, tokens), len(tokens) - 1):]
        return tokens[len(held):]

    def forward(self, new: dict):
        """One pass of the draft model over each request's ``new`` tokens, packed,
        their K/V written after what its rows hold: the logits of each last."""
        ids, positions, rows, lengths, starts, bounds = [], [], [], [], [], [0]
        for request, tokens in new.items():
            slot, held = self.slots[request]
            first = slot * self.slot_len + len(held)
            positions += range(len(held), len(held) + len(tokens))
            rows += range(first, first + len(tokens))
            ids += tokens
            held += tokens
            bounds.append(len(ids))
            lengths.append(len(held))
            starts.append(slot * self.slot_len)
        e, i32 = self.engine, torch.int32
        attn = RaggedBatch(self.k, self.v, e.ops, e.tensor(rows), e.tensor(bounds, i32),
                           e.tensor(lengths, i32), e.tensor(starts, i32),
                           max(len(tokens) for tokens in new.values()))
        hidden = self.model(e.tensor(ids), e.tensor(positions), attn)
        return self.model.compute_logits(hidden[e.tensor(bounds[1:]) - 1])

    def pick(self, request, logits):
        """The request's next draft token, and q (None: greedy, all on it)."""
        params = request.params
        if greedy(params):
            return int(logits.argmax()), None
        q = filtered_probabilities(logits, [params])
        generator = request.generator or self.engine.sampler.generator
        return int(torch.multinomial(q[0], 1, generator=generator)), q

    def forget(self, request):
        """A finished, aborted or preempted request's slot goes back."""
        if request in self.slots:
            self.free_slots.append(self.slots.pop(request)[0])
# ANCHOR_END: draft_model


def first_layers(model, n: int):
    """Keep a model's first n decoder layers (and its embedding, norm and head)."""
    if n > len(model.layers):
        raise ValueError(f"speculative_config: draft_layers {n} is more than the draft "
                         f"model's {len(model.layers)} layers")
    model.layers = model.layers[:n]
    model.config = dataclasses.replace(model.config, num_hidden_layers=n)


def common_prefix(a: list, b: list) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def make_drafter(engine, vocab_size: int):
    spec = engine.config.speculative_config
    return DraftModel(engine, vocab_size) if spec["method"] == "draft" else PromptLookup(engine.config)

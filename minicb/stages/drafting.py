"""Stage 6's drafters: what proposes the tokens a verify step checks.

``PromptLookup`` (vLLM's "ngram") finds the request's last n tokens earlier in
its own tokens and proposes what followed them: no model, no memory, and
good guesses only where an answer repeats its prompt. ``DraftModel`` runs a
smaller model of the same vocabulary (or the target's own first layers,
loaded again: self-speculative decoding) a token at a time, each request with
a K/V cache of its own.

A draft is its tokens and, for a model's sampled draft, the distribution each
was drawn from (q); prompt lookup's q is all on its token.
"""
import dataclasses
from dataclasses import dataclass

import numpy as np
import torch

from ..checkpoint import load_model
from ..sampling import filtered_probabilities, greedy
from .single import OneSequence


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

    def propose(self, request, most: int) -> Draft:
        return Draft(self.lookup(request.all_token_ids, most))

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
    """Drafts with a model: each request's tokens not yet in its cache go
    through it as one chunk, then it picks a token at a time, as the request
    would (greedy, or sampled with the request's own settings)."""

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
        self.caches = {}              # request -> (k, v, the tokens they hold)

    def propose(self, request, most: int) -> Draft:
        if most < 1:
            return Draft([])
        k, v, cached = self.cache_of(request)
        tokens, picks, probs = list(request.all_token_ids), [], []
        new = tokens[common_prefix(cached, tokens):]
        start = len(tokens) - len(new)
        for _ in range(most):
            logits = self.forward(k, v, new, start)
            cached[start:] = new
            start += len(new)
            token, q = self.pick(request, logits)
            picks.append(token)
            probs.append(q)
            new = [token]
        return Draft(picks, None if probs[0] is None else torch.cat(probs))

    def cache_of(self, request):
        if request not in self.caches:
            capacity = len(request.prompt_token_ids) + request.params.max_tokens
            self.caches[request] = (*self.model.new_kv_cache(1, capacity), [])
        return self.caches[request]

    def forward(self, k, v, new, start):
        """The draft model over ``new`` tokens from position ``start``: the
        logits of the last."""
        engine = self.engine
        end = engine.tensor([start + len(new)], dtype=torch.int32)
        attn = OneSequence(k, v, engine.ops, end, max_query_len=len(new))
        positions = engine.tensor(range(start, start + len(new)))
        hidden = self.model(engine.tensor(new), positions, attn)
        return self.model.compute_logits(hidden[-1:])

    def pick(self, request, logits):
        """The request's next draft token, and q (None: greedy, all on it)."""
        params = request.params
        if greedy(params):
            return int(logits.argmax()), None
        q = filtered_probabilities(logits, [params])
        generator = request.generator or self.engine.sampler.generator
        return int(torch.multinomial(q[0], 1, generator=generator)), q

    def forget(self, request):
        """A finished or aborted request's cache goes."""
        self.caches.pop(request, None)
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

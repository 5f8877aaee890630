"""Stage 1: one request at a time.

The request's prompt goes through the model in one forward pass (prefill),
filling the KV cache and giving the first token. Then each decode step feeds
the newest token alone: it reads every weight of the model and the whole KV
cache to produce a single token. That is why decode is memory-bound, and why
every later stage is about putting more requests into that one pass.
"""
from dataclasses import dataclass

import torch

from ..attention import rows
from ..observer import StepOutcome
from .base import Engine, RunToCompletionEngine


# ANCHOR: cache
class ContiguousKVCache:
    """One sequence's K and V: [layers, 1, capacity, kv_heads, head_dim] each
(a batch of one row: what the executor hands out for a batch).

    Each forward pass gets its attention metadata from ``step``; the model
    calls it once per layer with the pass's new q/k/v: it stores k/v after
    the tokens already cached, then attends over all of them.
    """

    def __init__(self, engine: Engine, capacity: int):
        self.k, self.v = engine.new_batch_kv_cache(1, capacity)
        self.engine = engine
        self.context_len = 0            # tokens whose K/V are stored

    def step(self, num_tokens) -> "OneSequence":
        """The metadata of a forward pass that adds num_tokens to the context."""
        end = self.engine.tensor([self.context_len + num_tokens], dtype=torch.int32)
        return OneSequence(self.k, self.v, self.engine.ops, end,
                           max_query_len=num_tokens)

    def advance(self, num_tokens):
        """Called after a forward pass: its tokens now belong to the context."""
        self.context_len += num_tokens


@dataclass
class OneSequence:
    """One forward pass's attention metadata. Its length is a tensor, not a
    number: an executor may record a step's launches once and replay them
    with each later step's tensors (chapter 8)."""
    k_cache: torch.Tensor = rows("cache")      # [layers, 1, capacity, KVH, d]
    v_cache: torch.Tensor = rows("cache")
    ops: object
    seq_lens: torch.Tensor = rows("lengths")   # [1]: tokens cached after this pass
    max_query_len: int                         # tokens this pass adds

    def __post_init__(self):
        # The new tokens' columns, the last N of the context: written by index, so
        # that they come from seq_lens, not from a number fixed when recorded.
        new = torch.arange(self.max_query_len, device=self.seq_lens.device)
        self.columns = (self.seq_lens - self.max_query_len + new).long()

    def __call__(self, layer, q, k, v):           # q [N, H, d]; k, v [N, KVH, d]
        k_cache, v_cache = self.k_cache[layer, 0], self.v_cache[layer, 0]
        k_cache[self.columns] = k
        v_cache[self.columns] = v
        return self.ops.contiguous_attention(q, k_cache, v_cache, self.seq_lens)
# ANCHOR_END: cache


# ANCHOR: engine
class SingleEngine(RunToCompletionEngine):
    name = "single"

    @staticmethod
    def sequences_per_step(config) -> int:
        return 1                                   # one request at a time

    def next_batch(self):
        # Strictly in arrival order.
        return [self.waiting.popleft()] if self.waiting else []

    def run_batch(self, batch):
        [request] = batch
        request.metrics.first_scheduled_time = self.clock()
        capacity = len(request.prompt_token_ids) + request.params.max_tokens
        cache = ContiguousKVCache(self, capacity)
        # Its output too, if it runs again after an error;
        # a copy, as the request's list grows.
        new_tokens, kind = list(request.all_token_ids), "prefill"
        while not request.finished:
            start = cache.context_len
            positions = self.tensor(range(start, start + len(new_tokens)))
            step = cache.step(len(new_tokens))
            # Only the last position predicts: it alone gets logits.
            logits = self.executor.execute(self.tensor(new_tokens), positions, step,
                                           [len(new_tokens) - 1])
            cache.advance(len(new_tokens))
            self.sample([request], logits)
            # What this pass ran, for the step log: (id, tokens cached, slots held).
            held = [(request.request_id, cache.context_len, capacity)]
            outcome = StepOutcome(kind, [request.request_id], len(new_tokens), held)
            self.log.report(outcome)
            yield [request]
            new_tokens, kind = request.output_token_ids[-1:], "decode"
# ANCHOR_END: engine

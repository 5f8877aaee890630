"""Stage 1: one request at a time.

The request's prompt goes through the model in one forward pass (prefill),
filling the KV cache and giving the first token. Then each decode step feeds
the newest token alone: it reads every weight of the model and the whole KV
cache to produce a single token. That is why decode is memory-bound, and why
every later stage is about putting more requests into that one pass.
"""
from ..observer import StepOutcome
from .base import Engine, RunToCompletionEngine


# ANCHOR: cache
class ContiguousKVCache:
    """One sequence's K and V: [layers, capacity, kv_heads, head_dim] each.

    Called by the model once per layer with the step's new q/k/v: it stores
    k/v after the tokens already cached, then attends over all of them.
    """

    def __init__(self, engine: Engine, capacity: int):
        self.k, self.v = engine.new_kv_cache(capacity)
        self.attention = engine.ops.contiguous_attention
        self.context_len = 0            # tokens whose K/V are stored

    def __call__(self, layer, q, k, v):           # q [N, H, d]; k, v [N, KVH, d]
        end = self.context_len + q.shape[0]
        self.k[layer, self.context_len:end] = k
        self.v[layer, self.context_len:end] = v
        return self.attention(q, self.k[layer], self.v[layer], end)

    def advance(self, num_tokens):
        """Called after a forward pass: its tokens now belong to the context."""
        self.context_len += num_tokens
# ANCHOR_END: cache


# ANCHOR: engine
class SingleEngine(RunToCompletionEngine):
    name = "single"

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
            # Only the last position predicts: it alone gets logits.
            logits = self.executor.execute(self.tensor(new_tokens), positions, cache,
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

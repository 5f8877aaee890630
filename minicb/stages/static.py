"""Stage 2: static batching.

Requests are cut into batches of up to ``max_batch_size`` and each batch runs
to completion before the next starts. Prompts of different lengths are
padded on the left, so every row's newest token sits in the same column and
one decode step serves the whole batch. The KV cache for the batch's longest
prompt + longest max_tokens is reserved up front, for every row.

The price: a row whose request has finished keeps being computed until the
batch's longest request is done (the "white squares"), and requests that
arrive meanwhile wait for the whole batch (head-of-line blocking).
"""
from collections import deque
from dataclasses import dataclass

import torch

from ..attention import rows
from ..observer import StepOutcome
from .base import Engine, RunToCompletionEngine


# ANCHOR: cache
class PaddedBatchKVCache:
    """A batch's K and V: [layers, batch, capacity, kv_heads, head_dim] each.

    Row b starts with pad_lens[b] padding columns; the kernel's mask hides
    them. Every row ends at the same column, context_len; each forward pass
    adds columns to every row and gets its own attention metadata (``step``).
    """

    def __init__(self, engine: Engine, pad_lens: list[int], capacity: int):
        self.k, self.v = engine.new_batch_kv_cache(len(pad_lens), capacity)
        self.pad_lens = engine.tensor(pad_lens, dtype=torch.int32)
        self.engine = engine
        self.context_len = 0           # columns filled, padding included

    def step(self, num_columns) -> "PaddedBatch":
        """The metadata of a forward pass that adds num_columns to every row."""
        end = self.context_len + num_columns
        seq_lens = self.engine.tensor([end] * len(self.pad_lens), dtype=torch.int32)
        return PaddedBatch(self.k, self.v, self.engine.ops, self.pad_lens, seq_lens,
                           max_query_len=num_columns)

    def advance(self, num_columns):
        self.context_len += num_columns


@dataclass
class PaddedBatch:
    """One forward pass's attention metadata; the model calls it once per layer.
    Its lengths are tensors, not numbers: an executor may record a step's
    launches once and replay them with each later step's tensors (chapter 8)."""
    # [layers, rows, capacity, KVH, d]: rows >= B
    k_cache: torch.Tensor = rows("cache")
    v_cache: torch.Tensor = rows("cache")
    ops: object
    # [B]: padding columns at the start of each row
    pad_lens: torch.Tensor = rows("sequences")
    # [B]: columns filled after this pass, padding too
    seq_lens: torch.Tensor = rows("lengths")
    max_query_len: int       # columns this pass adds to every row

    def __post_init__(self):
        # The new tokens are the last L columns of each row: written by index, so
        # that the columns come from seq_lens, not from a number fixed when recorded.
        device, batch = self.seq_lens.device, self.seq_lens.shape[0]
        new = torch.arange(self.max_query_len, device=device)
        self.columns = (self.seq_lens[:, None] - self.max_query_len + new).long()
        self.rows = torch.arange(batch, device=device)[:, None]

    def __call__(self, layer, q, k, v):            # q [B*L, H, d]; k, v [B*L, KVH, d]
        batch = self.seq_lens.shape[0]
        q, k, v = (x.view(batch, -1, *x.shape[1:]) for x in (q, k, v))
        k_cache, v_cache = self.k_cache[layer, :batch], self.v_cache[layer, :batch]
        k_cache[self.rows, self.columns] = k
        v_cache[self.rows, self.columns] = v
        out = self.ops.padded_attention(q, k_cache, v_cache, self.seq_lens,
                                        self.pad_lens)
        return out.flatten(0, 1)
# ANCHOR_END: cache


# ANCHOR: left_padded
def left_padded(token_lists: list[list[int]]):
    """Each row's tokens, padded on the left to the longest (pad token 0), with
    each column's position (padding gets 0) and each row's pad length."""
    longest = max(len(tokens) for tokens in token_lists)
    pad_lens = [longest - len(tokens) for tokens in token_lists]
    ids = [[0] * pad + tokens for pad, tokens in zip(pad_lens, token_lists)]
    positions = [[max(0, col - pad) for col in range(longest)] for pad in pad_lens]
    return ids, positions, pad_lens
# ANCHOR_END: left_padded


# ANCHOR: engine
class StaticEngine(RunToCompletionEngine):
    name = "static"

    @staticmethod
    def sequences_per_step(config) -> int:
        return config.max_batch_size               # a batch (stage 3's too)

    def run_batch(self, batch):
        """A generator: one forward pass per next(), yielding the requests it
        advanced."""
        now = self.clock()
        for request in batch:
            request.metrics.first_scheduled_time = now
        # Each row's tokens so far: its prompt, and the output it had if this batch runs
        # again after a step raised (RunToCompletionEngine.run_step).
        ids, positions, pad_lens = left_padded([r.all_token_ids for r in batch])
        longest = len(ids[0])
        # Reserved up front.
        capacity = longest + max(r.params.max_tokens - len(r.output_token_ids)
                                 for r in batch)
        cache = PaddedBatchKVCache(self, pad_lens, capacity)
        yield self.forward_and_sample(batch, cache, ids, positions, "prefill", capacity)

        # Decode until the longest request is done; finished rows ride along (one that
        # failed before its first token, on its prompt's last).
        while not all(r.finished for r in batch):
            ids = [[(r.output_token_ids or r.prompt_token_ids)[-1]] for r in batch]
            positions = [[cache.context_len - pad] for pad in pad_lens]
            yield self.forward_and_sample(batch, cache, ids, positions, "decode",
                                          capacity)

    def forward_and_sample(self, batch, cache, ids, positions, kind, capacity):
        """ids, positions: [B][L] lists. One forward pass; sample for live rows only."""
        rows = [None if r.finished else r.request_id for r in batch]
        live = [i for i, row in enumerate(rows) if row is not None]
        width = len(ids[0])
        # Each live row's last column predicts its next token.
        logits = self.executor.execute(self.tensor(ids).flatten(),
                                       self.tensor(positions).flatten(),
                                       cache.step(width),
                                       [i * width + width - 1 for i in live])
        cache.advance(width)
        # Real tokens now cached.
        held = [(r.request_id, len(r.all_token_ids), capacity) for r in batch]
        self.sample([batch[i] for i in live], logits)
        self.log.report(StepOutcome(kind, rows, len(batch) * width, held))
        return [batch[i] for i in live]
    # ANCHOR_END: engine

    # ANCHOR: next_batch
    def next_batch(self):
        """Whatever has arrived, up to max_batch_size, in arrival order. With
        bucket_by_length, the waiting requests are first sorted by expected
        output length (custom batching): requests that will finish together
        share a batch, so fewer rows idle."""
        if self.config.bucket_by_length:
            self.waiting = deque(sorted(self.waiting,
                                        key=lambda r: r.params.max_tokens))
        size = min(len(self.waiting), self.config.max_batch_size)
        return [self.waiting.popleft() for _ in range(size)]
    # ANCHOR_END: next_batch

"""Hints for the exercises, in tiers: the first points at the idea, the next at
the pieces of the engine to use, the last at the shape of the code. A student
asks for one tier at a time: ``python -m minicb check NAME --hint`` (then
``--hint 2``, ``--hint 3``). None of them is the answer; the engine's own code
is (``check --list`` names it)."""

HINTS = {
    "stop_reason": [
        "Three reasons, checked in an order: which one wins when a token is both a stop "
        "token and the end of sequence?",
        "The request knows its params (stop_token_ids, ignore_eos, max_tokens), its "
        "eos_token_ids and its output_token_ids so far; the token is already appended.",
        "Return \"stop\", \"eos\", \"length\" or None: stop tokens first, then EOS unless "
        "ignore_eos, then the length reached.",
    ],
    "top_p": [
        "Sort each row's probabilities, best first: the tokens to keep are a prefix.",
        "A token stays if the mass of the tokens sorted before it is below top_p; the best "
        "token always stays, whatever top_p rounds to (1e-50 is 0 in float32). Return probs' "
        "dtype.",
        "probs.sort(descending=True), cumsum less the token itself, a mask, then scatter "
        "the kept values back to their columns and renormalise each row.",
    ],
    "left_padding": [
        "Every row gets as long as the longest; the padding goes in front, so each row's "
        "last token sits in the last column.",
        "Positions count a row's own tokens from 0; a padding column's position does not "
        "matter to the model (it is masked), the engine uses 0.",
        "Return (ids, positions, pad_lens), each a list per row.",
    ],
    "static_batches": [
        "A batch is at most max_batch_size requests, taken from the head of the queue.",
        "With bucket_by_length, order the waiting requests by max_tokens first (a stable "
        "sort keeps arrival order among equals).",
        "Pop the batch from self.waiting (a deque) and return it as a list.",
    ],
    "dynamic_window": [
        "Two reasons to close a batch: it is full, or its oldest request has waited "
        "max_wait_ms. Otherwise return an empty batch and let the engine wait.",
        "self.clock() is now; each request's metrics.arrival_time is when it came.",
        "When either holds, cut the batch as static batching does (its next_batch).",
    ],
    "tpot": [
        "Time per output token counts the gaps between tokens, not the wait for the first.",
        "A request with n output tokens has n - 1 gaps between its first token and its "
        "finish; one with a single token has none.",
        "(finish_time - first_token_time) / (num_output_tokens - 1), and 0 when there "
        "are no gaps.",
    ],
    "admission": [
        "First come, first served: the head of the queue goes first, and if it does not "
        "fit, nobody behind it may overtake it.",
        "self.reserve(request, budget) says how many tokens the request gets this step "
        "(0: it does not fit) and allocates its KV memory; mind max_num_seqs too, and ask "
        "self.admission_open() first (chapter 6's knobs may keep admission shut).",
        "While the queue is not empty and there is room, reserve for the head, stop at 0, "
        "else move it to self.running and take its tokens off the budget.",
    ],
    "first_fit": [
        "The holes are free runs of cache rows, in order; take the first one large enough.",
        "self.slot_size(request) is how many rows the request's slot needs.",
        "Return the index of that hole in self.holes, or None when no hole is big enough.",
    ],
    "block_allocation": [
        "A table grows one block at a time until it covers the tokens; it never shrinks "
        "here.",
        "self.blocks_for(num_tokens) blocks are needed; a request may have no table yet; "
        "the free list is a deque, and order matters: the front first.",
        "setdefault the request's table, then popleft from self.free_blocks while it is "
        "too short.",
    ],
    "slot_mapping": [
        "Token p of a request lives in its block p // block_size, at offset p % block_size.",
        "The block table maps the request's block number to a physical block of the pool.",
        "Row = physical block * block_size + offset, for each position start..start+count-1.",
    ],
    "preemption": [
        "Recomputation keeps the tokens and drops their K/V: the request starts over as "
        "a prompt of everything it has so far.",
        "It leaves self.running, its blocks go back (self.kv.free), it has computed 0 "
        "tokens, and it counts one more preemption (the request's and the scheduler's).",
        "Put it at the head of self.waiting, so it is the next admitted, and note that a "
        "preemption happened in this step (self.preempted).",
    ],
    "chunking": [
        "With chunked prefill, a request takes what the budget leaves; without it, all "
        "its remaining tokens or nothing.",
        "One exception: more tokens than any step holds (max_num_batched_tokens) must run "
        "in chunks even without chunked prefill, or they would wait forever.",
        "min(remaining, budget) when chunking (or too long for a step); else remaining if "
        "it fits in the budget, and 0 if not.",
    ],
    "admission_trigger": [
        "Admission opens every schedule_interval steps, and only when enough requests wait "
        "beside those running; with nothing running it always opens.",
        "Count steps since the last admission (self.steps_since_admission); "
        "waiting_served_ratio compares len(self.waiting) with len(self.running).",
        "Increment the count each call; when it opens, reset the count to 0.",
    ],
    "online_softmax": [
        "The softmax of all keys can be built a block at a time if you keep, per row, the "
        "largest score so far: when a block raises it, what you summed before shrinks by "
        "exp(old max - new max).",
        "Scores are tl.dot(q, tl.trans(k)) * scale, with invisible keys at -inf. A row that "
        "has seen nothing visible has max -inf: subtract 0 instead, or exp gives nan.",
        "m_new = max(m_i, row max of s); p = exp(s - m_new); alpha = exp(m_i - m_new); "
        "l_i = l_i * alpha + sum(p); acc = acc * alpha + dot(p, v).",
    ],
    "paged_rows": [
        "Key j is token j of the sequence: its block number in the table is j // "
        "block_size, its place in the block j % block_size.",
        "tl.load(BLOCK_TABLE + index, mask=..., other=0) reads table entries; mask the "
        "keys at or past context_len so the load stays within the table.",
        "Load the physical block for each key, then block * block_size + j % block_size.",
    ],
    "combine_splits": [
        "Each range's output is already normalised by its own softmax sum; weight range s "
        "by its share of the total, exp(lse_s) / sum over ranges of exp(lse).",
        "Subtract the largest lse before exponentiating; a range with lse -inf weighs 0, "
        "and a row where every range is -inf must come out 0, not nan.",
        "One program per (token, head): load the ranges' lse and parts, weight, sum, store "
        "in dtype; the wrapper checks shapes, allocates the output and launches the grid.",
    ],
    "rms_norm": [
        "One program per row: read x (and the residual) once, write the new residual and "
        "the normalised row once.",
        "Add in fp32, round the sum to x's dtype (that is the new residual), and normalise "
        "that rounded value in fp32: mean of squares, plus eps, rsqrt.",
        "Round the normalised row to x's dtype before multiplying by the weight, as the "
        "plain model does; a block of tl.next_power_of_2(hidden) columns covers a row.",
    ],
    "claim_verdict": [
        "Order the two sides so that the claim says the low side is lower: then the gap "
        "between their medians must be positive and larger than the margin.",
        "A single number is a fixed bound: no spread, no repeats needed (claims.samples "
        "and claims.is_bound tell them apart). The margin adds the two sides' ranges.",
        "Undecided first (too few repeats, a busy machine, a gap within the margin), each "
        "with a reason that names its numbers, then Verdict(gap > 0, median(left), "
        "median(right), margin).",
    ],
    "percentiles": [
        "numpy does the interpolation: np.percentile's default is the one asked for.",
        "Convert to a float array first; an empty list has no percentiles, so every "
        "entry is nan.",
        "Return plain Python floats: float(v.mean()), float(np.percentile(v, 50)), ...",
    ],
    "stop_holdback": [
        "Only the tail of the pending text can still turn into a stop string: everything "
        "before it is safe to send now.",
        "How long a tail? One character shorter than the longest stop string "
        "(self.hold). When the stream has stopped or is final, no tail waits.",
        "end = max(0, len(self.pending) - keep); send pending[:end], keep pending[end:].",
    ],
    "vocab_share": [
        "Every rank's share is the same size, ceil(vocab / n); the last ranks may hold "
        "fewer real rows, or none.",
        "Clamp start and end to the vocabulary; copy weight[start:end] into the top of a "
        "zero tensor of the share's shape (weight.new_zeros keeps dtype and device).",
        "Return start, end and nn.Parameter(rows, requires_grad=False): rows of its own "
        "memory, never a view of weight (the whole table would stay alive with it).",
    ],
    "collective_bytes": [
        "Count tensors, then bytes: how many all-reduces does a forward pass make, and "
        "how big is each?",
        "One after the embedding, then two per layer (attention, MLP), each [tokens, "
        "hidden] values; one all-gather of [sampled, share of the vocabulary].",
        "all_reduce = (1 + 2 x layers) x tokens x hidden x bytes; all_gather = sampled x "
        "ceil(vocab / n) x bytes.",
    ],
    "step_cost": [
        "A roofline: the step is bound by memory or by arithmetic, whichever is slower; "
        "the overheads come on top.",
        "shape.params counts every weight; shape.kv_bytes_per_token(bytes) a token's K/V "
        "over all layers; a sequence (n, c) caches c - n tokens and writes n.",
        "Query i of n new ones in a context ending at c sees c - n + i + 1 keys: a "
        "sequence's pairs are n x (c - n) + n x (n + 1) / 2.",
    ],
    "kv_budget": [
        "The engine's share of the GPU first, then the weights out of it.",
        "hw.memory is in bytes; the weights are shape.params values of bytes_per_value.",
        "hw.memory x utilization - shape.params x bytes_per_value.",
    ],
    "acceptance": [
        "Walk the drafts in order: each gets one uniform draw, and the first one not kept "
        "ends the step with a token drawn in its place; kept them all, and one more token "
        "comes from the position after the last.",
        "Prompt lookup's draft has no q: it is 1 on the draft and 0 elsewhere, so the "
        "test is u < p(x) and what is left of p is p without x. Compare u * q(x) < p(x), "
        "never divide: p(x) may be 0, and the check replays your draws exactly.",
        "rest = (p - q).clamp(min=0); draw(rest if rest.sum() > 0 else p, generator); "
        "with every draft kept, draw(probs[len(draft)], generator).",
    ],
    "kv_rollback": [
        "The step counted the request's last token and every draft as computed; only the "
        "drafts it kept are its tokens now.",
        "Of the list the step gave, the last token is the model's own, not yet fed to it: "
        "len(kept) - 1 drafts were accepted, len(draft) - (len(kept) - 1) rejected. Skip "
        "requests with no draft, and those the step failed (an exception, not a list).",
        "request.num_computed_tokens -= the rejected drafts; then self.kv.trim(request, "
        "request.num_computed_tokens), in the order of requests.",
    ],
}


def hint(name: str, tier: int) -> str:
    """Tier ``tier`` (from 1) of an exercise's hints, saying how many there are."""
    tiers = HINTS[name]
    if not 1 <= tier <= len(tiers):
        raise ValueError(f"{name} has hints 1 to {len(tiers)}, not {tier}")
    more = (f" (--hint {tier + 1} for the next)" if tier < len(tiers)
            else " (the last: the engine's own code is the answer, check --list names it)")
    return f"{name}, hint {tier} of {len(tiers)}{more}:\n  {tiers[tier - 1]}"

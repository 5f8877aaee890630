"""Misconception: do the nucleus arithmetic in fp32 for accuracy and hand that tensor back, since
"probabilities are fp32 anyway"; the result's dtype is not probs'.
Goes wrong: any fp16/bf16 probs -> a float32 tensor comes back (values right, dtype wrong)."""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    """Zero every token outside each row's nucleus and renormalize."""
    probs = probs.float()
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
    before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    drop = before >= top_p[:, None].float()
    drop[:, 0] = False
    sorted_probs = sorted_probs.masked_fill(drop, 0.0)
    kept = torch.zeros_like(probs).scatter_(-1, order, sorted_probs)
    return kept / kept.sum(dim=-1, keepdim=True)

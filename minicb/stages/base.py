"""What every stage shares: the model, the sampler, and the step log.

A stage decides *which* tokens go through the model together and where their
K/V live; everything else (turning hidden states into tokens, recording what
each step did) happens here, once.
"""
import time

import torch

from ..attention import attention_ops
from ..config import EngineConfig
from ..metrics import StepRecord
from ..model import Decoder
from ..request import Request
from ..sampling import Sampler


class Engine:
    def __init__(self, model: Decoder, config: EngineConfig):
        self.model = model
        self.config = config
        self.device = config.device
        self.dtype = model.embed_tokens.weight.dtype
        self.ops = attention_ops(config.attention_backend)
        self.sampler = Sampler()
        self.steps: list[StepRecord] = []
        self.progress = None          # a tqdm bar to tick as requests finish, if any

    def run(self, requests: list[Request]):
        """Serve these requests to completion (stages 1-3 work this way)."""
        raise NotImplementedError

    # ANCHOR: sample
    def sample(self, requests: list[Request], hidden) -> None:
        """hidden [len(requests), hidden_size]: each request's last position.
        Sample one token for each and append it; tick the progress bar for
        requests that are now finished."""
        logits = self.model.compute_logits(hidden)
        tokens = self.sampler(logits, [r.params for r in requests], [r.generator for r in requests])
        now = time.perf_counter()
        for request, token in zip(requests, tokens):
            if request.append_token(token, now) and self.progress is not None:
                self.progress.update(1)
    # ANCHOR_END: sample

    def record(self, kind, rows, num_tokens, kv_reserved, kv_used, started):
        self.steps.append(StepRecord(kind, rows, num_tokens, kv_reserved, kv_used,
                                     duration=time.perf_counter() - started))

    def kv_cache_shape(self, *leading) -> tuple:
        """[layers, *leading, kv_heads, head_dim]: the stage picks the middle axes."""
        cfg = self.model.config
        return (cfg.num_hidden_layers, *leading, cfg.num_key_value_heads, cfg.head_dim)

    def tensor(self, values, dtype=torch.long):
        return torch.tensor(values, dtype=dtype, device=self.device)

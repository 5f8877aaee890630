"""Every engine knob in one place: its default, what it means, and its check."""
from dataclasses import dataclass

import torch

ENGINE_NAMES = ("single", "static")
ATTENTION_BACKENDS = ("torch", "triton")


# ANCHOR: engine_config
@dataclass
class EngineConfig:
    engine: str = "static"
    """Which stage serves requests: "single" or "static"."""
    dtype: str = "float32"
    """Weights and activations: "float32", "float16" or "bfloat16"."""
    device: str | None = None
    """"cuda" when a GPU is present, else "cpu"."""
    attention_backend: str | None = None
    """"triton" (the stage's Triton kernel; through the interpreter on a CPU)
    or "torch" (the naive reference). Default: triton on CUDA, torch on CPU."""
    max_model_len: int | None = None
    """Longest prompt + max_tokens a request may ask for. Default: the model's
    max_position_embeddings (or sliding window, if shorter), capped at 4096."""
    max_batch_size: int = 8
    """Stage 2: the most requests one static batch holds."""
    bucket_by_length: bool = False
    """Stage 2: sort requests by expected output length (their max_tokens)
    before cutting batches, so each batch waits less for its longest member."""
    seed: int = 0
    """Seeds the random streams of requests that bring no seed of their own."""

    def __post_init__(self):
        if self.engine not in ENGINE_NAMES:
            raise ValueError(f"unknown engine {self.engine!r}; choose one of {ENGINE_NAMES}")
        if self.device is None:
            self.device = "cuda" if torch.cuda.is_available() else "cpu"
        if self.attention_backend is None:
            self.attention_backend = "triton" if str(self.device).startswith("cuda") else "torch"
        if self.attention_backend not in ATTENTION_BACKENDS:
            raise ValueError(f"unknown attention_backend {self.attention_backend!r}; "
                             f"choose one of {ATTENTION_BACKENDS}")
        if not isinstance(self.max_batch_size, int) or self.max_batch_size < 1:
            raise ValueError(f"max_batch_size must be an integer >= 1, got {self.max_batch_size!r}")
        if self.max_model_len is not None and self.max_model_len < 2:
            raise ValueError(f"max_model_len must be >= 2, got {self.max_model_len!r}")
# ANCHOR_END: engine_config

    def settle_max_model_len(self, max_context: int):
        """max_context: the longest sequence the model computes exactly (its
        max_position_embeddings, or its sliding window if that is shorter)."""
        if self.max_model_len is None:
            self.max_model_len = min(max_context, 4096)
        elif self.max_model_len > max_context:
            raise ValueError(f"max_model_len {self.max_model_len} exceeds the model's "
                             f"maximum context {max_context}")

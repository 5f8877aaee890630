"""Choosing the attention implementation: the Triton kernels ("triton", the
default on a GPU), PyTorch's fused attention ("sdpa", the default without
one) or the naive reference ("reference", the ground truth of the tests).

All three give the same functions with the same signatures
(``contiguous_attention``, ``padded_attention``, ...), so a stage asks for
``ops.padded_attention`` and does not care which it got.

Without a GPU, Triton kernels run in Triton's interpreter, which
``minicb.kernels`` switches on before any kernel is defined.
"""
import os
from dataclasses import dataclass, field
from types import SimpleNamespace

import torch

from .kernels import reference, sdpa

KERNEL_NAMES = ("contiguous_attention", "padded_attention", "ragged_attention", "paged_attention",
                "store_kv_cache")


def attention_ops(backend: str) -> SimpleNamespace:
    if backend == "reference":
        module = reference
    elif backend == "sdpa":
        module = sdpa
    elif backend == "triton":
        _check_triton_can_run()
        # Loaded only when asked for: the kernels load Triton (and set whether it
        # interprets them, minicb/kernels/__init__.py).
        from .kernels import contiguous_attention, kv_write, padded_attention, paged_attention, ragged_attention
        return SimpleNamespace(contiguous_attention=contiguous_attention.contiguous_attention,
                               padded_attention=padded_attention.padded_attention,
                               ragged_attention=ragged_attention.ragged_attention,
                               paged_attention=paged_attention.paged_attention,
                               # Triton's alone: stage 5 over a fixed grid of listed
                               # query tiles, for a step padded to a fixed size (chapter 8)
                               paged_attention_tiles=paged_attention.paged_attention_tiles,
                               store_kv_cache=kv_write.store_kv_cache)
    else:
        raise ValueError(f"unknown attention backend {backend!r}")
    return SimpleNamespace(**{name: getattr(module, name) for name in KERNEL_NAMES})


def _check_triton_can_run():
    if not torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1":
        raise RuntimeError(
            "attention_backend='triton' without a GPU needs Triton's interpreter, and "
            "TRITON_INTERPRET is set to something else here: unset it (minicb.kernels sets "
            "it to 1 without a GPU), or use attention_backend='sdpa'")


# ANCHOR: step_tensors
@dataclass(frozen=True)
class StepTensors:
    """What a stage's attention metadata holds for one step alone, declared by
    the metadata's class (its ``STEP``) for an executor that pads a step to a
    fixed size and replays it (CUDA graphs, chapter 8). Each tensor has a row
    per token of the step, a row per sequence, or the sequences' boundaries
    (``cu_seqlens``: one row more); ``tables`` have a row per sequence and as
    many columns as a ``max_model_len`` request can need. A padding row holds
    ``padding[name]``, else 0: it writes no K/V a sequence reads and attends to
    one key. ``batch_cache``: the K/V cache is made for each batch
    (``new_batch_kv_cache``). Every metadata class also has ``max_query_len``,
    the most queries a sequence has this step: a decode step has 1."""
    tokens: tuple[str, ...] = ()
    sequences: tuple[str, ...] = ()
    boundaries: str | None = None
    tables: tuple[str, ...] = ()
    padding: dict = field(default_factory=dict)
    batch_cache: bool = False
# ANCHOR_END: step_tensors

"""Choosing the attention implementation: the Triton kernels ("triton", the
default on a GPU), PyTorch's fused attention ("sdpa", the default without
one) or the naive reference ("reference", the ground truth of the tests).

All three give the same functions with the same signatures
(``contiguous_attention``, ``padded_attention``, ...), so a stage asks for
``ops.padded_attention`` and does not care which it got.

Without a GPU, Triton kernels run in Triton's interpreter, which
``minicb.kernels`` switches on before any kernel is defined.
"""
import dataclasses
import functools
import os
from dataclasses import field
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
                               store_kv_cache=kv_write.store_kv_cache,
                               # Triton's alone: stage 5 over a fixed grid of listed query
                               # tiles, for a step padded to a fixed size (chapter 8)
                               fixed_grid={"paged_attention": paged_attention.tiles_of_one_step})
    else:
        raise ValueError(f"unknown attention backend {backend!r}")
    return SimpleNamespace(**{name: getattr(module, name) for name in KERNEL_NAMES}, fixed_grid={})


def _check_triton_can_run():
    if not torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1":
        raise RuntimeError(
            "attention_backend='triton' without a GPU needs Triton's interpreter, and "
            "TRITON_INTERPRET is set to something else here: unset it (minicb.kernels sets "
            "it to 1 without a GPU), or use attention_backend='sdpa'")


# ANCHOR: step_rows
# What each row of a step's attention metadata tensors is. An executor that pads a
# step to a fixed size and replays it (CUDA graphs, chapter 8) reads these, not names.
ROW_KINDS = {
    "slots": "one per new token: the cache row its K/V goes to",
    "lengths": "one per sequence: the keys it attends to, its new ones included",
    "sequences": "one per sequence: any other value of it",
    "boundaries": "cu_seqlens: where each sequence's tokens start, and one row more",
    "tables": "one per sequence: a column per block of its keys",
    "cache": "a K/V cache made for one batch (stages 1-3): a row per sequence",
}


def rows(kind: str, keys_per_column: str | None = None):
    """A tensor field of a step's attention metadata, whose rows are of ``kind``
    (ROW_KINDS). A table names the field that says how many keys a column
    covers. Every metadata class also has ``ops`` (its kernels) and
    ``max_query_len``, the most queries a sequence has this step (1: decoding)."""
    if kind not in ROW_KINDS:
        raise ValueError(f"unknown kind of rows {kind!r}; "
                         f"choose one of {list(ROW_KINDS)}")
    return field(metadata={"rows": kind, "keys_per_column": keys_per_column})


def fields_by_rows(metadata) -> dict[str, list]:
    """Each kind of rows, and the metadata's fields that have it, in their order."""
    return declared_rows(type(metadata))


@functools.cache          # read once a class: an executor asks every step
def declared_rows(metadata_class) -> dict[str, list]:
    kinds = {kind: [] for kind in ROW_KINDS}
    for declared in dataclasses.fields(metadata_class):
        if "rows" in declared.metadata:
            kinds[declared.metadata["rows"]].append(declared)
    return kinds


def replayable(ops, max_query_len: int) -> SimpleNamespace:
    """The kernels for a step padded to a fixed size and replayed. A decode step
    (one query a sequence) keeps them: their grids follow its sequences, fixed
    by its bucket. A step with more queries than that swaps in each kernel's
    fixed-grid variant (``ops.fixed_grid``), made fresh: it keeps one step's
    tile list for every layer."""
    if max_query_len == 1:
        return ops
    fixed = {name: make() for name, make in ops.fixed_grid.items()}
    return SimpleNamespace(**{**vars(ops), **fixed})
# ANCHOR_END: step_rows

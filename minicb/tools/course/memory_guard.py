"""Reads and writes past a tensor's end, caught in Triton's interpreter.

On a GPU, a load whose mask lets through an address past a tensor's end reads
whatever lies there, or faults; Triton's interpreter reads the host's memory
just as silently, and a masked-out row usually hides what was read. So inside
``bounded()``, every address a kernel loads or stores with its mask on must lie
in one of the tensors the kernel was given: within the elements of the view
passed, not merely its storage. ``readable`` narrows a tensor further, element
by element (a block table's entries past each sequence's own blocks are in the
tensor, but no kernel may read them).
"""
from contextlib import contextmanager

import numpy as np
import torch
from triton.runtime import interpreter


class OutOfBounds(Exception):
    """A kernel touched memory outside what it was given."""


LAUNCHES = []        # the tensors of each launch running now: [(name, tensor)]


def extent(tensor) -> tuple[int, int]:
    """The bytes [start, stop) a view's elements span."""
    if tensor.numel() == 0:
        return tensor.data_ptr(), tensor.data_ptr()
    last = sum((size - 1) * stride for size, stride in zip(tensor.shape, tensor.stride()))
    return tensor.data_ptr(), tensor.data_ptr() + (last + 1) * tensor.element_size()


def checked(addresses: np.ndarray, what: str, readable: list):
    """OutOfBounds if any address lies outside every tensor of the running launch
    (or on an element ``readable`` forbids)."""
    if addresses.size == 0 or not LAUNCHES:
        return
    addresses = addresses.astype(np.uint64).ravel()
    inside = np.zeros(addresses.shape, dtype=bool)
    for name, tensor in LAUNCHES[-1]:
        start, stop = extent(tensor)
        hit = (addresses >= start) & (addresses < stop)
        inside |= hit
        for guarded, allowed, words in readable:
            if hit.any() and what == "load" and same_view(tensor, guarded):
                index = (addresses[hit] - start) // tensor.element_size()
                bad = ~allowed.flatten()[torch.from_numpy(index.astype(np.int64))]
                if bad.any():
                    element = np.unravel_index(int(index[bad.numpy()][0]), tuple(guarded.shape))
                    raise OutOfBounds(f"your kernel read {name}{list(map(int, element))}, {words}")
    if not inside.all():
        raise OutOfBounds(f"your kernel's {what} reached {int((~inside).sum())} address(es) outside "
                          f"every tensor it was given ({nearest(int(addresses[~inside][0]))})")


def same_view(a, b) -> bool:
    return a.data_ptr() == b.data_ptr() and a.shape == b.shape and a.stride() == b.stride()


def nearest(address: int) -> str:
    """The tensor an address lies just past (or before), in words."""
    distances = []
    for name, tensor in LAUNCHES[-1]:
        start, stop = extent(tensor)
        size = tensor.element_size()
        if address >= stop:
            distances.append((address - stop, f"{(address - stop) // size + 1} element(s) past the end of {name}"))
        else:
            distances.append((start - address, f"{(start - address) // size} element(s) before {name}"))
    return min(distances)[1] if distances else "no tensor at all"


@contextmanager
def bounded(readable=()):
    """Inside: a kernel in Triton's interpreter that loads or stores outside its
    tensors raises OutOfBounds. ``readable``: (tensor, bool mask of its elements a
    kernel may read, what reading another is) triples."""
    builder, executor = interpreter.InterpreterBuilder, interpreter.GridExecutor
    load, store, launch = builder.create_masked_load, builder.create_masked_store, executor.__call__

    def guarded_load(self, ptrs, mask, other, *rest):
        checked(ptrs.data[np.broadcast_to(mask.data, ptrs.data.shape)], "load", readable)
        return load(self, ptrs, mask, other, *rest)

    def guarded_store(self, ptrs, value, mask, *rest):
        checked(ptrs.data[np.broadcast_to(mask.data, ptrs.data.shape)], "store", readable)
        return store(self, ptrs, value, mask, *rest)

    def guarded_launch(self, *args, **kwargs):
        named = list(zip(self.arg_names, args)) + list(kwargs.items())
        LAUNCHES.append([(name, value) for name, value in named if torch.is_tensor(value)])
        try:
            return launch(self, *args, **kwargs)
        finally:
            LAUNCHES.pop()
    builder.create_masked_load, builder.create_masked_store = guarded_load, guarded_store
    executor.__call__ = guarded_launch
    try:
        yield
    finally:
        builder.create_masked_load, builder.create_masked_store = load, store
        executor.__call__ = launch

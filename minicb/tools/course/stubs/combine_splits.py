"""Chapter 5: split-KV's merge (a Triton kernel and its host wrapper).

With few sequences in a decode step, the paged kernel cuts each context into
key ranges, one program each. Each range leaves its own attention output and
the log of its softmax denominator; this function merges them into the
attention over all keys. Write the kernel with Triton (``@triton.jit``) and
launch it from the wrapper. The check runs it alone and inside a split decode
step, in Triton's interpreter, against the naive reference.
Check: ``python -m minicb check combine_splits``.
"""
import torch
import triton
import triton.language as tl


def combine_splits(parts, lse, dtype):
    """parts [splits, N, H, d] (fp32): each range's softmax-weighted V over its
    own keys; lse [splits, N, H] (fp32): the log of each range's softmax
    denominator, -inf where the range held no key (its parts there may hold any
    finite values: its weight of 0 makes them count for nothing). Return [N, H, d] in
    ``dtype``: the attention over every range's keys together; a row that no
    range saw becomes 0. Raise ValueError if lse's shape does not match parts'.
    An input whose last axis is not contiguous: compute it right, or raise ValueError.
    """
    raise NotImplementedError

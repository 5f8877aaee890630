"""Attention kernels for minicb, imported as ``minicb.kernels``.

Each stage's attention lives in its own file (a Triton kernel plus its host
wrapper); ``reference.py`` holds a naive PyTorch version of each. Importing
this package imports no Triton code: the engine imports a kernel module only
when asked for the Triton backend (``minicb.attention``).

Without a GPU, Triton kernels run in Triton's interpreter. Triton decides
whether a kernel is interpreted when its ``@triton.jit`` runs, from
``TRITON_INTERPRET``; this package sets it first, since every kernel module is
in it (a student's kernel is loaded after the engine).
"""
import os

import torch


def use_interpreter_without_gpu():
    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")


use_interpreter_without_gpu()

"""Attention kernels for minicb, imported as ``minicb.kernels``.

Each stage's attention lives in its own file (a Triton kernel plus its host
wrapper); ``reference.py`` holds a naive PyTorch version of each. Importing
this package imports no Triton code: the engine imports a kernel module only
when asked for the Triton backend, after ``TRITON_INTERPRET`` has been decided
(see ``minicb.attention``).
"""

"""What each optional part of minicb needs beyond the engine, and the one line
that says so when it is missing.

``pip install minicb`` is the engine: ``LLM``, ``LLMEngine``, ``minicb generate``
and ``minicb chat``. The rest comes as extras (``pip install 'minicb[serve]'``);
the repository's ``make`` installs them all.
"""
import importlib.util

EXTRAS = {
    "serve": ("fastapi", "uvicorn", "prometheus_client"),     # minicb serve
    "bench": ("openai", "psutil"),     # bench serve's client; transformers' own batching, as a peer
    "plots": ("matplotlib",),          # the figures, and minicb demo's
    "course": ("hypothesis",),         # minicb check draws each exercise's inputs
    "smollm2": ("gguf", "accelerate"),  # transformers reads the real model's GGUF file with them
}


def need(extra: str, what: str):
    """Refuse, in one line naming the extra, where ``what`` needs one that is missing."""
    missing = [m for m in EXTRAS[extra] if importlib.util.find_spec(m) is None]
    if missing:
        raise ModuleNotFoundError(f"{what} needs minicb's {extra!r} extra ({', '.join(missing)} "
                                  f"not installed): pip install 'minicb[{extra}]'")

"""minicb: LLM request batching, built stage by stage.

    from minicb import LLM, SamplingParams, make_tiny_checkpoint
    path = make_tiny_checkpoint("tiny-llama", arch="llama", seed=0)
    llm = LLM(path, engine="static")
    outputs = llm.generate(["Hello", "Batching is"], SamplingParams(max_tokens=16))

The names below load on first use (PEP 562's module ``__getattr__``), so that
``minicb --help`` and a mistyped flag answer without loading torch.
"""
import importlib
import importlib.util

if importlib.util.find_spec("torch") is None:      # e.g. `python -m minicb` outside the venv
    import sys

    raise ImportError(f"minicb needs torch, and {sys.executable} has none. In the repository, "
                      "`make demo` builds .venv with everything minicb needs; then run "
                      "`.venv/bin/python -m minicb ...`.")

# Each public name, and the module that holds it.
HOMES = {"LLM": "llm", "LLMEngine": "llm", "SamplingParams": "sampling_params",
         "make_tiny_checkpoint": "checkpoint", "load_model": "checkpoint", "EngineConfig": "config",
         "RunMetrics": "metrics", "RequestOutput": "request", "StepOutput": "request"}

__all__ = list(HOMES)
__version__ = "0.1.0"


def __getattr__(name):
    if name not in HOMES:
        raise AttributeError(f"module 'minicb' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{HOMES[name]}", __name__), name)
    globals()[name] = value       # found once; later reads do not come here
    return value


def __dir__():
    return sorted([*globals(), *HOMES])

"""minicb: LLM request batching, built stage by stage.

    from minicb import LLM, SamplingParams, make_tiny_checkpoint
    path = make_tiny_checkpoint("tiny-llama", arch="llama", seed=0)
    llm = LLM(path, engine="static")
    outputs = llm.generate(["Hello", "Batching is"], SamplingParams(max_tokens=16))
"""
import importlib.util

if importlib.util.find_spec("torch") is None:      # e.g. `python -m minicb` outside the venv
    import sys

    raise ImportError(f"minicb needs torch, and {sys.executable} has none. In the repository, "
                      "`make demo` builds .venv with everything minicb needs; then run "
                      "`.venv/bin/python -m minicb ...`.")

from .attention import use_interpreter_without_gpu  # noqa: E402

use_interpreter_without_gpu()   # before anything imports triton

from .checkpoint import load_model, make_tiny_checkpoint  # noqa: E402
from .config import EngineConfig  # noqa: E402
from .llm import LLM, LLMEngine  # noqa: E402
from .metrics import RunMetrics  # noqa: E402
from .request import RequestOutput, StepOutput  # noqa: E402
from .sampling import SamplingParams  # noqa: E402

__all__ = ["LLM", "LLMEngine", "SamplingParams", "make_tiny_checkpoint", "load_model", "EngineConfig",
           "RunMetrics", "RequestOutput", "StepOutput"]
__version__ = "0.1.0"

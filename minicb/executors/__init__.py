"""What runs the model: the executors.

A stage decides which tokens go through the model together and where their
K/V live. Its executor runs them: given a step's packed inputs, its attention
metadata and the rows that sample, it returns those rows' logits. Nothing in a
stage knows which executor it has:

- ``Executor`` (``plain.py``) calls the model in this process;
- ``GraphExecutor`` (``cuda_graphs.py``) replays decode steps from CUDA
  graphs (chapter 8);
- ``ParallelExecutor`` (``parallel.py``) splits the model across worker
  processes (chapter 10);
- ``SimulatedExecutor`` (``simulated.py``) runs no model: a cost model says
  what each step would take on a GPU, on a virtual clock.
"""
from ..checkpoint import load_model, read_config
from .cuda_graphs import GraphExecutor, prompt_buckets
from .parallel import ParallelExecutor
from .plain import Executor
from .simulated import SimulatedExecutor


# ANCHOR: make_executor
def make_executor(path: str, config, model_config=None, *, max_sequences: int
                  ) -> Executor | ParallelExecutor | SimulatedExecutor:
    """The executor config asks for, with the checkpoint at path loaded into it
    (simulated: ``path`` names a shape of minicb.costmodel). model_config: the
    checkpoint's, where the caller has read it already; max_sequences: the most
    sequences the stage's steps hold. It reads config and changes nothing in it."""
    if config.executor == "simulated":
        graph_tokens = max(prompt_buckets(config), default=0)
        spec = config.speculative_config          # stage 6's verify steps replay too
        queries = spec["num_speculative_tokens"] + 1 if spec else 1
        simulated = SimulatedExecutor(path, config.hardware, graph_tokens, queries)
        return noted(simulated, config)
    model_config = model_config or read_config(path)
    if config.tensor_parallel_size > 1:
        executor = ParallelExecutor(path, config, model_config)
    else:
        model = load_model(path, config.dtype, config.device, config.fused_ops,
                           model_config=model_config)
        if config.cuda_graphs:
            executor = GraphExecutor(model, config, max_sequences)
        else:
            executor = Executor(model)
    return noted(executor, config)
# ANCHOR_END: make_executor


def noted(executor, config):
    """The executor, noted among this process's (BUILT)."""
    BUILT.setdefault(config.engine, set()).add(describe(executor, config))
    return executor


# Each stage's executors in this process, for the figures' sidecars: two stages
# compare on equal terms only on the same executor (chapter 7).
BUILT: dict[str, set[str]] = {}


def describe(executor, config) -> str:
    """An executor in words: its kind, and what it does that changes a step's time."""
    if isinstance(executor, SimulatedExecutor):
        graphs = ", prompt graphs" if config.prompt_graphs else ""
        return f"SimulatedExecutor ({config.hardware}{graphs})"
    launches = "CUDA graphs" if isinstance(executor, GraphExecutor) else "eager"
    if getattr(executor, "prompt_buckets", None):
        launches += " with prompt steps"
    ops = ", fused ops" if config.fused_ops else ""
    return f"{type(executor).__name__} ({config.attention_backend} attention, {launches}{ops})"


def built() -> dict[str, list[str]]:
    """{stage: its executors, described}: what this process's engines ran on."""
    return {engine: sorted(kinds) for engine, kinds in sorted(BUILT.items())}

"""The peers: Hugging Face transformers serving the same workload.

Two ways transformers can serve a list of prompts, run on the same
checkpoint as minicb so the benchmark compares batching, not models:

- ``generate``: static batching. Prompts go in fixed batches of
  ``batch_size`` (left-padded), and each batch decodes until its longest
  request is done, like minicb's ``static`` stage.
- ``generate_batch``'s manager: transformers' own continuous batching over a
  paged KV cache, the peer of minicb's ``paged`` stage. Requests are added
  with their own ``max_new_tokens`` and collected as they finish.

Both return a ``PeerRun`` with the throughput numbers the benchmark table
prints. Greedy, no EOS (the workloads use ``ignore_eos``): each request
generates exactly its ``max_tokens``.
"""
import inspect
import time
from dataclasses import dataclass, field

import torch

from ...checkpoint import resolve_dtype
from ...metrics import Throughput, rounded
from .workload import Workload

PEERS = ("hf_generate", "hf_generate_batch")


@dataclass
class PeerRun(Throughput):
    num_requests: int
    prompt_tokens: int
    output_tokens: int             # tokens the requests asked for (padding rows excluded)
    wall_time: float
    outputs: list = field(default_factory=list, repr=False)    # generated ids, one list per request
    attention: str = ""            # the attention implementation transformers ran

    def summary(self) -> dict:
        return rounded(dict(requests=self.num_requests, output_tokens=self.output_tokens, wall_s=self.wall_time,
                            output_tok_s=self.output_throughput, total_tok_s=self.total_throughput,
                            attention=self.attention))


def load_hf_model(path, dtype, device):
    # transformers is slow to import: only a run of the peers waits for it.
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging

    shown = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()          # a bar per load would drown a benchmark's own bar
    try:
        return AutoModelForCausalLM.from_pretrained(path, dtype=resolve_dtype(dtype)).to(device).eval()
    finally:
        if shown:
            logging.enable_progress_bar()


def run_peer(name, path, workload: Workload, dtype="float32", device="cpu", batch_size=8,
             kv_tokens=None) -> PeerRun:
    """Run one peer on every request of ``workload`` at once (arrival times are ignored).
    ``kv_tokens`` gives the continuous-batching peer the KV budget minicb's engines get;
    without it, transformers sizes its cache to a share of the free memory."""
    if name not in PEERS:
        raise ValueError(f"unknown peer {name!r}; choose one of {PEERS}")
    model = load_hf_model(path, dtype, device)
    try:
        return run_loaded_peer(name, model, workload, batch_size, kv_tokens)
    finally:
        del model
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def run_loaded_peer(name, model, workload: Workload, batch_size=8, kv_tokens=None) -> PeerRun:
    """run_peer with the model already loaded (load_hf_model): one load serves many runs."""
    if name == "hf_generate":
        return hf_generate(model, workload, batch_size)
    return hf_generate_batch(model, workload, kv_tokens)


# ANCHOR: hf_generate
@torch.inference_mode()
def hf_generate(model, workload: Workload, batch_size: int) -> PeerRun:
    """Static batches through ``model.generate``; a batch runs to its longest
    request."""
    generate_batch_of(model, [[3] * 8], 4)                              # warm-up
    outputs, started = [], time.perf_counter()
    for first in range(0, len(workload.prompts), batch_size):
        prompts = workload.prompts[first:first + batch_size]
        lengths = workload.output_lens[first:first + batch_size]
        tokens = generate_batch_of(model, prompts, max(lengths))
        outputs += [row[:n] for row, n in zip(tokens, lengths)]
    return peer_run(workload, outputs, time.perf_counter() - started, model)


def generate_batch_of(model, prompts, max_new_tokens) -> list[list[int]]:
    from transformers import GenerationConfig      # slow to import: the peers' alone

    width = max(len(p) for p in prompts)
    ids = torch.tensor([[0] * (width - len(p)) + p for p in prompts],
                       device=model.device)
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts],
                        device=model.device)
    config = GenerationConfig(max_new_tokens=max_new_tokens,
                              min_new_tokens=max_new_tokens, do_sample=False,
                              eos_token_id=None, pad_token_id=0)
    out = model.generate(ids, attention_mask=mask, generation_config=config)
    return out[:, width:].tolist()
# ANCHOR_END: hf_generate


# ANCHOR: hf_generate_batch
def hf_generate_batch(model, workload: Workload, kv_tokens=None) -> PeerRun:
    """transformers' continuous batching: one manager, every request added
    with its own max_new_tokens, results collected as they finish. Not under
    inference_mode: the manager's thread writes into buffers made here."""
    from transformers import GenerationConfig      # slow to import: the peers' alone

    config = GenerationConfig(do_sample=False, eos_token_id=-1, pad_token_id=0,
                              max_new_tokens=16)
    budget = paged_cache_budget(kv_tokens) if kv_tokens else None
    # may switch to flash attention
    manager = model.init_continuous_batching(generation_config=config,
                                             continuous_batching_config=budget)
    if torch.cuda.is_available() and hasattr(manager, "warmup"):
        # its CUDA graphs are captured before the clock starts
        manager.warmup()
    manager.start()
    try:
        run_manager(manager, [[3] * 8], [4])                            # warm-up
        started = time.perf_counter()
        outputs = run_manager(manager, workload.prompts, workload.output_lens)
        wall_time = time.perf_counter() - started
        return peer_run(workload, outputs, wall_time, model)
    finally:
        manager.stop(block=True)


def paged_cache_budget(kv_tokens):
    """minicb's KV budget for transformers' continuous batching, in blocks of 16
    tokens (its config calls a block's size block_size in transformers 5.17 and
    page_size from 5.18), and transformers' own default of 8,192 tokens a batch,
    given outright: given the blocks alone, 5.17 sizes its batches from the free
    memory instead (most of a CPU machine's RAM)."""
    # slow to import: the peers' alone
    from transformers.generation.configuration_utils import ContinuousBatchingConfig

    fields = inspect.signature(ContinuousBatchingConfig).parameters
    size = "page_size" if "page_size" in fields else "block_size"
    return ContinuousBatchingConfig(**{size: 16}, num_blocks=kv_tokens // 16,
                                    max_batch_tokens=8192)


def run_manager(manager, prompts, lengths, timeout=600.0) -> list[list[int]]:
    ids = [f"peer-{time.perf_counter_ns()}-{i}" for i in range(len(prompts))]
    for request_id, prompt, n in zip(ids, prompts, lengths):
        # EOS -1: off
        manager.add_request(input_ids=prompt, request_id=request_id, max_new_tokens=n)
    done = {}
    while len(done) < len(ids):
        result = manager.get_result(timeout=timeout)
        if result is None:
            raise RuntimeError(f"transformers' continuous batching stopped with "
                               f"{len(ids) - len(done)} requests unfinished")
        if getattr(result, "error", None) is not None:
            raise RuntimeError(f"transformers' continuous batching failed request "
                               f"{result.request_id}: {result.error}")
        if result.is_finished():
            done[result.request_id] = list(result.generated_tokens)
    return [done[i] for i in ids]
# ANCHOR_END: hf_generate_batch


def peer_run(workload, outputs, wall_time, model) -> PeerRun:
    return PeerRun(len(workload.prompts), sum(workload.prompt_lens), sum(len(o) for o in outputs),
                   wall_time, outputs, model.config._attn_implementation)

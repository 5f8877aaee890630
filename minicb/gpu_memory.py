"""How much of a GPU the KV cache may take: vLLM's ``gpu_memory_utilization``.

An engine may hold that share of the GPU in all: its weights, the peak of one
profiled step, and its KV cache. So the cache gets the share less the weights
and the peak, counted from the engine's own allocations. What other engines in
this process, or other processes, hold matters only when it leaves less free
memory than the cache asks for; then the error says so, with the numbers and
the knobs.

Every query goes through ``CUDA``, one object, so that the tests can put a
fake GPU in its place on a machine without one.
"""
import gc
import os

import torch


class CudaMemory:
    """The queries the sizing makes of torch.cuda."""

    def is_gpu(self, device) -> bool:
        return torch.device(device).type == "cuda"

    def release(self, device):
        """Collect what was dropped (an engine nobody holds any more) and hand its
        cached blocks back, so that free memory means free."""
        gc.collect()
        torch.cuda.empty_cache()

    def total_and_free(self, device) -> tuple[int, int]:
        free, total = torch.cuda.mem_get_info(device)
        return total, free

    def allocated(self, device) -> int:
        return torch.cuda.memory_allocated(device)

    def reserved(self, device) -> int:
        return torch.cuda.memory_reserved(device)

    def reset_peak(self, device):
        torch.cuda.reset_peak_memory_stats(device)

    def peak(self, device) -> int:
        torch.cuda.synchronize(device)              # the profiled step has finished
        return torch.cuda.max_memory_allocated(device)


CUDA = CudaMemory()


def check_fits(nbytes: int, device: torch.device, what: str):
    """Refuse, before allocating, a tensor larger than the memory it would live in:
    else the allocator's own error escapes as a traceback, or, on a CPU, a zeroed
    tensor larger than what is free is granted and the OOM killer comes later."""
    available = free_bytes(device)
    if nbytes > available:
        raise ValueError(f"{what} would take {gib(nbytes)}, more than the {gib(available)} free on "
                         f"{device}: lower num_blocks or kv_cache_memory_bytes")


def free_bytes(device: torch.device) -> int:
    """Memory free for a new tensor: on a GPU, what CUDA has free plus what this
    process has cached; on a CPU, what Linux calls available (where there is no
    /proc/meminfo, all of the physical memory)."""
    if CUDA.is_gpu(device):
        _, free = CUDA.total_and_free(device)
        return free + CUDA.reserved(device) - CUDA.allocated(device)
    try:
        with open("/proc/meminfo") as meminfo:
            fields = dict(line.split(":", 1) for line in meminfo)
        return int(fields["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


# ANCHOR: kv_cache_bytes
class StepPeak:
    """What one step takes at its peak, measured around it: ``with
    StepPeak(device) as step:`` run the step, then read ``step.bytes``. Entering
    also reads what the GPU held before (``others``: all that is neither free
    nor this process's cache)."""

    def __init__(self, device):
        self.device = device

    def __enter__(self):
        CUDA.release(self.device)
        total, free = CUDA.total_and_free(self.device)
        self.before = CUDA.allocated(self.device)
        self.others = total - free - CUDA.reserved(self.device)
        CUDA.reset_peak(self.device)
        return self

    def __exit__(self, *error):
        self.bytes = CUDA.peak(self.device) - self.before


def kv_cache_bytes(device, utilization: float, weights: int | None, step: StepPeak) -> int:
    """Bytes for the KV cache: ``utilization`` of the GPU, less this engine's
    ``weights`` and its profiled ``step``'s peak. ``weights`` None: the model
    lives in tensor-parallel workers, and what other processes held on this GPU
    counts as its. Raises ValueError, naming the numbers and the knobs, when
    that leaves nothing or more than is free."""
    if weights is None:
        weights = step.others
    total, free = CUDA.total_and_free(device)
    free += CUDA.reserved(device) - CUDA.allocated(device)      # cached here, free to reuse
    asked = int(total * utilization) - weights - step.bytes
    if 0 < asked <= free:
        return asked
    others_here = max(0, step.before - weights)
    raise ValueError(
        f"no room for the KV cache: gpu_memory_utilization {utilization} of this GPU's "
        f"{gib(total)} is {gib(total * utilization)}; this engine's weights ({gib(weights)}) "
        f"and one step's peak ({gib(step.bytes)}) leave {gib(asked)} for its KV cache, and "
        f"{gib(free)} is free ({gib(others_here)} held by other tensors of this process, "
        f"{gib(total - free - CUDA.allocated(device))} by other processes and CUDA). Lower "
        f"gpu_memory_utilization, or size the cache yourself (kv_cache_memory_bytes or "
        f"num_blocks); if another engine holds the memory, close it first (engine.close(), "
        f"or build it in a `with` block)")
# ANCHOR_END: kv_cache_bytes


def gib(num_bytes) -> str:
    return f"{num_bytes / 2**30:.2f} GiB"

"""Tensor parallelism: one model split across N worker processes.

Megatron-LM's split, as vLLM and SGLang use it. In every layer the query, key,
value, gate and up projections are cut by output columns, so each rank computes
its own attention heads and its own slice of the MLP with no communication; the
output and down projections are cut by input rows, so each rank holds a partial
sum, and one all-reduce per projection adds them up. The embedding and the LM
head are cut by vocabulary. Each rank keeps only its heads' K and V, so every KV
block is split across the ranks too.

The driver (the process that made the engine) keeps the scheduler, the block
manager and sampling. It holds no weights: its executor, ``ParallelExecutor``,
sends each step's inputs, the block tables included, to every worker, and rank
0 answers with the logits. The workers are processes on a torch.distributed
group (NCCL on GPUs, gloo on a CPU) that only run the model.
"""
import dataclasses
import io
import math
import os
import pickle
import socket
import time
import weakref
from datetime import timedelta
from multiprocessing.connection import wait

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

from ..checkpoint import load_model, resolve_dtype
from .plain import WallClock


def check_divisible(cfg, n: int):
    """Raise ValueError unless ``n`` ranks can split this model (before any process starts)."""
    if cfg.num_attention_heads % n:
        raise ValueError(f"tensor_parallel_size={n} must divide the model's "
                         f"{cfg.num_attention_heads} attention heads")
    kv = cfg.num_key_value_heads
    if kv % n and n % kv:        # fewer KV heads than ranks: each rank keeps a copy of one
        raise ValueError(f"tensor_parallel_size={n} must divide the model's {kv} KV heads, "
                         f"or be a multiple of them")
    if cfg.intermediate_size % n:
        raise ValueError(f"tensor_parallel_size={n} must divide the model's MLP width "
                         f"{cfg.intermediate_size}")


# ANCHOR: split
def shard_model(model, rank: int, n: int):
    """Cut a whole Decoder down, in place, to rank ``rank``'s share of ``n``."""
    cfg, d = model.config, model.config.head_dim
    heads, kv_heads = cfg.num_attention_heads // n, max(cfg.num_key_value_heads // n, 1)
    first_kv_head = rank * cfg.num_key_value_heads // n  # shared when n > KV heads
    for layer in model.layers:
        attn, mlp = layer.self_attn, layer.mlp
        keep_rows(attn.q_proj, rank * heads * d, heads * d)        # by output columns
        keep_rows(attn.k_proj, first_kv_head * d, kv_heads * d)
        keep_rows(attn.v_proj, first_kv_head * d, kv_heads * d)
        attn.o_proj = RowParallelLinear(attn.o_proj, rank * heads * d, heads * d)
        attn.num_heads, attn.num_kv_heads = heads, kv_heads
        width = cfg.intermediate_size // n
        keep_rows(mlp.gate_proj, rank * width, width)
        keep_rows(mlp.up_proj, rank * width, width)
        mlp.down_proj = RowParallelLinear(mlp.down_proj, rank * width, width)
    model.embed_tokens = VocabParallelEmbedding(model.embed_tokens.weight, rank, n)
    model.lm_head = VocabParallelHead(model.lm_head.weight, rank, n)
    model.config = dataclasses.replace(cfg, num_attention_heads=heads,
                                       num_key_value_heads=kv_heads)


def keep_rows(linear: nn.Linear, start: int, count: int):
    """A column-parallel projection: this rank's output features only."""
    linear.weight = frozen(linear.weight[start:start + count])
    if linear.bias is not None:
        linear.bias = frozen(linear.bias[start:start + count])


class RowParallelLinear(nn.Module):
    """This rank's input features of a projection; the ranks' partial sums are
    added by an all-reduce, and the bias once, after it."""

    def __init__(self, linear: nn.Linear, start: int, count: int):
        super().__init__()
        self.weight = frozen(linear.weight[:, start:start + count])
        self.bias = linear.bias

    def forward(self, x):
        out = all_reduce(F.linear(x, self.weight))
        return out if self.bias is None else out + self.bias
# ANCHOR_END: split


def frozen(tensor) -> nn.Parameter:
    """A copy of a slice, so that the whole tensor it came from can be freed."""
    return nn.Parameter(tensor.clone(), requires_grad=False)


# ANCHOR: vocab_share
def vocab_share(weight, rank: int, n: int):
    """This rank's token ids [start, end) and its rows of ``weight``. Every rank
    holds the same number of rows: a short last share is padded with zeros."""
    vocab_size = weight.shape[0]
    share = math.ceil(vocab_size / n)
    start = min(rank * share, vocab_size)
    end = min(start + share, vocab_size)
    rows = weight.new_zeros(share, weight.shape[1])
    rows[:end - start] = weight[start:end]
    return start, end, frozen(rows)
# ANCHOR_END: vocab_share


# ANCHOR: vocab
class VocabParallelEmbedding(nn.Module):
    """Each rank looks up the ids in its range and writes zeros for the rest;
    the all-reduce fills every row from the rank that has it."""

    def __init__(self, weight, rank: int, n: int):
        super().__init__()
        self.start, self.end, self.weight = vocab_share(weight, rank, n)

    def forward(self, ids):
        mine = (ids >= self.start) & (ids < self.end)
        local = (ids - self.start).clamp(0, self.weight.shape[0] - 1)
        return all_reduce(F.embedding(local, self.weight) * mine.unsqueeze(-1))


class VocabParallelHead(nn.Module):
    """Each rank scores its share of the vocabulary; an all-gather puts the
    shares side by side, and the padding's scores are cut off."""

    def __init__(self, weight, rank: int, n: int):
        super().__init__()
        self.vocab_size = weight.shape[0]
        _, _, self.weight = vocab_share(weight, rank, n)

    def forward(self, hidden):
        shares = all_gather(F.linear(hidden, self.weight))
        return torch.cat(shares, dim=-1)[..., :self.vocab_size]
# ANCHOR_END: vocab


# ---------------------------------------------------------------- collectives
class Communication:
    """What this rank's collectives carried (each rank's own tensor, in bytes) and
    how long they took, and its seconds running the model (forward passes and
    logits). On a CPU gloo's collectives return when done: wall time measures them."""
    seconds = 0.0
    model_seconds = 0.0
    all_reduce_bytes = 0
    all_gather_bytes = 0


def all_reduce(x):
    started = time.perf_counter()
    dist.all_reduce(x)
    Communication.seconds += time.perf_counter() - started
    Communication.all_reduce_bytes += x.numel() * x.element_size()
    return x


def all_gather(x):
    started = time.perf_counter()
    shares = [torch.empty_like(x) for _ in range(dist.get_world_size())]
    dist.all_gather(shares, x.contiguous())
    Communication.seconds += time.perf_counter() - started
    Communication.all_gather_bytes += x.numel() * x.element_size()
    return shares


# ANCHOR: volume
def collective_bytes(cfg, num_tokens, num_sampled, n, bytes_per_value) -> dict:
    """The tensors one rank hands to collectives in a forward pass of
    ``num_tokens`` tokens, ``num_sampled`` of which get logits: an all-reduce of
    [tokens, hidden] after the embedding and after each layer's attention and
    MLP, and an all-gather of each rank's share of the vocabulary's logits."""
    row = cfg.hidden_size * bytes_per_value
    share = math.ceil(cfg.vocab_size / n) * bytes_per_value
    return dict(all_reduce=(1 + 2 * cfg.num_hidden_layers) * num_tokens * row,
                all_gather=num_sampled * share)
# ANCHOR_END: volume


# ---------------------------------------------------------------- the driver
@dataclasses.dataclass(frozen=True)
class RemoteKV:
    """Stands for a K or V cache that lives in the workers, one share in each."""
    key: int
    which: int          # 0: K, 1: V


# ANCHOR: driver
class ParallelExecutor:
    """A stage's executor when the model runs in ``n`` workers. Each call goes
    to every worker, which runs it on its share; rank 0 answers."""
    clock = WallClock()

    def __init__(self, path: str, config, model_config):
        check_divisible(model_config, config.tensor_parallel_size)
        self.n = config.tensor_parallel_size
        # What one rank holds, for sizing its share of the KV cache.
        cfg, n = model_config, self.n
        self.config = dataclasses.replace(
            cfg, num_attention_heads=cfg.num_attention_heads // n,
            num_key_value_heads=max(cfg.num_key_value_heads // n, 1))
        self.dtype = resolve_dtype(config.dtype)
        self.device = config.device          # the driver's: where it samples the logits
        self.num_caches = 0
        context = torch.multiprocessing.get_context("spawn")
        address = f"tcp://127.0.0.1:{free_port()}"
        self.pipes, self.workers = [], []
        for rank in range(self.n):
            ours, theirs = context.Pipe()
            worker = context.Process(target=worker_main, name=f"minicb-tp{rank}",
                                     args=(rank, self.n, address, theirs, path, config),
                                     daemon=True)
            worker.start()
            theirs.close()
            self.pipes.append(ours)
            self.workers.append(worker)
        # When this object goes, its workers go: pipes closed, processes joined.
        self.finalizer = weakref.finalize(self, stop_workers, self.pipes, self.workers)
        try:
            self.call("ready")
        except RuntimeError as error:
            raise RuntimeError(
                f"{error}. A script that starts tensor-parallel workers must keep its "
                "code under `if __name__ == '__main__':`: each worker imports the "
                "script again") from error

    def execute(self, input_ids, positions, attn, sample_rows):
        """As the plain executor's: the logits come back from rank 0."""
        logits = self.call("execute", input_ids, positions, attn, sample_rows)
        return logits.to(self.device)

    def weight_bytes(self) -> None:
        """None: the weights are in the workers, on their devices."""
        return None

    def profile_step(self, positions, sample_rows):
        """None: the weights and a step's peak are in the workers, not here."""
        return None

    def new_batch_kv_cache(self, batch: int, capacity: int):
        return self.new_kv_cache(batch, capacity)

    def kv_memory(self, utilization: float) -> None:
        """None: the stage sizes the cache as it would in one process."""
        return None

    def new_kv_cache(self, *leading):
        key, self.num_caches = self.num_caches, self.num_caches + 1
        self.call("new_kv_cache", key, leading)
        return RemoteKV(key, 0), RemoteKV(key, 1)

    def communication(self) -> dict:
        """Rank 0's totals so far: seconds running the model (forward passes and
        logits) and, within them, in collectives; and the bytes it handed to
        all-reduces and all-gathers."""
        return self.call("communication")

    def call(self, method, *args):
        """Send one call to every worker; return rank 0's answer, or raise the
        first worker's error."""
        if not self.finalizer.alive:
            raise RuntimeError("the engine is closed: its tensor-parallel workers have "
                               "stopped (closed, or a call to them failed part way)")
        message = dumps((method, args))
        try:
            for pipe in self.pipes:
                pipe.send_bytes(message)
            answers = self.answers()
        except (ConnectionError, EOFError) as error:     # a pipe broke: a worker died
            raise self.died() from error
        except BaseException:             # e.g. Ctrl-C while the workers run the call
            self.stop_now()
            raise
        for ok, value in answers:
            if not ok:                    # a worker raised: the ranks are out of step
                self.stop_now()
                raise value
        return answers[0][1]

    def answers(self) -> list[tuple[bool, object]]:
        """Every rank's (ok, answer), taken as they come; a worker's error, or a
        worker that exits, ends the wait at once rather than after the others'
        timeout in a collective."""
        answers, pending = [None] * self.n, set(range(self.n))
        while pending:
            ready = wait([self.pipes[r] for r in pending]
                         + [self.workers[r].sentinel for r in pending])
            for rank in sorted(pending):
                if self.pipes[rank] in ready or self.pipes[rank].poll():
                    answers[rank] = self.pipes[rank].recv()
                    if not answers[rank][0]:
                        return [answers[rank]]
                    pending.discard(rank)
                elif self.workers[rank].sentinel in ready:
                    raise EOFError(f"rank {rank} exited")
        return answers

    def died(self) -> RuntimeError:
        codes = [w.exitcode for w in self.workers]       # before the others are stopped
        self.stop_now()
        return RuntimeError(f"a tensor-parallel worker died (exit codes {codes})")

    def stop_now(self):
        """A call failed part way, leaving the ranks out of step: answers still in
        the pipes, or ranks waiting in a collective for one that raised. Nothing
        can resynchronise them, so every worker is stopped."""
        for worker in self.workers:
            worker.kill()
        self.close()

    def close(self):
        self.finalizer()
# ANCHOR_END: driver


def stop_workers(pipes, workers):
    for pipe in pipes:
        pipe.close()               # a worker's recv ends: it leaves its loop
    for worker in workers:
        worker.join(timeout=30)
        if worker.is_alive():
            worker.kill()
            worker.join()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DriverPickler(pickle.Pickler):
    """A RemoteKV travels as its key; each worker puts its own cache in its place."""

    def persistent_id(self, obj):
        return ("kv", obj.key, obj.which) if isinstance(obj, RemoteKV) else None


def dumps(obj) -> bytes:
    buffer = io.BytesIO()
    DriverPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buffer.getvalue()


# ---------------------------------------------------------------- a worker
# ANCHOR: worker
def worker_main(rank, n, address, pipe, path, config):
    """One rank: load the whole checkpoint, keep its share, then run calls until
    the driver closes the pipe."""
    device = f"cuda:{rank}" if str(config.device).startswith("cuda") else "cpu"
    if device == "cpu":
        torch.set_num_threads(config.num_threads)
    else:
        torch.cuda.set_device(device)
    dist.init_process_group("gloo" if device == "cpu" else "nccl", init_method=address,
                            rank=rank, world_size=n, timeout=timedelta(minutes=5))
    # Whole on the CPU, then cut and joined there: not frugal, but the GPU holds
    # only this rank's share.
    model = load_model(path, config.dtype, "cpu", config.fused_ops,
                       share=lambda whole: shard_model(whole, rank, n)).to(device)
    worker = Worker(model, device)
    while True:
        try:
            message = pipe.recv_bytes()
        except (EOFError, OSError):           # the driver closed the pipe, or is gone
            break
        try:
            method, args = worker.loads(message)
            answer = (True, getattr(worker, method)(*args))
        except Exception as error:        # the driver raises it and stops the workers
            answer = (False, error)
        try:
            pipe.send(answer)
        except (pickle.PicklingError, TypeError, AttributeError):
            pipe.send((False, RuntimeError(f"rank {rank}: {answer[1]!r}")))
    dist.destroy_process_group()


class Worker:
    def __init__(self, model, device):
        self.model, self.device = model, device
        self.caches = {}               # key -> (K, V), this rank's share

    def loads(self, message: bytes):
        method, args = WorkerUnpickler(message, self.caches).load()
        return method, [on_device(arg, self.device) for arg in args]

    def ready(self):
        return os.getpid()

    def new_kv_cache(self, key, leading):
        self.caches[key] = self.model.new_kv_cache(*leading)

    def execute(self, input_ids, positions, attn, sample_rows):
        started = time.perf_counter()
        hidden = self.model(input_ids, positions, attn)
        logits = self.model.compute_logits(hidden[sample_rows])
        Communication.model_seconds += time.perf_counter() - started
        return logits.cpu() if dist.get_rank() == 0 else None

    def communication(self):
        return dict(model_s=Communication.model_seconds,
                    collective_s=Communication.seconds,
                    all_reduce_bytes=Communication.all_reduce_bytes,
                    all_gather_bytes=Communication.all_gather_bytes)
# ANCHOR_END: worker


class WorkerUnpickler(pickle.Unpickler):
    """Puts this rank's own share of a cache where the driver sent a RemoteKV."""

    def __init__(self, message: bytes, caches: dict):
        super().__init__(io.BytesIO(message))
        self.caches = caches

    def persistent_load(self, pid):
        _, key, which = pid
        return self.caches[key][which]


def on_device(value, device):
    """A tensor, or each tensor field of an attention-metadata object, moved to this rank's device."""
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            item = getattr(value, field.name)
            if isinstance(item, torch.Tensor) and item.device != torch.device(device):
                setattr(value, field.name, item.to(device))
    return value

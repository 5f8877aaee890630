"""Every engine knob in one place: its default, what it means, and its check."""
import ast
import dataclasses
import inspect
import os
import typing
from dataclasses import dataclass

from .costmodel import Hardware
from .sampling_params import as_kind, short

# The stages' names, in the book's order (minicb.stages.STAGES maps each to its engine).
ENGINES = ("single", "static", "dynamic", "continuous", "paged")
SCHEDULING_POLICIES = ("mixed", "prefill_first")
ATTENTION_BACKENDS = ("triton", "sdpa", "reference")
EXECUTORS = ("model", "simulated")
KV_RESERVATIONS = ("max", "pow2", "oracle")
DTYPES = ("float32", "float16", "bfloat16")
COUNTS = ("max_model_len", "max_batch_size", "max_num_seqs", "max_num_batched_tokens",
          "schedule_interval", "block_size", "num_blocks", "tensor_parallel_size", "num_threads")

# Speculative decoding (speculative_config): its methods, the defaults of its keys
# beside num_speculative_tokens, and the largest each may be.
SPECULATIVE_METHODS = ("ngram", "draft")
SPECULATIVE_DEFAULTS = {"method": "ngram", "prompt_lookup_max": 4, "prompt_lookup_min": 1,
                        "model": None, "draft_layers": None}
MAX_SPECULATIVE_TOKENS = 16
MAX_PROMPT_LOOKUP = 64

# Defaults that follow the model: max_model_len is its context capped here (a KV
# reservation per request grows with it), and a step's token budget is at least this.
MAX_MODEL_LEN_CAP = 4096
MIN_BATCHED_TOKENS = 2048


def checked_device(device) -> str:
    """The device as a string minicb runs on: "cpu", or "cuda" / "cuda:N" for a GPU
    this machine has. torch names many more (mps, xpu, meta, ...), which would get
    as far as loading the weights and fail there; "cpu:N" is "cpu" (torch gives a
    CPU's index no meaning)."""
    import torch   # here: the command line reads this module without torch

    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device {device!r} is not a device: use 'cpu' or 'cuda'") from None
    if parsed.type == "cpu":
        return "cpu"
    if parsed.type != "cuda":
        raise ValueError(f"device {device!r}: minicb runs on 'cpu' or 'cuda', not {parsed.type!r}")
    if not torch.cuda.is_available():
        raise ValueError(f"device {device!r}: CUDA is not available here (torch {torch.__version__}); "
                         f"use device 'cpu'")
    if parsed.index is not None and parsed.index >= torch.cuda.device_count():
        raise ValueError(f"device {device!r}: this machine has {torch.cuda.device_count()} GPU(s), "
                         f"cuda:0 to cuda:{torch.cuda.device_count() - 1}")
    return str(parsed)


# ANCHOR: engine_config
@dataclass
class EngineConfig:
    engine: str = "static"
    """Which stage serves requests: "single", "static", "dynamic", "continuous" or "paged"."""
    dtype: str = "float32"
    """Weights and activations: "float32", "float16" or "bfloat16" (or the
    torch.dtype of that name)."""
    device: str | None = None
    """"cuda" when a GPU is present, else "cpu" (or a torch.device)."""
    attention_backend: str | None = None
    """"triton" (the stage's Triton kernel; through the interpreter on a CPU),
    "sdpa" (PyTorch's fused scaled_dot_product_attention, one call per step's
    decodes and one per its prefills) or "reference" (the naive PyTorch
    attention the tests check against). Default: triton on CUDA, sdpa on CPU."""
    max_model_len: int | None = None
    """Longest prompt + max_tokens a request may ask for. Default: the model's
    max_position_embeddings (or sliding window, if shorter), capped at 4096."""
    max_batch_size: int = 8
    """Stages 2-3: the most requests one batch holds."""
    bucket_by_length: bool = False
    """Stage 2: sort requests by expected output length (their max_tokens)
    before cutting batches, so each batch waits less for its longest member."""
    max_wait_ms: float = 50.0
    """Stage 3: a batch closes when max_batch_size requests wait or when the
    oldest has waited this long."""
    max_num_seqs: int = 16
    """Stages 4-5: the most requests running at once (stage 4: KV slots). Twice
    stages 2-3's batch, so that running more requests at once shows; on a CPU
    the benchmark's throughput still grows up to 32 (chapter 7)."""
    kv_reservation: str = "max"
    """Stage 4: the tokens a request's slot reserves when it is admitted: "max"
    (max_model_len, whatever it asks for), "pow2" (the K/V it will write,
    prompt + max_tokens - 1, rounded up to a power of two) or "oracle" (exactly
    that). The vLLM paper's three ways of sizing Orca's reservations (chapter 11)."""
    max_num_batched_tokens: int | None = None
    """Stages 4-5: the most tokens one forward pass may carry, prefill and
    decode together. Default: max(2048, max_model_len), so any prompt fits."""
    scheduling_policy: str = "mixed"
    """Stages 4-5: "mixed" (Orca: new prefills and running decodes share a
    step) or "prefill_first" (TGI, vLLM v0: a step is all prefills or all decodes)."""
    schedule_interval: int = 1
    """Stages 4-5: consider admitting waiting requests only every N steps
    (TGI, lmdeploy), to spend less host time rescheduling."""
    enable_chunked_prefill: bool = False
    """Stages 4-5: split prompts that do not fit the step's token budget into
    chunks that run alongside decodes (Sarathi-Serve). Needs "mixed"."""
    block_size: int = 16
    """Stage 5: tokens per KV block."""
    num_blocks: int | None = None
    """Stage 5: KV blocks in the cache. Default: from kv_cache_memory_bytes; else,
    on CUDA, what gpu_memory_utilization leaves once the weights and a profiled
    step are counted; else (CPU) as many tokens as stage 4's slots hold
    (max_num_seqs x max_model_len)."""
    kv_cache_memory_bytes: int | None = None
    """Stages 4-5: a KV memory budget in bytes, turned into stage 5's num_blocks
    and stage 4's token rows. Default for stage 4: max_num_seqs x max_model_len
    tokens."""
    gpu_memory_utilization: float = 0.9
    """Stage 5 on CUDA: the share of the GPU's memory the engine may fill, weights,
    activations and KV cache together (vLLM's knob). The KV cache gets what the
    weights and the peak of one profiled step (the largest prefill the token budget
    allows, and sampling for max_num_seqs rows) leave of it."""
    enable_prefix_caching: bool = False
    """Stage 5: share the KV blocks of identical prompt prefixes between requests."""
    waiting_served_ratio: float = 0.0
    """Stages 4-5: while requests run, admit only when waiting >= ratio x
    running (TGI's waiting_served_ratio). 0 admits whenever there is room."""
    cuda_graphs: bool | None = None
    """Every stage: replay decode steps from CUDA graphs, captured once per
    batch-size bucket, so a step costs a few launches instead of hundreds.
    Default: on with CUDA and the triton backend; needs both. Stages compare
    on equal terms only with the same setting."""
    prompt_graphs: bool = False
    """Stage 5, with cuda_graphs: replay the steps that carry prompt tokens from
    CUDA graphs too, one per bucket of 64 to 2,048 tokens, their attention over
    a fixed grid of listed query tiles, so that a chunk of a prompt costs its
    tokens and not hundreds of launches. Off by default: stages 1-4 replay
    decode steps alone. The simulated executor then prices such a step without
    its profile's prompt_step_overhead."""
    fused_ops: bool | None = None
    """Every stage: the decoder layer's residual add and RMSNorm, rotary, and
    SwiGLU's SiLU x up as fused Triton kernels (minicb/layer_ops.py) instead of
    the plain PyTorch operations. Default: on with CUDA and the triton backend
    (in Triton's interpreter on a CPU they are slower, not faster); needs the
    triton backend. False runs the plain model, the reference."""
    async_scheduling: bool = False
    """Stage 5: schedule and launch step N+1 before reading step N's tokens,
    which stay on the device as step N+1's inputs, so the GPU never waits for
    the host. A request that stops on EOS runs one extra step, whose token is
    dropped."""
    speculative_config: dict | None = None
    """Stage 6: speculative decoding on stage 5. Each step drafts up to
    num_speculative_tokens tokens for every decoding request and checks them all
    in one forward pass, keeping the model's own distribution (greedy: the very
    tokens it would pick). vLLM's
    shape: {"method": "ngram", "num_speculative_tokens": k} drafts by prompt
    lookup: the k tokens that followed the latest earlier occurrence of the last
    n tokens, n from prompt_lookup_max (default 4) down to prompt_lookup_min
    (default 1). {"method": "draft", "num_speculative_tokens": k, "model": PATH}
    drafts with a smaller checkpoint of the same vocabulary, or, without a model,
    with the target's own first draft_layers layers (self-speculative). None: off."""
    tensor_parallel_size: int = 1
    """Stages 4-5: split the model across this many worker processes, Megatron
    style, over torch.distributed (NCCL on CUDA, one GPU each; gloo on a CPU).
    1 runs the model in this process (chapter 10)."""
    seed: int = 0
    """Seeds the random streams of requests that bring no seed of their own."""
    num_threads: int | None = None
    """On a CPU: torch's threads (torch.set_num_threads, which is process-wide).
    Default: half the CPUs this process may use, at least 1. A CPU step is
    many small operations at whose end all threads wait for each other; when
    another process holds a core, that wait can make a step several times slower
    (chapter 7 measures it). Ignored on CUDA."""
    executor: str = "model"
    """"model" runs the model. "simulated" runs none: the model is a shape of
    minicb.costmodel, each step takes what the cost model predicts on
    ``hardware``, on a virtual clock, and KV memory is counted, not held."""
    hardware: str | Hardware = "h100-sxm"
    """The simulated GPU: a key of minicb.costmodel.HARDWARE (or, from Python, a
    Hardware profile, such as workshop.measure.calibrate measures for this machine)."""

    def __post_init__(self):
        self.take_torch_names()
        self.check_types()
        self.check_ranges()
        if self.engine not in ENGINES:
            raise ValueError(f"unknown engine {self.engine!r}; choose one of {ENGINES}")
        if self.executor not in EXECUTORS:
            raise ValueError(f"unknown executor {self.executor!r}; choose one of {EXECUTORS}")
        if self.executor == "simulated" and self.device is None:
            self.device = "cpu"              # the step's bookkeeping; no model runs
        if self.device is None:
            import torch   # here: the command line reads this class without torch
            self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = checked_device(self.device)
        if self.attention_backend is None:
            self.attention_backend = "triton" if str(self.device).startswith("cuda") else "sdpa"
        if self.attention_backend not in ATTENTION_BACKENDS:
            raise ValueError(f"unknown attention_backend {self.attention_backend!r}; "
                             f"choose one of {ATTENTION_BACKENDS}")
        for name in ("max_batch_size", "max_num_seqs", "schedule_interval", "block_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {short(getattr(self, name))}")
        for name in ("max_wait_ms", "waiting_served_ratio"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")
        if self.kv_reservation not in KV_RESERVATIONS:
            raise ValueError(f"unknown kv_reservation {self.kv_reservation!r}; choose one of {KV_RESERVATIONS}")
        if self.scheduling_policy not in SCHEDULING_POLICIES:
            raise ValueError(f"unknown scheduling_policy {self.scheduling_policy!r}; "
                             f"choose one of {SCHEDULING_POLICIES}")
        if self.num_blocks is not None and self.num_blocks < 1:
            raise ValueError(f"num_blocks must be an integer >= 1, got {short(self.num_blocks)}")
        if not 0 < self.gpu_memory_utilization <= 1:
            raise ValueError(f"gpu_memory_utilization must be in (0, 1], got {self.gpu_memory_utilization!r}")
        if self.enable_chunked_prefill and self.scheduling_policy != "mixed":
            raise ValueError("enable_chunked_prefill needs scheduling_policy='mixed': chunks run alongside decodes")
        self.check_tensor_parallel()
        self.check_speculative()
        if self.cuda_graphs is None:
            self.cuda_graphs = (str(self.device).startswith("cuda") and self.attention_backend == "triton"
                                and self.tensor_parallel_size == 1)
        elif self.cuda_graphs and not (str(self.device).startswith("cuda") and self.attention_backend == "triton"):
            raise ValueError(f"cuda_graphs=True needs device 'cuda' and attention_backend 'triton', got "
                             f"device {self.device!r} and attention_backend {self.attention_backend!r}")
        if self.prompt_graphs and not (self.engine == "paged" and (self.cuda_graphs or self.executor == "simulated")):
            raise ValueError(f"prompt_graphs=True needs engine 'paged' with cuda_graphs=True (or the simulated "
                             f"executor), got engine {self.engine!r} with cuda_graphs={self.cuda_graphs!r}")
        if self.fused_ops is None:
            self.fused_ops = str(self.device).startswith("cuda") and self.attention_backend == "triton"
        elif self.fused_ops and self.attention_backend != "triton":
            raise ValueError(f"fused_ops=True needs attention_backend 'triton' (its kernels are "
                             f"Triton's), got {self.attention_backend!r}")
        self.check_bf16()
        if self.attention_backend == "triton" and not str(self.device).startswith("cuda") and \
                self.dtype == "bfloat16":
            raise ValueError("dtype 'bfloat16' with attention_backend 'triton' needs a GPU: on a CPU, Triton's "
                             "interpreter computes bf16 dot products wrongly; use dtype 'float32' or 'float16', "
                             "or attention_backend 'sdpa'")
        if self.async_scheduling and self.engine != "paged":
            raise ValueError(f"async_scheduling=True needs engine 'paged', got engine {self.engine!r}")
        if self.num_threads is None:
            self.num_threads = default_num_threads()
# ANCHOR_END: engine_config

    def take_torch_names(self):
        """A torch.dtype or torch.device as its name (torch.float16 is "float16"),
        known without importing torch: the command line builds its flags from
        this class before any model loads."""
        for name in ("dtype", "device"):
            value = getattr(self, name)
            if type(value).__module__ == "torch" and type(value).__name__ == name:
                setattr(self, name, str(value).removeprefix("torch."))

    # ANCHOR: check_types
    def check_types(self):
        """Every field as the type it declares, before anything else is read or
        loaded: a switch is True or False (the string "no" would be true), a
        count is a whole number (not 64.5, nor True), a number is finite. An
        integer or a float of another kind (numpy's, say) becomes Python's."""
        hints = typing.get_type_hints(EngineConfig)
        for field in dataclasses.fields(self):
            value, kinds = getattr(self, field.name), typing.get_args(hints[field.name])
            kinds = kinds or (hints[field.name],)
            if value is None and type(None) in kinds:
                continue
            converted = next((c for c in (as_kind(value, k) for k in kinds) if c is not None), None)
            if converted is None:
                raise ValueError(f"{field.name} must be {' or '.join(map(kind_name, kinds))}, "
                                 f"got {short(value)}")
            setattr(self, field.name, converted)
    # ANCHOR_END: check_types

    def check_speculative(self):
        """speculative_config, checked and completed with its defaults (a copy:
        the caller's dict is not kept)."""
        spec = self.speculative_config
        if spec is None:
            return
        unknown = [key for key in spec if key not in (*SPECULATIVE_DEFAULTS, "num_speculative_tokens")]
        if unknown:
            raise ValueError(f"speculative_config: unknown key {short(unknown[0])}; the keys are "
                             f"{['num_speculative_tokens', *SPECULATIVE_DEFAULTS]}")
        if "num_speculative_tokens" not in spec:
            raise ValueError("speculative_config needs num_speculative_tokens: the most tokens "
                             "drafted per request and step")
        spec = {**SPECULATIVE_DEFAULTS, **spec}
        if spec["method"] not in SPECULATIVE_METHODS:
            raise ValueError(f"speculative_config: unknown method {short(spec['method'])}; "
                             f"choose one of {SPECULATIVE_METHODS}")
        for name, most in (("num_speculative_tokens", MAX_SPECULATIVE_TOKENS),
                           ("prompt_lookup_max", MAX_PROMPT_LOOKUP), ("prompt_lookup_min", MAX_PROMPT_LOOKUP)):
            value = as_kind(spec[name], int)
            if value is None or not 1 <= value <= most:
                raise ValueError(f"speculative_config: {name} must be an integer in [1, {most}], "
                                 f"got {short(spec[name])}")
            spec[name] = value
        self.check_draft_model(spec)
        if spec["prompt_lookup_min"] > spec["prompt_lookup_max"]:
            raise ValueError(f"speculative_config: prompt_lookup_min {spec['prompt_lookup_min']} is "
                             f"above prompt_lookup_max {spec['prompt_lookup_max']}")
        if self.engine != "paged" or self.async_scheduling:
            raise ValueError(f"speculative_config needs engine 'paged' without async_scheduling, got "
                             f"engine {self.engine!r} with async_scheduling={self.async_scheduling}")
        self.speculative_config = spec

    def check_draft_model(self, spec):
        """method "draft": a checkpoint (model, default: the target's own) and,
        optionally, how many of its first layers draft (draft_layers)."""
        if spec["method"] != "draft":
            given = [key for key in ("model", "draft_layers") if spec[key] is not None]
            if given:
                raise ValueError(f"speculative_config: {given[0]} needs method 'draft', "
                                 f"got method {spec['method']!r}")
            return
        if self.executor == "simulated":
            raise ValueError("speculative_config: method 'draft' needs a model to draft with, "
                             "and the simulated executor runs none: use method 'ngram'")
        if spec["model"] is not None and not isinstance(spec["model"], str):
            raise ValueError(f"speculative_config: model must be a checkpoint folder, got {short(spec['model'])}")
        if spec["draft_layers"] is not None:
            layers = as_kind(spec["draft_layers"], int)
            if layers is None or layers < 1:
                raise ValueError(f"speculative_config: draft_layers must be an integer >= 1, "
                                 f"got {short(spec['draft_layers'])}")
            spec["draft_layers"] = layers

    def check_ranges(self):
        """The counts and sizes the checks above do not bound."""
        if self.max_model_len is not None and self.max_model_len < 2:
            raise ValueError(f"max_model_len must be >= 2, got {short(self.max_model_len)}")
        for name in ("max_num_batched_tokens", "kv_cache_memory_bytes", "num_threads"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {short(getattr(self, name))}")
        if not 0 <= self.seed < 2**64:
            raise ValueError(f"seed must be an integer in [0, 2**64), got {short(self.seed)}")
        for name in COUNTS:       # they size int32 tensors (slots, blocks, positions)
            if getattr(self, name) is not None and getattr(self, name) >= 2**31:
                raise ValueError(f"{name} must be below 2**31, got {short(getattr(self, name))}")
        if self.num_threads is not None and self.num_threads > os.cpu_count():
            raise ValueError(f"num_threads must be at most the {os.cpu_count()} CPUs of this machine, "
                             f"got {short(self.num_threads)}")
        if self.kv_cache_memory_bytes is not None and self.kv_cache_memory_bytes >= 2**63:
            raise ValueError(f"kv_cache_memory_bytes must be below 2**63, got {short(self.kv_cache_memory_bytes)}")
        if self.dtype not in DTYPES:
            raise ValueError(f"unsupported dtype {self.dtype!r}; choose one of {list(DTYPES)}")

    def check_bf16(self):
        """bf16 needs a GPU of compute capability 8.0 or newer (A100 and later)."""
        if self.dtype != "bfloat16" or not str(self.device).startswith("cuda"):
            return
        import torch   # here: the command line reads this class without torch
        major, minor = torch.cuda.get_device_capability(self.device)
        if major < 8:
            raise ValueError(f"dtype 'bfloat16' needs a GPU of compute capability 8.0 or newer; this "
                             f"{torch.cuda.get_device_name(self.device)} is {major}.{minor}: use 'float16'")

    def check_tensor_parallel(self):
        n = self.tensor_parallel_size
        if n < 1:
            raise ValueError(f"tensor_parallel_size must be an integer >= 1, got {short(n)}")
        if n == 1:
            return
        if self.engine not in ("continuous", "paged"):
            raise ValueError(f"tensor_parallel_size={n} needs engine 'continuous' or 'paged', got "
                             f"{self.engine!r}: stages 1-3 allocate a KV cache per batch")
        if self.cuda_graphs:
            # The graph executor replays the model in this process; tensor parallelism
            # runs it in one worker process per rank, each of which would capture its
            # own graphs around the collectives: not built (one GPU here to test it on).
            raise ValueError(f"cuda_graphs=True does not work with tensor_parallel_size={n}: "
                             f"the model runs in the ranks' processes, not in this one")
        import torch   # here: the command line reads this class without torch
        if str(self.device).startswith("cuda") and n > torch.cuda.device_count():
            raise ValueError(f"tensor_parallel_size={n} needs {n} GPUs, this machine has "
                             f"{torch.cuda.device_count()}")

    @classmethod
    def field_docs(cls) -> dict[str, str]:
        """Each field's docstring, read from this class's source: the command
        line's help comes from here, so no knob is described twice."""
        body = ast.parse(inspect.getsource(cls)).body[0].body
        return {node.target.id: " ".join(doc.value.value.split()) for node, doc in zip(body, body[1:])
                if isinstance(node, ast.AnnAssign) and isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)}

    def settle_draft_model(self, target, resolve):
        """method "draft": its model as a folder (``resolve`` finds a built-in
        model's), the target's own checkpoint where none was named."""
        spec = self.speculative_config
        if spec is not None and spec["method"] == "draft":
            spec["model"] = str(resolve(spec["model"]) if spec["model"] else target)

    def settle_max_model_len(self, max_context: int):
        """max_context: the longest sequence the model computes exactly (its
        max_position_embeddings, or its sliding window if that is shorter)."""
        if self.max_model_len is None:
            self.max_model_len = min(max_context, MAX_MODEL_LEN_CAP)
        elif self.max_model_len > max_context:
            raise ValueError(f"max_model_len {self.max_model_len} exceeds the model's "
                             f"maximum context {max_context}")
        if self.max_num_batched_tokens is None:
            self.max_num_batched_tokens = max(MIN_BATCHED_TOKENS, self.max_model_len)
        if self.max_num_batched_tokens < self.max_num_seqs:
            raise ValueError(f"max_num_batched_tokens {self.max_num_batched_tokens} must be at least "
                             f"max_num_seqs {self.max_num_seqs}: every running request decodes a token per step")


def kind_name(kind) -> str:
    return {bool: "True or False", int: "an integer", float: "a finite number", str: "a string",
            dict: "a dict", type(None): "None"}.get(kind, f"a {kind.__module__}.{kind.__qualname__}")


def default_num_threads() -> int:
    """Half the CPUs this process may run on (fewer than the machine's in a container), at least 1."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cpus // 2)

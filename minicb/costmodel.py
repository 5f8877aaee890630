"""What one forward pass costs on a GPU, from its batch alone: a roofline you can check by hand.

A step moves bytes and does arithmetic, and a GPU overlaps the two, so the
step takes the longer of

- its bytes over the bandwidth the hardware achieves: every weight read once
  (all the step's tokens share it), each sequence's cached K/V read once, and
  the new tokens' K/V written;
- its FLOPs over the FLOP/s the hardware achieves: 2 per weight per token
  (a multiply and an add) in the linear layers, and attention's q.k and p.v,
  4 x head_dim per query head per (query, key) pair, causal, so a prefill's
  grows with the square of its length;

plus an overhead: a fixed cost per step (the host's scheduling and the
launches), and costs per sequence, per new token and per cached token read,
which a GPU's profile leaves at 0 and a calibrated CPU's measures.

A decode step of a few sequences is all weights: memory-bound, nearly the same
time for 1 sequence as for 64. A prefill of thousands of tokens is all
arithmetic: compute-bound, its time growing with its tokens. Batching pays
because decode steps are the first kind.

Left out: the sampler, activations' traffic, communication between GPUs, and
how well each kernel does at each shape (one achieved fraction stands for all).
Every time this module gives is a prediction, not a measurement.
"""
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from .shapes import SHAPES, TINY


# ANCHOR: shape
@dataclass(frozen=True)
class ModelShape:
    """A decoder's dimensions: all the cost model needs of a model."""
    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    mlp_matrices: int = 3          # SwiGLU: gate, up and down; OPT's MLP has two
    tied_embeddings: bool = False  # the output layer is the embedding table
    max_context: int = 2048        # the longest sequence it was trained for

    @property
    def layer_params(self) -> int:
        attention = self.hidden * self.head_dim * (2 * self.heads + 2 * self.kv_heads)
        return attention + self.mlp_matrices * self.hidden * self.intermediate

    @property
    def params(self) -> int:
        tables = 1 if self.tied_embeddings else 2
        return self.layers * self.layer_params + tables * self.vocab * self.hidden

    def kv_bytes_per_token(self, bytes_per_value: int) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * bytes_per_value
# ANCHOR_END: shape

    @classmethod
    def from_checkpoint_shape(cls, name: str, s: dict) -> "ModelShape":
        """A shape as minicb.checkpoint writes it (SHAPES, TINY)."""
        return cls(name, s["num_hidden_layers"], s["hidden_size"], s["num_attention_heads"],
                   s["num_key_value_heads"], s["head_dim"], s["intermediate_size"],
                   # A tiny shape's byte-level tokenizer: 256 bytes and 3 special tokens.
                   s.get("vocab_size", 259), tied_embeddings=s["tie_word_embeddings"],
                   max_context=s.get("max_position_embeddings", 2048))


# OPT-13B (Zhang et al. 2022, Table 1; the model the vLLM paper and Anyscale's study
# ran): multi-head attention, a two-matrix MLP of 4 x hidden, tied embeddings.
OPT_13B = ModelShape("opt-13b", layers=40, hidden=5120, heads=40, kv_heads=40, head_dim=128,
                     intermediate=20480, vocab=50272, mlp_matrices=2, tied_embeddings=True)

MODEL_SHAPES = {
    **{name: ModelShape.from_checkpoint_shape(name, s) for name, s in SHAPES.items()},
    **{f"tiny-{arch}": ModelShape.from_checkpoint_shape(f"tiny-{arch}", s)
       for arch, s in TINY.items()},
    "opt-13b": OPT_13B,
}


# ANCHOR: hardware
@dataclass(frozen=True)
class Hardware:
    """A GPU's peak rates and memory, and how much of the peaks a step achieves."""
    name: str
    memory: float                  # bytes
    bandwidth: float               # bytes/s, peak
    flops: float                   # FLOP/s, peak dense 16-bit matmul
    source: str
    # Assumptions until a run on that GPU calibrates them: decode kernels stream
    # at about 80% of peak bandwidth, large matmuls reach about 60% of peak FLOP/s,
    # and minicb's Python host work and launches cost about 2 ms a step.
    bandwidth_fraction: float = 0.8
    flops_fraction: float = 0.6
    step_overhead: float = 2e-3    # seconds
    # Costs that grow with the batch, beyond the roofline: per sequence (its
    # inputs, its sampling), per new token, and per cached token attention reads.
    # A GPU's are small beside its step; a CPU's are most of it, and calibrating
    # this machine (workshop.measure.calibrate) measures them.
    sequence_overhead: float = 0.0
    token_overhead: float = 0.0
    cached_token_overhead: float = 0.0
    # On a GPU only decode steps replay CUDA graphs: a step that carries a prompt
    # launches its kernels one by one from Python, and pays this much more.
    prompt_step_overhead: float = 0.0
    dtype: str = "bfloat16"        # what the model runs in there
    # None: a datasheet profile, its fractions and overheads the assumptions above.
    # A measured profile says what measured it (GPU, versions, commit, date, which
    # runs) and which of its numbers are fitted and which still assumed.
    measured: dict | None = None

    @property
    def kind(self) -> str:
        return "measured" if self.measured else "datasheet, assumed fractions"


DATASHEETS = {
    "h100-sxm": Hardware("H100 SXM 80GB", 80e9, 3.35e12, 989e12,
                         "NVIDIA H100 Tensor Core GPU datasheet: HBM3 3.35 TB/s, "
                         "BF16 989 TFLOP/s dense"),
    "a100-40gb": Hardware("A100 SXM 40GB", 40e9, 1.555e12, 312e12,
                          "NVIDIA A100 Tensor Core GPU datasheet: HBM2 1,555 GB/s, "
                          "BF16 312 TFLOP/s dense"),
    "a100-80gb": Hardware("A100 SXM 80GB", 80e9, 2.039e12, 312e12,
                          "NVIDIA A100 Tensor Core GPU datasheet: HBM2e 2,039 GB/s, "
                          "BF16 312 TFLOP/s dense"),
    "h200": Hardware("H200 SXM 141GB", 141e9, 4.8e12, 989e12,
                     "NVIDIA H200 Tensor Core GPU datasheet: HBM3e 4.8 TB/s, "
                     "BF16 989 TFLOP/s dense"),
}
# ANCHOR_END: hardware

# Measured profiles, one JSON file each (workshop.measure.calibrate writes them).
PROFILES = Path(__file__).parent / "profiles"


def load_profile(path) -> Hardware:
    return Hardware(**json.loads(Path(path).read_text()))


def save_profile(hw: Hardware, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(hw), indent=1) + "\n")
    return path


# Every profile by name: the datasheets, and the measured ones (each file's stem).
HARDWARE = {**DATASHEETS, **{p.stem: load_profile(p) for p in sorted(PROFILES.glob("*.json"))}}


# ANCHOR: step_seconds
def step_seconds(hw: Hardware, shape: ModelShape, bytes_per_value: int,
                 sequences: list[tuple[int, int]], sampled: int) -> float:
    """One forward pass over ``sequences``, each (new tokens, tokens in its
    context after them), ``sampled`` of whose last tokens get logits."""
    new = sum(n for n, _ in sequences)
    cached = sum(context - n for n, context in sequences)
    kv_per_token = shape.kv_bytes_per_token(bytes_per_value)
    memory = (shape.params * bytes_per_value                     # every weight, once
              + cached * kv_per_token                             # K/V read
              + new * kv_per_token)                               # K/V written
    linear = (2 * shape.layers * shape.layer_params * new          # the decoder layers
              + 2 * shape.vocab * shape.hidden * sampled)          # the output layer
    # Query i of n new ones, in a context that ends at c, sees c - n + i + 1 keys.
    pairs = sum(n * (context - n) + n * (n + 1) // 2 for n, context in sequences)
    attention = 4 * shape.layers * shape.heads * shape.head_dim * pairs
    overhead = (hw.step_overhead + hw.sequence_overhead * len(sequences)
                + hw.token_overhead * new + hw.cached_token_overhead * cached)
    if any(n > 1 for n, _ in sequences):                 # not a graph's replay
        overhead += hw.prompt_step_overhead
    return max(memory / (hw.bandwidth * hw.bandwidth_fraction),
               (linear + attention) / (hw.flops * hw.flops_fraction)) + overhead
# ANCHOR_END: step_seconds


# ANCHOR: speculative
def expected_tokens(acceptance: float, k: int) -> float:
    """Tokens a verify step gives a sequence on average when each of its k drafts
    is kept with probability ``acceptance``, until the first that is not, plus
    the model's own next token: 1 + a + a^2 + ... + a^k (Leviathan et al.)."""
    return sum(acceptance ** i for i in range(k + 1))


def speculative_speedup(hw: Hardware, shape: ModelShape, bytes_per_value: int,
                        batch: int, context: int, k: int, acceptance: float) -> float:
    """Tokens a second with k drafts verified per step, over plain decode steps,
    for ``batch`` sequences of ``context`` tokens. The verify step carries k + 1
    queries a sequence, all of them sampled, and replays from CUDA graphs as a
    decode step does; drafting by prompt lookup costs the GPU nothing."""
    plain = step_seconds(hw, shape, bytes_per_value, [(1, context + 1)] * batch, batch)
    queries = [(k + 1, context + k + 1)] * batch
    verify = step_seconds(hw, shape, bytes_per_value, queries, batch * (k + 1))
    if k:                                   # replayed, as a decode step is
        verify -= hw.prompt_step_overhead
    return expected_tokens(acceptance, k) * plain / verify


def break_even_batch(hw: Hardware, shape: ModelShape, bytes_per_value: int,
                     context: int, k: int, acceptance: float,
                     largest: int = 4096) -> int | None:
    """The smallest batch at which speculation stops paying (its speedup below
    1), or None if it still pays at ``largest``."""
    def speedup(batch):
        return speculative_speedup(hw, shape, bytes_per_value, batch, context, k,
                                   acceptance)
    return next((batch for batch in range(1, largest + 1) if speedup(batch) < 1), None)
# ANCHOR_END: speculative


# ANCHOR: kv_budget
def kv_budget(hw: Hardware, shape: ModelShape, bytes_per_value: int,
              utilization: float = 0.9) -> float:
    """Bytes left for the KV cache: ``utilization`` of the GPU's memory less the
    weights (activations left out: a step's are small beside either)."""
    return hw.memory * utilization - shape.params * bytes_per_value
# ANCHOR_END: kv_budget

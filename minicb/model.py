"""A Llama-family decoder, written once for every stage.

Covers Llama and Mistral, Qwen2 (bias on q/k/v) and Qwen3 (RMSNorm on q and k
per head): grouped-query attention, rotary position embeddings (with Llama 3
frequency scaling), RMSNorm and a SwiGLU MLP. Parameter names follow Hugging
Face's, so a checkpoint's safetensors load as they are.

The model knows nothing about batching. It takes a flat run of tokens
``[N]`` with their positions and hands attention to ``attn``, an object the
stage builds: ``attn(layer_idx, q, k, v)`` stores k/v in the stage's KV cache
and returns the attention output. Stages differ only in that object.

The residual add, the RMSNorms, rotary and SwiGLU's middle come from ``ops``
(``minicb/layer_ops.py``): the plain PyTorch operations, or fused Triton
kernels that compute the same (chapter 8). The fused model also joins the
projections that read one input, q/k/v and gate/up, into one matmul each
(``Decoder.join_projections``); the forward pass is the same either way.
"""
import math
from dataclasses import dataclass

import torch
from torch import nn

from .gpu_memory import check_fits
from .layer_ops import JoinedLinear, Separate, layer_ops

SUPPORTED_MODEL_TYPES = ("llama", "mistral", "qwen2", "qwen3")


@dataclass
class ModelConfig:
    model_type: str
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    rms_norm_eps: float
    rope_theta: float
    rope_scaling: dict | None        # Llama 3 style scaling, or None
    qkv_bias: bool
    o_bias: bool
    qk_norm: bool
    tie_word_embeddings: bool
    max_position_embeddings: int
    eos_token_ids: tuple[int, ...]
    sliding_window: int | None = None   # attention span, if the model limits it

    # ANCHOR: kv_bytes
    def kv_bytes_per_token(self, bytes_per_value: int = 2) -> int:
        """KV-cache bytes one token occupies: a K and a V vector per KV head,
        per layer."""
        return (2 * self.num_hidden_layers * self.num_key_value_heads * self.head_dim
                * bytes_per_value)
    # ANCHOR_END: kv_bytes

    @classmethod
    def from_hf(cls, hf: dict) -> "ModelConfig":
        """Read a Hugging Face ``config.json`` dict (transformers 4 or 5 style)."""
        model_type = hf.get("model_type")
        if model_type not in SUPPORTED_MODEL_TYPES:
            raise ValueError(f"unsupported architecture {model_type!r} ({hf.get('architectures')}); "
                             f"minicb supports {SUPPORTED_MODEL_TYPES}")
        if hf.get("hidden_act", "silu") != "silu":
            raise ValueError(f"unsupported hidden_act {hf['hidden_act']!r}; only 'silu' (SwiGLU)")
        rope = hf.get("rope_parameters") or {}
        scaling = hf.get("rope_scaling") or rope
        if scaling.get("rope_type", scaling.get("type", "default")) == "default":
            scaling = None
        elif scaling.get("rope_type", scaling.get("type")) != "llama3":
            raise ValueError(f"unsupported rope scaling {scaling!r}; minicb supports 'default' and 'llama3'")
        heads = hf["num_attention_heads"]
        eos = hf.get("eos_token_id")
        attention_bias = hf.get("attention_bias", False)
        # Mistral always honours sliding_window; Qwen only with use_sliding_window.
        window = hf.get("sliding_window") if model_type == "mistral" or hf.get("use_sliding_window") else None
        return cls(
            model_type=model_type,
            vocab_size=hf["vocab_size"],
            hidden_size=hf["hidden_size"],
            intermediate_size=hf["intermediate_size"],
            num_hidden_layers=hf["num_hidden_layers"],
            num_attention_heads=heads,
            num_key_value_heads=hf.get("num_key_value_heads") or heads,
            head_dim=hf.get("head_dim") or hf["hidden_size"] // heads,
            rms_norm_eps=hf["rms_norm_eps"],
            rope_theta=rope.get("rope_theta", hf.get("rope_theta", 10000.0)),
            rope_scaling=scaling,
            qkv_bias=model_type == "qwen2" or attention_bias,
            o_bias=model_type in ("llama", "mistral") and attention_bias,
            qk_norm=model_type == "qwen3",
            tie_word_embeddings=hf.get("tie_word_embeddings", False),
            max_position_embeddings=hf.get("max_position_embeddings", 2048),
            eos_token_ids=tuple(eos if isinstance(eos, list) else [] if eos is None else [eos]),
            sliding_window=window,
        )

    @property
    def max_context(self) -> int:
        """Longest sequence this decoder computes exactly. It attends to every
        earlier token, which equals sliding-window attention only within the window."""
        return min(self.max_position_embeddings, self.sliding_window or self.max_position_embeddings)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        # Normalise in fp32, as the reference implementation does, then cast back.
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x32.to(x.dtype)


# ANCHOR: rope
class Rotary:
    """Rotary position embedding: rotate pairs of q/k channels by position
    times frequency."""

    def __init__(self, cfg: ModelConfig):
        # On the CPU, whatever device the decoder is built on (the meta device, when
        # loading); cos_sin moves the frequencies to the positions' device once.
        d = cfg.head_dim
        exponents = torch.arange(0, d, 2, device="cpu").float() / d
        inv_freq = 1.0 / (cfg.rope_theta ** exponents)                      # [d/2]
        if cfg.rope_scaling is not None:
            inv_freq = llama3_scaled_frequencies(inv_freq, cfg.rope_scaling)
        self.inv_freq = inv_freq

    def cos_sin(self, positions, dtype):
        if self.inv_freq.device != positions.device:
            self.inv_freq = self.inv_freq.to(positions.device)
        freqs = positions.float()[:, None] * self.inv_freq[None, :]        # [N, d/2]
        angles = torch.cat([freqs, freqs], dim=-1)                          # [N, d]
        return angles.cos().to(dtype), angles.sin().to(dtype)


# (applied to q and k by ops.rotary: kernels/reference.py and kernels/rotary.py)
# ANCHOR_END: rope


def llama3_scaled_frequencies(inv_freq, scaling):
    """Llama 3 long-context scaling: slow down low frequencies by ``factor``,
    keep high frequencies, blend smoothly in between."""
    factor = scaling["factor"]
    low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
    original_len = scaling["original_max_position_embeddings"]
    wavelen = 2 * math.pi / inv_freq
    scaled = torch.where(wavelen > original_len / low, inv_freq / factor, inv_freq)
    blend = (original_len / wavelen - low) / (high - low)
    smoothed = (1 - blend) * scaled / factor + blend * scaled
    in_between = (wavelen >= original_len / high) & (wavelen <= original_len / low)
    return torch.where(in_between, smoothed, scaled)


# ANCHOR: attention
class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig, layer_idx: int):
        super().__init__()
        self.layer_idx = layer_idx
        self.num_heads, self.num_kv_heads, self.head_dim = (
            cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim)
        q_size, kv_size = (self.num_heads * self.head_dim,
                           self.num_kv_heads * self.head_dim)
        self.q_proj = nn.Linear(cfg.hidden_size, q_size, bias=cfg.qkv_bias)
        self.k_proj = nn.Linear(cfg.hidden_size, kv_size, bias=cfg.qkv_bias)
        self.v_proj = nn.Linear(cfg.hidden_size, kv_size, bias=cfg.qkv_bias)
        self.o_proj = nn.Linear(q_size, cfg.hidden_size, bias=cfg.o_bias)
        if cfg.qk_norm:
            self.q_norm = RMSNorm(self.head_dim, cfg.rms_norm_eps)
            self.k_norm = RMSNorm(self.head_dim, cfg.rms_norm_eps)
        # q, k and v as the checkpoint has them; fused_ops joins them (chapter 8)
        self.qkv = Separate(self.q_proj, self.k_proj, self.v_proj)

    def forward(self, x, cos, sin, attn, ops):
        n = x.shape[0]                                                # x [N, hidden]
        q, k, v = self.qkv(x)
        q = q.view(n, self.num_heads, self.head_dim)                  # [N, H, d]
        k = k.view(n, self.num_kv_heads, self.head_dim)               # [N, KVH, d]
        v = v.view(n, self.num_kv_heads, self.head_dim)
        if hasattr(self, "q_norm"):
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = ops.rotary(q, k, cos, sin)
        # the stage's cache + kernel
        out = attn(self.layer_idx, q, k, v)
        return self.o_proj(out.reshape(n, self.num_heads * self.head_dim))
# ANCHOR_END: attention


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)
        self.gate_up = Separate(self.gate_proj, self.up_proj)         # or joined

    def forward(self, x, ops):
        gate, up = self.gate_up(x)
        return self.down_proj(ops.silu_mul(gate, up))


# ANCHOR: layer
class DecoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig, layer_idx: int):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg, layer_idx)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, h, residual, cos, sin, attn, ops):
        """h: the previous block's output; residual: the sum of those before it
        (None in the first layer). Each norm first adds h to the residual."""
        norm = self.input_layernorm
        x, residual = ops.add_rms_norm(h, residual, norm.weight, norm.eps)
        h = self.self_attn(x, cos, sin, attn, ops)
        norm = self.post_attention_layernorm
        x, residual = ops.add_rms_norm(h, residual, norm.weight, norm.eps)
        return self.mlp(x, ops), residual
# ANCHOR_END: layer


# ANCHOR: decoder
class Decoder(nn.Module):
    """Token ids in, next-token logits out. Build with ``load_model``."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.config = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(cfg, i) for i in range(cfg.num_hidden_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        self.rotary = Rotary(cfg)
        self.ops = layer_ops()       # the plain operations; load_model may fuse them

    @torch.inference_mode()
    def forward(self, input_ids, positions, attn):
        """input_ids, positions [N] -> hidden states [N, hidden] (after the final norm)."""
        h, residual = self.embed_tokens(input_ids), None
        cos, sin = self.rotary.cos_sin(positions, h.dtype)
        for layer in self.layers:
            h, residual = layer(h, residual, cos, sin, attn, self.ops)
        return self.ops.add_rms_norm(h, residual, self.norm.weight, self.norm.eps)[0]

    def join_projections(self):
        """Each layer's q, k and v, and its gate and up, as one matmul each: the
        separate linears give their weights to the joined one and are gone."""
        for layer in self.layers:
            attn, mlp = layer.self_attn, layer.mlp
            attn.qkv = JoinedLinear(attn.q_proj, attn.k_proj, attn.v_proj)
            mlp.gate_up = JoinedLinear(mlp.gate_proj, mlp.up_proj)
            del attn.q_proj, attn.k_proj, attn.v_proj, mlp.gate_proj, mlp.up_proj

    @property
    def dtype(self) -> torch.dtype:
        return self.embed_tokens.weight.dtype

    def new_kv_cache(self, *leading):
        """Zeroed K and V tensors [layers, *leading, kv_heads, head_dim] beside
        the weights: the stage picks the middle axes."""
        cfg = self.config
        shape = (cfg.num_hidden_layers, *leading, cfg.num_key_value_heads, cfg.head_dim)
        weight = self.embed_tokens.weight
        check_fits(2 * math.prod(shape) * weight.element_size(), weight.device,
                   f"a KV cache of {' x '.join(map(str, leading))} token rows")
        return weight.new_zeros(shape), weight.new_zeros(shape)

    @torch.inference_mode()
    def compute_logits(self, hidden):
        """hidden [n, hidden] -> fp32 logits [n, vocab]. Call it only on the rows
        that sample a token: the lm_head is the largest matmul in a small model."""
        return self.lm_head(hidden).float()
# ANCHOR_END: decoder

"""Checkpoints: load a local Hugging Face folder, or write a random one.

``make_tiny_checkpoint`` is how every test, notebook and demo gets a model:
nothing is ever downloaded. Its ``shape`` argument also gives real model
shapes (Llama 3.2 1B, Llama 3.1 8B) with random weights for GPU benchmarks.
"""
import itertools
import json
import shutil
import tempfile
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from tokenizers import Tokenizer, decoders, models, pre_tokenizers

from .layer_ops import layer_ops
from .model import Decoder, ModelConfig
from .shapes import SHAPES, TINY

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def resolve_dtype(dtype) -> torch.dtype:
    if isinstance(dtype, torch.dtype) and dtype in DTYPES.values():
        return dtype
    if dtype in DTYPES:
        return DTYPES[dtype]
    raise ValueError(f"unsupported dtype {dtype!r}; choose one of {list(DTYPES)}")


def read_config(path) -> ModelConfig:
    config_file = Path(path) / "config.json"
    if not config_file.is_file():
        raise FileNotFoundError(f"{path} is not a checkpoint folder: no config.json in it")
    return ModelConfig.from_hf(json.loads(config_file.read_text()))


# ANCHOR: load_model
def load_model(path, dtype="float32", device="cpu", fused_ops=False, share=None,
               model_config=None) -> Decoder:
    """Build the decoder on the meta device, then adopt the checkpoint's tensors.
    share: tensor parallelism's cut (chapter 10), a function that keeps one rank's
    part of the whole model, before anything is joined. fused_ops: the layer's
    fused Triton kernels instead of the plain operations, and its projections
    that read one input joined into one matmul. model_config: the checkpoint's
    config, where the caller has read it."""
    cfg, dtype = model_config or read_config(path), resolve_dtype(dtype)
    with torch.device("meta"):
        model = Decoder(cfg)
    state = {}
    for shard in sorted(Path(path).glob("*.safetensors")):
        for name, tensor in load_file(shard, device=str(device)).items():
            state[name.removeprefix("model.")] = tensor.to(dtype)
    if cfg.tie_word_embeddings:
        state["lm_head.weight"] = state["embed_tokens.weight"]
    model.load_state_dict(state, strict=True, assign=True)
    if share is not None:
        share(model)
    model.ops = layer_ops(fused_ops)
    if fused_ops:
        model.join_projections()
    return model.eval()
# ANCHOR_END: load_model


RECIPE = "minicb_recipe.json"     # how make_tiny_checkpoint made the folder
TOKENIZER_VERSION = 2             # a real shape's tokenizer covers its vocabulary


# ANCHOR: make_tiny_checkpoint
def make_tiny_checkpoint(path, arch="llama", seed=0, shape="tiny", dtype="float32",
                         max_position_embeddings=2048, num_layers=None):
    """Write config.json, random safetensors weights and a byte-level tokenizer
    to ``path`` and return it. ``arch``: llama, mistral, qwen2 or qwen3. ``shape``:
    "tiny" or a key of ``SHAPES`` (real dimensions, random weights; use
    dtype="bfloat16" there: the 8B shape is 16 GB in bf16), whose tokenizer has
    a token for every id of its vocabulary. ``num_layers``: keep the shape's
    widths with fewer layers, to measure a layer's cost cheaply."""
    # transformers takes seconds to import: only writing a checkpoint waits for it.
    from transformers import LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config

    config_classes = {"llama": LlamaConfig, "mistral": MistralConfig,
                      "qwen2": Qwen2Config, "qwen3": Qwen3Config}
    if arch not in config_classes:
        raise ValueError(f"unknown arch {arch!r}; choose one of {list(config_classes)}")
    if shape != "tiny" and (shape not in SHAPES or arch != "llama"):
        raise ValueError(f"unknown shape {shape!r} for arch {arch!r}; choose 'tiny' "
                         f"(any arch) or, with arch='llama', one of {list(SHAPES)}")
    if num_layers is not None and (not isinstance(num_layers, int) or num_layers < 1):
        raise ValueError(f"num_layers must be an integer >= 1, got {num_layers!r}")
    torch_dtype = resolve_dtype(dtype)
    path = Path(path)
    # The seed fixes every weight, so a folder made from the same recipe is reused
    # (the 8B shape takes minutes to write). A new one is written aside, its recipe
    # last, and put in place whole: no process ever reads a half-written folder.
    recipe = dict(arch=arch, seed=seed, shape=shape, dtype=str(torch_dtype),
                  max_position_embeddings=max_position_embeddings,
                  num_layers=num_layers, tokenizer=TOKENIZER_VERSION)
    if made_from(path) == recipe:
        return str(path)
    final, path = path, new_folder_beside(path)      # written aside, put in place whole
    dims = dict(TINY[arch] if shape == "tiny" else SHAPES[shape])
    tokenizer = _byte_level_tokenizer(dims.get("vocab_size"))
    dims.setdefault("vocab_size", len(tokenizer))
    dims.setdefault("max_position_embeddings", max_position_embeddings)
    if num_layers is not None:
        dims["num_hidden_layers"] = num_layers
    hf_config = config_classes[arch](
        **dims, rms_norm_eps=1e-6, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
        dtype=dtype)
    hf_config.save_pretrained(path)
    tokenizer.save_pretrained(path)
    weights = _random_weights(ModelConfig.from_hf(hf_config.to_dict()), seed,
                              torch_dtype)
    save_file(weights, path / "model.safetensors", metadata={"format": "pt"})
    (path / RECIPE).write_text(json.dumps(recipe))
    return put_in_place(path, final, recipe)
# ANCHOR_END: make_tiny_checkpoint


def made_from(path: Path) -> dict | None:
    """The recipe a complete checkpoint folder was made from; None for none."""
    try:
        return json.loads((path / RECIPE).read_text())
    except (OSError, ValueError):
        return None


def new_folder_beside(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))


def put_in_place(written: Path, path: Path, recipe: dict) -> str:
    """Move a finished folder to ``path`` in one rename, so that a process reading
    it (another test, a notebook) sees the old folder or the new one, never half of
    one. If another process put the same recipe there meanwhile, keep that one."""
    if made_from(path) == recipe:
        shutil.rmtree(written)
        return str(path)
    if path.exists():
        old = new_folder_beside(path)
        path.rename(old / "old")
        shutil.rmtree(old)
    written.rename(path)
    return str(path)


def _random_weights(cfg: ModelConfig, seed: int, dtype) -> dict:
    """Hugging Face-named tensors. The scale is larger than a trained model's
    so that greedy decoding has clear winners: two implementations that differ
    by rounding still pick the same token."""
    gen = torch.Generator().manual_seed(seed)

    def randn(*shape, std):
        return (torch.randn(*shape, generator=gen) * std).to(dtype)

    def norm(dim):   # near 1, but not 1, so a weight that fails to load shows up
        return (1.0 + 0.1 * torch.randn(dim, generator=gen)).to(dtype)

    hidden, inter, d = cfg.hidden_size, cfg.intermediate_size, cfg.head_dim
    q_size, kv_size = cfg.num_attention_heads * d, cfg.num_key_value_heads * d
    w = {"model.embed_tokens.weight": randn(cfg.vocab_size, hidden, std=1.0),
         "model.norm.weight": norm(hidden)}
    if not cfg.tie_word_embeddings:
        w["lm_head.weight"] = randn(cfg.vocab_size, hidden, std=8 * hidden ** -0.5)
    for i in range(cfg.num_hidden_layers):
        p = f"model.layers.{i}."
        for name, rows, cols in [("q_proj", q_size, hidden), ("k_proj", kv_size, hidden),
                                 ("v_proj", kv_size, hidden), ("o_proj", hidden, q_size)]:
            w[p + f"self_attn.{name}.weight"] = randn(rows, cols, std=cols ** -0.5)
        if cfg.qkv_bias:
            for name, size in [("q_proj", q_size), ("k_proj", kv_size), ("v_proj", kv_size)]:
                w[p + f"self_attn.{name}.bias"] = randn(size, std=0.1)
        if cfg.qk_norm:
            w[p + "self_attn.q_norm.weight"], w[p + "self_attn.k_norm.weight"] = norm(d), norm(d)
        w[p + "mlp.gate_proj.weight"] = randn(inter, hidden, std=hidden ** -0.5)
        w[p + "mlp.up_proj.weight"] = randn(inter, hidden, std=hidden ** -0.5)
        w[p + "mlp.down_proj.weight"] = randn(hidden, inter, std=inter ** -0.5)
        w[p + "input_layernorm.weight"] = norm(hidden)
        w[p + "post_attention_layernorm.weight"] = norm(hidden)
    return w


def _byte_level_tokenizer(vocab_size=None):
    """256 byte tokens plus <pad>, <s>, </s>: any text encodes, nothing to download.
    With a vocab_size, made-up words (" ab", " ac", ...) fill the rest, so that
    every id a random model of that size samples decodes to text: a server
    streams it, and a client times it, as it would a real model's answer."""
    # transformers takes seconds to import: only writing a checkpoint waits for it.
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<s>", "</s>"]
    tokens = specials + sorted(pre_tokenizers.ByteLevel.alphabet())
    if vocab_size is not None:
        tokens += list(itertools.islice(made_up_words(), vocab_size - len(tokens)))
    vocab = {tok: i for i, tok in enumerate(tokens)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", bos_token="<s>",
                                   eos_token="</s>", clean_up_tokenization_spaces=False)


def made_up_words():
    """ ab, ac, ..., zz, aab, ...: in ByteLevel's alphabet, where "Ġ" is a space."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    for length in itertools.count(2):
        for word in itertools.product(letters, repeat=length):
            yield "Ġ" + "".join(word)

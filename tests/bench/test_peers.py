"""The transformers peers serve the same workload and produce the same tokens as minicb,
under the transformers in the venv and, where MINICB_OLDEST_TRANSFORMERS names a folder
holding it (`make test` installs one), under the oldest transformers minicb allows."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from minicb import LLM
from minicb.tools.bench.peers import run_peer
from minicb.tools.bench.workload import synthetic_workload

OLDEST = os.environ.get("MINICB_OLDEST_TRANSFORMERS")


@pytest.fixture(scope="module")
def workload():
    return synthetic_workload(6, prompt_len=(3, 30), output_len=(1, 12), seed=4)


@pytest.fixture(scope="module")
def minicb_tokens(llama, workload):
    outputs = LLM(llama, engine="paged", attention_backend="sdpa").generate(workload.prompts, workload.params)
    return [o.output_token_ids for o in outputs]


# transformers' continuous batching always gets a KV budget here: without one it sizes its
# cache from the free memory, which on a CPU means most of the machine's RAM (15 to 22 GB
# here), while the other tests run beside it.
@pytest.mark.parametrize("peer,kv_tokens", [("hf_generate", None), ("hf_generate_batch", 4 * 64),
                                            ("hf_generate_batch", 16 * 64)])
def test_peer_matches_minicb_token_for_token(llama, workload, minicb_tokens, peer, kv_tokens):
    run = run_peer(peer, llama, workload, batch_size=4, kv_tokens=kv_tokens)
    assert run.outputs == minicb_tokens
    assert run.output_tokens == sum(workload.output_lens)
    assert run.prompt_tokens == sum(workload.prompt_lens)
    assert run.output_throughput == run.output_tokens / run.wall_time > 0
    assert run.attention and run.summary()["attention"] == run.attention


def test_unknown_peer_is_named(llama, workload):
    with pytest.raises(ValueError, match="'vllm'"):
        run_peer("vllm", llama, workload)


@pytest.mark.long
@pytest.mark.skipif(not OLDEST, reason="MINICB_OLDEST_TRANSFORMERS names no folder (make test installs one)")
def test_the_peers_work_under_the_oldest_transformers_minicb_allows():
    """This file's other tests, in a fresh process with that transformers first on the path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([OLDEST, os.environ.get("PYTHONPATH", "")])}
    env.pop("MINICB_OLDEST_TRANSFORMERS")
    version = subprocess.run([sys.executable, "-c", "import transformers; print(transformers.__version__)"],
                             env=env, capture_output=True, text=True)
    assert version.stdout.strip() == Path(OLDEST).name.removeprefix("transformers-"), version.stderr[-2000:]
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__],
                            env=env, capture_output=True, text=True, cwd=Path(__file__).parents[2])
    assert result.returncode == 0 and " passed" in result.stdout, result.stdout[-4000:] + result.stderr[-2000:]

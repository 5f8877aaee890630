"""The transformers peers serve the same workload and produce the same tokens as minicb."""
import pytest

from minicb import LLM
from minicb.tools.peers import run_peer
from minicb.tools.workload import synthetic_workload


@pytest.fixture(scope="module")
def workload():
    return synthetic_workload(6, prompt_len=(3, 30), output_len=(1, 12), seed=4)


@pytest.fixture(scope="module")
def minicb_tokens(llama, workload):
    outputs = LLM(llama, engine="paged", attention_backend="sdpa").generate(workload.prompts, workload.params)
    return [o.output_token_ids for o in outputs]


@pytest.mark.parametrize("peer,kv_tokens", [("hf_generate", None), ("hf_generate_batch", None),
                                            ("hf_generate_batch", 4 * 64)])   # with minicb's KV budget
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

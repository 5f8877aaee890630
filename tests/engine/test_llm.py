"""LLM, the offline entry point: string prompts and their text, each request's
metrics in order, generate as a loop over LLMEngine's step, the executor contract a
stage sees, and one read of the checkpoint's config per engine."""
import pytest

from minicb import LLM, SamplingParams

from ..conftest import MAX_TOKENS, PROMPTS

GREEDY = [SamplingParams(max_tokens=n, ignore_eos=True) for n in MAX_TOKENS]


def test_string_prompts_and_text(llama):
    llm = LLM(llama, engine="static")
    [out] = llm.generate("Hello, batching!", SamplingParams(max_tokens=4, ignore_eos=True))
    assert out.prompt == "Hello, batching!"
    assert out.prompt_token_ids == llm.tokenizer.encode("Hello, batching!")
    assert out.text == llm.tokenizer.decode(out.output_token_ids, skip_special_tokens=True)
    assert len(out.output_token_ids) == 4


def test_request_metrics_are_ordered(llama):
    outputs = LLM(llama, engine="static", max_batch_size=2).generate(PROMPTS, GREEDY)
    for o in outputs:
        m = o.metrics
        assert m.arrival_time <= m.first_scheduled_time <= m.first_token_time <= m.finish_time
        assert m.num_prompt_tokens == len(o.prompt_token_ids)
        assert m.num_output_tokens == len(o.output_token_ids)
        assert m.ttft >= 0 and m.tpot >= 0 and m.latency >= m.ttft


def test_llm_generate_is_a_loop_over_the_online_engine_s_step(llama, monkeypatch):
    """One way into a stage: LLM.generate steps LLMEngine, never the stage itself."""
    llm = LLM(llama, engine="continuous", max_num_seqs=2)
    steps = []
    step = type(llm.llm_engine).step
    monkeypatch.setattr(type(llm.llm_engine), "step", lambda engine: steps.append(1) or step(engine))
    outputs = llm.generate(PROMPTS[:3], SamplingParams(max_tokens=3, ignore_eos=True))
    assert [len(o.output_token_ids) for o in outputs] == [3, 3, 3]
    assert len(steps) == len(llm.last_run.steps) and not llm.llm_engine.requests


@pytest.mark.parametrize("kind", ["model", "simulated"])
def test_every_executor_keeps_the_contract_and_the_stage_sees_only_it(llama, kind):
    """The executor a stage holds answers the contract's members and nothing else
    (an executor's extras, such as the plain one's model, are out of its reach)."""
    from minicb.executor_contract import MEMBERS, StepExecutor
    from minicb.executors import GraphExecutor, ParallelExecutor

    model = llama if kind == "model" else "llama-3.2-1b"
    llm = LLM(model, engine="paged", executor=kind, max_num_seqs=2)
    assert isinstance(llm.executor, StepExecutor) and isinstance(llm.stage.executor, StepExecutor)
    assert not hasattr(llm.stage.executor, "model") and not hasattr(llm.stage.executor, "graph_tokens")
    methods = [m for m in MEMBERS if callable(getattr(StepExecutor, m, None))]
    for cls in (GraphExecutor, ParallelExecutor, type(llm.executor)):      # every method, on every kind
        assert [m for m in methods if not callable(getattr(cls, m, None))] == [], cls


def test_building_an_engine_reads_its_checkpoint_s_config_once_and_changes_none_of_its_options(llama, monkeypatch):
    """The engine reads config.json once and hands it on; the executor factory leaves
    the engine's options as given (the simulated GPU's KV budget is asked of it)."""
    import minicb.checkpoint as checkpoint
    import minicb.executors as executors
    import minicb.llm as llm_module

    reads = []
    read = checkpoint.read_config
    for module in (llm_module, executors, checkpoint):        # wherever it is called from
        monkeypatch.setattr(module, "read_config", lambda path: reads.append(path) or read(path))
    LLM(llama, engine="paged", max_num_seqs=2)
    assert len(reads) == 1, reads
    simulated = LLM("llama-3.2-1b", engine="paged", executor="simulated")
    assert simulated.config.kv_cache_memory_bytes is None
    budget = simulated.executor.kv_memory(simulated.config.gpu_memory_utilization)
    bytes_per_block = simulated.config.block_size * simulated.executor.config.kv_bytes_per_token(2)
    assert simulated.stage.num_blocks == budget // bytes_per_block

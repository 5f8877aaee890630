"""Shared fixtures. Without a GPU, Triton kernels run in Triton's interpreter;
TRITON_INTERPRET must be set before triton is first imported, so it is set here,
before any test module imports minicb or triton."""
import os

# The GPU run's tests measure their coverage (workshop.gpu.run.run_tests) in every
# pytest-xdist worker, which `coverage run` around pytest would not see: each process
# starts its own here, before minicb is imported, and saves it when its session finishes.
if os.environ.get("MINICB_COVERAGE_DATA"):
    import coverage

    MEASURED = coverage.Coverage(data_file=os.environ["MINICB_COVERAGE_DATA"], data_suffix=True,
                                 source=os.environ["MINICB_COVERAGE_SOURCE"].split(","))
    MEASURED.start()

    # Saved when the session finishes, not later: a pytest-xdist worker tells the
    # controller it is done right after this hook, and the controller's caller then
    # combines the data files, which a save at unconfigure could still be writing.
    def pytest_sessionfinish(session, exitstatus):
        MEASURED.stop()
        MEASURED.save()

import torch  # noqa: E402

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402

from minicb import LLMEngine, make_tiny_checkpoint  # noqa: E402

ARCHS = ("llama", "qwen2", "qwen3")


def pytest_collection_modifyitems(items):
    """Tests of minutes (marked long) first: with `make test`'s two workers, each
    starts on one of them while the other works through the rest, and both finish
    together instead of one waiting for a long test that started last."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


# On a GPU, the share of it an engine that a test does not size may hold: the GPU test
# set runs in several workers on one GPU (pytest -n auto), each building engines. The
# fixture is session-wide so that engines built by module-wide fixtures (a server) are
# sized too, not only those built inside a test.
GPU_SHARE_PER_ENGINE = 0.03


@pytest.fixture(autouse=True, scope="session")
def engines_sized_for_a_shared_gpu():
    if DEVICE != "cuda":
        yield
        return
    init = LLMEngine.__init__

    def sized(self, model, engine="static", **options):
        options.setdefault("gpu_memory_utilization", GPU_SHARE_PER_ENGINE)
        init(self, model, engine, **options)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(LLMEngine, "__init__", sized)
        yield


@pytest.fixture(scope="session")
def checkpoints(tmp_path_factory):
    """One tiny random checkpoint per architecture, written once per test session."""
    root = tmp_path_factory.mktemp("checkpoints")
    return {arch: make_tiny_checkpoint(root / f"tiny-{arch}", arch=arch, seed=0) for arch in ARCHS}


@pytest.fixture(scope="session")
def llama(checkpoints):
    return checkpoints["llama"]

# A mixed batch: a one-token prompt, prompts shorter and longer than a kernel
# block, and max_tokens of 1 and more.
PROMPTS = [[5, 6, 7], [9], list(range(10, 43)), list(range(50, 57)), [200, 3, 77, 41, 8]]
MAX_TOKENS = [5, 1, 8, 3, 6]


@pytest.fixture(scope="session")
def hf_greedy(checkpoints):
    """Token ids transformers' generate produces greedily, one prompt at a time
    (no padding: the plainest possible reference), for PROMPTS/MAX_TOKENS."""
    from transformers import AutoModelForCausalLM, GenerationConfig

    results = {}
    for arch, path in checkpoints.items():
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
        outs = []
        for prompt, n in zip(PROMPTS, MAX_TOKENS):
            config = GenerationConfig(max_new_tokens=n, min_new_tokens=n, do_sample=False,
                                      eos_token_id=None, pad_token_id=0)
            ids = torch.tensor([prompt])
            out = model.generate(ids, attention_mask=torch.ones_like(ids), generation_config=config)
            outs.append(out[0, len(prompt):].tolist())
        results[arch] = outs
    return results


@pytest.fixture(scope="session")
def smollm2():
    """The real model's checkpoint folder, converted once into the user's cache.
    Skipped where its package is not installed, except in CI
    (MINICB_REQUIRE_PRETRAINED=1), where a missing package is a failure."""
    from minicb.pretrained import pretrained_checkpoint

    try:
        return str(pretrained_checkpoint("smollm2"))
    except (FileNotFoundError, ModuleNotFoundError) as error:
        if os.environ.get("MINICB_REQUIRE_PRETRAINED"):
            raise
        pytest.skip(str(error))

"""One idea per stage, checked: what a reader meets when following a step, and
which file may speak of which idea."""
import ast
import re
import sys
from pathlib import Path

import pytest

from minicb import LLMEngine, SamplingParams
from minicb.stages.iteration import IterationEngine
from minicb.stages.continuous import ContinuousEngine
from minicb.stages.paged import PagedEngine

PACKAGE = Path(__file__).resolve().parents[1] / "minicb"
KERNELS = Path(__file__).resolve().parents[1] / "kernels"

# Later ideas, by the words that name them in code and comments.
ASYNC = r"async|in[ _]flight|pending|overlap"
PAGING = r"\bblocks?\b|block_|prefix|paged"
PREFIX = r"prefix|hash|ref_count|shared"
GRAPHS = r"cuda[ _]graph|decode_graphs"
LATER_IDEAS = {
    "request.py": [ASYNC, PAGING, GRAPHS],
    "sampling.py": [ASYNC, PAGING, GRAPHS],
    "stages/base.py": [ASYNC, PAGING, GRAPHS],
    "stages/iteration.py": [ASYNC, PAGING, GRAPHS],
    "stages/single.py": [ASYNC, PAGING, GRAPHS],
    "stages/static.py": [ASYNC, PAGING, GRAPHS],
    "stages/dynamic.py": [ASYNC, PAGING, GRAPHS],
    "stages/continuous.py": [ASYNC, GRAPHS],    # its docstring may point ahead to stage 5 ...
    "stages/paged.py": [ASYNC, GRAPHS, PREFIX],
    "stages/prefix_caching.py": [ASYNC, GRAPHS],
}


# The kernels of stages 1-4 and the tile they share know nothing of stage 5's
# block tables or split-KV (the tile once took both, as flags and dummy pointers).
KERNEL_LATER_IDEAS = r"block_table|paged|\blse\b|split"


@pytest.mark.parametrize("name", ["tile.py", "contiguous_attention.py", "padded_attention.py",
                                  "ragged_attention.py"])
def test_no_kernel_before_stage_5_mentions_paging(name):
    text = code_and_comments(KERNELS / name)
    found = re.findall(rf"^.*(?:{KERNEL_LATER_IDEAS}).*$", text, flags=re.IGNORECASE | re.MULTILINE)
    assert not found, f"{name} mentions stage 5: {found}"


def code_and_comments(path: Path) -> str:
    """The file without its module docstring (which may say what comes next)."""
    text = path.read_text()
    docstring = ast.get_docstring(ast.parse(text), clean=False)
    return text.replace(docstring, "", 1) if docstring else text


@pytest.mark.parametrize("name", LATER_IDEAS)
def test_no_earlier_file_mentions_a_later_idea(name):
    text = code_and_comments(PACKAGE / name)
    if name == "stages/continuous.py":
        text = text.replace("stage 5", "")                                 # ... and nothing more
    for pattern in LATER_IDEAS[name]:
        found = re.findall(rf"^.*(?:{pattern}).*$", text, flags=re.IGNORECASE | re.MULTILINE)
        assert not found, f"{name} mentions a later idea: {found}"


def anchors(path: Path) -> list[str]:
    return re.findall(r"# ANCHOR: (\w+)", path.read_text())


def test_stage_5_is_stage_4_with_blocks_for_slots():
    # The same sections in the same order, so that a diff of the two files pairs
    # the slot manager with the block manager and the ragged metadata with the paged.
    continuous, paged = PACKAGE / "stages/continuous.py", PACKAGE / "stages/paged.py"
    assert [a for a in anchors(paged) if a in anchors(continuous)] == anchors(continuous)
    # Both engines build on the shared step; stage 5 does not inherit stage 4's layout.
    assert ContinuousEngine.__bases__ == PagedEngine.__bases__ == (IterationEngine,)
    for engine in (ContinuousEngine, PagedEngine):       # ... nor change how a step runs
        assert not {"step", "launch", "prepare", "finish_step"} & set(vars(engine)), engine


def follow_one_step(engine: LLMEngine) -> list[tuple[str, str]]:
    """(file, function) of each engine function one LLMEngine.step() reaches,
    in the order a reader first meets them. The forward pass (the executor, the
    model and the kernels they call) is not followed past its first call."""
    seen, order = set(), []

    def profile(frame, event, arg):
        if event != "call":
            return
        path = Path(frame.f_code.co_filename).resolve()
        if PACKAGE not in path.parents or path.name == "model.py":
            return
        if frame.f_back.f_code.co_filename == frame.f_code.co_filename and \
                path.parent.name == "executors":
            return                             # inside the executor
        key = (str(path.relative_to(PACKAGE)), frame.f_code.co_name, frame.f_code.co_firstlineno)
        if key not in seen:
            seen.add(key)
            order.append(key[:2])

    sys.setprofile(profile)
    try:
        engine.step()
    finally:
        sys.setprofile(None)
    return order


def test_one_paged_decode_step_reads_few_files(llama):
    engine = LLMEngine(llama, engine="paged", attention_backend="sdpa", device="cpu")
    for prompt in ([5, 6, 7], [9, 10], [11, 12, 13, 14]):
        engine.add_request(prompt, SamplingParams(max_tokens=8))
    for _ in range(3):
        engine.step()                          # admitted, prefilled, decoding
    path = follow_one_step(engine)
    # The model runs behind one call to the executor.
    assert [(f, fn) for f, fn in path if f.startswith("executors/")] == \
        [("executors/plain.py", "execute")]
    path = [(f, fn) for f, fn in path if not f.startswith("executors/")]
    files = [file for file, _ in path]
    assert {f for f, function in path if function == "step"} == {"llm.py", "stages/iteration.py"}
    # The front door; stages 4-5's scheduler and step; where stage 5's K/V live; what
    # every stage shares (handing out tokens, the sampler).
    assert set(files) == {"llm.py", "stages/iteration.py", "stages/paged.py", "stages/base.py"}
    switches = sum(a != b for a, b in zip(files, files[1:]))
    assert switches <= 19, path                # a ratchet: it was 35, across 8 files, before stages 4-5 split


def trace_a_request(engine: LLMEngine) -> list[tuple[str, str]]:
    """(file, qualified function) of every engine function one request's life
    reaches, from add_request to its last step, in the order first met."""
    seen, order = set(), []

    def profile(frame, event, arg):
        path = Path(frame.f_code.co_filename).resolve()
        if event != "call" or PACKAGE not in path.parents:
            return
        key = (str(path.relative_to(PACKAGE)), frame.f_code.co_qualname)
        if key not in seen:
            seen.add(key)
            order.append(key)

    sys.setprofile(profile)
    try:
        engine.add_request([5, 6, 7], SamplingParams(max_tokens=3))
        while engine.has_unfinished_requests():
            engine.step()
    finally:
        sys.setprofile(None)
    return order


def life_page_rows() -> list[tuple[str, str, str]]:
    """(label, file, function) of each station the appendix names."""
    page = (PACKAGE.parent / "lessons" / "request_life.md").read_text()
    return re.findall(r"^\| (\w+) \|[^|]*\| `([\w/.]+)` \| `([\w.]+)` \|$", page, flags=re.MULTILINE)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="co_qualname is Python 3.11's")
def test_the_life_of_a_request_page_follows_the_code(llama):
    rows = life_page_rows()
    cpu = [(file, function) for label, file, function in rows if label != "GPU"]
    assert len(cpu) == 23 and len(rows) == 26
    trace = trace_a_request(LLMEngine(llama, engine="paged", attention_backend="sdpa",
                                      device="cpu"))
    missing = [station for station in cpu if station not in trace]
    assert not missing, f"the page names stations a request never reaches: {missing}"
    positions = [trace.index(station) for station in cpu]
    assert positions == sorted(positions), "the page's stations are out of order"
    for label, file, function in rows:
        if label == "GPU":
            classes = {node.name: node for node in ast.walk(ast.parse((PACKAGE / file).read_text()))
                       if isinstance(node, ast.ClassDef)}
            owner, _, method = function.partition(".")
            assert method in {f.name for f in classes[owner].body if isinstance(f, ast.FunctionDef)}

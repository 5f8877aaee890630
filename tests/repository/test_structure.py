"""One idea per stage, checked: what a reader meets when following a step, and
which file may speak of which idea."""
import ast
import re
import sys
from functools import cache
from pathlib import Path

import pytest

from minicb import LLMEngine, SamplingParams
from minicb.stages.iteration import IterationEngine
from minicb.stages.continuous import ContinuousEngine
from minicb.stages.paged import PagedEngine

PACKAGE = Path(__file__).resolve().parents[2] / "minicb"
KERNELS = Path(__file__).resolve().parents[2] / "kernels"

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
    # Stage 4's own: how big a slot is (chapter 11 quotes it) and which hole it takes
    # (chapter 4's exercise first_fit), both of which blocks make moot.
    shared = [a for a in anchors(continuous) if a not in ("slot_size", "first_fit")]
    assert [a for a in anchors(paged) if a in shared] == shared
    # Both engines build on the shared step; stage 5 does not inherit stage 4's layout.
    assert ContinuousEngine.__bases__ == PagedEngine.__bases__ == (IterationEngine,)
    for engine in (ContinuousEngine, PagedEngine):       # ... nor change how a step runs
        assert not {"step", "run_step", "launch", "prepare", "finish_step"} & set(vars(engine)), engine


def follow_one_step(engine: LLMEngine) -> list[tuple[str, str]]:
    """(file, function) of each engine function one LLMEngine.step() reaches,
    in the order a reader first meets them. The forward pass (the executor, the
    model, its layers' operations and the kernels they call) and the step log (observer.py) are not
    followed past the calls the step makes to them."""
    seen, order = set(), []

    def profile(frame, event, arg):
        if event != "call":
            return
        path = Path(frame.f_code.co_filename).resolve()
        if PACKAGE not in path.parents or path.name in ("model.py", "layer_ops.py"):
            return                             # the model, its layers' operations
        if frame.f_back.f_code.co_filename == frame.f_code.co_filename and \
                (path.parent.name == "executors" or path.name == "observer.py"):
            return                             # inside the executor, or the step log
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
    # The model runs behind one call to the executor, which the step log times.
    assert [(f, fn) for f, fn in path if f.startswith("executors/")] == \
        [("executors/plain.py", "execute")]
    # The step log watches from outside: it starts its clock, times the forward
    # pass, and takes the step's report.
    assert [(f, fn) for f, fn in path if f == "observer.py"] == \
        [("observer.py", "stepping"), ("observer.py", "execute"), ("observer.py", "report")]
    path = [(f, fn) for f, fn in path if not f.startswith("executors/") and f != "observer.py"]
    files = [file for file, _ in path]
    assert {f for f, function in path if function in ("step", "run_step")} == \
        {"llm.py", "stages/base.py", "stages/iteration.py"}
    # The front door; stages 4-5's scheduler and step; where stage 5's K/V live; what
    # every stage shares (handing out tokens); the sampler.
    assert set(files) == {"llm.py", "stages/iteration.py", "stages/paged.py", "stages/base.py",
                          "sampling.py"}
    switches = sum(a != b for a, b in zip(files, files[1:]))
    assert switches <= 20, path     # a ratchet: it was 35 across 8 files before stages 4-5 split;
    # 19 until the sampler moved to sampling.py, where SamplingParams live


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
    assert len(cpu) == 26 and len(rows) == 29
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


# --- hooks: what an earlier idea's file holds only for a later idea ---

# Each file of an idea, in the book's order, and the last idea it serves: base.py
# holds what stages 1-5 share, iteration.py what stages 4-5 share. A later idea
# (prefix caching, async scheduling, CUDA graphs, tensor parallelism) builds on them.
IDEA = {"stages/base.py": 0, "executors/plain.py": 0, "stages/single.py": 1,
        "stages/static.py": 2, "stages/dynamic.py": 3, "stages/iteration.py": 4,
        "stages/continuous.py": 4, "stages/paged.py": 5, "stages/prefix_caching.py": 6,
        "stages/overlap.py": 7, "executors/cuda_graphs.py": 7, "executors/parallel.py": 9}
SERVES = {"stages/base.py": 5, "executors/plain.py": 9, "stages/iteration.py": 5}


@cache
def parsed(file: str) -> ast.Module:
    return ast.parse((PACKAGE / file).read_text())


def classes() -> dict[str, tuple[str, ast.ClassDef]]:
    """Every class of the ideas' files, by name: (its file, its node)."""
    return {node.name: (file, node) for file in IDEA for node in ast.walk(parsed(file))
            if isinstance(node, ast.ClassDef)}


def methods(node: ast.ClassDef) -> dict[str, ast.FunctionDef]:
    return {f.name: f for f in node.body if isinstance(f, ast.FunctionDef)}


def subclasses(name: str, table) -> list[str]:
    """Every class that inherits from ``name``, directly or not."""
    found, frontier = [], [name]
    while frontier:
        parent = frontier.pop()
        children = [c for c, (_, node) in table.items()
                    if parent in {b.id for b in node.bases if isinstance(b, ast.Name)}]
        found += children
        frontier += children
    return found


def body_without_docstring(function: ast.FunctionDef) -> list[ast.stmt]:
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return body


def names_used(tree) -> set[str]:
    return {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} | \
           {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def front_door() -> set[str]:
    """What the front door (llm.py) calls on a stage: an engine's interface, not
    a hook."""
    return names_used(ast.parse((PACKAGE / "llm.py").read_text()))


def hooks() -> list[str]:
    table, front = classes(), front_door()
    found = []
    for name, (file, node) in table.items():
        serves = SERVES.get(file, IDEA[file])
        for method, function in methods(node).items():
            overrides = [(table[c][0], methods(table[c][1])[method]) for c in subclasses(name, table)
                         if method in methods(table[c][1])]
            later = [(f, o) for f, o in overrides if IDEA[f] > serves]
            earlier_uses = [f for f in IDEA if IDEA[f] <= serves and method in names_used(parsed(f))]
            if not earlier_uses and method not in front and not method.startswith("__") and \
                    any(method in names_used(parsed(f)) for f in IDEA if IDEA[f] > serves):
                found.append(f"{file}: {name}.{method} is used only by later ideas")
            for parameter in [a.arg for a in function.args.args[1:]]:
                if parameter not in names_used(function) and \
                        any(parameter in names_used(o) for _, o in later):
                    found.append(f"{file}: {name}.{method}'s {parameter} is read only by "
                                 f"{', '.join(sorted({f for f, _ in later}))}")
            body = body_without_docstring(function)
            trivial = len(body) <= 1 and all(isinstance(s, (ast.Return, ast.Pass, ast.Expr))
                                             for s in body)
            if trivial and later and len(later) == len(overrides) and method not in front \
                    and method not in protocol(table, serves):
                found.append(f"{file}: {name}.{method} exists to be overridden by "
                             f"{', '.join(sorted({f for f, _ in later}))}")
    return found


def protocol(table, serves: int) -> set[str]:
    """Methods two or more classes of the ideas up to ``serves`` define: a
    protocol those ideas already fill in several ways (the KV managers'
    can_allocate, allocate, free, ...), not a hook."""
    counts = {}
    for file, node in table.values():
        if IDEA[file] <= serves:
            for method in methods(node):
                counts[method] = counts.get(method, 0) + 1
    return {m for m, n in counts.items() if n >= 2}


def class_attributes(node: ast.ClassDef) -> set[str]:
    return {t.id for s in node.body if isinstance(s, ast.Assign)
            for t in s.targets if isinstance(t, ast.Name)}


def class_attribute_hooks() -> list[str]:
    """A class attribute that an earlier idea introduces and only later ideas'
    classes set (one that several classes of its own ideas set is a protocol)."""
    table, found = classes(), []
    for name, (file, node) in table.items():
        serves = SERVES.get(file, IDEA[file])
        inherited = {a for c, (_, other) in table.items() if name in subclasses(c, table)
                     for a in class_attributes(other)}
        shared = [a for _, other in (v for v in table.values() if IDEA[v[0]] <= serves)
                  for a in class_attributes(other)]
        for attribute in class_attributes(node) - inherited:
            setters = [table[c][0] for c in subclasses(name, table)
                       if attribute in class_attributes(table[c][1])]
            if setters and all(IDEA[f] > serves for f in setters) and shared.count(attribute) < 2:
                found.append(f"{file}: {name}.{attribute} is set only by {', '.join(sorted(set(setters)))}")
    return found


def test_no_earlier_idea_holds_a_hook_for_a_later_one():
    """A hook: a method of an earlier idea's file that only a later idea calls, a
    parameter only a later idea's override reads, or a one-line method that only
    later ideas override (without them it would be written inline)."""
    found = hooks() + class_attribute_hooks()
    assert not found, "\n".join(found)


def metadata_fields() -> set[str]:
    """The fields of every stage's attention metadata: the dataclasses in
    minicb/stages/ that declare a tensor's rows (minicb/attention.py's rows)."""
    import dataclasses
    import importlib
    import inspect

    names = set()
    for path in sorted((PACKAGE / "stages").glob("*.py")):
        module = importlib.import_module(f"minicb.stages.{path.stem}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            fields = dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else ()
            if any("rows" in f.metadata for f in fields):
                names |= {f.name for f in fields}
    return names


def kernel_names() -> set[str]:
    """Every function the kernels' files define, and every name attention_ops hands out."""
    from minicb.attention import KERNEL_NAMES

    kernels = PACKAGE.parent / "kernels"
    return set(KERNEL_NAMES) | {node.name for path in kernels.glob("*.py")
                                for node in ast.parse(path.read_text()).body
                                if isinstance(node, ast.FunctionDef)}


# The metadata's contract (minicb/attention.py's rows): every class has these two.
CONTRACT = {"ops", "max_query_len"}
GUESSING_CALLS = {"hasattr", "isinstance"}          # probing a step instead of reading it
GUESSING_ATTRIBUTES = {"ndim", "dim", "engine"}     # a tensor's rank, the stage's name


def test_the_graph_executor_names_no_kernel_cache_or_field_and_guesses_nothing():
    """cuda_graphs.py pads and replays a step from the kinds of rows its metadata's
    fields declare: in its code (its syntax tree, not its comments) no name, string or
    keyword is a kernel, a cache or a field of a stage's metadata, and nothing probes
    a step (hasattr, isinstance, a tensor's rank, the engine's name). Planted: reading
    attn.block_size, or attn.ops.paged_attention_tiles, fails here."""
    forbidden = (metadata_fields() | kernel_names()) - CONTRACT
    assert {"k_cache", "seq_lens", "block_tables", "paged_attention_tiles"} <= forbidden
    tree = ast.parse((PACKAGE / "executors" / "cuda_graphs.py").read_text())
    found = []
    for node in ast.walk(tree):
        name = {ast.Attribute: lambda n: n.attr, ast.Name: lambda n: n.id, ast.keyword: lambda n: n.arg,
                ast.Constant: lambda n: n.value if isinstance(n.value, str) else None,
                }.get(type(node), lambda n: None)(node)
        called = node.func.id if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else None
        if name in forbidden or called in GUESSING_CALLS or (
                isinstance(node, ast.Attribute) and node.attr in GUESSING_ATTRIBUTES):
            found.append(f"line {node.lineno}: {name or called}")
    assert not found, f"cuda_graphs.py names or guesses: {found}"

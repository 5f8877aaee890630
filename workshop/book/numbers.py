"""Every measured number a reader sees comes from the run that measured it.

In the book's chapters, the README and the notebooks' markdown cells, a measured
number is written between two markers that say where it comes from, and the text
between them is what this module renders there::

    paged batching reached <!--m gpu/07_throughput_vs_spread .2f
    median_ratio_to_static["1536"]["paged"]-->4.89<!--/m--> times static's

The first word names a figure's sidecar (``figures/gpu/07_throughput_vs_spread.json``),
the second is a Python format spec (``,`` for thousands, ``.1%`` for a share), and
the rest is an expression over the sidecar: its top-level keys are names in it,
and ``sidecar`` is the whole. HTML comments show on no page, on a code-hosting
site nor in the built book, so the raw markdown and the rendered page read the
same. ``python -m workshop.book.numbers render`` writes every marked number from
its sidecar (``make numbers``); ``check`` says where a number differs from its
source, which a test runs.

A number that is not measured is read where it is set: the engine's code
(``code/config``), a test file (``tests/stages/test_5_paged``), a notebook's code
(``notebooks/11_simulated``), or a worked example the text sets once
(``<!--example NAME: ...-->``, read by ``example/NAME``). A figure published elsewhere
says where, as a label of the references chapter
(``<!--cited anyscale-->23x<!--/cited-->``), and the references chapter lists what the
book quotes from each. ``accounted.py`` finds every number that is none of these.
"""
import argparse
import ast
import contextlib
import importlib
import json
import math
import re
import statistics
import sys
from pathlib import Path

from minicb.llm import LLM
from workshop.report.scale import project_root
from minicb.tools.bench.workload import preset_workload, synthetic_workload

MARKED = re.compile(r"<!--m\s+(?P<spec>.+?)-->(?P<value>.*?)<!--/m-->", re.S)
# A block of a program's output, copied from the file a run saved it in (figures/...).
# Its body never runs past its own closing fence, empty or not.
OUTPUT = re.compile(r"<!--output (?P<source>\S+)-->\n```[^\n]*\n(?P<body>(?:(?!```).)*?)\n?```", re.S)
# A number's source, defined once and named, for markers that give only the name.
DEFINED = re.compile(r"<!--number (?P<name>[\w-]+): (?P<spec>.+?)-->", re.S)
# A worked example's inputs, set once where the text sets them, each a literal or a
# sum over those before it; markers (<!--m example/NAME FORMAT EXPRESSION-->) render
# each input and each number that follows from them, so arithmetic is checked too.
EXAMPLE = re.compile(r"<!--example (?P<name>[\w-]+): (?P<body>.+?)-->", re.S)
# A figure published elsewhere, with the label of its reference.
DECLARED = re.compile(r"<!--(?P<kind>cited) (?P<what>[\w-]+)-->(?P<value>.*?)<!--/(?P=kind)-->", re.S)
NOTEBOOK_FILES = sorted(f"notebooks/{p.name}" for p in (project_root() / "notebooks").glob("*.ipynb"))
BOOK_FILES = ["README.md", *sorted(f"lessons/{p.name}" for p in (project_root() / "lessons").glob("*.md")),
              "notebooks/answers.md"]


def sidecar(name: str) -> dict:
    """figures/NAME.json, read once per process; profiles/NAME is a profile fitted to
    a GPU run (minicb/profiles/NAME.json, which names that run's commit); code/MODULE
    is an input read where the engine keeps it, minicb.MODULE's names (code/config:
    EngineConfig.block_size is the default block size); tests/MODULE is what a test
    file sets at its top (tests/stages/test_5_paged: BLOCK_SIZES, the sizes it checks);
    notebooks/NAME is what a notebook's code sets to a literal (notebook_settings)."""
    if name.startswith("tests/") and name not in SIDECARS:
        SIDECARS[name] = module_names(project_root() / f"{name}.py")
    if name.startswith("notebooks/") and name not in SIDECARS:
        SIDECARS[name] = notebook_settings(project_root() / f"{name}.ipynb")
    if name.startswith("workshop/") and name not in SIDECARS:
        module = importlib.import_module(name.replace("/", "."))
        SIDECARS[name] = {k: v for k, v in vars(module).items() if not k.startswith("_")}
    if name.startswith("code/") and name not in SIDECARS:
        try:
            module = importlib.import_module(f"minicb.{name.removeprefix('code/').replace('/', '.')}")
        except ImportError as error:
            raise ValueError(f"no module for {name}: {error}") from None
        SIDECARS[name] = {k: v for k, v in vars(module).items() if not k.startswith("_")}
    if name not in SIDECARS:
        folder = "minicb" if name.startswith("profiles/") else "figures"
        path = project_root() / folder / f"{name}.json"
        try:
            SIDECARS[name] = json.loads(path.read_text())
        except OSError as error:
            raise ValueError(f"no sidecar {folder}/{name}.json ({error.strerror})") from None
    return SIDECARS[name]


SIDECARS: dict[str, dict] = {}


def module_names(path: Path) -> dict:
    """The public names a test file sets, imported as the tests package's module
    (tests/stages/test_5_paged is tests.stages.test_5_paged)."""
    if not path.exists():
        raise ValueError(f"no file {path.relative_to(project_root())}")
    if str(project_root()) not in sys.path:
        sys.path.insert(0, str(project_root()))
    module = importlib.import_module(".".join(path.relative_to(project_root()).with_suffix("").parts))
    return {k: v for k, v in vars(module).items() if not k.startswith("_")}


def notebook_settings(path: Path) -> dict:
    """What a notebook's code sets to a literal at the top level of a cell
    (``PAGED_SEQS = 256``, ``BATCHES = (1, 64)``): the settings its prose quotes."""
    if not path.exists():
        raise ValueError(f"no notebook {path.relative_to(project_root())}")
    settings = {}
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        for node in ast.parse("".join(cell["source"])).body:
            if isinstance(node, ast.Assign):
                with contextlib.suppress(ValueError):       # not a literal: a value the run computes
                    value = ast.literal_eval(node.value)
                    for target in node.targets:
                        names = target.elts if isinstance(target, ast.Tuple) else [target]
                        values = value if isinstance(target, ast.Tuple) else [value]
                        settings.update({n.id: v for n, v in zip(names, values) if isinstance(n, ast.Name)})
    return settings


def example(text: str, name: str) -> dict:
    """The inputs of the worked example NAME that the text sets (<!--example NAME:
    seqs=64; tokens=4096; cache=seqs*tokens*2-->), each computed from those before."""
    bodies = [m["body"] for m in EXAMPLE.finditer(text) if m["name"] == name]
    if len(bodies) != 1:
        raise ValueError(f"the example {name!r} is set {len(bodies)} times in this file, not once "
                         f"(<!--example {name}: NAME=VALUE; NAME=VALUE-->)")
    values = {}
    for part in filter(str.strip, bodies[0].split(";")):
        key, equals, expression = (p.strip() for p in part.partition("="))
        if not equals or not key.isidentifier():
            raise ValueError(f"the example {name!r}: {part.strip()!r} is not NAME=VALUE")
        try:
            values[key] = eval(" ".join(expression.split()), {"__builtins__": NAMES, **values})
        except Exception as error:
            raise ValueError(f"the example {name!r}: {key} = {expression!r} cannot be computed: {error}") from None
    return values


def value_of(source: str, spec: str, expression: str, text: str = "") -> str:
    """The text a marker renders: the expression over the sidecar (or over a worked
    example the text sets), formatted."""
    data = example(text, source.removeprefix("example/")) if source.startswith("example/") else sidecar(source)
    expression = " ".join(expression.split())     # it may wrap lines
    names = {k: v for k, v in data.items() if k.isidentifier()}
    try:
        # The sidecar's keys as globals: a generator expression inside sees them too.
        value = eval(expression, {"__builtins__": NAMES, **names, "sidecar": data})
    except Exception as error:         # a key that is not there, a typo in the expression
        raise ValueError(f"{source}: {expression!r} cannot be read: {type(error).__name__}: {error}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{source}: {expression!r} is {value}, not a number a reader can use")
    return format(value, spec)


def static_row_steps(workload: dict, batch_size: int, bucketed: bool = False) -> dict:
    """A static run's decode row-steps, from its sidecar's workload alone (the
    notebook asserts its run counted the same): ``wasted``, computed for a request
    that had already finished, of ``total``. A batch decodes until its longest
    request's last token; the first token of each comes from the prefill."""
    lengths = synthetic_workload(workload["num_requests"], as_length(workload["prompt_len"]),
                                 as_length(workload["output_len"]), seed=workload["seed"]).output_lens
    lengths = sorted(lengths) if bucketed else lengths
    batches = [lengths[i:i + batch_size] for i in range(0, len(lengths), batch_size)]
    return dict(wasted=sum(max(b) - n for b in batches for n in b),
                total=sum((max(b) - 1) * len(b) for b in batches))


def replayed(model: dict, workload: dict, options: dict, engine: str) -> dict:
    """A stage's run of a sidecar's preset workload, replayed on the simulated
    executor, which takes the real engine's steps (tests/executors/test_simulated.py): its
    counts (steps, occupancy, ...) are the run's, whatever machine ran it. Times
    are not: they are a prediction, and no marker quotes them from here."""
    key = json.dumps([model, workload, options, engine], sort_keys=True, default=str)
    if key not in REPLAYED:
        if "name" in workload:
            work = preset_workload(workload["name"], num_requests=workload["num_requests"], cap=workload["cap"],
                                   scale=workload["scale"], seed=workload["seed"])
        else:
            work = synthetic_workload(workload["num_requests"], as_length(workload["prompt_len"]),
                                      as_length(workload["output_len"]), seed=workload["seed"])
        settings = {k: v for k, v in options.items() if k != "dtype"}
        shape = f"tiny-{model['arch']}" if model["shape"] == "tiny" else model["shape"]
        llm = LLM(shape, engine=engine, executor="simulated", **settings)
        llm.generate(work.prompts, work.params)
        REPLAYED[key] = llm.last_run.summary()
    return REPLAYED[key]


REPLAYED: dict[str, dict] = {}


def as_length(spec):
    """A length as a sidecar keeps it (JSON has lists, not tuples) as workloads take it."""
    return tuple(spec) if isinstance(spec, list) else spec


def row(rows: list, **match) -> dict:
    """The one row of a sidecar's list whose fields are ``match``: row(rows, batch=64)."""
    found = [r for r in rows if all(r.get(k) == v for k, v in match.items())]
    if len(found) != 1:
        raise ValueError(f"{len(found)} rows have {match}")
    return found[0]


VERDICTS = {True: "held", False: "did not hold", None: "was not decided"}


def verdict(records: list, *claims: str) -> str:
    """What a run's judge said of its claims about time (minicb/tools/bench/claims.py),
    in words a sentence can carry: "held", "did not hold" or "was not decided" ("were",
    of several). records:
    a claims file's list of claims, or a sidecar's time_claims as the run printed them.
    Several claims share one verdict or are an error: a sentence must not say more of
    them than the run decided."""
    said = set()
    for claim in claims:
        found = [holds_of(record, claim) for record in records]
        found = [f for f in found if f != "absent"]
        if len(found) != 1:
            raise ValueError(f"the run records {len(found)} claims {claim!r}")
        said.add(found[0])
    if len(said) != 1:
        raise ValueError(f"the claims {claims} have different verdicts {sorted(map(str, said))}: name them apart")
    words = VERDICTS[said.pop()]
    return words.replace("was ", "were ") if len(claims) > 1 else words


def holds_of(record, claim: str):
    """True, False or None (not decided) if this record is the claim's; "absent" if not."""
    if isinstance(record, dict):
        return record["holds"] if record["claim"] == claim else "absent"
    if f": {claim} [" not in record:
        return "absent"
    return True if record.startswith("holds:") else None if record.startswith("not decided") else False


# What an expression may call: a few builtins, and the helpers above.
NAMES = {f.__name__: f for f in (min, max, sum, len, abs, round, sorted, int, float, next, dict,
                                 statistics.median, static_row_steps, row, replayed, verdict)}


def source_of(spec: str, text: str) -> tuple[str, str, str]:
    """(sidecar, format, expression) of a marker: written in it, or, where it gives
    a name alone, in that name's definition in the same text."""
    if re.fullmatch(r"[\w-]+", spec.strip()):
        definitions = {m["name"]: m["spec"] for m in DEFINED.finditer(text)}
        if spec.strip() not in definitions:
            raise ValueError(f"the number {spec.strip()!r} is defined nowhere in this file "
                             f"(<!--number {spec.strip()}: SIDECAR FORMAT EXPRESSION-->)")
        spec = definitions[spec.strip()]
    parts = spec.split(None, 2)
    if len(parts) < 3:
        raise ValueError(f"{spec!r} is not SIDECAR FORMAT EXPRESSION")
    return parts[0], parts[1], parts[2]


def rendered(text: str) -> str:
    """The text with every marked number written from its source, and every marked
    block of output copied from its file."""
    def write(m):
        head = m.group(0)[:m.start("value") - m.start()]
        return f"{head}{value_of(*source_of(m['spec'], text), text)}<!--/m-->"

    def copy(m):
        whole = m.group(0)
        return whole[:m.start("body") - m.start()] + saved_output(m["source"]) + "\n```"
    return OUTPUT.sub(copy, MARKED.sub(write, text))


def saved_output(source: str) -> str:
    path = project_root() / "figures" / source
    try:
        return path.read_text().strip("\n")
    except OSError as error:
        raise ValueError(f"no saved output figures/{source} ({error.strerror})") from None


def differences(text: str) -> list[str]:
    """Each marked number that is not what its source gives: "line N: wrote X, source gives Y"."""
    found = []
    for m in MARKED.finditer(text):
        try:
            want = value_of(*source_of(m["spec"], text), text)
        except ValueError as error:
            want = None
            found.append(f"line {line_of(text, m.start())}: {error}")
        if want is not None and m["value"] != want:
            source = source_of(m["spec"], text)[0]
            where = (f"minicb.{source.removeprefix('code/')}" if source.startswith("code/")
                     else f"{source}.py" if source.startswith(("tests/", "workshop/"))
                     else f"{source}.ipynb's code" if source.startswith("notebooks/")
                     else f"the example {source.removeprefix('example/')!r}" if source.startswith("example/")
                     else f"figures/{source}.json")
            found.append(f"line {line_of(text, m.start())}: wrote {m['value']!r}, {where} gives {want!r}")
    for m in OUTPUT.finditer(text):
        if m["body"] != saved_output(m["source"]):
            found.append(f"line {line_of(text, m.start())}: the block is not what figures/{m['source']} "
                         "holds (python -m workshop.book.numbers render copies it)")
    return found


def malformed(text: str) -> list[str]:
    """Marker pieces that no whole marker holds: an opening with no close, a close with
    no opening, a number's name or source with no value between (a checker that cannot
    read a marker would let its number through unchecked); and comments that look like
    markers but are none, such as an input that names no source."""
    whole = [(m.start(), m.end()) for pattern in (MARKED, DECLARED) for m in pattern.finditer(text)]
    inside = lambda at: any(start <= at < end for start, end in whole)  # noqa: E731
    pieces = [(m.start(), m.group(0).strip()) for m in re.finditer(r"<!--m(?=\s)|<!--/m-->|<!--/?cited\b", text)]
    found = [f"line {line_of(text, at)}: {piece!r} belongs to no whole marker "
             f"(<!--m SOURCE FORMAT EXPRESSION-->value<!--/m--> or <!--cited LABEL-->value<!--/cited-->)"
             for at, piece in pieces if not inside(at)]
    return found + [f"line {line_of(text, m.start())}: {m.group(0)!r} is no marker: read the number where it "
                    "is set (code/, tests/, notebooks/ or example/)"
                    for m in re.finditer(r"<!--/?inputs?\b:?", text)]


# Paragraphs that speak of claims about time with no verdict to render, and why.
NO_VERDICT = {"Each order the notebook checks is one of its": "the H200 run stopped at this claim, so its sidecar "
              "records no verdict; figures/gpu/RUNS.md records that it did not hold, as the text says"}


def unjudged(text: str) -> list[str]:
    """Paragraphs that speak of a notebook's or a run's claims about time and carry
    no verdict rendered from that run (``verdict(...)``): such a sentence could say a
    claim held where its run did not decide it."""
    found = []
    for m in re.finditer(r"(?:[^\n]+\n?)+", text):
        paragraph = " ".join(m.group(0).split())
        for phrase in NO_VERDICT:        # the exempt sentence alone, not the paragraph around it
            paragraph = re.sub(re.escape(phrase) + r".*?\.(?=\s|$)", " ", paragraph)
        speaks = re.search(r"\bnotebook (?:checks|claims|asserts|leaves)\b|\bits \[?claims about time", paragraph)
        if "claims about time" in paragraph and speaks and "verdict(" not in paragraph:
            found.append(f"line {line_of(text, m.start())}: {paragraph[:80]}...")
    return found


# A verdict in words: what only a rendered verdict(...) may say of a run's claim.
HAND_VERDICT = re.compile(r"\b(?:(?:a |the )?claims? (?:that )?(?:held|holds|did not hold)|could not decide|"
                          r"(?:left|leaves) (?:it |them |both |its [\w ]+)?undecided|(?:was|were) not decided|"
                          r"(?:it|they|both|all \w+) held)\b")


def hand_typed_verdicts(text: str) -> list[str]:
    """Verdicts written by hand in prose, outside a marker: a rerun can reverse them
    unseen. The section that explains claims about time speaks of verdicts in general."""
    found, prose = [], blanked(text)
    for m in HAND_VERDICT.finditer(prose):
        heading = ([""] + re.findall(r"^#+ (.*)$", text[:m.start()], re.M))[-1]
        if heading != "Claims about time":
            found.append(f"line {line_of(text, m.start())}: {m.group(0)!r} by hand: render it with verdict(...)")
    return found


def misplaced(text: str) -> list[str]:
    """Markers that begin a line: markdown would take such a line for a block of
    HTML, and the paragraph around it would break. A word goes before it."""
    return [f"line {n}: a marker begins the line" for n, line in enumerate(text.splitlines(), 1)
            if re.match(r"\s*<!--(m |/m-->|input-->|/input-->|cited [\w-]+-->|/cited-->)", line)]


def unknown_citations(text: str) -> list[str]:
    """Cited numbers whose label is not a reference of the references chapter."""
    labels = set(re.findall(r'<span id="([^"]+)"></span>', (project_root() / "lessons" / "references.md").read_text()))
    cited = [(m.start(), m["value"], (m["what"] or "").strip()) for m in DECLARED.finditer(text) if m["kind"] == "cited"]
    unknown = [f"line {line_of(text, start)}: {value!r} cites {label!r}, which lessons/references.md "
               "does not define" for start, value, label in sorted(cited) if label not in labels]
    cited = [(start, v.strip(), label) for start, values, label in sorted(cited) if label in labels
             for v in values.split(";")]
    return unknown + [f"line {line_of(text, start)}: {value!r} is not among the numbers lessons/references.md says "
                      f"the book quotes from {label!r}" for start, value, label in cited
                      if not quoted(value, label)]


def quoted(value: str, label: str) -> bool:
    """Whether the references chapter lists this value among those the book quotes
    from that reference ("Quoted in this book: ..." under it), written any way:
    8x, 8×, 8 times."""
    text = (project_root() / "lessons" / "references.md").read_text()
    entry = re.search(rf'<span id="{re.escape(label)}"></span>(?:(?!<span id=).)*', text, re.S).group(0)
    said = "".join(re.findall(r"Quoted in this book:([^\n]*)", entry))
    return re.search(rf"(?<![\d.]){re.escape(plain(value))}(?!\.?\d)", plain(said)) is not None


def plain(text: str) -> str:
    """A number as the check compares it: 8×, 8x and 8 times alike, no spaces or commas."""
    text = re.sub(r"\s*(?:×|times\b)", "x", text)
    return re.sub(r"[\s,]", "", text)


def blanked(text: str) -> str:
    """The text with what is not prose made blank, line breaks kept (so that line
    numbers stay): code blocks and spans, markers with their numbers, comments,
    images and link targets."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    for pattern in (r"```.*?```", r"`[^`\n]*`", MARKED.pattern, DECLARED.pattern, DEFINED.pattern, r"<!--.*?-->",
                    r"!\[[^\]]*\]\([^)]*\)", r"\]\([^)]*\)", r"\{\{#.*?\}\}",
                    r"Quoted in this book:[^\n]*"):     # the references' record of what is cited
        text = re.sub(pattern, blank, text, flags=re.S)
    return text


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def markdown_of(path: Path) -> str:
    """What a reader reads in a file: a notebook's markdown cells, one after another."""
    if path.suffix != ".ipynb":
        return path.read_text()
    cells = json.loads(path.read_text())["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def render_file(path: Path) -> bool:
    """Render a file's marked numbers in place (a notebook's cell by cell, its outputs
    untouched); whether anything changed."""
    if path.suffix != ".ipynb":
        text = path.read_text()
        new = rendered(text)
    else:
        text = path.read_text()
        notebook = json.loads(text)
        for cell in notebook["cells"]:
            if cell["cell_type"] == "markdown":
                cell["source"] = rendered("".join(cell["source"])).splitlines(keepends=True)
        new = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
    if new != text:
        path.write_text(new)
    return new != text


def main(argv=None):
    """python -m workshop.book.numbers render|check [FILE...]: write every marked
    number from its sidecar, or say where one differs (exit 1)."""
    parser = argparse.ArgumentParser(prog="python -m workshop.book.numbers", description=main.__doc__)
    parser.add_argument("command", choices=["render", "check"])
    parser.add_argument("files", nargs="*", default=BOOK_FILES + NOTEBOOK_FILES)
    args = parser.parse_args(argv)
    problems = []
    for name in args.files:
        path = project_root() / name
        text = markdown_of(path)
        try:
            if args.command == "render":
                if render_file(path):
                    print(f"{name}: rendered")
            else:
                # a notebook's markdown says what it will check; its outputs print the verdicts
                judged = [] if name.endswith(".ipynb") else unjudged(text) + hand_typed_verdicts(text)
                problems += [f"{name}: {p}" for p in differences(text) + misplaced(text) + malformed(text)
                             + unknown_citations(text) + judged]
        except ValueError as error:
            problems.append(f"{name}: {error}")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

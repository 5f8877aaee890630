"""Every number a reader sees is accounted for: default deny.

``numbers.py`` renders and checks the numbers that carry a marker. This module
finds every other number a reader sees, in prose, tables, captions, alt text,
inline code, hand-written code blocks and HTML comments, in the chapters, the
README, ``notebooks/answers.md`` and the notebooks' markdown cells, and says which
rule lets it stand:

- ``rendered``: inside a marker (``<!--m ...-->4.89<!--/m-->``) or a block of
  saved output (``<!--output ...-->``), written from its source;
- ``declared``: inside ``<!--cited LABEL-->``, a figure published elsewhere, which
  the references chapter lists; or in a comment that sets where a marker reads (a
  worked example's inputs, ``<!--example NAME: ...-->``, or a number's definition,
  ``<!--number NAME: ...-->``), which a reader does not see;
- ``quoted``: in the references chapter, what the book quotes from a reference
  (``Quoted in this book: ...``), which each citation is checked against;
- ``listing``: a code listing included from a file (``{{#include ...}}``);
- ``code``: inline code that is code (a name, a flag, a call), not a bare number, and
  a block of Python or shell a reader runs (the README's are run by its tests); a
  block of output has no language and no such pass;
- ``name``: digits that are part of a name (H200, fp16, sm_90, Llama-3.1-8B, a
  commit such as 48dfbf1, a model size such as 8B, a model's generation as in Llama
  3.2, a notebook's name as in 01_single, a width as in 16-bit, a venue's year as in
  OSDI '22, an HTTP error status as in a 413 or a 4xx);
- ``reference``: a chapter's, stage's, notebook's, section's, exercise's, rank's,
  slot's, station's, round's or part's number, in words, as a link's text to a chapter, or as a row's
  label under a header that names it;
- ``formula``: a number in a formula over a letter (n²/2, step N+1);
- ``date``: a day in a date (20 June 2023);
- ``version``: a version (torch 2.13.0, Triton 3.6);
- ``year``: a year in the references chapter;
- ``link``: a link's target;
- ``list``: an ordered list's number.

A number no rule lets through is an error that names it, its line and its file:
``python -m workshop.book.accounted check`` (which a test runs) lists them, and
``report FILE`` lists each number of a file with its rule, for a reviewer to read
the exemptions.
"""
import argparse
import ast
import contextlib
import http
import re
import sys

from workshop.report.scale import project_root
from workshop.book.numbers import (BOOK_FILES, DECLARED, DEFINED, EXAMPLE, MARKED, NAMES, NOTEBOOK_FILES, OUTPUT, example,
                                   line_of, markdown_of, sidecar, source_of)

NUMBER = re.compile(r"(?<![\w.,])\d+(?:,\d{3})*(?:\.\d+)*(?:\s*(?:[xX×%]|-fold\b))?")
# A number spelled out, with a unit that makes it a measurement: "five times", "83 percent".
SPELLED = re.compile(r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|"
                     r"fifty|hundred|thousand|twice|thrice)(?:[\s-]+(?:times|fold|percent)\b)", re.I)
UNIT_AFTER = re.compile(r"(?:[xX×%]|ms|µs|us|ns|s|[KMGT]i?B|k|K|fold)\b")
REFERENCE_BEFORE = re.compile(r"(?:\b(?:[Cc]hapters?|[Ss]tages?|[Nn]otebooks?|[Ss]ections?|[Ee]xercises?|"
                              r"[Ff]igures?|[Ss]tations?|[Rr]anks?|[Ss]lots?|[Rr]ounds?|[Pp]arts?)[\s-]+(?:\d+(?:\s*(?:,|and|or|to|-|–)\s*))*)\Z")
VERSION_BEFORE = re.compile(r"\b(?:torch|PyTorch|Triton|triton|transformers|Python|CUDA|mdBook|mdbook|numpy|"
                            r"Debian|version|fastapi|uvicorn)\s+\Z")
# Spans whose numbers a rule covers whole.
SPANS = [("rendered", MARKED), ("rendered", OUTPUT), ("declared", DECLARED),
         ("declared", DEFINED), ("declared", EXAMPLE), ("listing", re.compile(r"\{\{#.*?\}\}")),
         ("quoted", re.compile(r"Quoted in this book:[^\n]*")),
         ("code", re.compile(r"^```(?:python|bash|sh|shell)\n.*?^```", re.S | re.M)),
         ("link", re.compile(r"\]\([^)]*\)|<https?://[^>]*>|<span id=\"[^\"]*\"></span>|\(#[\w-]+\)"))]
INLINE_CODE = re.compile(r"`[^`\n]+`")
HTTP_ERRORS = {s.value for s in http.HTTPStatus if s.value >= 400}
# What follows a status in a sentence: a stop, or a word that is not what it counts.
HTTP_AFTER = r"\s*(?:[,.;:)]|\Z|\s(?:in|at|or|and|goes|is|rather|with|from|before|when|error|response|naming)\b)"


def accounting(text: str, name: str = "") -> list[tuple[int, str, str]]:
    """(line, number, rule) for every number in the text; rule None where no rule
    lets it through."""
    covered = []                                  # (start, end, rule)
    for rule, pattern in SPANS:
        covered += [(m.start(), m.end(), rule) for m in pattern.finditer(text)]
    for m in INLINE_CODE.finditer(text):
        if not re.fullmatch(r"`\s*[\d.,]+\s*\w*\s*%?\s*`", m.group(0)):    # a bare number in code type is a number
            covered.append((m.start(), m.end(), "code"))
    found = []
    for pattern in (NUMBER, SPELLED):
        for m in pattern.finditer(text):
            rule = next((r for start, end, r in covered if start <= m.start() < end), None)
            if rule is None and pattern is NUMBER:
                rule = context_rule(text, m, name)
            found.append((m.start(), line_of(text, m.start()), m.group(0).strip(), rule))
    return [(line, number, rule) for _, line, number, rule in sorted(found)]


def context_rule(text: str, m: re.Match, name: str) -> str | None:
    """The rule that the words around a number give it, if any."""
    before, after = text[max(0, m.start() - 40):m.start()], text[m.end():m.end() + 12]
    number = m.group(0)
    if re.search(r"[A-Za-z_]-?\Z|\^-?\Z", before) and not re.search(r"(?:^|\s)[A-Za-z]-\Z", before):
        return "name"                            # H200, fp16, sm_90, Llama-3.1, e^-0.25
    if re.match(r"[A-Za-z]", after) and not UNIT_AFTER.match(after) and not re.search(r"[xX×%]$", number):
        return "name"                            # 8B, 135M, 48dfbf1, 3rd
    if re.match(r"_\w|-bit\b", after) or (before.endswith("'") and re.fullmatch(r"\d\d", number)):
        return "name"                            # 01_single (a notebook), 16-bit, OSDI '22
    if (re.fullmatch(r"[45]x", number) and after.startswith("x")) or (
            number.isdigit() and int(number) in HTTP_ERRORS and re.match(HTTP_AFTER, after)):
        return "name"                            # a 4xx, a 413: an HTTP status, not a count of things
    if re.search(r"\b[A-Za-z][²³]?[-+*/]\Z", before):
        return "formula"                         # n²/2, step N+1
    if re.search(r"\[\Z", before) and re.match(r"\]\(\d\d_[\w-]+\.md", after + text[m.end() + 12:m.end() + 40]):
        return "reference"                       # [3](03_dynamic.md): a link to a chapter, by its number
    if table_label(text, m.start()):
        return "reference"                       # | 3 | under a header | stage |: a row's label
    if re.match(r"\s(?:January|February|March|April|May|June|July|August|September|October|November|"
                r"December)\b", after) and re.fullmatch(r"\d{1,2}", number):
        return "date"
    if re.search(r"\b(?:Llama|Qwen|Mistral|SmolLM|GPT)\s\Z", before) and re.fullmatch(r"\d+(?:\.\d+)?", number):
        return "name"                            # Llama 3.2: a model's family and generation
    if REFERENCE_BEFORE.search(before) and re.fullmatch(r"\d{1,2}", number):
        return "reference"
    if (VERSION_BEFORE.search(before) and re.fullmatch(r"\d+(?:\.\d+)*", number)) or \
            re.fullmatch(r"\d+\.\d+\.\d+", number):
        return "version"
    if name.endswith("references.md") and re.fullmatch(r"(?:19|20)\d\d", number):
        return "year"
    if re.fullmatch(r"\d+", number) and re.search(r"(?:^|\n)(?:#+ )?[ \t]*\Z", before) and after.startswith(". "):
        return "list"                            # 1. an item; ## 1. a numbered section
    return None


def table_label(text: str, at: int) -> bool:
    """Whether the number at ``at`` stands alone in a table row's first cell, under a
    header whose first cell names what it counts (stage, station, step, #)."""
    start = text.rfind("\n", 0, at) + 1
    if not re.match(r"\|\s*\d+\s*\|", text[start:]) or not text[start:at].strip() == "|":
        return False
    above = text[:start].splitlines()
    rows = []
    while above and above[-1].startswith("|"):
        rows.append(above.pop())
    header = rows[-1] if rows else "|"
    return header.strip("|").split("|")[0].strip().lower() in ("stage", "station", "step", "#")


def reader_text(name: str) -> str:
    return markdown_of(project_root() / name)


def unaccounted(name: str) -> list[str]:
    """Each number of a file that no rule lets through, with its line."""
    return [f"{name}:{line}: {number!r} has no source (render it from where it is set, cite it, "
            f"or say why a rule should let it through)"
            for line, number, rule in accounting(reader_text(name), name) if rule is None]


def ambiguous(text: str) -> list[str]:
    """Markers that read a field whose value a sibling field shares (step_ms and
    compute_ms both 213): had the marker read the wrong one, nothing would differ. Such
    a number is given by a name (<!--number NAME: ...-->) that carries a word of its own
    field which the siblings' keys lack, so that the name says which field is meant."""
    found = []
    for m in MARKED.finditer(text):
        source, spec, expression = source_of(m["spec"], text)
        container, key = split_subscript(expression)
        siblings = [k for k, v in fields(source, container, text).items()
                    if k != key and isinstance(v, (int, float, str)) and formats_as(v, spec, m["value"])]
        if not siblings:
            continue
        own = key_words(key) - set().union(*map(key_words, siblings))
        name = m["spec"].strip() if re.fullmatch(r"[\w-]+", m["spec"].strip()) else ""
        if not own & key_words(name):
            found.append(f"line {line_of(text, m.start())}: {m['value']!r} reads {key!r}, whose value "
                         f"{siblings[0]!r} shares: give it a name that says which "
                         f"(<!--number NAME-{'-'.join(sorted(own)) or 'WHICH'}: ...-->)")
    return found


def split_subscript(expression: str) -> tuple[str, object]:
    """An expression that ends in a constant subscript (X["key"]), as (X, key); else ("", None)."""
    try:
        tree = ast.parse(" ".join(expression.split()), mode="eval").body
    except SyntaxError:
        return "", None
    if isinstance(tree, ast.Subscript) and isinstance(tree.slice, ast.Constant):
        return ast.unparse(tree.value), tree.slice.value
    return "", None


def fields(source: str, container: str, text: str) -> dict:
    """The dict a marker's expression subscripts, or {} if it is none."""
    if not container:
        return {}
    data = example(text, source.removeprefix("example/")) if source.startswith("example/") else sidecar(source)
    names = {k: v for k, v in data.items() if k.isidentifier()}
    with contextlib.suppress(Exception):      # a container the expression builds as it goes
        found = eval(container, {"__builtins__": NAMES, **names, "sidecar": data})
        return found if isinstance(found, dict) else {}
    return {}


def formats_as(value, spec: str, written: str) -> bool:
    try:
        return format(value, spec) == written
    except (TypeError, ValueError):
        return False


def key_words(key) -> set[str]:
    """The words of a key or a name: step_ms, "paged cap 32" and wide-1-step alike."""
    return set(re.findall(r"[a-z]+|\d+", str(key).lower()))


def main(argv=None):
    """python -m workshop.book.accounted check|report [FILE...]: every number that
    no rule lets through, and every marker that could mean a sibling field (exit 1 if
    any), or each number with its rule."""
    parser = argparse.ArgumentParser(prog="python -m workshop.book.accounted", description=main.__doc__)
    parser.add_argument("command", choices=["check", "report"])
    parser.add_argument("files", nargs="*", default=BOOK_FILES + NOTEBOOK_FILES)
    args = parser.parse_args(argv)
    if args.command == "report":
        for name in args.files:
            for line, number, rule in accounting(reader_text(name), name):
                print(f"{name}:{line}: {number!r}: {rule or 'NO SOURCE'}")
        return 0
    problems = [p for name in args.files for p in unaccounted(name)]
    problems += [f"{name}: {p}" for name in args.files for p in ambiguous(reader_text(name))]
    print(*problems, sep="\n", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

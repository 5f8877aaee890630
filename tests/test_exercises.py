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
from minicb.tools.exercises import (EXERCISES, CheckFailed, check, engine_function, load_stub,
                                    progress, swapped_in)


@pytest.mark.parametrize("name", EXERCISES)
def test_the_engines_own_code_passes_its_check(llama, name):
    assert check(name, engine_function(EXERCISES[name]), llama).startswith(f"{name}: passed")


@pytest.mark.parametrize("name", EXERCISES)
def test_each_stub_fails_saying_it_is_not_written_and_where(llama, name):
    ex = EXERCISES[name]
    with pytest.raises(CheckFailed, match=f"{name}: not written yet. Write {ex.function_name} in "
                                          f".*notebooks/exercises/{name}.py"):
        check(name, load_stub(ex), llama)


def test_each_exercise_covers_chapters_1_to_6_at_least_twice():
    chapters = [e.chapter for e in EXERCISES.values()]
    assert len(chapters) >= 12 and all(chapters.count(c) >= 2 for c in range(1, 7))


def admit_skipping_the_head(self, budget):
    """Wrong: a request that does not fit is skipped, so later ones overtake it."""
    if not self.admission_open():
        return []
    admitted = []
    for request in list(self.waiting):
        if len(self.running) >= self.config.max_num_seqs:
            break
        n = self.reserve(request, budget)
        if n:
            self.waiting.remove(request)
            self.running.append(request)
            admitted.append((request, n))
            budget -= n
    return admitted


def allocate_without_taking(self, request, num_tokens):
    """Wrong: blocks are handed out but stay on the free list."""
    table = self.block_tables.setdefault(request, [])
    while len(table) < self.blocks_for(num_tokens):
        table.append(self.free_blocks[len(table) % len(self.free_blocks)])


def cache_rows_off_by_one(self, request, start, count):
    table, size = self.block_tables[request], self.block_size
    return [table[p // size] * size + (p + 1) % size for p in range(start, start + count)]


def tpot_over_all_tokens(self):
    return (self.finish_time - self.first_token_time) / self.num_output_tokens


def next_batch_ignoring_time(self):
    if len(self.waiting) < self.config.max_batch_size:
        return []
    return [self.waiting.popleft() for _ in range(self.config.max_batch_size)]


@pytest.mark.parametrize("name,function,message", [
    ("admission", admit_skipping_the_head,
     r"admission: step \d+ differs. The engine's own code ran a \w+ step of requests \[.*\]"
     r" \(\d+ tokens fed, \d+ KV token slots held\); with yours it ran"),
    ("block_allocation", allocate_without_taking,
     r"block_allocation: after step 1: blocks \[.*\] are given out twice"),
    ("slot_mapping", cache_rows_off_by_one,
     r"slot_mapping: request \d+ got \[.*\] \(length\); the engine's own code gives \[.*\] "
     r"\(length\): they part at output token \d+"),
    ("tpot", tpot_over_all_tokens, r"tpot: request \d+'s TPOT is 0.0\d+ s; the engine's own"),
    ("dynamic_window", next_batch_ignoring_time,
     r"dynamic_window: requests \['20', '21'\] were still unfinished 10 s after the last "
     "arrival: stranded"),
])
def test_a_wrong_answer_is_caught_where_it_goes_wrong(llama, name, function, message):
    with pytest.raises(CheckFailed, match=message):
        check(name, function, llama)


def test_an_error_in_a_students_function_is_named_as_theirs(llama):
    def broken(request, token):
        return request.params.no_such_field
    with pytest.raises(CheckFailed, match="stop_reason: your stop_reason raised AttributeError"):
        check("stop_reason", broken, llama)


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
    assert wrong.stdout.startswith("FAILED chunking (with enable_chunked_prefill=False): step")
    mine = run()                                  # the stubs as they come: nothing started
    assert mine.returncode == 0 and mine.stdout.splitlines()[-1] == f"0 of {len(EXERCISES)} passed, 0 failing"
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
    assert state["chunking"].startswith("FAILING: chunking (with enable_chunked_prefill=False): step")
    assert all(state[n] == "not started" for n in EXERCISES if n not in ("stop_reason", "chunking"))
    assert lines[-1] == f"1 of {len(EXERCISES)} passed, 1 failing"
    chapters = [int(line.split()[1]) for line in lines[:-1]]
    assert chapters == sorted(chapters)


def test_each_chapter_ends_with_its_exercises():
    lessons = Path(__file__).resolve().parents[1] / "lessons"
    for ex in EXERCISES.values():
        chapter = next(lessons.glob(f"0{ex.chapter}_*.md")).read_text()
        listed = chapter.split("\n## Exercises\n", 1)[-1]
        assert "\n## Exercises\n" in chapter and f"- `{ex.name}`:" in listed, ex.name
        assert (Path(__file__).resolve().parents[1] / "notebooks" / "exercises" /
                f"{ex.name}.py").is_file()


def test_each_notebook_is_course_material_and_links_its_exercises():
    linked = set()
    for path in sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[01]*.ipynb")):
        notebook = json.loads(path.read_text())["cells"]
        cells = ["".join(c["source"]) for c in notebook]
        # Saved from a run on a CPU (make notebook-outputs), so that it reads without running.
        printed = ["".join(o.get("text", "")) for c in notebook for o in c.get("outputs", [])]
        assert any("CPU scale | CPU: " in text for text in printed), path.name
        assert cells[1].startswith("## What you will learn") and "**Before you run it:**" in cells[1] \
            and "?" in cells[1], path.name
        assert cells[-1].startswith("## Try this"), path.name
        linked |= set(re.findall(r"\]\(exercises/(\w+)\.py\)", cells[-1]))
    assert linked == set(EXERCISES)

"""Run metrics equal what the request lengths imply, counted independently."""
from minicb import LLM, SamplingParams
from minicb.metrics import RunMetrics, StepRecord

from ..conftest import MAX_TOKENS, PROMPTS

GREEDY = [SamplingParams(max_tokens=n, ignore_eos=True) for n in MAX_TOKENS]


def test_summary_and_table_carry_every_engine(llama):
    from minicb.metrics import format_table

    runs = {}
    for engine in ["single", "static"]:
        llm = LLM(llama, engine=engine)
        llm.generate(PROMPTS, GREEDY)
        runs[engine] = llm.last_run
    table = format_table(runs).splitlines()
    assert table[0].split()[0] == "engine" and len(table) == 4
    assert table[2].split()[:3] == ["single", "5", str(sum(MAX_TOKENS))]
    assert runs["static"].summary()["steps"] < runs["single"].summary()["steps"]
    # Narrow: the columns that do not fit go to further tables, each led by the engine column.
    from minicb.metrics import BENCH_COLUMNS

    wide = format_table(runs, BENCH_COLUMNS)
    narrow = format_table(runs, BENCH_COLUMNS, max_width=60)
    assert max(map(len, wide.splitlines())) > 60 and format_table(runs, BENCH_COLUMNS, max_width=None) == wide
    blocks = narrow.split("\n\n")
    assert len(blocks) > 1 and all(b.split()[0] == "engine" and len(b.splitlines()) == 4 for b in blocks)
    assert all(len(line) <= 60 for line in narrow.splitlines())
    headers = [h for b in blocks for h in b.splitlines()[0].split("  ") if h.strip() and h.strip() != "engine"]
    assert [h.strip() for h in headers] == [h for h, _, _ in BENCH_COLUMNS]    # every column, once, in order


def test_summary_gives_four_significant_digits():
    from minicb.metrics import rounded

    assert rounded(dict(wall_s=1.23456789, tok_s=98765.4321, steps=7, name="x")) == dict(
        wall_s=1.235, tok_s=98770.0, steps=7, name="x")


def test_kv_breakdown_shares_of_the_whole_cache_while_it_was_full():
    # Request a reaches 3 cached tokens in a slot of 4; b reaches 2 in a slot of 2.
    steps = [StepRecord("prefill", ["a"], 2, 4, 2, started=0.0, kv_held=[("a", 2, 4)]),
             StepRecord("mixed", ["a", "b"], 2, 6, 4, started=1.0, kv_held=[("a", 3, 4), ("b", 1, 2)]),
             StepRecord("decode", ["b"], 1, 2, 2, started=2.0, kv_held=[("b", 2, 2)])]
    run = RunMetrics.from_run([], steps, wall_time=3.0)
    assert run.kv_breakdown() == dict(used=8 / 12, reserved=2 / 12, never_used=2 / 12)
    # Of 3 steps x 10 slots: 8 used, 2 reserved for tokens to come, 2 never used, 18 free.
    assert run.kv_breakdown(capacity=10) == dict(used=8 / 30, reserved=2 / 30, never_used=2 / 30,
                                                 free=18 / 30)
    # The first two steps only; b's final length still comes from the step after them.
    assert run.kv_breakdown(capacity=10, until=1.5) == dict(used=6 / 20, reserved=2 / 20,
                                                            never_used=2 / 20, free=10 / 20)

"""Figures from CPU-scale runs never land in the committed figures/ folders."""
import json

import pytest

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from workshop.report import figures, redraw, scale  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    """Each test's figures closed after it: pyplot keeps every open one."""
    yield
    plt.close("all")


def draw():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    return fig



def figures_at(root, monkeypatch, full_scale):
    """Figures saved under ``root``, at full scale or not."""
    for module in (figures, scale):
        monkeypatch.setattr(module, "project_root", lambda: root)
    monkeypatch.setattr(scale, "full_scale", lambda: full_scale)

def test_cpu_scale_figures_go_to_scratch_with_a_sidecar(tmp_path, monkeypatch):
    figures_at(tmp_path, monkeypatch, full_scale=False)
    png = figures.save_figure(draw(), "example", dict(model="tiny", workload=dict(n=3)))
    assert png == tmp_path / "scratch" / "figures" / "example.png" and png.is_file()
    sidecar = json.loads(png.with_suffix(".json").read_text())
    assert sidecar["model"] == "tiny" and sidecar["workload"] == {"n": 3}
    assert {"torch", "triton", "transformers", "date", "gpu", "machine"} <= set(sidecar)
    assert sidecar["scale"] == "CPU scale" and sidecar["machine"].startswith("CPU ")
    assert not (tmp_path / "figures").exists()


def test_a_sidecar_says_which_executor_each_stage_ran_on(tmp_path, monkeypatch, llama):
    from minicb import LLM
    figures_at(tmp_path, monkeypatch, full_scale=False)
    monkeypatch.setattr("minicb.executors.BUILT", {})
    LLM(llama, engine="static")
    LLM(llama, engine="paged", attention_backend="reference")
    png = figures.save_figure(draw(), "example", {})
    executors = json.loads(png.with_suffix(".json").read_text())["executors"]
    assert executors == {"paged": ["Executor (reference attention, eager)"],
                         "static": ["Executor (sdpa attention, eager)"]}


def test_the_figure_itself_names_its_machine_model_and_scale(tmp_path, monkeypatch):
    figures_at(tmp_path, monkeypatch, full_scale=False)
    fig = draw()
    figures.save_figure(fig, "example", dict(model=dict(arch="llama", shape="tiny", dtype="float32")))
    line, header = [t.get_text() for t in fig.texts]
    assert line.startswith(f"{figures.machine()} | llama tiny float32 | CPU scale | ")
    assert header == f"{figures.machine()}, CPU scale"                    # above it, where a reader looks first
    top = max(ax.get_tightbbox().y1 for ax in fig.axes)
    assert fig.texts[1].get_window_extent().y0 >= top                     # the title area, not the footer


def test_a_legend_over_the_data_and_letters_too_small_are_refused(tmp_path, monkeypatch):
    """The layout check finds what a reader could not read: a key drawn over the bars
    it explains, and letters under 4.5 px tall once the book's column shrinks the PNG."""
    monkeypatch.setenv("MINICB_FIGURES_DIR", str(tmp_path))
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.barh(["single", "static"], [0.73, 0.49], label="holding a token")
    ax.barh(["single", "static"], [0.27, 0.51], left=[0.73, 0.49], color="lightgray", label="reserved, empty")
    ax.legend(loc="lower right")
    with pytest.raises(ValueError, match="the legend over the data of 'a panel'"):
        figures.save_simulated_figure(fig, "covered", "h100-sxm", "llama-3.1-8b", {})
    ax.get_legend().remove()
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2)      # under the axis: nothing covered
    figures.save_simulated_figure(fig, "uncovered", "h100-sxm", "llama-3.1-8b", {})
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot([1, 2, 3], [1, 4, 9])
    ax.set_title("a title in 5-point type", fontsize=5)
    with pytest.raises(ValueError, match=r"its smallest letters are 4.\d px tall in the book"):
        figures.save_simulated_figure(fig, "small", "h100-sxm", "llama-3.1-8b", {})


def test_make_figures_cpu_writes_the_committed_cpu_folder(tmp_path, monkeypatch):
    figures_at(tmp_path, monkeypatch, full_scale=False)
    monkeypatch.setenv("MINICB_FIGURES_DIR", "figures/cpu")
    png = figures.save_figure(draw(), "example", {})
    assert png == tmp_path / "figures" / "cpu" / "example.png"
    assert figures.sidecar_problems(png.parent, gpu=False) == []
    assert figures.sidecar_problems(png.parent) == ["example.json: names no GPU (gpu=None)"]


def test_full_scale_figures_go_to_figures_gpu(tmp_path, monkeypatch):
    figures_at(tmp_path, monkeypatch, full_scale=True)
    png = figures.save_figure(draw(), "example", {})
    assert png == tmp_path / "figures" / "gpu" / "example.png" and png.is_file()


def test_sidecar_check_finds_each_problem(tmp_path, monkeypatch):
    figures_at(tmp_path, monkeypatch, full_scale=True)
    monkeypatch.setattr(figures, "environment", lambda: dict(gpu="NVIDIA H100", cpu="x86_64", torch="2",
                                                             triton="3", transformers="5", date="2026-01-01"))
    folder = tmp_path / "figures" / "gpu"
    figures.save_figure(draw(), "good", {})
    assert figures.sidecar_problems(folder) == []
    figures.save_figure(draw(), "no_sidecar", {})
    (folder / "no_sidecar.json").unlink()
    figures.save_figure(draw(), "cpu_made", {})
    (folder / "cpu_made.json").write_text(json.dumps(dict(gpu=None, torch="2", triton="3", transformers="5",
                                                          date="2026-01-01")))
    figures.save_figure(draw(), "bare", {})
    (folder / "bare.json").write_text("{}")
    figures.save_figure(draw(), "no_commit", {})
    meta = json.loads((folder / "no_commit.json").read_text())
    (folder / "no_commit.json").write_text(json.dumps(meta | {"run": {"notebook": "01_single"}}))
    problems = figures.sidecar_problems(folder)
    assert len(problems) == 4
    assert any("no_commit.json: names no commit" in p for p in problems)
    assert any("no_sidecar.png: no sidecar" in p for p in problems)
    assert any("cpu_made.json: names no GPU" in p for p in problems)
    assert any("bare.json: missing" in p for p in problems)


def test_every_committed_figure_has_a_sidecar_naming_its_machine():
    folder = figures.project_root() / "figures"
    assert folder.is_dir()
    assert figures.sidecar_problems(folder / "gpu") == []
    assert figures.sidecar_problems(folder / "cpu", gpu=False) == []
    assert figures.simulated_sidecar_problems(folder / "simulated") == []


def test_every_committed_figure_reads_in_the_book():
    folder = figures.project_root() / "figures"
    for sub in (folder / "cpu", folder / "simulated", folder / "gpu"):
        assert figures.legibility_problems(sub) == []


def test_make_figures_cpu_saves_the_demo_s_figure_as_every_committed_one(llama, tmp_path, monkeypatch):
    """The demo that make figures-cpu runs (workshop.report.demo) saves its figure with
    its text's legibility measured, which the committed figures' test reads; minicb
    demo alone, which has no workshop, saves it plainly."""
    from minicb.tools.course import demo as course_demo
    from workshop.report import demo

    monkeypatch.setenv("MINICB_FIGURES_DIR", str(tmp_path))
    course_demo.run_demo(llama, questions=["one two", "three"], max_batch_size=2, max_tokens=3, save=demo.save)
    assert (tmp_path / "demo_schedules.png").is_file()
    assert figures.legibility_problems(tmp_path) == []
    course_demo.run_demo(llama, questions=["one two", "three"], max_batch_size=2, max_tokens=3)
    assert figures.legibility_problems(tmp_path) == [
        "demo_schedules.json: does not say how its text reads (saved before it did)"]


def test_legibility_measures_the_smallest_text_and_finds_overlaps(tmp_path, monkeypatch):
    monkeypatch.setenv("MINICB_FIGURES_DIR", str(tmp_path))
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot([0, 1], [1, 2])
    ax.set_xlim(0, 1)
    ax.set_xticks([0, 0.5, 1, 5])                 # a tick outside the view is not drawn
    ax.text(0.5, 1.5, "first note", fontsize=5)
    ax.text(0.5, 1.5, "second note", fontsize=12)
    with pytest.raises(ValueError, match="crowded.png: its layout does not read in the book .saved, to look at.: "
                                         "its smallest text shows 8.3 px tall in the book; its smallest letters "
                                         "are 4.2 px tall in the book; 'first note' over"):
        figures.save_simulated_figure(fig, "crowded", "a100-40gb", "opt-13b", {})
    png = tmp_path / "crowded.png"
    meta = json.loads(png.with_suffix(".json").read_text())
    assert meta["smallest_text_px"] == round(5 * figures.DPI / 72, 1) == 8.3
    assert meta["overlapping_text"] == ["'first note' over 'second note'"]
    assert meta["smallest_text_in_book_px"] == meta["smallest_text_px"]      # 6 in: not shrunk
    assert figures.legibility_problems(tmp_path) == [
        "crowded.png: its smallest text shows 8.3 px tall in the book",
        "crowded.png: its smallest letters are 4.2 px tall in the book",
        "crowded.png: 'first note' over 'second note'",
        "crowded.png: 'first note' over the data of 'a panel'",        # the notes lie on the line
        "crowded.png: 'second note' over the data of 'a panel'"]


def test_a_figure_wider_than_the_column_shrinks_with_its_text(tmp_path, monkeypatch):
    monkeypatch.setenv("MINICB_FIGURES_DIR", str(tmp_path))
    fig, ax = plt.subplots(figsize=(16, 3))
    ax.plot([0, 1], [1, 2])
    with pytest.raises(ValueError, match="wide.png: .*its smallest text shows"):
        figures.save_simulated_figure(fig, "wide", "a100-40gb", "opt-13b", {})
    meta = json.loads((tmp_path / "wide.json").read_text())
    assert meta["width_px"] > figures.COLUMN_PX
    shrunk = meta["smallest_text_px"] * figures.COLUMN_PX / meta["width_px"]
    assert meta["smallest_text_in_book_px"] == round(shrunk, 1) < figures.SMALLEST_LABEL_PX
    assert meta["overlapping_text"] == []


def test_a_simulated_figure_says_so_on_the_figure_and_in_its_sidecar(tmp_path, monkeypatch):
    monkeypatch.setenv("MINICB_FIGURES_DIR", str(tmp_path))
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 2])
    png = figures.save_simulated_figure(fig, "predicted", "a100-40gb", "opt-13b", dict(requests=3))
    meta = json.loads(png.with_suffix(".json").read_text())
    assert meta["simulated"] is True and meta["hardware"]["name"] == "A100 SXM 40GB"
    assert meta["model"]["name"] == "opt-13b" and meta["requests"] == 3
    assert any("simulated, not measured" in t.get_text() for t in fig.texts)
    assert any("profile a100-40gb (A100 SXM 40GB, datasheet, assumed fractions)" in t.get_text() for t in fig.texts)
    assert meta["profile"] == "a100-40gb" and meta["hardware"]["measured"] is None
    assert figures.simulated_sidecar_problems(tmp_path) == []
    png.with_suffix(".json").unlink()
    assert figures.simulated_sidecar_problems(tmp_path) == ["predicted.png: no sidecar marking it "
                                                            "simulated, with its profile, GPU and model"]


def test_a_legend_over_a_label_is_found(tmp_path, monkeypatch):
    monkeypatch.setenv("MINICB_FIGURES_DIR", str(tmp_path))
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot([0, 1], [0, 1], label="a line")
    ax.legend(loc="center")
    ax.text(0.5, 0.5, "hidden", ha="center", va="center", transform=ax.transAxes)
    with pytest.raises(ValueError, match="the legend over 'hidden'"):
        figures.save_simulated_figure(fig, "covered", "a100-40gb", "opt-13b", {})
    meta = json.loads((tmp_path / "covered.json").read_text())
    assert "the legend over 'hidden'" in meta["overlapping_text"]


def test_a_legend_over_another_panel_is_found_and_one_over_its_twin_is_not(tmp_path, monkeypatch):
    monkeypatch.setenv("MINICB_FIGURES_DIR", str(tmp_path))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 5))
    top.plot([0, 1], [0, 1], label="a line")
    bottom.set_title("below")
    top.legend(loc="upper center", bbox_to_anchor=(0.5, -0.6))
    with pytest.raises(ValueError, match="the legend over the panel 'below'"):
        figures.save_simulated_figure(fig, "spilled", "a100-40gb", "opt-13b", {})
    fig, ax = plt.subplots(figsize=(6, 3))
    twin = ax.twinx()
    twin.plot([0, 1], [5, 6], label="on the right axis")
    twin.legend(loc="lower right")
    figures.save_simulated_figure(fig, "twinned", "a100-40gb", "opt-13b", {})


def old_decode_roofline_layout(measurements, context):
    """08_decode_roofline as the first GPU run drew it: the key under the first panel."""
    shapes = list(dict.fromkeys(key.split(" | ")[0] for key in measurements))
    fig, axes = plt.subplots(len(shapes), 1, figsize=(6, 4 * len(shapes)), squeeze=False)
    for ax, shape in zip(axes[:, 0], shapes):
        rows = measurements[f"{shape} | paged"]
        batches = [r["batch"] for r in rows]
        for key, label in [("step_ms", "decode step, stage 5"), ("roofline_ms", "(weights + K/V) / copy bandwidth"),
                           ("forward_ms", "forward pass on the device"), ("host_ms", "host: schedule + inputs")]:
            ax.plot(batches, [r[key] for r in rows], "o-", label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("running requests (batch)")
        ax.set_ylabel("ms")
        ax.set_title(f"{shape}, context {context}")
    axes[0, 0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2)
    return fig


def test_the_decode_roofline_s_old_layout_is_refused_and_its_new_one_reads(tmp_path, monkeypatch):
    """On the H200 run's own numbers (figures/gpu/08_decode_roofline.json)."""
    monkeypatch.setenv("MINICB_FIGURES_DIR", str(tmp_path))
    meta = json.loads((figures.project_root() / "figures" / "gpu" / "08_decode_roofline.json").read_text())
    with pytest.raises(ValueError, match="the legend over 'llama-3.1-8b, context 1024'"):
        figures.save_simulated_figure(old_decode_roofline_layout(meta["measurements"], meta["context"]),
                                      "old", "h100-sxm", "llama-3.1-8b", {})
    figures.save_simulated_figure(redraw.REDRAW["08_decode_roofline"](meta), "new", "h100-sxm", "llama-3.1-8b", {})


def test_a_gpu_run_s_figure_is_redrawn_from_its_sidecar_with_that_run_s_stamp(tmp_path):
    gpu = figures.project_root() / "figures" / "gpu"
    for suffix in (".json", ".png"):
        (tmp_path / f"08_decode_roofline{suffix}").write_bytes((gpu / f"08_decode_roofline{suffix}").read_bytes())
    redraw.main(["redraw", str(tmp_path / "08_decode_roofline.json"), "--why", "a test"])
    meta = json.loads((tmp_path / "08_decode_roofline.json").read_text())
    assert meta["gpu"] == "NVIDIA H200" and meta["redrawn"]["why"] == "a test"
    assert meta["measurements"] == json.loads((gpu / "08_decode_roofline.json").read_text())["measurements"]


@pytest.mark.parametrize("name,numbers", [("02_static_kv_use", "kv_utilization"), ("08_kv_bytes", "traffic")])
def test_the_kv_figures_are_redrawn_from_their_sidecars_and_refuse_bad_numbers(tmp_path, capsys, name, numbers):
    gpu = figures.project_root() / "figures" / "gpu"
    meta = json.loads((gpu / f"{name}.json").read_text())
    (tmp_path / f"{name}.json").write_text(json.dumps(meta))
    redraw.main(["redraw", str(tmp_path / f"{name}.json"), "--why", "a test"])
    redrawn = json.loads((tmp_path / f"{name}.json").read_text())
    assert redrawn[numbers] == meta[numbers] and redrawn["overlapping_text"] == [] and (tmp_path / f"{name}.png").is_file()
    (tmp_path / f"{name}.json").write_text(json.dumps(meta | {numbers: "none"}))
    with pytest.raises(SystemExit):
        redraw.main(["redraw", str(tmp_path / f"{name}.json")])
    assert "needs" in capsys.readouterr().err


ROOFLINE = figures.project_root() / "figures" / "gpu" / "08_decode_roofline.json"
TRUNCATED = "the H200 run's sidecar, cut after 300 characters"


def roofline_sidecar(tmp_path, change) -> str:
    """A copy of the H200 run's roofline sidecar, changed by change(meta) (or, given
    text, replaced by it)."""
    text = ROOFLINE.read_text()
    if change == TRUNCATED:
        text = text[:300]
    elif callable(change):
        meta = json.loads(text)
        change(meta)
        text = json.dumps(meta)
    elif change is not None:
        text = change
    path = tmp_path / "08_decode_roofline.json"
    path.write_text(text)
    return str(path)


def first_row(meta) -> dict:
    return meta["measurements"]["llama-3.2-1b | paged"][0]


@pytest.mark.parametrize("change,says", [
    ("missing", "cannot read it: No such file or directory"),
    (TRUNCATED, "not JSON"),
    ("[1, 2]", "not a figure's sidecar"),
    ('{"figure": "04_orca_picture.png"}', "no drawing of 04_orca_picture from its sidecar"),
    (lambda m: first_row(m).update(step_ms="2.65"), "measurements['llama-3.2-1b | paged'][0]: numbers must be "
                                                    "positive and finite, got step_ms '2.65'"),
    (lambda m: first_row(m).update(host_ms=float("nan")), "[0]: numbers must be positive and finite, got host_ms nan"),
    (lambda m: m["measurements"].pop("llama-3.2-1b | paged"), "its shape has no \"| paged\" series"),
    (lambda m: m.update(context="1024"), 'needs a positive "context"'),
], ids=["missing", "truncated", "a list", "another figure", "a string", "nan", "no main series", "context"])
def test_redraw_refuses_a_bad_sidecar_in_one_line(tmp_path, capsys, change, says):
    path = str(tmp_path / "none.json") if change == "missing" else roofline_sidecar(tmp_path, change)
    with pytest.raises(SystemExit) as stopped:
        redraw.main(["redraw", path])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith(f"python -m workshop.report.redraw: error: {path}: ") and says in err, err
    assert not (tmp_path / "08_decode_roofline.png").exists()          # nothing was drawn


def test_a_legend_on_the_figure_is_refused_before_it_lands_on_the_stamp(tmp_path, monkeypatch):
    monkeypatch.setenv("MINICB_FIGURES_DIR", str(tmp_path))
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="a line")
    fig.legend(loc="lower center")
    with pytest.raises(ValueError, match="moved.png: a legend on the figure"):
        figures.save_simulated_figure(fig, "moved", "a100-40gb", "opt-13b", {})
    assert not (tmp_path / "moved.png").exists()


def test_a_simulated_figure_of_several_models_names_them_all(tmp_path, monkeypatch):
    monkeypatch.setenv("MINICB_FIGURES_DIR", str(tmp_path))
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 2])
    png = figures.save_simulated_figure(fig, "two", "h100-sxm", ["llama-3.2-1b", "llama-3.1-8b"], {})
    meta = json.loads(png.with_suffix(".json").read_text())
    assert [m["name"] for m in meta["model"]] == ["llama-3.2-1b", "llama-3.1-8b"]
    assert any("llama-3.2-1b, llama-3.1-8b" in t.get_text() for t in fig.texts)


def test_the_decode_roofline_reads_with_the_fused_modes_too(tmp_path, monkeypatch):
    """A GPU run of notebook 08 adds fused ops, alone and with async scheduling: the
    H200 run's numbers stand in for them here, to check the layout."""
    monkeypatch.setenv("MINICB_FIGURES_DIR", str(tmp_path))
    meta = json.loads((figures.project_root() / "figures" / "gpu" / "08_decode_roofline.json").read_text())
    measurements = dict(meta["measurements"])
    for shape in {key.split(" | ")[0] for key in measurements}:
        for mode in ("fused ops", "fused ops, async scheduling"):
            measurements[f"{shape} | paged, {mode}"] = measurements[f"{shape} | paged"]
    fig = redraw.REDRAW["08_decode_roofline"](dict(meta, measurements=measurements))
    assert len(fig.axes[-1].get_legend().get_texts()) == 7
    figures.save_simulated_figure(fig, "fused", "h100-sxm", "llama-3.1-8b", {})
    plt.close("all")


def test_a_simulated_figure_of_two_profiles_names_each_and_its_kind(tmp_path, monkeypatch):
    monkeypatch.setenv("MINICB_FIGURES_DIR", str(tmp_path))
    fig = draw()
    png = figures.save_simulated_figure(fig, "two", ["h200", "h200-measured"], "llama-3.1-8b", {})
    meta = json.loads(png.with_suffix(".json").read_text())
    assert meta["profile"] == ["h200", "h200-measured"]
    assert [h["measured"] is not None for h in meta["hardware"]] == [False, True]
    stamp = " ".join(t.get_text() for t in fig.texts)
    assert "profile h200 (datasheet, assumed fractions); h200-measured (measured)" in stamp
    assert figures.simulated_sidecar_problems(tmp_path) == []


def test_the_spread_figure_is_redrawn_from_its_sidecar_with_the_peers_apart(tmp_path):
    """On a linear scale the peers, a hundredth of the engines' rate, lay on top of each
    other at zero; on a log scale each line has its own place."""
    gpu = figures.project_root() / "figures" / "gpu"
    for suffix in (".json", ".png"):
        (tmp_path / f"07_throughput_vs_spread{suffix}").write_bytes((gpu / f"07_throughput_vs_spread{suffix}").read_bytes())
    meta = json.loads((tmp_path / "07_throughput_vs_spread.json").read_text())
    fig = redraw.REDRAW["07_throughput_vs_spread"](meta)
    assert [ax.get_yscale() for ax in fig.axes] == ["log", "log"]
    redraw.main(["redraw", str(tmp_path / "07_throughput_vs_spread.json"), "--why", "a test"])
    redrawn = json.loads((tmp_path / "07_throughput_vs_spread.json").read_text())
    assert redrawn["measurements"] == meta["measurements"] and redrawn["over_data"] == []


@pytest.mark.parametrize("change,says", [
    (lambda m: m.update(measurements=[]), 'needs a non-empty "setup" object and a non-empty "measurements" list'),
    (lambda m: m["measurements"][0]["32"]["paged"].update(output_tok_s=float("nan")),
     "measurements[0]['32']['paged']: numbers must be positive and finite, got output_tok_s nan"),
    (lambda m: m["measurements"].append({"32": m["measurements"][0]["32"]}),
     "measurements[1] has other caps or runs than measurements[0]"),
], ids=["no rounds", "nan", "rounds differ"])
def test_redraw_refuses_a_bad_spread_sidecar_in_one_line(tmp_path, capsys, change, says):
    meta = json.loads((figures.project_root() / "figures" / "gpu" / "07_throughput_vs_spread.json").read_text())
    change(meta)
    path = tmp_path / "07_throughput_vs_spread.json"
    path.write_text(json.dumps(meta))
    with pytest.raises(SystemExit) as stopped:
        redraw.main(["redraw", str(path)])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and len(err.splitlines()) == 1 and says in err, err

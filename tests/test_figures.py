"""Figures from CPU-scale runs never land in the committed figures/ folder."""
import json

import pytest

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from minicb.tools import figures  # noqa: E402


def draw():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    return fig


def test_cpu_scale_figures_go_to_scratch_with_a_sidecar(tmp_path, monkeypatch):
    monkeypatch.setattr(figures, "project_root", lambda: tmp_path)
    monkeypatch.setattr(figures, "full_scale", lambda: False)
    png = figures.save_figure(draw(), "example", dict(model="tiny", workload=dict(n=3)))
    assert png == tmp_path / "scratch" / "figures" / "example.png" and png.is_file()
    sidecar = json.loads(png.with_suffix(".json").read_text())
    assert sidecar["model"] == "tiny" and sidecar["workload"] == {"n": 3}
    assert {"torch", "triton", "transformers", "date", "gpu", "machine"} <= set(sidecar)
    assert sidecar["scale"] == "CPU scale" and sidecar["machine"].startswith("CPU ")
    assert not (tmp_path / "figures").exists()


def test_the_figure_itself_names_its_machine_model_and_scale(tmp_path, monkeypatch):
    monkeypatch.setattr(figures, "project_root", lambda: tmp_path)
    monkeypatch.setattr(figures, "full_scale", lambda: False)
    fig = draw()
    figures.save_figure(fig, "example", dict(model=dict(arch="llama", shape="tiny", dtype="float32")))
    [line] = [t.get_text() for t in fig.texts]
    assert line.startswith(f"{figures.machine()} | llama tiny float32 | CPU scale | ")


def test_make_figures_cpu_writes_the_committed_cpu_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(figures, "project_root", lambda: tmp_path)
    monkeypatch.setattr(figures, "full_scale", lambda: False)
    monkeypatch.setenv("MINICB_FIGURES_DIR", "figures/cpu")
    png = figures.save_figure(draw(), "example", {})
    assert png == tmp_path / "figures" / "cpu" / "example.png"
    assert figures.sidecar_problems(png.parent, gpu=False) == []
    assert figures.sidecar_problems(png.parent) == ["example.json: names no GPU (gpu=None)"]


def test_full_scale_figures_go_to_figures(tmp_path, monkeypatch):
    monkeypatch.setattr(figures, "project_root", lambda: tmp_path)
    monkeypatch.setattr(figures, "full_scale", lambda: True)
    png = figures.save_figure(draw(), "example", {})
    assert png == tmp_path / "figures" / "example.png" and png.is_file()


def test_sidecar_check_finds_each_problem(tmp_path, monkeypatch):
    monkeypatch.setattr(figures, "project_root", lambda: tmp_path)
    monkeypatch.setattr(figures, "full_scale", lambda: True)
    monkeypatch.setattr(figures, "environment", lambda: dict(gpu="NVIDIA H100", cpu="x86_64", torch="2",
                                                             triton="3", transformers="5", date="2026-01-01"))
    folder = tmp_path / "figures"
    figures.save_figure(draw(), "good", {})
    assert figures.sidecar_problems(folder) == []
    figures.save_figure(draw(), "no_sidecar", {})
    (folder / "no_sidecar.json").unlink()
    figures.save_figure(draw(), "cpu_made", {})
    (folder / "cpu_made.json").write_text(json.dumps(dict(gpu=None, torch="2", triton="3", transformers="5",
                                                          date="2026-01-01")))
    figures.save_figure(draw(), "bare", {})
    (folder / "bare.json").write_text("{}")
    problems = figures.sidecar_problems(folder)
    assert len(problems) == 3
    assert any("no_sidecar.png: no sidecar" in p for p in problems)
    assert any("cpu_made.json: names no GPU" in p for p in problems)
    assert any("bare.json: missing" in p for p in problems)


def test_every_committed_figure_has_a_sidecar_naming_its_machine():
    folder = figures.project_root() / "figures"
    assert folder.is_dir()
    assert figures.sidecar_problems(folder) == []
    assert figures.sidecar_problems(folder / "cpu", gpu=False) == []
    assert figures.simulated_sidecar_problems(folder / "simulated") == []


def test_every_committed_figure_reads_in_the_book():
    folder = figures.project_root() / "figures"
    for sub in (folder / "cpu", folder / "simulated", folder):
        assert figures.legibility_problems(sub) == []


def test_legibility_measures_the_smallest_text_and_finds_overlaps(tmp_path, monkeypatch):
    monkeypatch.setenv("MINICB_FIGURES_DIR", str(tmp_path))
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot([0, 1], [1, 2])
    ax.set_xlim(0, 1)
    ax.set_xticks([0, 0.5, 1, 5])                 # a tick outside the view is not drawn
    ax.text(0.5, 1.5, "first note", fontsize=5)
    ax.text(0.5, 1.5, "second note", fontsize=12)
    png = figures.save_simulated_figure(fig, "crowded", "a100-40gb", "opt-13b", {})
    meta = json.loads(png.with_suffix(".json").read_text())
    assert meta["smallest_text_px"] == round(5 * figures.DPI / 72, 1) == 8.3
    assert meta["overlapping_text"] == ["'first note' over 'second note'"]
    assert meta["smallest_text_in_book_px"] == meta["smallest_text_px"]      # 6 in: not shrunk
    assert figures.legibility_problems(tmp_path) == [
        "crowded.png: its smallest text shows 8.3 px tall in the book",
        "crowded.png: 'first note' over 'second note'"]


def test_a_figure_wider_than_the_column_shrinks_with_its_text(tmp_path, monkeypatch):
    monkeypatch.setenv("MINICB_FIGURES_DIR", str(tmp_path))
    fig, ax = plt.subplots(figsize=(16, 3))
    ax.plot([0, 1], [1, 2])
    png = figures.save_simulated_figure(fig, "wide", "a100-40gb", "opt-13b", {})
    meta = json.loads(png.with_suffix(".json").read_text())
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
    assert figures.simulated_sidecar_problems(tmp_path) == []
    png.with_suffix(".json").unlink()
    assert figures.simulated_sidecar_problems(tmp_path) == ["predicted.png: no sidecar marking it "
                                                            "simulated, with its GPU and model"]


def test_a_legend_over_a_label_is_found(tmp_path, monkeypatch):
    monkeypatch.setenv("MINICB_FIGURES_DIR", str(tmp_path))
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot([0, 1], [0, 1], label="a line")
    ax.legend(loc="center")
    ax.text(0.5, 0.5, "hidden", ha="center", va="center", transform=ax.transAxes)
    png = figures.save_simulated_figure(fig, "covered", "a100-40gb", "opt-13b", {})
    meta = json.loads(png.with_suffix(".json").read_text())
    assert "the legend over 'hidden'" in meta["overlapping_text"]


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

"""Figures from CPU-scale runs never land in the committed figures/ folder."""
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from minicb import figures  # noqa: E402


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
    assert {"torch", "triton", "transformers", "date", "gpu"} <= set(sidecar)
    assert not (tmp_path / "figures").exists()


def test_full_scale_figures_go_to_figures(tmp_path, monkeypatch):
    monkeypatch.setattr(figures, "project_root", lambda: tmp_path)
    monkeypatch.setattr(figures, "full_scale", lambda: True)
    png = figures.save_figure(draw(), "example", {})
    assert png == tmp_path / "figures" / "example.png" and png.is_file()

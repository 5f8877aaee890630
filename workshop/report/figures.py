"""Where figures go, and what says how each was made: a line on the figure
itself (machine, model, scale, date) and a JSON sidecar beside it.

Only a full-scale run on a GPU writes the committed ``figures/gpu/`` folder; a
CPU-scale run or a rehearsal (``workshop.report.scale``) writes the git-ignored
``scratch/figures/`` instead, so a laptop run never overwrites the measured
figures. ``make figures-cpu`` sets MINICB_FIGURES_DIR to write the committed
CPU-scale set, ``figures/cpu/``; the GPU driver sets it to gather a part's.
A simulated figure (``save_simulated_figure``: the cost model's predictions,
on a GPU no one ran) never goes among them: ``make figures-cpu``
writes those into ``figures/simulated/``, marked as predictions on the
figure and in the sidecar.
"""
import dataclasses
import datetime
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch
from matplotlib import font_manager
from matplotlib.ft2font import FT2Font
from matplotlib.text import Text
from PIL import Image

from minicb import executors
from minicb.costmodel import HARDWARE, MODEL_SHAPES
from minicb.tools.bench.run_record import environment
from workshop.report.scale import RUNNING, SCALE_NAMES, figure_dir, full_scale, machine, project_root, run_scale, this_run


# When the notebook imported this module: each sidecar says how long the run had taken
# by the time its figure was saved, which is what sizing the next full-scale run needs.
STARTED = time.perf_counter()


def save_figure(fig, name: str, meta: dict) -> Path:
    """Write ``name``.png, stamped with the machine, model and scale it was
    measured at, and ``name``.json (environment + ``meta``: model shape,
    dtype, workload, ...). Returns the PNG's path."""
    out = figure_dir()
    env = dict(**environment(), machine=machine(), scale=SCALE_NAMES[run_scale().name])
    png, legibility = stamped_png(fig, out / f"{name}.png", stamp(env, meta),
                                  header=f"{env['machine']}, {env['scale']}")
    elapsed = round(time.perf_counter() - STARTED, 1)
    sidecar = dict(figure=png.name, **env, seconds_into_run=elapsed, **legibility, **meta)
    sidecar.setdefault("run", {**this_run(), **RUNNING})   # the run, the notebook and its sizes (workshop.report.scale)
    sidecar.setdefault("executors", executors.built())  # what each stage's engines ran on
    (out / f"{name}.json").write_text(json.dumps(sidecar, indent=2, default=str) + "\n")
    return checked(png, sidecar)


def save_simulated_figure(fig, name: str, hardware: str | list[str], model: str | list[str],
                          meta: dict) -> Path:
    """Write a figure of predictions, ``name``.png and ``name``.json, stamped
    "simulated" with the cost model's GPU, its kind of profile (a datasheet's or a
    measured one) and the model shape (or shapes); the sidecar names the profile,
    says ``"simulated": true`` and carries the profiles, assumptions included."""
    out = project_root() / os.environ.get("MINICB_FIGURES_DIR", "scratch/figures/simulated")
    out.mkdir(parents=True, exist_ok=True)
    names = [hardware] if isinstance(hardware, str) else list(hardware)
    gpus = [HARDWARE[n] for n in names]
    models = [model] if isinstance(model, str) else list(model)
    profiles = "; ".join(f"{n} ({gpu.name}, {gpu.kind})" if len(gpus) == 1 else f"{n} ({gpu.kind})"
                         for n, gpu in zip(names, gpus))
    line = (f"simulated, not measured: minicb.costmodel, profile {profiles}, {', '.join(models)} | "
            f"{datetime.date.today().isoformat()}")
    png, legibility = stamped_png(fig, out / f"{name}.png", line)
    profiles = [dataclasses.asdict(MODEL_SHAPES[m]) for m in models]
    sidecar = dict(figure=png.name, simulated=True, profile=hardware,
                   hardware=[dataclasses.asdict(g) for g in gpus] if len(gpus) > 1 else dataclasses.asdict(gpus[0]),
                   model=profiles[0] if isinstance(model, str) else profiles,
                   date=datetime.date.today().isoformat(), **legibility, **meta)
    sidecar.setdefault("run", {**this_run(), **RUNNING})   # the run this prediction came from
    (out / f"{name}.json").write_text(json.dumps(sidecar, indent=2, default=str) + "\n")
    return checked(png, sidecar)


def save_simulated_numbers(name: str, numbers: dict) -> Path:
    """Predictions a notebook prints that no figure draws, into ``name``.json beside
    the simulated figures, marked as predictions and naming their run, so that the
    book quotes them from there (workshop.book.numbers). Each call of one run adds to
    what that run saved before; a file from another run is replaced."""
    if not name.endswith("_simulated"):
        raise ValueError(f"{name!r}: a file of predictions is named NAME_simulated")
    path = project_root() / os.environ.get("MINICB_FIGURES_DIR", "scratch/figures/simulated") / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    run = {**this_run(), **RUNNING}
    saved = json.loads(path.read_text()) if path.is_file() else {}
    if saved.get("run", {}).get("run_id") != run["run_id"]:
        saved = {}
    sidecar = dict(saved, simulated=True, date=datetime.date.today().isoformat(), **numbers, run=run)
    path.write_text(json.dumps(sidecar, indent=2, default=str) + "\n")
    return path


def redraw_figure(fig, sidecar: dict, folder: Path, why: str) -> Path:
    """Save ``fig``, drawn anew from ``sidecar``'s own numbers, as the figure of the
    run that measured them: that run's stamp and sidecar, with the date it was
    redrawn and why added. Nothing is measured again."""
    name, today = Path(sidecar["figure"]).stem, datetime.date.today().isoformat()
    line = f"{stamp(sidecar, sidecar)} | redrawn {today}"
    png, legibility = stamped_png(fig, Path(folder) / f"{name}.png", line,
                                  header=f"{sidecar['machine']}, {sidecar['scale']}")
    sidecar = dict(sidecar, **legibility, redrawn=dict(date=today, why=why))
    (Path(folder) / f"{name}.json").write_text(json.dumps(sidecar, indent=2, default=str) + "\n")
    return checked(png, sidecar)


def checked(png: Path, sidecar: dict) -> Path:
    """The figure, once its layout reads: else a ValueError naming what does not
    (the PNG and sidecar are saved, to look at)."""
    problems = layout_problems(sidecar)
    if problems:
        raise ValueError(f"{png.name}: its layout does not read in the book (saved, to look at): "
                         + "; ".join(problems))
    return png


# A figure is drawn for the book's column: 920 px at 1280 px wide (theme/minicb.css). A
# PNG wider than that is shrunk, and its text with it.
DPI = 120
COLUMN_PX = 910
SMALLEST_LABEL_PX = 9
STAMP_POINTS = 7.5
HEADER_POINTS = 10
# The smallest letters a reader should have to read: a lowercase x this many pixels
# tall in the book's column (about 9 px type in a common sans-serif).
SMALLEST_LETTER_PX = 4.5


def stamped_png(fig, png: Path, line: str, header: str | None = None) -> tuple[Path, dict]:
    """Save ``fig`` with ``line`` under everything drawn, and ``header`` (the machine
    and scale) above it, where a reader looks first; say how its text reads."""
    if fig.legends:
        # Cropping the PNG to what is drawn moves a legend placed on the figure, onto
        # whatever lies below it; one placed on an axes stays where it was drawn.
        raise ValueError(f"{png.name}: a legend on the figure (fig.legend) moves when the PNG "
                         "is cropped; give it to an axes (ax.legend, with bbox_to_anchor)")
    fig.canvas.draw()                           # a legend finds its place only when drawn
    drawn = fig.get_tightbbox()                 # in inches: the stamp goes below everything drawn
    fig.text(drawn.x0 / fig.get_figwidth(), (drawn.y0 - 0.05) / fig.get_figheight(), line,
             fontsize=STAMP_POINTS, color="0.35", ha="left", va="top")
    if header:
        fig.text(drawn.x0 / fig.get_figwidth(), (drawn.y1 + 0.05) / fig.get_figheight(), header,
                 fontsize=HEADER_POINTS, fontweight="bold", ha="left", va="bottom")
    fig.savefig(png, dpi=DPI, bbox_inches="tight")
    return png, legibility(fig, png)


def legibility(fig, png: Path) -> dict:
    """The smallest text on the figure in pixels of its PNG, that text's size and
    the height of its lowercase letters once the book's column shrinks the PNG, every
    pair of texts that overlap, and every legend or text drawn over plotted data."""
    texts = drawn_texts(fig)
    width = Image.open(png).size[0]
    shrink = min(1, COLUMN_PX / width)
    smallest = min((t.get_fontsize() for t in texts), default=0) * DPI / 72
    letters = min((t.get_fontsize() * DPI / 72 * x_height(t) for t in texts), default=0)
    return dict(smallest_text_px=round(smallest, 1), width_px=width,
                smallest_text_in_book_px=round(smallest * shrink, 1),
                smallest_letters_in_book_px=round(letters * shrink, 1),
                overlapping_text=overlapping(texts, fig), outside_png=outside(texts, fig),
                over_data=over_data(texts, fig))


def x_height(text) -> float:
    """The height of a lowercase x over the font's size, from the metrics of the font
    the text is drawn in (its OS/2 table); half the size where the font has none."""
    path = font_manager.findfont(text.get_fontproperties())
    if path not in X_HEIGHTS:
        font = FT2Font(path)
        table = font.get_sfnt_table("OS/2") or {}
        X_HEIGHTS[path] = (table.get("sxHeight", 0) / font.units_per_EM) or 0.5
    return X_HEIGHTS[path]


X_HEIGHTS: dict[str, float] = {}


def over_data(texts, fig) -> list[str]:
    """Legends and texts inside an axes that cover what it plots: a line's points
    or the stretch between two, a marker, a bar, an image."""
    renderer = fig.canvas.get_renderer()
    found = []
    for ax in fig.axes:
        data = plotted_points(ax)
        if not len(data):
            continue
        legend = ax.get_legend()
        covers = [("the legend", legend.get_window_extent(renderer))] if legend is not None else []
        covers += [(repr(t.get_text()), t.get_window_extent(renderer)) for t in ax.texts if t in texts]
        for name, box in covers:
            inside = (data[:, 0] > box.x0) & (data[:, 0] < box.x1) & (data[:, 1] > box.y0) & (data[:, 1] < box.y1)
            if inside.any():
                found.append(f"{name} over the data of {ax.get_title() or 'a panel'!r}")
    return found


def plotted_points(ax) -> np.ndarray:
    """Display points that stand for what an axes plots: each line densely sampled
    between its points, each bar's and image's corners and centre."""
    points = []
    for line in ax.get_lines():
        xy = line.get_transform().transform(np.asarray(line.get_xydata(), dtype=float))
        xy = xy[np.isfinite(xy).all(axis=1)]
        if len(xy) > 1 and line.get_linestyle() not in ("None", "", " "):
            t = np.linspace(0, 1, 24)[:, None]
            xy = np.concatenate([a + t * (b - a) for a, b in zip(xy, xy[1:])])
        points.append(xy)
    for artist in [*ax.patches, *ax.images]:
        if artist.get_visible():
            box = artist.get_window_extent(ax.figure.canvas.get_renderer())
            if box.width > 1 and box.height > 1:
                points.append(np.array([[box.x0, box.y0], [box.x1, box.y1], [box.x0, box.y1],
                                        [box.x1, box.y0], [(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2]]))
    for collection in ax.collections:
        offsets = collection.get_offsets()
        if len(offsets):
            points.append(collection.get_offset_transform().transform(np.asarray(offsets, dtype=float)))
    return np.concatenate(points) if points else np.empty((0, 2))


def drawn_texts(fig) -> list:
    """Every text the figure shows: titles, labels, legends, notes, and the tick
    labels of ticks inside their axis's view (matplotlib keeps others it does not draw)."""
    fig.canvas.draw()
    ticks = {id(label): tick for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
             for tick in axis.get_major_ticks() + axis.get_minor_ticks()
             for label in (tick.label1, tick.label2)}
    views = {id(tick): axis.get_view_interval() for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
             for tick in axis.get_major_ticks() + axis.get_minor_ticks()}

    def shown(text):
        if not (text.get_visible() and text.get_text().strip()):
            return False
        tick = ticks.get(id(text))
        if tick is None:
            return True
        low, high = sorted(views[id(tick)])
        span = (high - low) * 1e-6
        return tick.get_visible() and low - span <= tick.get_loc() <= high + span

    return [t for t in fig.findobj(Text) if shown(t)]


def legibility_problems(folder) -> list[str]:
    """Figures in ``folder`` whose layout does not read (``layout_problems``), as
    their sidecars measured them."""
    problems = []
    for sidecar in sorted(Path(folder).glob("*.json")):
        if sidecar.stem.endswith("_claims"):       # a notebook's verdicts, no figure's
            continue
        meta = json.loads(sidecar.read_text())
        if "figure" not in meta:                    # numbers no figure draws (save_simulated_numbers)
            continue
        if "smallest_text_in_book_px" not in meta:
            problems.append(f"{sidecar.name}: does not say how its text reads (saved before it did)")
            continue
        problems += [f"{meta['figure']}: {problem}" for problem in layout_problems(meta)]
    return problems


def layout_problems(meta: dict) -> list[str]:
    """What a sidecar's measures say does not read: text under 9 px in the book,
    texts that overlap, a legend over another text or another panel, text that
    falls outside the PNG."""
    problems = []
    if meta["smallest_text_in_book_px"] < SMALLEST_LABEL_PX:
        problems.append(f"its smallest text shows {meta['smallest_text_in_book_px']} px tall in the book")
    if meta.get("smallest_letters_in_book_px", SMALLEST_LETTER_PX) < SMALLEST_LETTER_PX:
        problems.append(f"its smallest letters are {meta['smallest_letters_in_book_px']} px tall in the book")
    return problems + meta["overlapping_text"] + meta.get("outside_png", []) + meta.get("over_data", [])


def overlapping(texts, fig) -> list[str]:
    """Pairs of texts that cross or come within 2 pixels of each other (at that
    distance two labels read as one), and texts that a legend's box covers."""
    renderer = fig.canvas.get_renderer()
    boxes = [(repr(t.get_text()), t.get_window_extent(renderer)) for t in texts]
    found = [f"{a} over {b}" for i, (a, box_a) in enumerate(boxes)
             for b, box_b in boxes[i + 1:] if crossing(box_a, box_b, margin=2)]
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        own = {id(t) for t in legend.get_texts()} | {id(legend.get_title())}
        frame = legend.get_window_extent(renderer)
        found += [f"the legend over {t.get_text()!r}" for t in texts
                  if id(t) not in own and crossing(frame, t.get_window_extent(renderer), margin=0)]
        # Inside its own panel a legend sits where it was put; over another, on that one's data.
        found += [f"the legend over the panel {other.get_title()!r}" for other in fig.axes
                  if other.get_position().bounds != ax.get_position().bounds     # not a twin
                  and other.get_visible() and other.axison
                  and crossing(frame, other.get_window_extent(renderer), margin=0)]
    return found


def outside(texts, fig) -> list[str]:
    """Texts that reach beyond what the PNG keeps (everything drawn, unless a
    text is left out of the layout)."""
    renderer = fig.canvas.get_renderer()
    kept = fig.get_tightbbox(renderer).transformed(fig.dpi_scale_trans).padded(1)
    return [f"{t.get_text()!r} falls outside the PNG" for t in texts
            if not all(kept.contains(*corner) for corner in t.get_window_extent(renderer).get_points())]


def crossing(a, b, margin: float) -> bool:
    """Whether boxes ``a`` and ``b`` overlap, or come within ``margin`` pixels."""
    wide = min(a.x1, b.x1) - max(a.x0, b.x0)
    tall = min(a.y1, b.y1) - max(a.y0, b.y0)
    return wide > -margin and tall > -margin


def simulated_sidecar_problems(folder) -> list[str]:
    """What is wrong with the simulated figures in ``folder``: a PNG without a
    sidecar saying ``"simulated": true`` and naming its profile, GPU and model."""
    problems = []
    for png in sorted(Path(folder).glob("*.png")):
        sidecar = png.with_suffix(".json")
        meta = json.loads(sidecar.read_text()) if sidecar.is_file() else {}
        if meta.get("simulated") is not True or not {"profile", "hardware", "model"} <= set(meta):
            problems.append(f"{png.name}: no sidecar marking it simulated, with its profile, GPU and model")
    return problems


def stamp(env: dict, meta: dict) -> str:
    """One line for the figure's corner: where and at what scale it was measured."""
    model = meta.get("model", "")
    if isinstance(model, dict):
        model = " ".join(", ".join(v) if isinstance(v, list) else str(v) for v in model.values())
    return " | ".join(str(x) for x in (env["machine"], model, env["scale"], env["date"]) if x)


REQUIRED_SIDECAR_KEYS = ("gpu", "torch", "triton", "transformers", "date")


def sidecar_problems(folder, gpu=True) -> list[str]:
    """What is wrong with the figures in ``folder``: a PNG without its JSON sidecar, a
    sidecar missing a required key, one whose GPU does not fit the folder (gpu/ holds
    GPU runs only, cpu/ CPU runs only), or one that names no commit (a GPU run that
    wrote none has the one figures/gpu/RUNS.md records, marked as recorded after)."""
    problems = []
    for png in sorted(Path(folder).glob("*.png")):
        sidecar = png.with_suffix(".json")
        if not sidecar.is_file():
            problems.append(f"{png.name}: no sidecar {sidecar.name}")
            continue
        meta = json.loads(sidecar.read_text())
        missing = [key for key in REQUIRED_SIDECAR_KEYS if key not in meta]
        if missing:
            problems.append(f"{sidecar.name}: missing {missing}")
        elif gpu and not meta["gpu"]:
            problems.append(f"{sidecar.name}: names no GPU (gpu={meta['gpu']!r})")
        elif not gpu and meta["gpu"]:
            problems.append(f"{sidecar.name}: a GPU run ({meta['gpu']}) among the CPU figures")
        elif not (meta.get("run") or {}).get("commit"):
            problems.append(f"{sidecar.name}: names no commit (its \"run\" has none): which code drew it?")
    return problems

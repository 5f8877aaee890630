"""Where figures go, and what says how each was made: a line on the figure
itself (machine, model, scale, date) and a JSON sidecar beside it.

Only a full-scale run on a GPU writes the committed ``figures/`` folder; a
CPU-scale run or a rehearsal (``minicb.tools.scale``) writes the git-ignored
``scratch/figures/`` instead, so a laptop run never overwrites the measured
figures. ``make figures-cpu`` sets MINICB_FIGURES_DIR to write the committed
CPU-scale set, ``figures/cpu/``; the GPU driver sets it to gather a part's.
A simulated figure (``save_simulated_figure``: the cost model's predictions,
on a GPU no one ran) never goes among them: ``make figures-simulated``
writes those into ``figures/simulated/``, marked as predictions on the
figure and in the sidecar.
"""
import dataclasses
import datetime
import json
import os
import platform
import time
from pathlib import Path

import torch

from ..costmodel import HARDWARE, MODEL_SHAPES
from .scale import RUNNING, run_scale


# When the notebook imported this module: each sidecar says how long the run had taken
# by the time its figure was saved, which is what sizing the next full-scale run needs.
STARTED = time.perf_counter()


def project_root() -> Path:
    here = Path(__file__).resolve().parents[2]
    return here if (here / "pyproject.toml").exists() else Path.cwd()


def full_scale() -> bool:
    return run_scale().name == "full"


def figure_dir() -> Path:
    if "MINICB_FIGURES_DIR" in os.environ:
        path = project_root() / os.environ["MINICB_FIGURES_DIR"]
    else:
        path = project_root() / ("figures" if full_scale() else "scratch/figures")
    path.mkdir(parents=True, exist_ok=True)
    return path


def machine() -> str:
    """The GPU, or the CPU with its cores and torch's threads: what a figure's numbers depend on."""
    if torch.cuda.is_available():
        return torch.cuda.get_device_name()
    return f"CPU {platform.processor() or platform.machine()}, {os.cpu_count()} cores, " \
           f"{torch.get_num_threads()} torch threads"


def environment() -> dict:
    # Their versions only; transformers is slow to import.
    import transformers
    import triton

    return dict(
        gpu=torch.cuda.get_device_name() if torch.cuda.is_available() else None,
        cpu=platform.processor() or platform.machine(),
        torch=torch.__version__, triton=triton.__version__, transformers=transformers.__version__,
        date=datetime.date.today().isoformat(),
    )


def save_figure(fig, name: str, meta: dict) -> Path:
    """Write ``name``.png, stamped with the machine, model and scale it was
    measured at, and ``name``.json (environment + ``meta``: model shape,
    dtype, workload, ...). Returns the PNG's path."""
    out = figure_dir()
    png = out / f"{name}.png"
    env = dict(**environment(), machine=machine(), scale=SCALE_NAMES[run_scale().name])
    drawn = fig.get_tightbbox()                 # in inches: the stamp goes below everything drawn
    fig.text(drawn.x0 / fig.get_figwidth(), drawn.y0 / fig.get_figheight() - 0.01, stamp(env, meta),
             fontsize=7, color="0.35", ha="left", va="top")
    fig.savefig(png, dpi=120, bbox_inches="tight")
    elapsed = round(time.perf_counter() - STARTED, 1)
    sidecar = dict(figure=png.name, **env, seconds_into_run=elapsed, **meta)
    sidecar.setdefault("run", dict(RUNNING))           # the notebook and its sizes (minicb.tools.scale)
    (out / f"{name}.json").write_text(json.dumps(sidecar, indent=2, default=str) + "\n")
    return png


def save_simulated_figure(fig, name: str, hardware: str, model: str, meta: dict) -> Path:
    """Write a figure of predictions, ``name``.png and ``name``.json, stamped
    "simulated" with the cost model's GPU and model shape; the sidecar says
    ``"simulated": true`` and carries both profiles, assumptions included."""
    out = project_root() / os.environ.get("MINICB_FIGURES_DIR", "scratch/figures/simulated")
    out.mkdir(parents=True, exist_ok=True)
    gpu = HARDWARE[hardware]
    line = (f"simulated, not measured: minicb.costmodel, {gpu.name}, {model} | "
            f"{datetime.date.today().isoformat()}")
    drawn = fig.get_tightbbox()
    fig.text(drawn.x0 / fig.get_figwidth(), drawn.y0 / fig.get_figheight() - 0.01, line,
             fontsize=7, color="0.35", ha="left", va="top")
    png = out / f"{name}.png"
    fig.savefig(png, dpi=120, bbox_inches="tight")
    sidecar = dict(figure=png.name, simulated=True, hardware=dataclasses.asdict(gpu),
                   model=dataclasses.asdict(MODEL_SHAPES[model]),
                   date=datetime.date.today().isoformat(), **meta)
    (out / f"{name}.json").write_text(json.dumps(sidecar, indent=2, default=str) + "\n")
    return png


def simulated_sidecar_problems(folder) -> list[str]:
    """What is wrong with the simulated figures in ``folder``: a PNG without a
    sidecar saying ``"simulated": true`` and naming its GPU and model."""
    problems = []
    for png in sorted(Path(folder).glob("*.png")):
        sidecar = png.with_suffix(".json")
        meta = json.loads(sidecar.read_text()) if sidecar.is_file() else {}
        if meta.get("simulated") is not True or not {"hardware", "model"} <= set(meta):
            problems.append(f"{png.name}: no sidecar marking it simulated, with its GPU and model")
    return problems


SCALE_NAMES = {"full": "full scale", "cpu": "CPU scale", "rehearsal": "rehearsal (CPU, tiny model)"}


def stamp(env: dict, meta: dict) -> str:
    """One line for the figure's corner: where and at what scale it was measured."""
    model = meta.get("model", "")
    if isinstance(model, dict):
        model = " ".join(str(v) for v in model.values())
    return " | ".join(str(x) for x in (env["machine"], model, env["scale"], env["date"]) if x)


REQUIRED_SIDECAR_KEYS = ("gpu", "torch", "triton", "transformers", "date")


def sidecar_problems(folder, gpu=True) -> list[str]:
    """What is wrong with the figures in ``folder``: a PNG without its JSON
    sidecar, a sidecar missing a required key, or one whose GPU does not fit
    the folder (``figures/`` holds GPU runs only, ``figures/cpu/`` CPU runs only)."""
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
    return problems

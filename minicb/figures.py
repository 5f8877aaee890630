"""Where figures go, and the sidecar that says how each was made.

Only a full-scale run on a GPU writes the committed ``figures/`` folder; a
CPU-scale run writes the git-ignored ``scratch/figures/`` instead, so a
laptop run never overwrites the measured figures.
"""
import datetime
import json
import platform
import time
from pathlib import Path

import torch


# When the notebook imported this module: each sidecar says how long the run had taken
# by the time its figure was saved, which is what sizing the next full-scale run needs.
STARTED = time.perf_counter()


def project_root() -> Path:
    here = Path(__file__).resolve().parent.parent
    return here if (here / "pyproject.toml").exists() else Path.cwd()


def full_scale() -> bool:
    return torch.cuda.is_available()


def figure_dir() -> Path:
    path = project_root() / ("figures" if full_scale() else "scratch/figures")
    path.mkdir(parents=True, exist_ok=True)
    return path


def environment() -> dict:
    import transformers
    import triton

    return dict(
        gpu=torch.cuda.get_device_name() if torch.cuda.is_available() else None,
        cpu=platform.processor() or platform.machine(),
        torch=torch.__version__, triton=triton.__version__, transformers=transformers.__version__,
        date=datetime.date.today().isoformat(),
    )


def save_figure(fig, name: str, meta: dict) -> Path:
    """Write ``name``.png and ``name``.json (environment + ``meta``: model
    shape, dtype, workload, ...). Returns the PNG's path."""
    out = figure_dir()
    png = out / f"{name}.png"
    fig.savefig(png, dpi=120, bbox_inches="tight")
    elapsed = round(time.perf_counter() - STARTED, 1)
    sidecar = dict(figure=png.name, **environment(), seconds_into_run=elapsed, **meta)
    (out / f"{name}.json").write_text(json.dumps(sidecar, indent=2, default=str) + "\n")
    return png


REQUIRED_SIDECAR_KEYS = ("gpu", "torch", "triton", "transformers", "date")


def sidecar_problems(folder) -> list[str]:
    """What is wrong with the figures in ``folder``: a PNG without its JSON
    sidecar, a sidecar missing a required key, or one that names no GPU
    (the committed figures come from GPU runs only)."""
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
        elif not meta["gpu"]:
            problems.append(f"{sidecar.name}: names no GPU (gpu={meta['gpu']!r})")
    return problems

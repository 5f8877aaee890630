"""Where figures go, and the sidecar that says how each was made.

Only a full-scale run on a GPU writes the committed ``figures/`` folder; a
CPU-scale run writes the git-ignored ``scratch/figures/`` instead, so a
laptop run never overwrites the measured figures.
"""
import datetime
import json
import platform
from pathlib import Path

import torch


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
    sidecar = dict(figure=png.name, **environment(), **meta)
    (out / f"{name}.json").write_text(json.dumps(sidecar, indent=2, default=str) + "\n")
    return png

"""A run's record: which run this is (an id and the commit its code comes from),
the machine it ran on and the versions it ran with. ``minicb bench`` and ``bench
serve`` write them beside their numbers, and the repository's figures in their
sidecars, so that a number can be traced to the run that measured it."""
import datetime
import os
import platform
import subprocess
import uuid
from pathlib import Path

import torch


def this_run() -> dict:
    """This process's run: an id and the commit its code comes from, made once and
    printed then, so that a notebook's output names the run that its figures' sidecars
    record (each sidecar keeps them under "run")."""
    if not THIS_RUN:
        THIS_RUN.update(run_id=uuid.uuid4().hex[:8], commit=current_commit())
        print(f"run {THIS_RUN['run_id']} at commit {THIS_RUN['commit']}")
    return dict(THIS_RUN)


THIS_RUN: dict = {}


def current_commit() -> str:
    """The commit the code comes from, with "+changes" where minicb's code differs
    from it: MINICB_COMMIT where the checkout has no git (a GPU machine's copy)."""
    if os.environ.get("MINICB_COMMIT"):
        return os.environ["MINICB_COMMIT"]
    def git(*args):
        return subprocess.run(["git", *args], cwd=project_root(), capture_output=True, text=True,
                              timeout=30).stdout.strip()
    try:
        commit = git("rev-parse", "--short=12", "HEAD")
        changed = git("status", "--porcelain", "--", "minicb", "kernels", "workshop")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (commit or "unknown") + ("+changes" if changed and commit else "")


def project_root() -> Path:
    """The repository's root (where pyproject.toml is); else the working directory."""
    here = Path(__file__).resolve().parents[3]
    return here if (here / "pyproject.toml").exists() else Path.cwd()


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

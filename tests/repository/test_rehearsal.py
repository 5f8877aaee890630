"""Every part of a GPU run rehearsed on this CPU (`make gpu-rehearsal`): the full
scale's settings and lengths, the tiny model, fewer requests, each archive checked
as a GPU run's would be. One long test (about 18 minutes on 2 cores), run where
MINICB_REHEARSAL=1 says so, on one worker while the other runs the rest of the tests:
before a GPU window, not in every `make test` nor in CI, whose time it would overrun
(`make gpu-rehearsal` runs it alone)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.long
@pytest.mark.skipif(os.environ.get("MINICB_REHEARSAL") != "1",
                    reason="the GPU run's rehearsal: MINICB_REHEARSAL=1 or make gpu-rehearsal")
def test_every_part_of_a_gpu_run_passes_its_rehearsal(tmp_path):
    result = subprocess.run([sys.executable, "-m", "workshop.gpu.run", "rehearse", "--out", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True)
    print(result.stdout)                                     # each part's notebooks and times
    assert result.returncode == 0 and "all parts passed" in result.stdout, \
        result.stdout[-4000:] + result.stderr[-4000:]

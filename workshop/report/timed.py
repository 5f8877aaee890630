"""python -m workshop.report.timed FILE NAME -- COMMAND...: run COMMAND and add how
long it took, under NAME, to the JSON record FILE, with the machine, its load
before and after, and the commit; exit with COMMAND's status.

``make test`` times its two halves with it into ``scratch/make_test.json``; the
README quotes a run's record, copied to ``figures/cpu/cli/make_test.json``, through
``workshop.book.numbers``, so that the time a reader is promised is one that was measured.
"""
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from workshop.report.scale import current_commit


def timed(path: Path, name: str, command: list[str]) -> int:
    load_before, started = os.getloadavg()[0], time.perf_counter()
    status = subprocess.call(command)
    seconds = time.perf_counter() - started
    record = json.loads(path.read_text()) if path.is_file() else {}
    if record.get("commit") != current_commit():     # another checkout's run: start afresh
        record = dict(commit=current_commit(), machine=platform.processor() or platform.machine(),
                      cores=os.cpu_count())
    record[name] = dict(seconds=round(seconds, 1), passed=status == 0, load_before=round(load_before, 2),
                        load_after=round(os.getloadavg()[0], 2), date=time.strftime("%Y-%m-%d"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2) + "\n")
    return status


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 4 or argv[2] != "--":
        raise SystemExit(__doc__.split("\n\n")[0])
    return timed(Path(argv[0]), argv[1], argv[3:])


if __name__ == "__main__":
    sys.exit(main())

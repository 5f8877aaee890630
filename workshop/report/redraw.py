"""A figure drawn anew from the numbers its sidecar keeps: a GPU run's figure laid out
by today's code without running it again (``python -m workshop.report.redraw
redraw SIDECAR...``). Each sidecar is checked before anything is drawn."""
import argparse
import json
import math
from pathlib import Path

from workshop.report.figures import SCALE_NAMES, redraw_figure
from workshop.report.plots import plot_decode_roofline, plot_kv_bytes, plot_kv_use, plot_throughput_vs_spread


# Figures drawn by a function of the numbers their sidecars keep: a GPU run's figure can
# be laid out anew without running it again.
REDRAW = {"08_decode_roofline": lambda meta: plot_decode_roofline(meta["measurements"], meta["context"]),
          "07_throughput_vs_spread": lambda meta: plot_throughput_vs_spread(
              meta["measurements"], list(next(iter(meta["setup"].values()))["options"]),
              full=meta["scale"] != SCALE_NAMES["cpu"]),
          "02_static_kv_use": lambda meta: plot_kv_use(meta["kv_utilization"]),
          "08_kv_bytes": lambda meta: plot_kv_bytes(meta["traffic"], meta["batch"], meta["context"])}


def read_sidecar(path: Path) -> dict:
    """A sidecar that a figure can be redrawn from, or a ValueError saying what
    is wrong with it: missing, not JSON (a truncated file), not a figure's, or
    numbers that are not numbers (a figure would be drawn without them)."""
    try:
        meta = json.loads(Path(path).read_text())
    except OSError as error:
        raise ValueError(f"cannot read it: {error.strerror or error}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"not JSON ({error}): a truncated or damaged sidecar") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("figure"), str):
        raise ValueError("not a figure's sidecar: it has no \"figure\" naming its PNG")
    name = Path(meta["figure"]).stem
    if name not in REDRAW:
        raise ValueError(f"no drawing of {name} from its sidecar; these have one: {sorted(REDRAW)}")
    CHECKS[name](meta)
    return meta


def check_roofline_numbers(meta: dict):
    """08_decode_roofline's: a context, and for each model shape a "SHAPE | paged"
    series (and maybe others) of rows, each with positive finite numbers."""
    context, measurements = meta.get("context"), meta.get("measurements")
    if not is_positive(context) or not isinstance(measurements, dict) or not measurements:
        raise ValueError("needs a positive \"context\" and a non-empty \"measurements\" "
                         f"object, got context {context!r:.40} and measurements {measurements!r:.40}")
    for key, rows in measurements.items():
        if not isinstance(rows, list) or not rows:
            raise ValueError(f"measurements[{key!r}] must be a non-empty list of rows, "
                             f"got {rows!r:.40}")
        for i, row in enumerate(rows):
            row = row if isinstance(row, dict) else {}
            bad = [f"{f} {row.get(f)!r:.20}" for f in ("batch", "step_ms", "roofline_ms",
                                                       "forward_ms", "host_ms")
                   if not is_positive(row.get(f))]
            if bad:
                raise ValueError(f"measurements[{key!r}][{i}]: numbers must be positive "
                                 f"and finite, got {', '.join(bad)}")
        if f"{key.split(' | ')[0]} | paged" not in measurements:
            raise ValueError(f"measurements[{key!r}]: its shape has no \"| paged\" series to draw")


def check_spread_numbers(meta: dict):
    """07_throughput_vs_spread's: the engines' options (setup), and rounds of
    {cap: {name: summary}}, every round with the same caps and names, each summary
    with positive finite tokens per second."""
    rounds, setup = meta.get("measurements"), meta.get("setup")
    if not isinstance(setup, dict) or not setup or not isinstance(rounds, list) or not rounds:
        raise ValueError("needs a non-empty \"setup\" object and a non-empty \"measurements\" list, "
                         f"got setup {setup!r:.40} and measurements {rounds!r:.40}")
    shape = None
    for i, r in enumerate(rounds):
        if not isinstance(r, dict) or not all(isinstance(runs, dict) and runs for runs in r.values()):
            raise ValueError(f"measurements[{i}] must map each cap to its runs, got {r!r:.40}")
        if shape not in (None, {cap: sorted(runs) for cap, runs in r.items()}):
            raise ValueError(f"measurements[{i}] has other caps or runs than measurements[0]")
        shape = {cap: sorted(runs) for cap, runs in r.items()}
        for cap, runs in r.items():
            for name, run in runs.items():
                run = run if isinstance(run, dict) else {}
                bad = [f"{f} {run.get(f)!r:.20}" for f in ("output_tok_s", "total_tok_s") if not is_positive(run.get(f))]
                if bad:
                    raise ValueError(f"measurements[{i}][{cap!r}][{name!r}]: numbers must be positive "
                                     f"and finite, got {', '.join(bad)}")


def check_kv_use_numbers(meta: dict):
    """02_static_kv_use's: each engine's share of its reserved KV slots, in [0, 1]."""
    shares = meta.get("kv_utilization")
    share = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1  # noqa: E731
    if not (isinstance(shares, dict) and shares and all(map(share, shares.values()))):
        raise ValueError(f"needs \"kv_utilization\": each engine's share in [0, 1], got {shares!r:.60}")


def check_kv_bytes_numbers(meta: dict):
    """08_kv_bytes's: a positive batch and context, and rows of bytes for each KV head count."""
    rows = meta.get("traffic")
    if not (isinstance(rows, list) and rows and is_positive(meta.get("batch")) and is_positive(meta.get("context"))
            and all(isinstance(t, dict) and all(is_positive(t.get(k)) for k in ("kv_heads", "required_gb", "grid_gb"))
                    for t in rows)):
        raise ValueError(f"needs a positive batch and context and \"traffic\" rows of positive kv_heads, "
                         f"required_gb and grid_gb, got {rows!r:.60}")


CHECKS = {"08_decode_roofline": check_roofline_numbers, "07_throughput_vs_spread": check_spread_numbers,
          "02_static_kv_use": check_kv_use_numbers, "08_kv_bytes": check_kv_bytes_numbers}


def is_positive(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def main(argv=None):
    """python -m workshop.report.redraw redraw SIDECAR...: each figure drawn anew from
    its sidecar's numbers, in its folder (redraw_figure). Every sidecar is checked
    before any figure is redrawn."""
    parser = argparse.ArgumentParser(prog="python -m workshop.report.redraw", description=main.__doc__)
    parser.add_argument("command", choices=["redraw"])
    parser.add_argument("sidecars", nargs="+", type=Path)
    parser.add_argument("--why", default="the layout of today's code")
    args = parser.parse_args(argv)
    sidecars = {}
    for path in args.sidecars:
        try:
            sidecars[path] = read_sidecar(path)
        except ValueError as error:
            parser.exit(2, f"{parser.prog}: error: {path}: {error}\n")
    for path, meta in sidecars.items():
        print(redraw_figure(REDRAW[Path(meta["figure"]).stem](meta), meta, path.parent, args.why))


if __name__ == "__main__":
    main()

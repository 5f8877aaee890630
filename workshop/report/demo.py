"""``make figures-cpu``'s run of ``minicb demo``: the same run and the same output, its
figure saved as every figure the repository commits is (``save_figure``: stamped with
the scale too, and its text's legibility measured into its sidecar, which
tests/repository/test_figures.py reads). ``minicb demo`` itself, which a user runs
without the workshop, saves its figure plainly.

    python -m workshop.report.demo [minicb demo's options]
"""
import sys

from minicb.cli import build_parser
from minicb.tools.course import demo
from workshop.report.figures import save_figure


def save(fig, meta):
    return save_figure(fig, "demo_schedules", meta)


def main(argv=None) -> int:
    args = build_parser().parse_args(["demo", *(sys.argv[1:] if argv is None else argv)])
    return demo.main(args, save=save)


if __name__ == "__main__":
    sys.exit(main())

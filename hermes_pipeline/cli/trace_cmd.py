"""``hermes-pipeline trace``: inspect exported traces.

    hermes-pipeline trace show FILE [--slowest N] [--no-color] [--json]

``FILE`` is an ATOF JSON-Lines event file or an ATIF trajectory (detected from its content). The tree
shows durations, token counts and statuses, marks the slowest and the heaviest (most tokens) LLM or
tool call and flags failed, blocked and cancelled scopes; ``--slowest N`` lists the N slowest scopes
at the end. Colour is used on a terminal unless ``--no-color`` is given or ``NO_COLOR`` is set;
``--json`` prints the same tree as one JSON document instead.
Exit codes: 0 shown, 1 the file is missing or is neither format (one line on stderr, never a
traceback), 2 usage.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Final

from .terms import TERMS

PROG: Final = "hermes-pipeline trace"


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def _show(args: argparse.Namespace) -> int:
    from ..readers.trace import TraceFileError, load_trace, render_trace, trace_data

    color = not args.no_color and not os.environ.get("NO_COLOR") and sys.stdout.isatty()
    path = Path(args.file).expanduser()
    if not path.exists() and "/" not in args.file and not args.file.endswith((".json", ".jsonl")):
        from ..replay.errors import TrajectoryError
        from .trajectory_files import LazyStore, profile_home, resolve_trajectory

        try:  # a trajectory id or a unique prefix of one: the profile's trajectory store (one lookup)
            path = resolve_trajectory(args.file, LazyStore(profile_home(args.home)))
        except TrajectoryError as exc:
            print(f"{PROG} show: error: {exc}", file=sys.stderr)
            return 1
    try:
        trace = load_trace(path)
        if args.json:
            text = json.dumps(trace_data(trace, slowest=args.slowest), indent=2, ensure_ascii=False) + "\n"
        else:
            text = render_trace(trace, color=color, slowest=args.slowest)
    except TraceFileError as exc:
        print(f"{PROG} show: error: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # never a traceback on the command line
        print(f"{PROG} show: error: {args.file}: cannot render ({type(exc).__name__})", file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


def add_parser(subparsers: Any) -> None:
    """Add the ``trace`` command (with ``show``) to the ``hermes-pipeline`` sub-command parsers."""
    trace = subparsers.add_parser("trace", help="inspect exported traces (ATOF events, ATIF trajectories)",
                                  description="Inspect exported traces: ATOF JSON-Lines event files and ATIF "
                                              "trajectory files.", epilog=TERMS)
    commands = trace.add_subparsers(dest="trace_command", metavar="SUBCOMMAND")
    show = commands.add_parser("show", help="render a trace as a tree: durations, tokens, statuses, outliers",
                               description="Render an ATOF event file or an ATIF trajectory (detected from the "
                                           "content) as a tree with durations, token counts and statuses; the "
                                           "slowest and the heaviest (most tokens) LLM or tool call are marked, "
                                           "failed, blocked and cancelled scopes flagged.", epilog=TERMS)
    show.add_argument("file", metavar="FILE|ID", help="an ATOF .jsonl file, an ATIF trajectory .json file, or the "
                                                     "id (or a unique prefix) of a run in the trajectory store")
    show.add_argument("--home", metavar="DIR", help="the profile whose trajectory store an ID is looked up in "
                                                    "(default: $HERMES_HOME, else ~/.hermes)")
    show.add_argument("--slowest", type=_count, default=0, metavar="N",
                      help="also list the N slowest scopes at the end")
    show.add_argument("--no-color", action="store_true", help="plain text, no ANSI colours")
    show.add_argument("--json", action="store_true",
                      help="print the tree as JSON (nodes with kind, label, status, duration_ms, tokens, flags and "
                           "children; problem counts; the --slowest list), for scripts")
    show.set_defaults(func=_show)

    def usage(args: argparse.Namespace) -> int:
        trace.print_help(sys.stderr)
        return 2

    trace.set_defaults(func=usage)


def main(argv: list[str] | None = None) -> int:
    """Run ``trace`` on its own (``python -m hermes_pipeline.cli.trace_cmd show FILE``)."""
    parser = argparse.ArgumentParser(prog="hermes-pipeline")
    add_parser(parser.add_subparsers(dest="command", metavar="COMMAND"))
    args = parser.parse_args(["trace", *(sys.argv[1:] if argv is None else argv)])
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

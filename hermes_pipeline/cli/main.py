"""``hermes-pipeline``: run the demo, inspect plugins and hooks."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .. import __version__
from ..alerts.cli import add_parser as add_alerts_parser
from .audit_cmd import add_parser as add_audit_parser
from .store_cmd import add_parser as add_store_parser
from .config_cmd import add_parser as add_config_parser
from .dashboard_cmd import add_parser as add_dashboard_parser
from .hermes_cmd import add_parser as add_hermes_parser
from .hooks_cmd import add_parser as add_hooks_parser
from .metrics_cmd import add_parser as add_metrics_parser
from .trace_cmd import TERMS
from .replay_cmd import add_parser as add_replay_parser
from .trace_cmd import add_parser as add_trace_parser
from .trajectory_cmd import add_parser as add_trajectory_parser


def _demo(args: argparse.Namespace) -> int:
    from ..demo.run import print_report, run_demo

    from ..config.errors import ConfigError
    from ..config.files import read_config_text

    pipeline_text = None
    if args.pipeline:
        try:  # a regular file of at most 1 MiB, like every pipeline file (a FIFO never hangs the demo)
            pipeline_text = read_config_text(Path(args.pipeline).expanduser())
        except ConfigError as exc:
            print(f"hermes-pipeline demo: error: cannot read {exc}", file=sys.stderr)
            return 1
    result = run_demo(Path(args.workspace) if args.workspace else None, pipeline_text=pipeline_text)
    print_report(result, sys.stdout)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    parser = argparse.ArgumentParser(
        prog="hermes-pipeline",
        description="Telemetry and middleware engine for LLM agent runtimes (hermes.observer.v1, "
                    "hermes.middleware.v1).",
        epilog=TERMS + " The pipeline file is the plugins.toml (or YAML) selected by HERMES_NEMO_RELAY_PLUGINS_TOML.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser("demo", help="run a scripted agent session against a local model and print its tree",
                          description="Start a deterministic OpenAI-compatible model on 127.0.0.1, run a two-turn "
                                      "session of the reference agent (real read_file/write_file tools, a policy "
                                      "plugin, middleware, an approval and a subagent) through a pipeline file "
                                      "that enables ATOF, ATIF and OTLP (to a receiver on 127.0.0.1), and print "
                                      "what happened and where each output went.", epilog=TERMS)
    demo.add_argument("--workspace", metavar="DIR", help="directory for the demo's files (default: a new temp dir)")
    demo.add_argument("--pipeline", metavar="FILE",
                      help="pipeline file to run with (default: the packaged one, same as pipelines/demo.toml); "
                           "its output directories go under the workspace and OTLP goes to the demo's receiver")
    demo.set_defaults(func=_demo)
    add_hooks_parser(sub)
    add_alerts_parser(sub)
    add_audit_parser(sub)
    add_store_parser(sub)
    add_config_parser(sub)
    add_dashboard_parser(sub)
    add_hermes_parser(sub)
    add_metrics_parser(sub)
    add_trace_parser(sub)
    add_replay_parser(sub)
    add_trajectory_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hermes-pipeline`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help()
        return 2
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""``hermes-pipeline``: run the demo, inspect plugins and hooks."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .. import __version__
from .config_cmd import add_parser as add_config_parser
from .metrics_cmd import add_parser as add_metrics_parser
from .trace_cmd import add_parser as add_trace_parser


def _demo(args: argparse.Namespace) -> int:
    from ..demo.run import print_report, run_demo

    pipeline_text = None
    if args.pipeline:
        try:
            pipeline_text = Path(args.pipeline).read_text(encoding="utf-8")
        except OSError as exc:
            print(f"hermes-pipeline demo: error: cannot read {args.pipeline}: {exc.strerror or exc}", file=sys.stderr)
            return 1
    result = run_demo(Path(args.workspace) if args.workspace else None, pipeline_text=pipeline_text)
    print_report(result, sys.stdout)
    return 0


def _hooks(args: argparse.Namespace) -> int:
    from ..contract.hooks import MIDDLEWARE_FIELDS, OBSERVER_HOOKS

    for info in OBSERVER_HOOKS.values():
        flags = ", ".join(f for f, on in (("gated", info.must_gate), ("return used", info.return_used)) if on)
        print(f"{info.name:<26} {info.family:<12} hang class {info.hang_class}"
              f"{'  (' + flags + ')' if flags else ''}")
        if args.fields:
            print("    " + ", ".join(info.fields))
    for kind, fields in MIDDLEWARE_FIELDS.items():
        print(f"middleware {kind:<15} middleware")
        if args.fields:
            print("    " + ", ".join(fields))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    parser = argparse.ArgumentParser(
        prog="hermes-pipeline",
        description="Telemetry and middleware engine for LLM agent runtimes (hermes.observer.v1, "
                    "hermes.middleware.v1).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser("demo", help="run a scripted agent session against a local model and print its tree",
                          description="Start a deterministic OpenAI-compatible model on 127.0.0.1, run a two-turn "
                                      "session of the reference agent (real read_file/write_file tools, a policy "
                                      "plugin, middleware, an approval and a subagent) through a pipeline file "
                                      "that enables ATOF, ATIF and OTLP (to a receiver on 127.0.0.1), and print "
                                      "what happened and where each output went.")
    demo.add_argument("--workspace", metavar="DIR", help="directory for the demo's files (default: a new temp dir)")
    demo.add_argument("--pipeline", metavar="FILE",
                      help="pipeline file to run with (default: the packaged one, same as pipelines/demo.toml); "
                           "its output directories go under the workspace and OTLP goes to the demo's receiver")
    demo.set_defaults(func=_demo)
    hooks = sub.add_parser("hooks", help="list the observer hooks and middleware kinds of the contract")
    hooks.add_argument("--fields", action="store_true", help="also list each hook's payload fields")
    hooks.set_defaults(func=_hooks)
    add_config_parser(sub)
    add_metrics_parser(sub)
    add_trace_parser(sub)
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

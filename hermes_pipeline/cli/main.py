"""``hermes-pipeline``: run the demo, inspect plugins and hooks."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import import_module
from pathlib import Path
from typing import Final

from ..contract.versions import PACKAGE_VERSION as __version__
from .terms import TERMS

COMMANDS: Final[dict[str, str]] = {
    "hooks": "hermes_pipeline.cli.hooks_cmd",
    "alerts": "hermes_pipeline.alerts.cli",
    "audit": "hermes_pipeline.cli.audit_cmd",
    "prune": "hermes_pipeline.cli.store_cmd",
    "doctor": "hermes_pipeline.cli.store_cmd",
    "config": "hermes_pipeline.cli.config_cmd",
    "dashboard": "hermes_pipeline.cli.dashboard_cmd",
    "hermes": "hermes_pipeline.cli.hermes_cmd",
    "metrics": "hermes_pipeline.cli.metrics_cmd",
    "trace": "hermes_pipeline.cli.trace_cmd",
    "replay": "hermes_pipeline.cli.replay_cmd",
    "trajectory": "hermes_pipeline.cli.trajectory_cmd",
}
"""Command name → the module whose ``add_parser(subparsers)`` adds it (in ``--help`` order). Running one
command imports only its own module, so ``hermes-pipeline dashboard`` does not pay for the others."""


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
    headers: dict[str, str] = {}
    for item in args.otlp_header or ():
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            print(f"hermes-pipeline demo: error: --otlp-header {item!r}: expected NAME=VALUE", file=sys.stderr)
            return 2
        headers[name.strip()] = value
    if headers and not args.otlp:
        print("hermes-pipeline demo: error: --otlp-header needs --otlp URL (a pipeline file names its own headers)",
              file=sys.stderr)
        return 2
    if args.otlp is not None and not args.otlp.startswith(("http://", "https://")):
        print(f"hermes-pipeline demo: error: --otlp {args.otlp!r}: expected an http:// or https:// URL",
              file=sys.stderr)
        return 2
    result = run_demo(Path(args.workspace) if args.workspace else None, pipeline_text=pipeline_text,
                      keep_endpoints=pipeline_text is not None, otlp=args.otlp, otlp_headers=headers)
    print_report(result, sys.stdout)
    return 0


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests); with ``command`` (a name of
    :data:`COMMANDS`) only that command's module is imported and added."""
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
                                      "that enables ATOF, ATIF and OTLP (by default to a receiver on 127.0.0.1), "
                                      "and print "
                                      "what happened and where each output went.", epilog=TERMS)
    demo.add_argument("--workspace", metavar="DIR", help="directory for the demo's files (default: a new temp dir)")
    demo.add_argument("--pipeline", metavar="FILE",
                      help="pipeline file to run with (default: the packaged one, same as pipelines/demo.toml); "
                           "its output directories go under the workspace and its OTLP endpoints are kept, so the "
                           "spans go to the backend it names (e.g. pipelines/mlflow.toml, pipelines/phoenix.toml)")
    demo.add_argument("--otlp", metavar="URL",
                      help="send the OTLP traces to URL (e.g. http://127.0.0.1:4318/v1/traces) instead of the "
                           "pipeline's endpoints or the demo's own receiver")
    demo.add_argument("--otlp-header", metavar="NAME=VALUE", action="append",
                      help="a header for --otlp (repeatable), e.g. x-mlflow-experiment-id=0 for MLflow")
    demo.set_defaults(func=_demo)
    modules = [COMMANDS[command]] if command in COMMANDS else list(dict.fromkeys(COMMANDS.values()))
    for name in modules:
        import_module(name).add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hermes-pipeline`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help()
        return 2
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""``hermes-pipeline hermes install | doctor``: wire the bridge into a Hermes Agent profile and check it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
import sys
from typing import Any

from ..hermes.facts import PIPELINE_VARIABLE


def _install(args: argparse.Namespace) -> int:
    from ..hermes.install import InstallError, enable_bridge

    try:
        result = enable_bridge(args.home)
    except InstallError as exc:
        print(f"hermes-pipeline hermes install: error: {exc}", file=sys.stderr)
        return 1
    if result.changes:
        verb = "created" if result.created else "updated"
        print(f"{verb} {result.config_path}: " + "; ".join(result.changes))
    else:
        print(f"{result.config_path}: the bridge is already enabled")
    print(f"next: export {PIPELINE_VARIABLE}=/path/to/plugins.toml, then run "
          f"`hermes-pipeline hermes doctor{' --home ' + args.home if args.home else ''}`")
    return 0


def _store_checks(report: Any) -> None:
    """The trajectory store: where it writes, and any file of it that git tracks (an error: the store
    holds full conversations and must stay out of version control)."""
    from ..config.profile_config import load_profile_settings
    from ..hermes.doctor import Check
    from ..sinks.trajectory_store import tracked_store_files

    home = Path(report.home)
    settings = load_profile_settings(home, log=False).trajectories
    directory = settings.directory(home)
    tracked = tracked_store_files(home, directory)
    if tracked:
        report.checks.append(Check("trajectory store", "fail", f"git tracks {len(tracked)} file(s) under {directory} "
                                   f"(e.g. {tracked[0]})", f"git rm --cached -r {directory}; the store's .gitignore "
                                   "entry keeps new files out"))
    elif settings.enabled:
        report.checks.append(Check("trajectory store", "ok", f"records every run in {directory}"))
    else:
        report.checks.append(Check("trajectory store", "info", "off (observability.trajectories.enabled)"))


def _doctor(args: argparse.Namespace) -> int:
    from ..hermes.doctor import diagnose

    report = diagnose(args.home)
    _store_checks(report)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        print("\n".join(report.lines()))
    return 0 if report.ok else 1


def add_parser(subparsers: Any) -> None:
    """Add ``hermes`` and its subcommands to the ``hermes-pipeline`` subparsers."""
    parser = subparsers.add_parser("hermes", help="run Hermes Agent through hermes_pipeline (install, doctor)",
                                   description="The Hermes Agent bridge: a Hermes plugin (entry point "
                                               "hermes_pipeline) that sends Hermes' hooks and middleware through "
                                               f"the pipeline file named by {PIPELINE_VARIABLE}.")
    sub = parser.add_subparsers(dest="hermes_command", metavar="SUBCOMMAND")
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])
    install = sub.add_parser("install", help="enable the bridge in a Hermes profile's config.yaml (comments kept)",
                             description="Add hermes_pipeline to plugins.enabled in <home>/config.yaml (created if "
                                         "missing), keeping comments and layout.")
    install.add_argument("--home", metavar="DIR", help="Hermes profile directory (default: $HERMES_HOME or ~/.hermes)")
    install.set_defaults(func=_install)
    doctor = sub.add_parser("doctor", help="report what is wired: Hermes, the bridge, the pipeline file, conflicts",
                            description="Check Hermes Agent (found, version), the bridge (registered, enabled), "
                                        "the pipeline file (set, valid, destinations) and other observability "
                                        "plugins in the profile. Exit 0 when ready, 1 when a check failed.")
    doctor.add_argument("--home", metavar="DIR", help="Hermes profile directory (default: $HERMES_HOME or ~/.hermes)")
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    doctor.set_defaults(func=_doctor)

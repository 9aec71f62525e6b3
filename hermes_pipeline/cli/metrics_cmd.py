"""``hermes-pipeline metrics``: inspect, package, send and reset a profile's shared metrics (spec 05).

    hermes-pipeline metrics status [--home DIR] [--json]   enabled / send / windows / pending counts
    hermes-pipeline metrics show   [--home DIR] [--json]   the counters
    hermes-pipeline metrics export [--home DIR] [--now]    write due packages now (--now: even if not due)
    hermes-pipeline metrics package --now                  the same as ``export --now`` (SM-57)
    hermes-pipeline metrics send   [--home DIR]            one send pass (needs enabled, send, endpoint)
    hermes-pipeline metrics reset  [--home DIR] [--yes]    delete telemetry/shared_metrics after confirmation

``--home`` defaults to ``$HERMES_HOME``, else ``~/.hermes``. Exit codes: 0 success, 1 failure or
refusal, 2 usage. Errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from ..shared_metrics.clock import SystemClock
from ..shared_metrics.consent import reconcile
from ..shared_metrics.packages import package_and_export
from ..shared_metrics.profile_file import consent_reader, read_profile_consent
from ..shared_metrics.report import counter_rows, store_status
from ..shared_metrics.sender import Sender, endpoint_problem
from ..shared_metrics.store import MetricsStore

PROG: Final = "hermes-pipeline metrics"


def default_home() -> Path:
    """``$HERMES_HOME`` or ``~/.hermes``."""
    return Path(os.environ.get("HERMES_HOME") or "~/.hermes").expanduser()


def _home(args: argparse.Namespace) -> Path:
    return Path(args.home).expanduser() if args.home else default_home()


def _error(command: str, message: str, code: int = 1) -> int:
    print(f"{PROG} {command}: error: {message}", file=sys.stderr)
    return code


def _guard(command: str, fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except OSError as exc:
            return _error(command, f"{exc.strerror or type(exc).__name__}: {exc.filename or ''}".rstrip(": "))
        except Exception as exc:  # never a traceback on the command line
            return _error(command, f"{type(exc).__name__}: {exc}")
    return run


def _status(args: argparse.Namespace) -> int:
    home = _home(args)
    consent = read_profile_consent(home)
    problem = endpoint_problem(consent.endpoint) if consent.send else None
    report: dict[str, Any] = {"home": str(home), "enabled": consent.enabled, "send": consent.send,
                              "endpoint": consent.endpoint,
                              "sending": consent.enabled and consent.send and problem is None,
                              "store": store_status(MetricsStore(home))}
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
        return 0
    store = report["store"]
    print(f"profile:    {home}")
    print(f"collection: {'enabled' if consent.enabled else 'disabled'}")
    send_text = "on" if report["sending"] else "off"
    if consent.send and not consent.enabled:
        send_text += " (send is true but enabled is not: nothing is sent)"
    elif consent.send and problem:
        send_text += f" ({problem})"
    print(f"sending:    {send_text}")
    if not store["exists"]:
        print("store:      none yet")
        return 0
    packages = store["packages"]
    print(f"store:      {store['path']}")
    print(f"install id: {store['install_id'] or '(not created yet)'}")
    print(f"counters:   {store['counter_rows']} rows, {store['pending_counters']} with pending deltas")
    print(f"packages:   {packages['unexported']} unexported, {packages['unsent']} never claimed, "
          f"{packages['pending']} pending, {packages['sent']} sent, {packages['rejected']} rejected; "
          f"{store['outbox_files']} files in outbox/")
    print(f"windows:    {len(store['windows'])}")
    for window in store["windows"]:
        print(f"  {window['opened_at']} .. {window['closed_at'] or window['last_confirmed_at'] + ' (open)'}")
    for metric, values in store["latency_ms"].items():
        if values["p50"] is not None:
            print(f"latency {metric}: p50 {values['p50']} ms, p90 {values['p90']} ms (local only)")
    return 0


def _show(args: argparse.Namespace) -> int:
    rows = counter_rows(MetricsStore(_home(args)))
    if args.json:
        print(json.dumps(rows, indent=2, sort_keys=True))
        return 0
    if not rows:
        print("no counters")
        return 0
    for row in rows:
        print(f"{row['period_start']}  {row['metric_name']:<36} {row['value']:>6} "
              f"(packaged {row['packaged_value']})  {row['dimensions_json']}")
    return 0


def _export(args: argparse.Namespace) -> int:
    store = MetricsStore(_home(args))
    if not store.exists():
        return _error("export", f"no shared-metrics store at {store.directory}")
    result = package_and_export(store, SystemClock().now(), force=args.now)
    if result.error:
        return _error("export", result.error)
    if not result.due:
        print("no packaging run is due today (use --now to package pending deltas anyway)")
    print(f"created {len(result.created)} package(s), wrote {len(result.exported)} file(s) to {store.outbox}")
    return 0


def _send(args: argparse.Namespace) -> int:
    home = _home(args)
    consent = read_profile_consent(home)
    store = MetricsStore(home)
    if not (consent.enabled and consent.send):
        if store.exists():
            conn = store.connect()
            try:
                reconcile(conn, False, SystemClock().now())
            finally:
                conn.close()
        return _error("send", "sending needs telemetry.shared_metrics.enabled and .send both true in "
                              f"{home / 'config.yaml'}")
    problem = endpoint_problem(consent.endpoint)
    if problem:
        return _error("send", problem)
    counts = Sender(store, endpoint=consent.endpoint, consent=consent_reader(home)).run_pass()
    print(f"sent {counts['sent']}, rejected {counts['rejected']}, deferred {counts['deferred']}")
    return 0


def _reset(args: argparse.Namespace) -> int:
    store = MetricsStore(_home(args))
    if not store.directory.exists():
        print(f"nothing to reset: {store.directory} does not exist")
        return 0
    if not args.yes:
        if not sys.stdin.isatty():
            return _error("reset", "refusing to delete without confirmation; pass --yes")
        print(f"This deletes {store.directory}: the install id, every counter and every package file.\n"
              "Packages already sent cannot be recalled. Stop Hermes first.")
        if input("Type 'reset' to continue: ").strip() != "reset":
            print("aborted")
            return 1
    shutil.rmtree(store.directory)
    store.forget_schema_cache()
    print(f"deleted {store.directory}")
    return 0


def add_parser(subparsers: Any) -> None:
    """Add ``metrics`` and its subcommands to the ``hermes-pipeline`` subparsers."""
    parser = subparsers.add_parser("metrics", help="inspect, package, send or reset the profile's shared metrics",
                                   description="Shared metrics of one profile: opt-in, aggregate counters "
                                               "without prompts, IDs or names, off unless the profile's "
                                               "config.yaml sets telemetry.shared_metrics.enabled: true.")
    sub = parser.add_subparsers(dest="metrics_command", metavar="SUBCOMMAND")
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])

    def command(name: str, fn: Callable[[argparse.Namespace], int], help_text: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--home", metavar="DIR", help="profile directory (default: $HERMES_HOME or ~/.hermes)")
        p.set_defaults(func=_guard(name, fn))
        return p

    command("status", _status, "show enabled / send, consent windows and pending counts").add_argument(
        "--json", action="store_true", help="machine-readable output")
    command("show", _show, "list the counters").add_argument("--json", action="store_true",
                                                            help="machine-readable output")
    for name in ("export", "package"):
        command(name, _export, "write due packages to outbox/ now").add_argument(
            "--now", action="store_true", help="package pending deltas even if a package was already made today")
    command("send", _send, "run one send pass (needs enabled, send and an endpoint)")
    command("reset", _reset, "delete telemetry/shared_metrics (identity, counters, packages)").add_argument(
        "--yes", action="store_true", help="do not ask for confirmation")

"""``hermes-pipeline alerts run|daemon|test|status`` (spec 06 BOOK-45)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..config.alert_settings import AlertSettings, alerts_from
from .rules import SEVERITY, TITLES

EPILOG = ("The rules read the profile's observability store ($HERMES_HOME/observability/observability.sqlite3, "
          "written when observability.audit.enabled is true) and are configured under observability.alerts.* "
          "in $HERMES_HOME/config.yaml (see docs/alerts.md). Notifier secrets come from environment variables: "
          "HERMES_ALERTS_WEBHOOK_URL, HERMES_ALERTS_FEISHU_URL, HERMES_ALERTS_FEISHU_SECRET, "
          "HERMES_ALERTS_SMTP_USER, HERMES_ALERTS_SMTP_PASSWORD. LLM = the language model the agent calls.")


def _home(args: argparse.Namespace) -> Path:
    return Path(args.home or os.environ.get("HERMES_HOME") or "~/.hermes").expanduser()


def _settings(home: Path) -> AlertSettings:
    from ..config.diagnostics import Diagnostics
    from ..config.profile_config import CONFIG_NAME, read_yaml_mapping

    diagnostics = Diagnostics(log=False)
    raw, _ = read_yaml_mapping(home / CONFIG_NAME)
    settings = alerts_from(raw, diagnostics)
    for item in diagnostics.items:
        print(f"hermes-pipeline alerts: warning: {item.field}: {item.message}", file=sys.stderr)
    return settings


def _notifiers(settings: AlertSettings) -> tuple[list[Any], list[str]]:
    from .delivery import build
    from .evaluator import environment

    return build(settings, environment())


def _open(home: Path) -> Any:
    from ..sinks.observability_store.db import connect, store_path

    return connect(store_path(home), create=False)


def _evaluate(args: argparse.Namespace, home: Path) -> int:
    import sqlite3

    from ..sinks.observability_store.db import StoreError, store_error, store_path
    from .evaluator import run_once

    settings = _settings(home)
    if not settings.enabled:
        print("hermes-pipeline alerts: observability.alerts.enabled is false in config.yaml; nothing evaluated",
              file=sys.stderr)
        return 0
    notifiers, problems = _notifiers(settings)
    for problem in problems:
        print(f"hermes-pipeline alerts: notifier {problem}", file=sys.stderr)
    try:
        conn = _open(home)
    except StoreError as exc:
        print(f"hermes-pipeline alerts: error: {exc}", file=sys.stderr)
        return 1
    try:
        report = run_once(conn, datetime.now(timezone.utc), settings, notifiers, cancel=getattr(args, "cancel", None))
    except (StoreError, sqlite3.Error, UnicodeDecodeError, OSError) as exc:  # busy, full or damaged: typed, the next run tries again
        print(f"hermes-pipeline alerts: error: {store_error(store_path(home), exc)}", file=sys.stderr)
        return 1
    finally:
        conn.close()
    if getattr(args, "json", False):
        print(json.dumps(report.as_json(), indent=2))
    else:
        for item in report.sent:
            unconfirmed = "; ".join(item.get("unconfirmed", ()))
            print(f"sent [{item['severity']}] {item['title']}" + (f" (unconfirmed, not sent again: {unconfirmed})"
                                                                  if unconfirmed else ""))
        for item in report.failed:
            print(f"NOT delivered (kept pending) [{item['severity']}] {item['title']}: {'; '.join(item['errors'])}")
        if not report.sent and not report.failed:
            print(f"{len(report.firing)} firing, nothing due")
    return 1 if report.failed else 0


def _run(args: argparse.Namespace) -> int:
    return _evaluate(args, _home(args))


STOP_GRACE_S = 1.5
"""After SIGTERM, how long the daemon lets a run record what it sent before it exits (within 2 s)."""


def _daemon(args: argparse.Namespace) -> int:
    """Evaluate every ``--interval`` seconds until SIGTERM or SIGINT. Each run works on a thread of its own
    while the main thread waits for the signal: a stop cancels the run's sending at once (requests cut,
    the waits ended), gives it :data:`STOP_GRACE_S` to record what went out, and exits, so the daemon is
    gone within 2 s even in the middle of a delivery. What was not sent stays due for the next start."""
    import threading

    from .._stop_signal import StopSignal

    home = _home(args)
    cancel = threading.Event()
    with StopSignal() as stop:
        print(f"hermes-pipeline alerts daemon: evaluating every {args.interval:g} s (SIGTERM stops)", flush=True)
        while not stop.stopped:
            run = threading.Thread(target=_evaluate, args=(argparse.Namespace(json=False, cancel=cancel), home),
                                   name="hermes-alerts-run", daemon=True)
            run.start()
            while run.is_alive() and not stop.wait(0.1):
                pass
            if stop.stopped:
                cancel.set()
                run.join(STOP_GRACE_S)
                break
            sys.stdout.flush()
            stop.wait(args.interval)
    print("hermes-pipeline alerts daemon: stopped", flush=True)
    return 0


def _test(args: argparse.Namespace) -> int:
    from .delivery import Message, deliver

    rule = args.rule.upper()
    if rule not in SEVERITY:
        print(f"hermes-pipeline alerts test: error: unknown rule {args.rule} (known: {', '.join(SEVERITY)})",
              file=sys.stderr)
        return 2
    settings = _settings(_home(args))
    notifiers, problems = _notifiers(settings)
    for problem in problems:
        print(f"hermes-pipeline alerts test: notifier {problem}", file=sys.stderr)
    message = Message("test", SEVERITY[rule], f"TEST {rule} {TITLES[rule]}",
                      f"This is a test of alert {rule} ({TITLES[rule]}) from hermes-pipeline; nothing is wrong.",
                      ({"rule": rule, "key": "test", "severity": SEVERITY[rule], "kind": "test"},))
    outcome = deliver(message, notifiers)
    for name in (getattr(n, "name", "?") for n in notifiers):
        failed = [e for e in outcome.errors if e.startswith(name + ":")]
        print(f"{name}: {'FAILED ' + failed[0] if failed else 'sent'}")
    if not notifiers:
        print("no notifier is configured (observability.alerts.notifiers)", file=sys.stderr)
    return 0 if outcome.delivered and not problems else 1


def _status(args: argparse.Namespace) -> int:
    from datetime import datetime as dt

    import sqlite3

    from ..sinks.observability_store.db import StoreError, store_error, store_path
    from . import state

    home = _home(args)
    settings = _settings(home)
    notifiers, problems = _notifiers(settings)
    try:
        conn = _open(home)
    except StoreError as exc:
        print(f"hermes-pipeline alerts status: error: {exc}", file=sys.stderr)
        return 1
    try:
        now = dt.now(timezone.utc)
        rows = [{"rule": r.rule, "key": r.key, "severity": SEVERITY.get(r.rule, "?"), "status": r.status,
                 "first_fired_at": r.first_fired_at, "last_notified_at": r.last_notified_at}
                for r in state.rows(conn) if r.status != "resolved"]
        sent = state.sent_last_hour(conn, now)
        digest = conn.execute("SELECT MAX(key) FROM alert_state WHERE rule = '~digest' AND status = 'sent'"
                              ).fetchone()[0]
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        print(f"hermes-pipeline alerts status: error: {store_error(store_path(home), exc)}", file=sys.stderr)
        return 1
    finally:
        conn.close()
    out = {"enabled": settings.enabled, "notifiers": [getattr(n, "name", "?") for n in notifiers],
           "notifier_problems": problems, "alerts": rows, "sent_last_hour": sent,
           "max_per_hour": settings.max_per_hour, "last_digest": digest}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"alerts {'enabled' if settings.enabled else 'DISABLED'}; notifiers: "
          f"{', '.join(out['notifiers']) or 'none'}; sent in the last hour: {sent}/{settings.max_per_hour}; "
          f"last digest: {digest or 'never'}")
    for problem in problems:
        print(f"  notifier {problem}")
    for row in rows:
        print(f"  {row['rule']} [{row['severity']}] {row['key']}: {row['status']} since {row['first_fired_at']}"
              f" (last notified {row['last_notified_at'] or 'never'})")
    if not rows:
        print("  nothing firing")
    return 0


def add_parser(sub: Any) -> None:
    """Register ``alerts`` and its subcommands on the top-level parser's subparsers."""
    alerts = sub.add_parser("alerts", help="evaluate the alert rules over the observability store and notify",
                            description="Alerts that stay quiet until they matter: critical ones (cost spike, "
                                        "agent crashed, LLM outage) at once, medium ones (skill failing, task "
                                        "class degraded, write storm) batched after 5 minutes, and a daily digest; "
                                        "one notification per alert while it fires, a resolved message when it "
                                        "clears, at most observability.alerts.max_per_hour per hour.",
                            epilog=EPILOG)
    alerts.set_defaults(func=lambda a: (alerts.print_help(), 2)[1])
    cmds = alerts.add_subparsers(dest="alerts_command", metavar="SUBCOMMAND")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--home", metavar="DIR", help="the profile directory (default $HERMES_HOME, else ~/.hermes)")

    run = cmds.add_parser("run", help="evaluate all rules once and send what is due (for a 1-minute timer)",
                          description="Evaluate every rule once, update the alert state and send what is due. "
                                      "Exit 0, or 1 when a notification could not be delivered (it stays pending "
                                      "for the next run) or the store cannot be read.", epilog=EPILOG)
    common(run)
    run.add_argument("--json", action="store_true", help="print what fired, was sent and failed as JSON")
    run.set_defaults(func=_run)
    daemon = cmds.add_parser("daemon", help="evaluate in a loop until SIGTERM or Ctrl-C", epilog=EPILOG)
    common(daemon)
    daemon.add_argument("--interval", type=float, default=60.0, metavar="SECONDS",
                        help="seconds between evaluations (default 60)")
    daemon.set_defaults(func=_daemon)
    test = cmds.add_parser("test", help="send a sample alert of RULE through the configured notifiers",
                           description="Send a clearly marked test message for RULE (A-C1 .. A-L1) through every "
                                       "configured notifier; exit 1 when one of them fails.", epilog=EPILOG)
    common(test)
    test.add_argument("rule", metavar="RULE", help=f"one of {', '.join(SEVERITY)}")
    test.set_defaults(func=_test)
    status = cmds.add_parser("status", help="what is firing, what was sent, which notifiers are configured",
                             epilog=EPILOG)
    common(status)
    status.add_argument("--json", action="store_true", help="print the status as JSON")
    status.set_defaults(func=_status)

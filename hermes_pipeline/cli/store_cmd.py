"""``hermes-pipeline prune`` and ``hermes-pipeline doctor``: retention and hygiene of a profile's local stores
(spec 06 BOOK-34, BOOK-48, BOOK-49).

    hermes-pipeline prune [--dry-run] [--home DIR] [--json]   apply the retention table now
    hermes-pipeline doctor [--home DIR] [--json]              store health, tracked files, clock

``prune`` deletes trajectory files older than ``observability.trajectories.retention_days`` (90)
and the store's run rows (``task_runs``, ``llm_calls``, ``skill_runs``, resolved ``alert_state``)
older than ``observability.retention.runs_days`` (90), its histories (``skill_history``,
``memory_changes``) older than ``observability.retention.history_days`` (365), then the kept skill and
memory texts (``observability/blobs``) that no kept row or recording refers to. Each store keeps its
own retention logic; pipeline outputs and shared metrics are never touched. ``doctor`` exits 1
when the store is damaged, unreadable, its writes are failing (disk full, damaged pages, a lock held
past the wait: the writers' counts in ``observability/write-failures.json``), or git tracks files
under ``trajectories/`` or ``observability/``; rows lost earlier are a warning with their count.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Final

PROG: Final = "hermes-pipeline"


def _home(args: argparse.Namespace) -> Path:
    return Path(args.home or os.environ.get("HERMES_HOME") or "~/.hermes").expanduser()


def _prune(args: argparse.Namespace) -> int:
    from ..config.profile_config import load_profile_settings
    from ..sinks.observability_store.db import StoreError
    from ..sinks.observability_store.retention import retain
    from ..sinks.trajectory_store.prune import prune_store as prune_files

    home = _home(args)
    settings = load_profile_settings(home, log=False)
    trajectories = settings.trajectories
    files = prune_files(trajectories.directory(home), trajectories.retention_days, dry_run=args.dry_run)
    try:
        retention = retain(home, runs_days=settings.observability.runs_days,
                           history_days=settings.observability.history_days, dry_run=args.dry_run)
    except StoreError as exc:
        print(f"{PROG} prune: error: {exc}", file=sys.stderr)
        return 1
    rows, blobs = retention.rows, retention.blobs
    report = {"dry_run": args.dry_run, "trajectory_files": [str(p) for p in files], "store_rows": rows,
              "blobs": blobs.as_dict()}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    verb = "would delete" if args.dry_run else "deleted"
    print(f"{verb} {len(files)} trajectory file(s) older than {trajectories.retention_days} day(s)")
    print(f"{verb} {sum(rows.values())} store row(s)" + (": " + ", ".join(f"{t} {n}" for t, n in rows.items() if n)
                                                        if any(rows.values()) else ""))
    print(f"{verb} {blobs.deleted} kept skill/memory text(s) nothing refers to any more ({blobs.referenced} "
          f"referenced, {blobs.recent} used within a day: kept"
          + (f"; {blobs.failed} could not be deleted" if blobs.failed else "")
          + (f"; none swept: {blobs.skipped}" if blobs.skipped else "") + ")")
    return 0


def store_health(home: Path) -> dict[str, Any]:
    """What ``doctor`` says about the observability store of ``home``."""
    import sqlite3

    from ..sinks.observability_store.db import StoreError, connect, store_path
    from ..sinks.observability_store.failures import classify, read_failures
    from ..sinks.observability_store.schema import COLUMNS

    path = store_path(home)
    out: dict[str, Any] = {"path": str(path), "exists": path.is_file()}
    if path.parent.is_dir():  # what the writers could not write, and damaged files they moved aside
        out["write_failures"] = read_failures(path)
        out["moved_aside"] = sorted(p.name for p in path.parent.glob(path.name + ".corrupt-*"))
    if not path.is_file():
        return out
    out["mode"] = oct(path.stat().st_mode & 0o777)
    try:
        conn = connect(path, create=False, readonly=True)
    except StoreError as exc:
        out["error"] = str(exc)
        out["error_kind"] = classify(exc)
        return out
    try:
        checks = [str(row[0]) for row in conn.execute("PRAGMA quick_check(5)")]
        out["integrity"] = "ok" if checks == ["ok"] else "; ".join(checks)
        out["journal_mode"] = conn.execute("PRAGMA journal_mode").fetchone()[0]
        out["rows"] = {table: conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in COLUMNS}
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["error_kind"] = classify(exc)
    finally:
        conn.close()
    return out


def store_problems(store: dict[str, Any]) -> tuple[list[str], list[str]]:
    """``(problems, warnings)`` of :func:`store_health`: a store that cannot be read or written is a problem
    (never "ok"); rows lost in the past, and damaged files moved aside, are warnings."""
    problems: list[str] = []
    warnings: list[str] = []
    if store.get("error"):
        kind = store.get("error_kind")
        what = {"locked": "locked by another process past the wait", "damaged": "damaged (unreadable)"}.get(
            str(kind), "unreadable")
        problems.append(f"the observability store is {what}: {store['error']}")
    elif store.get("integrity") not in (None, "ok"):
        problems.append(f"the observability store is damaged: {store.get('integrity')}")
    failures = store.get("write_failures") or {}
    lost = int(failures.get("rows_lost") or 0)
    kinds = ", ".join(f"{kind} {int(v.get('rows_lost') or 0)}" for kind, v in sorted(failures.get("kinds", {}).items())
                      if v.get("rows_lost"))
    if failures.get("failing"):
        problems.append(f"writes to the observability store fail since {failures.get('failing_since')} "
                        f"({failures['failing']}); {lost} row(s) lost so far" + (f" ({kinds})" if kinds else ""))
    elif lost:
        warnings.append(f"{lost} row(s) could not be written to the observability store ({kinds}); it is writable "
                        f"again since {failures.get('recovered_at') or 'the last successful write'}")
    for name in store.get("moved_aside") or []:
        warnings.append(f"a damaged store was moved aside to observability/{name} (kept, never deleted)")
    return problems, warnings


def _doctor(args: argparse.Namespace) -> int:
    from ..config.profile_config import load_profile_settings
    from ..export.clock_trust import LEDGER_NAME, read_skew
    from ..logs.clock import clock_synchronized
    from ..export.gitignore import git_work_tree, tracked_store_files

    home = _home(args)
    settings = load_profile_settings(home, log=False)
    trajectory_dir = settings.trajectories.directory(home)
    tracked = tracked_store_files(home, trajectory_dir) + tracked_store_files(home, home / "observability")
    store = store_health(home)
    clock = clock_synchronized()
    problems: list[str] = []
    warnings: list[str] = []
    if tracked:
        problems.append(f"git tracks {len(tracked)} file(s) of the local stores (run: git rm --cached "
                        f"{' '.join(tracked[:3])}{' ...' if len(tracked) > 3 else ''})")
    store_errors, store_warnings = store_problems(store)
    problems += store_errors
    warnings += store_warnings
    if settings.observability.audit_enabled and not store["exists"]:
        warnings.append("observability.audit.enabled is true but the store has not been written yet")
    if clock is False:
        warnings.append("the system clock is not NTP-synchronised (clock_not_synchronized): run NTP")
    skews = [skew for skew in (read_skew(trajectory_dir / LEDGER_NAME), read_skew(home / "observability" / LEDGER_NAME))
             if skew is not None]
    for skew in skews:
        warnings.append(f"{skew.get('store')}: retention skipped, nothing deleted: {skew.get('reason')} "
                        "(a clock retention cannot trust; fix the system clock, the next prune on a trusted clock "
                        "resumes)")
    report = {"home": str(home), "git_work_tree": str(git_work_tree(home) or "") or None, "tracked_files": tracked,
              "store": store, "audit_enabled": settings.observability.audit_enabled,
              "clock_synchronized": clock, "clock_skew": skews, "problems": problems, "warnings": warnings}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"profile {home}")
        writes = store.get("write_failures") or {}
        print(f"  observability store: {store['path']} " + (
            f"({store.get('journal_mode')}, integrity {store.get('integrity')}, "
            f"{sum(store.get('rows', {}).values())} rows, "
            f"{'writes FAILING' if writes.get('failing') else 'writes ok'}, {writes.get('rows_lost') or 0} rows lost)"
            if store["exists"] and "rows" in store else
            "(not created)" if not store["exists"] else f"(ERROR: {store.get('error')})"))
        print(f"  git: {'work tree ' + str(report['git_work_tree']) if report['git_work_tree'] else 'not in a work tree'}"
              f"; tracked store files: {len(tracked)}")
        print(f"  clock: {'NTP-synchronised' if clock else 'NOT synchronised' if clock is False else 'unknown'}")
        for line in problems:
            print(f"  ERROR: {line}")
        for line in warnings:
            print(f"  WARNING: {line}")
    return 1 if problems else 0


def add_parser(sub: Any) -> None:
    """Register ``prune`` and ``doctor`` on the top-level subparsers."""
    prune = sub.add_parser("prune", help="delete trajectories and store rows past their retention",
                           description="Apply the retention table of the profile now (trajectory files 90 days, "
                                       "run rows 90 days, skill history and memory audit 365 days, by default; "
                                       "set in config.yaml). Runs by itself at start and every 24 hours.")
    prune.add_argument("--dry-run", action="store_true", help="only say what would be deleted")
    doctor = sub.add_parser("doctor", help="check the profile's local stores, git hygiene and the clock",
                            description="Report the observability store's health, files of the local stores that "
                                        "git tracks (exit 1), and whether the clock is NTP-synchronised.")
    for p, func in ((prune, _prune), (doctor, _doctor)):
        p.add_argument("--home", metavar="DIR", help="the profile directory (default: $HERMES_HOME, else ~/.hermes)")
        p.add_argument("--json", action="store_true", help="print a JSON object")
        p.set_defaults(func=func)

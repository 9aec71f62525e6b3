"""``hermes-pipeline audit``: the chapter's queries over a profile's observability store (spec 06 §4-§5).

    hermes-pipeline audit skills history NAME   Q-S1: versions of one skill, newest first
    hermes-pipeline audit skills recent         Q-S2: skills changed in the last 7 days
    hermes-pipeline audit skills drift          Q-S3: more than 5 refinements in 30 days
    hermes-pipeline audit skills churn          Q-S4: created/deprecated 3 or more times
    hermes-pipeline audit memory top            Q-M1: memory files edited most in 7 days
    hermes-pipeline audit memory actors         Q-M2: who changes memory (30 days)
    hermes-pipeline audit memory-conflicts [--days 30]   reverts and divergent rewrites across sessions

Every command takes ``--home DIR`` (default ``$HERMES_HOME``, else ``~/.hermes``) and ``--json``
(a JSON list of row objects). The statements are those of the shipped ``queries.sql``. Exit
codes: 0 success (also for no rows), 1 no store, a store that cannot be read (damaged, locked past
the wait: one line naming the file and the reason) or unknown skill, 2 usage.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any, Final

PROG: Final = "hermes-pipeline audit"
SKILL_QUERIES: Final = {"history": "Q-S1", "recent": "Q-S2", "drift": "Q-S3", "churn": "Q-S4"}
MEMORY_QUERIES: Final = {"top": "Q-M1", "actors": "Q-M2"}


def _home(args: argparse.Namespace) -> Path:
    return Path(args.home or os.environ.get("HERMES_HOME") or "~/.hermes").expanduser()


def _connect(args: argparse.Namespace) -> sqlite3.Connection:
    from ..sinks.observability_store.db import connect, store_path

    return connect(store_path(_home(args)), create=False, readonly=True)


def _print(rows: list[dict[str, Any]], as_json: bool, empty: str) -> None:
    if as_json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    if not rows:
        print(empty)
        return
    columns = list(rows[0])
    widths = [max(len(c), *(len("" if r[c] is None else str(r[c])) for r in rows)) for c in columns]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip())
    for row in rows:
        print("  ".join(("" if row[c] is None else str(row[c])).ljust(w) for c, w in zip(columns, widths)).rstrip())


def _fail(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 1


def _unreadable(args: argparse.Namespace, exc: BaseException) -> int:
    """A query that SQLite could not answer (damaged pages, a lock past the wait): a typed message."""
    from ..sinks.observability_store.db import store_error, store_path

    return _fail(str(store_error(store_path(_home(args)), exc)))


def _skills(args: argparse.Namespace) -> int:
    from ..sinks.observability_store.db import StoreError
    from ..sinks.observability_store.queries import run

    try:
        conn = _connect(args)
    except StoreError as exc:
        return _fail(str(exc))
    try:
        if args.view == "history":
            if not args.name:
                return _fail("audit skills history needs a skill NAME")
            rows = run(conn, "Q-S1", skill=args.name)
            if not rows:  # a name holding a credential is stored scrubbed, with the profile's marker key
                from ..config.redaction_key import load_redaction_key
                from ..engine.scrub import safe_scrub

                load_redaction_key(_home(args), has_store=False)
                public = safe_scrub(args.name)
                rows = run(conn, "Q-S1", skill=public) if public != args.name else []
            if not rows:
                known = [r[0] for r in conn.execute("SELECT DISTINCT skill_name FROM skill_history ORDER BY 1")]
                return _fail(f"no history for skill {args.name!r} (skills with history: {', '.join(known) or 'none'})")
        else:
            rows = run(conn, SKILL_QUERIES[args.view])
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        return _unreadable(args, exc)
    finally:
        conn.close()
    _print(rows, args.json, "no skills match")
    return 0


def _memory(args: argparse.Namespace) -> int:
    from ..sinks.observability_store.db import StoreError
    from ..sinks.observability_store.queries import run

    try:
        conn = _connect(args)
    except StoreError as exc:
        return _fail(str(exc))
    try:
        rows = run(conn, MEMORY_QUERIES[args.view])
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        return _unreadable(args, exc)
    finally:
        conn.close()
    _print(rows, args.json, "no memory changes in the window")
    return 0


def _conflicts(args: argparse.Namespace) -> int:
    from ..sinks.observability_store.db import StoreError
    from ..sinks.observability_store.queries import run

    if args.days < 1:
        return _fail("--days must be at least 1")
    try:
        conn = _connect(args)
    except StoreError as exc:
        return _fail(str(exc))
    try:
        reverts = [{"kind": "revert", **row} for row in run(conn, "Q-C1", days=args.days)]
        divergent = [{"kind": "divergent_rewrite", **row} for row in run(conn, "Q-C2", days=args.days)]
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        return _unreadable(args, exc)
    finally:
        conn.close()
    found = reverts + divergent
    if args.json:
        print(json.dumps(found, ensure_ascii=False, indent=2))
        return 0
    if not found:
        print(f"no cross-session memory conflicts in the last {args.days} days")
        return 0
    for row in found:
        ids = list(row.values())[2:4]
        sessions = list(row.values())[4:6]
        times = list(row.values())[6:8]
        print(f"{row['kind']:<17} {row['file_path']}  rows {ids[0]} → {ids[1]}  sessions {sessions[0] or '(user)'} → "
              f"{sessions[1] or '(user)'}  at {times[0]} → {times[1]}")
    return 0


def add_parser(sub: Any) -> None:
    """Register ``audit`` on the top-level subparsers."""
    audit = sub.add_parser("audit", help="skill history and memory audit queries over the observability store",
                           description="Run the chapter's queries (shipped in queries.sql) over the profile's "
                                       "observability store ($HERMES_HOME/observability/observability.sqlite3, "
                                       "written when observability.audit.enabled is true).")
    verbs = audit.add_subparsers(dest="audit_command", metavar="WHAT", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--home", metavar="DIR", help="the profile directory (default: $HERMES_HOME, else ~/.hermes)")
        p.add_argument("--json", action="store_true", help="print a JSON list of rows")

    skills = verbs.add_parser("skills", help="skill version history (Q-S1..Q-S4)",
                              description="history NAME: versions of one skill, newest first (Q-S1); recent: "
                                          "skills changed in the last 7 days (Q-S2); drift: more than 5 refinements "
                                          "in 30 days (Q-S3); churn: created/deprecated 3 or more times (Q-S4).")
    skills.add_argument("view", choices=list(SKILL_QUERIES))
    skills.add_argument("name", nargs="?", help="the skill (directory name) for history")
    common(skills)
    skills.set_defaults(func=_skills)
    memory = verbs.add_parser("memory", help="memory change audit (Q-M1, Q-M2)",
                              description="top: memory files edited most in the last 7 days (Q-M1); actors: who "
                                          "changes memory in the last 30 days (Q-M2).")
    memory.add_argument("view", choices=list(MEMORY_QUERIES))
    common(memory)
    memory.set_defaults(func=_memory)
    conflicts = verbs.add_parser("memory-conflicts", help="cross-session memory conflicts (reverts, divergent "
                                                          "rewrites)",
                                 description="Reverts: a change whose new text is what an earlier change by another "
                                             "session replaced. Divergent rewrites: sessions rewrote the same passage "
                                             "differently. Prints file, row ids, sessions and times.")
    conflicts.add_argument("--days", type=int, default=30, help="the window in days (default 30)")
    common(conflicts)
    conflicts.set_defaults(func=_conflicts)

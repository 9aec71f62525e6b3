"""The tables of the local observability store, exactly as spec 06 §4-§6 and §11 name them.

Every timestamp column is TEXT in SQLite's canonical UTC form ``YYYY-MM-DD HH:MM:SS`` (no ``T``,
no zone, no fraction), so the chapter's ``changed_at >= datetime('now', '-7 days')`` is a correct
string comparison in the plain ``sqlite3`` shell (BOOK-17).
"""

from __future__ import annotations

from typing import Final

from ...export.timestamps import sqlite_utc as sqlite_utc  # the stores' timestamp, stated in export/

SCHEMA_VERSION: Final = 8
"""Kept in ``PRAGMA user_version`` (no bookkeeping table: the store holds exactly the spec's tables).

1: the tables and their first indexes. 2: the time indexes of ``llm_calls`` and ``task_runs`` cover the
columns the dashboard and alerts aggregate, and ``memory_changes`` has a (``file_path``, ``before_excerpt``)
index for the memory-conflict queries (issue #15). 3: ``skill_history`` says where the skill lives and which of
its files changed (``skill_path``, ``changed_files``: Hermes keeps skills in category folders and supporting files
beside ``SKILL.md``), and ``memory_changes`` keeps the SHA-256 of the file after the change (``file_hash``: the
rule that a store writer's row wins over another process's rescan compares it; issue #27). A store of an older version is brought up to date when
a writer opens it (:func:`~.db.ensure_schema`). 4: the ``approvals`` table (issue #27: every approval
and human-input decision, who decided, how long it waited) and the ``tool_errors`` table (failed tool
calls, commands that exited non-zero included). 5: ``task_runs``, ``llm_calls`` and ``tool_errors`` keep the
error's message (``error_message``: scrubbed, at most 1,000 characters), so a failure says why, not only its type
(issue #31). 6: ``skill_history.files`` (issue #28): the SHA-256 of every file of
the skill at that version, by path relative to the skill (JSON), whose texts are kept once per distinct content
under ``observability/blobs`` (:mod:`hermes_pipeline.export.blobs`), so any recorded version can be shown and
compared (:mod:`hermes_pipeline.readers.skill_versions`); rows of older versions read NULL. 7: ``skill_history`` and
``memory_changes`` name the run and the turn that made an agent's change (``trajectory_id``, ``turn_id``): a session
resumed over several processes holds several runs, and a row is tied to its run as ``task_runs`` rows are; NULL for
a rescan's row (nobody's run) and for rows of older versions. 8: writes Hermes' write-approval gate staged
(``skills.write_approval`` / ``memory.write_approval``) and the user's decision on each: the ``staged_writes`` table
(one row per staged write: the tool call, session and run that staged it, then ``approved``, ``denied`` or
``failed``, when and by whom), and ``skill_history`` / ``memory_changes`` rows of an approved write name who approved
it and the staged write (``approved_by``, ``pending_id``); NULL on every other row."""

TABLES: Final[dict[str, str]] = {
    # Skill version history (BOOK-18): one row per mutation, versions 1, 2, ... per skill.
    "skill_history": """CREATE TABLE IF NOT EXISTS skill_history (
        id INTEGER PRIMARY KEY,
        skill_name TEXT NOT NULL,
        version INTEGER NOT NULL,
        change_type TEXT CHECK (change_type IN ('create', 'refine', 'deprecate', 'restore')),
        reason TEXT NULL,
        trigger_session_id TEXT NULL,
        before_hash TEXT NULL,
        after_hash TEXT NULL,
        changed_at TEXT NOT NULL,
        hermes_action TEXT NULL,
        provenance TEXT NULL,
        skill_path TEXT NULL,
        changed_files TEXT NULL,
        files TEXT NULL,
        trajectory_id TEXT NULL,
        turn_id TEXT NULL,
        approved_by TEXT NULL,
        pending_id TEXT NULL,
        UNIQUE (skill_name, version))""",
    # Memory change audit (BOOK-21).
    "memory_changes": """CREATE TABLE IF NOT EXISTS memory_changes (
        id INTEGER PRIMARY KEY,
        file_path TEXT NOT NULL,
        change_type TEXT CHECK (change_type IN ('add', 'modify', 'delete')),
        actor TEXT CHECK (actor IN ('agent-reflection', 'user-direct', 'skill-execution')),
        trigger_session_id TEXT NULL,
        before_excerpt TEXT NULL,
        after_excerpt TEXT NULL,
        reason TEXT NULL,
        changed_at TEXT NOT NULL,
        file_hash TEXT NULL,
        trajectory_id TEXT NULL,
        turn_id TEXT NULL,
        approved_by TEXT NULL,
        pending_id TEXT NULL)""",
    # Staged skill and memory writes (hermes_pipeline extension): Hermes' write-approval gate stages a write
    # instead of making it; the user approves (``/skills approve``) or denies it later, outside any tool call.
    "staged_writes": """CREATE TABLE IF NOT EXISTS staged_writes (
        id INTEGER PRIMARY KEY,
        pending_id TEXT NOT NULL UNIQUE,
        subsystem TEXT CHECK (subsystem IN ('skills', 'memory')),
        action TEXT,
        subject TEXT,
        origin TEXT,
        summary TEXT NULL,
        staged_at TEXT NOT NULL,
        session_id TEXT,
        turn_id TEXT,
        trajectory_id TEXT,
        tool_call_id TEXT,
        status TEXT CHECK (status IN ('staged', 'approved', 'denied', 'failed')),
        decided_at TEXT NULL,
        decided_by TEXT NULL,
        error_message TEXT NULL)""",
    # Approvals and human input (hermes_pipeline extension, issue #27): one row per decision.
    "approvals": """CREATE TABLE IF NOT EXISTS approvals (
        id INTEGER PRIMARY KEY,
        decided_at TEXT NOT NULL,
        session_id TEXT,
        turn_id TEXT,
        trajectory_id TEXT,
        tool_call_id TEXT,
        kind TEXT CHECK (kind IN ('approval', 'human_input')),
        surface TEXT,
        choice TEXT,
        outcome TEXT,
        decided_by TEXT,
        waited_ms INTEGER)""",
    # Failed tool calls (hermes_pipeline extension, issue #27): an error, a block, or a command that exited
    # non-zero while the host said ok (``error_type`` ``command_failed``); the digest groups them by tool.
    "tool_errors": """CREATE TABLE IF NOT EXISTS tool_errors (
        id INTEGER PRIMARY KEY,
        ended_at TEXT NOT NULL,
        session_id TEXT,
        turn_id TEXT,
        trajectory_id TEXT,
        tool_call_id TEXT,
        tool_name TEXT,
        status TEXT,
        error_type TEXT,
        exit_code INTEGER,
        error_message TEXT NULL)""",
    # Supporting tables (BOOK-25).
    "task_runs": """CREATE TABLE IF NOT EXISTS task_runs (
        id INTEGER PRIMARY KEY,
        trajectory_id TEXT,
        session_id TEXT,
        task_id TEXT,
        turn_id TEXT,
        platform TEXT,
        task_class TEXT,
        started_at TEXT,
        ended_at TEXT,
        outcome TEXT CHECK (outcome IN ('success', 'failed', 'cancelled', 'timed_out', 'unknown')),
        llm_calls INTEGER,
        tool_calls INTEGER,
        input_tokens INTEGER,
        output_tokens INTEGER,
        cost_usd REAL,
        error_type TEXT,
        error_message TEXT NULL)""",
    "llm_calls": """CREATE TABLE IF NOT EXISTS llm_calls (
        id INTEGER PRIMARY KEY,
        started_at TEXT,
        ended_at TEXT,
        session_id TEXT,
        turn_id TEXT,
        api_request_id TEXT,
        provider TEXT,
        model TEXT,
        status TEXT CHECK (status IN ('ok', 'error')),
        error_type TEXT,
        input_tokens INTEGER,
        output_tokens INTEGER,
        cache_read_tokens INTEGER,
        cost_usd REAL,
        error_message TEXT NULL)""",
    "skill_runs": """CREATE TABLE IF NOT EXISTS skill_runs (
        id INTEGER PRIMARY KEY,
        skill_name TEXT,
        trajectory_id TEXT,
        turn_id TEXT,
        started_at TEXT,
        ended_at TEXT,
        outcome TEXT)""",
    # Alert noise control (BOOK-44), written by the alert evaluator.
    "alert_state": """CREATE TABLE IF NOT EXISTS alert_state (
        rule TEXT NOT NULL,
        key TEXT NOT NULL,
        status TEXT,
        first_fired_at TEXT,
        last_notified_at TEXT,
        PRIMARY KEY (rule, key))""",
}
"""``CREATE TABLE`` statements by table name (the columns of spec 06, in its order)."""

INDEXES: Final = (
    "CREATE INDEX IF NOT EXISTS skill_history_changed_at ON skill_history (changed_at)",
    "CREATE INDEX IF NOT EXISTS memory_changes_file_changed ON memory_changes (file_path, changed_at)",
    "CREATE INDEX IF NOT EXISTS memory_changes_changed_at ON memory_changes (changed_at)",
    # Q-C1 / Q-C2 (BOOK-24): the earlier row of a conflict is found by file and passage, not by a scan
    # of every earlier change to the file.
    "CREATE INDEX IF NOT EXISTS memory_changes_file_before ON memory_changes (file_path, before_excerpt)",
    # Time windows over the two big tables read the index alone (no row lookups): the columns the
    # dashboard, the alert rules and the digest sum or count follow the time. ``id`` comes second so
    # that rows of the same second keep their insertion order, as with the plain time index before.
    "CREATE INDEX IF NOT EXISTS task_runs_ended_cover ON task_runs "
    "(ended_at, id, outcome, input_tokens, output_tokens, cost_usd)",
    "CREATE INDEX IF NOT EXISTS llm_calls_ended_cover ON llm_calls "
    "(ended_at, id, status, input_tokens, output_tokens, cost_usd)",
    "CREATE INDEX IF NOT EXISTS skill_runs_skill_ended ON skill_runs (skill_name, ended_at)",
    "CREATE INDEX IF NOT EXISTS approvals_decided_at ON approvals (decided_at)",
    "CREATE INDEX IF NOT EXISTS tool_errors_ended_at ON tool_errors (ended_at)",
    "CREATE INDEX IF NOT EXISTS staged_writes_staged_at ON staged_writes (staged_at)",
)
"""``CREATE INDEX`` statements of the current schema version."""

ADDED_COLUMNS: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "skill_history": (("skill_path", "TEXT NULL"), ("changed_files", "TEXT NULL"), ("files", "TEXT NULL"),
                      ("trajectory_id", "TEXT NULL"), ("turn_id", "TEXT NULL"), ("approved_by", "TEXT NULL"),
                      ("pending_id", "TEXT NULL")),
    "memory_changes": (("file_hash", "TEXT NULL"), ("trajectory_id", "TEXT NULL"), ("turn_id", "TEXT NULL"),
                       ("approved_by", "TEXT NULL"), ("pending_id", "TEXT NULL")),
    "task_runs": (("error_message", "TEXT NULL"),),
    "llm_calls": (("error_message", "TEXT NULL"),),
    "tool_errors": (("error_message", "TEXT NULL"),),
}
"""Columns later versions added to a table (``ALTER TABLE … ADD COLUMN`` on upgrade; old rows read NULL)."""

RETIRED_INDEXES: Final = ("task_runs_ended_at", "llm_calls_ended_at")
"""Indexes of older versions that a current one replaces (dropped on upgrade)."""

COLUMNS: Final[dict[str, tuple[str, ...]]] = {
    "skill_history": ("id", "skill_name", "version", "change_type", "reason", "trigger_session_id", "before_hash",
                      "after_hash", "changed_at", "hermes_action", "provenance", "skill_path", "changed_files",
                      "files", "trajectory_id", "turn_id", "approved_by", "pending_id"),
    "memory_changes": ("id", "file_path", "change_type", "actor", "trigger_session_id", "before_excerpt",
                       "after_excerpt", "reason", "changed_at", "file_hash", "trajectory_id", "turn_id", "approved_by",
                       "pending_id"),
    "staged_writes": ("id", "pending_id", "subsystem", "action", "subject", "origin", "summary", "staged_at",
                      "session_id", "turn_id", "trajectory_id", "tool_call_id", "status", "decided_at", "decided_by",
                      "error_message"),
    "task_runs": ("id", "trajectory_id", "session_id", "task_id", "turn_id", "platform", "task_class", "started_at",
                  "ended_at", "outcome", "llm_calls", "tool_calls", "input_tokens", "output_tokens", "cost_usd",
                  "error_type", "error_message"),
    "llm_calls": ("id", "started_at", "ended_at", "session_id", "turn_id", "api_request_id", "provider", "model",
                  "status", "error_type", "input_tokens", "output_tokens", "cache_read_tokens", "cost_usd",
                  "error_message"),
    "skill_runs": ("id", "skill_name", "trajectory_id", "turn_id", "started_at", "ended_at", "outcome"),
    "alert_state": ("rule", "key", "status", "first_fired_at", "last_notified_at"),
    "approvals": ("id", "decided_at", "session_id", "turn_id", "trajectory_id", "tool_call_id", "kind", "surface",
                  "choice", "outcome", "decided_by", "waited_ms"),
    "tool_errors": ("id", "ended_at", "session_id", "turn_id", "trajectory_id", "tool_call_id", "tool_name", "status",
                    "error_type", "exit_code", "error_message"),
}
"""The columns of each table, in order (tests compare the database against this)."""

TIME_COLUMNS: Final = {"skill_history": "changed_at", "memory_changes": "changed_at", "task_runs": "ended_at",
                       "llm_calls": "ended_at", "skill_runs": "ended_at", "alert_state": "last_notified_at",
                       "approvals": "decided_at", "tool_errors": "ended_at",
                       "staged_writes": "staged_at"}
"""The column retention compares against (BOOK-48)."""

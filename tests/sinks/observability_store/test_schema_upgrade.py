"""Schema version 2 of the observability store (issue #15): the indexes the queries need, and the upgrade of a
version-1 store in place (rows kept, indexes replaced), checked with ``EXPLAIN QUERY PLAN``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hermes_pipeline.sinks.observability_store import connect, sqlite_utc, store_path
from hermes_pipeline.sinks.observability_store.queries import query
from hermes_pipeline.sinks.observability_store.schema import INDEXES, RETIRED_INDEXES, SCHEMA_VERSION, TABLES

V1_INDEXES = (
    "CREATE INDEX IF NOT EXISTS skill_history_changed_at ON skill_history (changed_at)",
    "CREATE INDEX IF NOT EXISTS memory_changes_file_changed ON memory_changes (file_path, changed_at)",
    "CREATE INDEX IF NOT EXISTS memory_changes_changed_at ON memory_changes (changed_at)",
    "CREATE INDEX IF NOT EXISTS task_runs_ended_at ON task_runs (ended_at)",
    "CREATE INDEX IF NOT EXISTS llm_calls_ended_at ON llm_calls (ended_at)",
    "CREATE INDEX IF NOT EXISTS skill_runs_skill_ended ON skill_runs (skill_name, ended_at)",
)
"""The indexes version 1 shipped."""


def _indexes(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")}


def _v1_store(home: Path) -> Path:
    path = store_path(home)
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path)
    for ddl in (*TABLES.values(), *V1_INDEXES):
        conn.execute(ddl)
    now = sqlite_utc()
    conn.execute("INSERT INTO llm_calls (ended_at, status, input_tokens) VALUES (?, 'ok', 10)", (now,))
    conn.execute("INSERT INTO memory_changes (file_path, change_type, actor, trigger_session_id, before_excerpt, "
                 "after_excerpt, changed_at) VALUES ('memories/M.md', 'modify', 'agent-reflection', 's1', 'a', 'b', ?)",
                 (now,))
    conn.execute("INSERT INTO memory_changes (file_path, change_type, actor, trigger_session_id, before_excerpt, "
                 "after_excerpt, changed_at) VALUES ('memories/M.md', 'modify', 'agent-reflection', 's2', 'b', 'a', ?)",
                 (now,))
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    return path


def _plan(conn: sqlite3.Connection, sql: str, params: dict[str, object] | None = None) -> str:
    return " / ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql, params or {}))


def test_a_version_1_store_is_upgraded_in_place_when_a_writer_opens_it(tmp_path: Path) -> None:
    path = _v1_store(tmp_path)
    conn = connect(path)
    assert int(conn.execute("PRAGMA user_version").fetchone()[0]) == SCHEMA_VERSION == 8
    assert conn.execute("SELECT COUNT(*) FROM approvals").fetchone()[0] == 0  # version 4 adds two tables
    assert conn.execute("SELECT COUNT(*) FROM tool_errors").fetchone()[0] == 0
    names = _indexes(conn)
    assert not names & set(RETIRED_INDEXES)
    assert names == {ddl.split(" IF NOT EXISTS ")[1].split(" ON ")[0] for ddl in INDEXES}
    assert conn.execute("SELECT COUNT(*) FROM llm_calls").fetchone()[0] == 1  # rows are never touched
    assert conn.execute("SELECT COUNT(*) FROM memory_changes").fetchone()[0] == 2
    conn.close()
    again = connect(path)  # an up-to-date store: nothing to do
    assert _indexes(again) == names
    again.close()


def test_a_read_only_reader_of_a_version_1_store_still_gets_answers(tmp_path: Path) -> None:
    """The CLI opens the store read-only and never upgrades it: the queries still run (on the old indexes)."""
    path = _v1_store(tmp_path)
    reader = connect(path, create=False, readonly=True)
    assert len(reader.execute(query("Q-C1"), {"days": 30}).fetchall()) == 1
    assert int(reader.execute("PRAGMA user_version").fetchone()[0]) == 1
    reader.close()


def test_plans_use_the_indexes_meant_for_them(tmp_path: Path) -> None:
    """Q-C1 / Q-C2 find the earlier row by (file, passage); windows over llm_calls / task_runs read the index only.
    A store in use has no ANALYZE statistics, so the plans are those of a fresh store."""
    conn = connect(store_path(tmp_path))
    for name in ("Q-C1", "Q-C2"):
        plan = _plan(conn, query(name), {"days": 30})
        assert "memory_changes_file_before (file_path=? AND before_excerpt=?" in plan, (name, plan)
    window = "WHERE ended_at >= datetime('now', '-30 days')"
    assert "COVERING INDEX llm_calls_ended_cover" in _plan(
        conn, f"SELECT date(ended_at), SUM(input_tokens), SUM(output_tokens), SUM(cost_usd) FROM llm_calls {window} "
              "GROUP BY 1")
    assert "COVERING INDEX llm_calls_ended_cover" in _plan(
        conn, f"SELECT COUNT(*), SUM(status = 'error') FROM llm_calls {window}")
    assert "COVERING INDEX task_runs_ended_cover" in _plan(
        conn, f"SELECT substr(ended_at, 1, 10), SUM(input_tokens), SUM(output_tokens), SUM(cost_usd), COUNT(cost_usd), "
              f"COUNT(*), SUM(outcome = 'success') FROM task_runs {window} GROUP BY 1")
    conn.close()


def test_a_version_2_store_gains_the_skill_path_changed_files_and_file_hash_columns(tmp_path: Path) -> None:
    """Schema 3 (issue #27): ``skill_history.skill_path`` / ``changed_files`` and ``memory_changes.file_hash`` are
    added in place to an older store; its rows are kept and read NULL there."""
    from hermes_pipeline.sinks.observability_store.schema import ADDED_COLUMNS, COLUMNS

    path = store_path(tmp_path)
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path)
    for table, ddl in TABLES.items():
        for column, decl in ADDED_COLUMNS.get(table, ()):
            ddl = ddl.replace(f"        {column} {decl},\n", "").replace(f",\n        {column} {decl})", ")")
        conn.execute(ddl)
    assert "skill_path" not in {r[1] for r in conn.execute("PRAGMA table_info(skill_history)")}
    conn.execute("INSERT INTO skill_history (skill_name, version, change_type, changed_at) "
                 "VALUES ('pdf', 1, 'create', ?)", (sqlite_utc(),))
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()
    upgraded = connect(path)
    for table in ("skill_history", "memory_changes", "task_runs", "llm_calls", "tool_errors", "staged_writes"):
        assert tuple(r[1] for r in upgraded.execute(f"PRAGMA table_info({table})")) == COLUMNS[table]
    assert upgraded.execute("SELECT skill_name, skill_path, changed_files FROM skill_history").fetchall() == \
        [("pdf", None, None)]
    upgraded.close()

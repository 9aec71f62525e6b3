"""The chapter's queries (spec 06 BOOK-17, BOOK-20, BOOK-23, BOOK-24): shipped verbatim, run unchanged in the
``sqlite3`` shell, and behind ``hermes-pipeline audit``."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.cli.main import main
from hermes_pipeline.sinks.observability_store import connect, sqlite_utc, store_path
from hermes_pipeline.sinks.observability_store.queries import query, queries, sql_text

from tests._spec import spec_text

SQLITE3 = shutil.which("sqlite3")
NO_SQLITE3 = "the sqlite3 command-line shell is not installed (scripts/test installs it with apt-get as root)"


def _seed(home: Path) -> Path:
    """A store with skill and memory rows at chosen ages (seconds before now)."""
    path = store_path(home)
    conn = connect(path)
    now = time.time()

    def at(age_days: float) -> str:
        return sqlite_utc(int((now - age_days * 86400) * 1_000_000))

    history = [("pdf", 1, "create", 20), ("pdf", 2, "refine", 6), ("pdf", 3, "refine", 5), ("pdf", 4, "refine", 4),
               ("pdf", 5, "refine", 3), ("pdf", 6, "refine", 2), ("pdf", 7, "refine", 1),
               ("old", 1, "create", 100), ("old", 2, "deprecate", 90), ("old", 3, "create", 80),
               ("new", 1, "create", 0.5)]
    with conn:
        for name, version, change, age in history:
            conn.execute("INSERT INTO skill_history (skill_name, version, change_type, reason, changed_at) "
                         "VALUES (?, ?, ?, ?, ?)", (name, version, change, f"r{version}", at(age)))
        for path_, actor, age in (("memories/MEMORY.md", "agent-reflection", 1), ("memories/MEMORY.md", "user-direct", 2),
                                  ("memories/USER.md", "agent-reflection", 3), ("memories/USER.md", "agent-reflection", 40)):
            conn.execute("INSERT INTO memory_changes (file_path, change_type, actor, changed_at) VALUES (?, 'modify', ?, ?)",
                         (path_, actor, at(age)))
    conn.close()
    return path


def test_queries_sql_holds_the_spec_queries_verbatim() -> None:
    """BOOK-20 / BOOK-23: each of Q-S1..Q-S4, Q-M1, Q-M2 is the spec's text, character for character."""
    spec = spec_text("06-agent-observability.md")
    for name in ("Q-S1", "Q-S2", "Q-S3", "Q-S4", "Q-M1", "Q-M2"):
        assert query(name) in spec, name
    assert set(queries()) >= {"Q-S1", "Q-S2", "Q-S3", "Q-S4", "Q-M1", "Q-M2", "Q-C1", "Q-C2"}


@pytest.mark.skipif(SQLITE3 is None, reason=NO_SQLITE3)
def test_every_query_runs_unchanged_in_the_sqlite3_shell(tmp_path: Path) -> None:
    """BOOK-20: typed into ``sqlite3`` with ``.parameter set``, the shipped text gives the same rows."""
    path = _seed(tmp_path)
    conn = sqlite3.connect(path)
    params = {"Q-S1": {":skill": "'pdf'"}, "Q-C1": {":days": "30"}, "Q-C2": {":days": "30"}}
    for name, text in queries().items():
        bind = "".join(f".parameter set {k} {v}\n" for k, v in params.get(name, {}).items())
        out = subprocess.run([str(SQLITE3), "-json", str(path)], input=bind + text, capture_output=True, text=True,
                             timeout=30, check=True)
        shell = json.loads(out.stdout) if out.stdout.strip() else []
        cursor = conn.execute(text, {k[1:]: v.strip("'") for k, v in params.get(name, {}).items()})
        columns = [d[0] for d in cursor.description]
        assert shell == [dict(zip(columns, row)) for row in cursor.fetchall()], name
        assert not out.stderr, out.stderr
    conn.close()


@pytest.mark.skipif(SQLITE3 is None, reason=NO_SQLITE3)
def test_the_whole_file_runs_in_the_shell(tmp_path: Path) -> None:
    """A reader can also feed the file itself to the shell (with the parameters bound first)."""
    path = _seed(tmp_path)
    script = ".parameter set :skill 'pdf'\n.parameter set :days 30\n" + sql_text()
    out = subprocess.run([str(SQLITE3), str(path)], input=script, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and not out.stderr, out.stderr
    assert "7|refine|r7|" in out.stdout


def _cli(capsys: Any, *argv: str) -> tuple[int, Any]:
    code = main(list(argv))
    out = capsys.readouterr().out
    try:
        return code, json.loads(out)
    except ValueError:
        return code, out


def test_audit_skill_commands(tmp_path: Path, capsys: Any) -> None:
    _seed(tmp_path)
    home = ("--home", str(tmp_path), "--json")
    code, history = _cli(capsys, "audit", "skills", "history", "pdf", *home)
    assert code == 0 and [r["version"] for r in history] == [7, 6, 5, 4, 3, 2, 1]
    assert history[0].keys() == {"version", "change_type", "reason", "changed_at"}
    _, recent = _cli(capsys, "audit", "skills", "recent", *home)
    assert [(r["skill_name"], r["change_count"]) for r in recent] == [("pdf", 6), ("new", 1)]
    _, drift = _cli(capsys, "audit", "skills", "drift", *home)
    assert drift == [{"skill_name": "pdf", "refine_count": 6}]
    _, churn = _cli(capsys, "audit", "skills", "churn", *home)
    assert churn == [{"skill_name": "old", "cycle_events": 3}]
    code, text = _cli(capsys, "audit", "skills", "recent", "--home", str(tmp_path))
    assert code == 0 and "change_count" in text and "pdf" in text


def test_audit_memory_commands(tmp_path: Path, capsys: Any) -> None:
    _seed(tmp_path)
    home = ("--home", str(tmp_path), "--json")
    _, top = _cli(capsys, "audit", "memory", "top", *home)
    assert top[0] == {"file_path": "memories/MEMORY.md", "edit_count": 2}
    _, actors = _cli(capsys, "audit", "memory", "actors", *home)
    assert sorted((r["actor"], r["change_count"]) for r in actors) == [("agent-reflection", 2), ("user-direct", 1)]


def test_unknown_skill_and_missing_store_are_clear_errors(tmp_path: Path, capsys: Any) -> None:
    _seed(tmp_path)
    assert main(["audit", "skills", "history", "nope", "--home", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "no history for skill 'nope'" in err and "new, old, pdf" in err
    assert main(["audit", "skills", "recent", "--home", str(tmp_path / "none")]) == 1
    assert "observability.audit.enabled" in capsys.readouterr().err
    assert not (tmp_path / "none").exists()  # a query never creates a store


def test_book_24_memory_conflicts(tmp_path: Path, capsys: Any) -> None:
    """BOOK-24: (a) a revert by another session; (b) two sessions rewriting the same passage differently;
    rows outside ``--days`` are ignored."""
    conn = connect(store_path(tmp_path))
    now = sqlite_utc()
    old = sqlite_utc(int((time.time() - 60 * 86400) * 1_000_000))
    with conn:
        for file_path, before, after, session, when in (
                ("memories/MEMORY.md", "tea", "coffee", "s1", now),   # 1
                ("memories/MEMORY.md", "coffee", "tea", "s2", now),   # 2 reverts 1
                ("memories/USER.md", "Ana", "Anna", "s1", now),       # 3
                ("memories/USER.md", "Ana", "Ann", "s3", now),        # 4 diverges from 3
                ("memories/X.md", "a", "b", "s1", old),               # 5 outside the window
                ("memories/X.md", "b", "a", "s2", old)):              # 6
            conn.execute("INSERT INTO memory_changes (file_path, change_type, actor, trigger_session_id, "
                         "before_excerpt, after_excerpt, changed_at) VALUES (?, 'modify', 'agent-reflection', ?, ?, ?, ?)",
                         (file_path, session, before, after, when))
    conn.close()
    code, found = _cli(capsys, "audit", "memory-conflicts", "--days", "30", "--home", str(tmp_path), "--json")
    assert code == 0
    assert [(r["kind"], r["file_path"], r["first_id"]) for r in found] == [
        ("revert", "memories/MEMORY.md", 1), ("divergent_rewrite", "memories/USER.md", 3)]
    assert found[0]["revert_id"] == 2 and (found[0]["first_session"], found[0]["revert_session"]) == ("s1", "s2")
    code, found = _cli(capsys, "audit", "memory-conflicts", "--days", "90", "--home", str(tmp_path), "--json")
    assert len(found) == 3
    code, text = _cli(capsys, "audit", "memory-conflicts", "--home", str(tmp_path))
    assert "revert" in text and "rows 1 → 2" in text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(age=st.floats(min_value=0, max_value=20 * 86400, allow_nan=False))
def test_book_17_window_comparisons_are_right_at_any_age(tmp_path: Path, age: float) -> None:
    """BOOK-17: a row stamped ``age`` seconds ago is inside Q-M1's 7-day window iff it is younger than 7 days
    (a second either side of the boundary is not decided by string format)."""
    if abs(age - 7 * 86400) < 2:
        return
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE memory_changes (file_path TEXT, actor TEXT, changed_at TEXT)")
    stamp = sqlite_utc(int((time.time() - age) * 1_000_000))
    conn.execute("INSERT INTO memory_changes VALUES ('m', 'user-direct', ?)", (stamp,))
    inside = conn.execute(query("Q-M1")).fetchall()
    assert bool(inside) == (age < 7 * 86400)
    assert conn.execute("SELECT datetime(?) = ?", (stamp, stamp)).fetchone()[0] == 1  # canonical form

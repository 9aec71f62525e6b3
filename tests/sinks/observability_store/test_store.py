"""The local observability store (spec 06 BOOK-16..BOOK-25): files, tables, and the writers' rules."""

from __future__ import annotations

import re
import sqlite3
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.sinks.observability_store import COLUMNS, store_path
from hermes_pipeline.sinks.observability_store.store_writer import StoreWriter

from ._support import RESPONSE, memory_tool, rows, store, write_skill

TS = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")


def test_book_16_location_modes_wal_and_exact_tables(tmp_path: Path) -> None:
    """BOOK-16: ``observability/observability.sqlite3``, directory 0700, file 0600, WAL; BOOK-18/21/25 and
    BOOK-44: exactly the six tables with exactly the spec's columns."""
    with store(tmp_path) as (host, handle):
        handle.flush()
    path = store_path(tmp_path)
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == set(COLUMNS) == {"skill_history", "memory_changes", "task_runs", "llm_calls", "skill_runs",
                                      "alert_state", "approvals", "tool_errors",  # these two: issue #27
                                      "staged_writes"}  # schema 8: Hermes' write-approval gate
    for table, columns in COLUMNS.items():
        assert tuple(r[1] for r in conn.execute(f"PRAGMA table_info({table})")) == columns
    with pytest.raises(sqlite3.IntegrityError):  # UNIQUE(skill_name, version)
        conn.executescript("INSERT INTO skill_history (skill_name, version, change_type, changed_at) VALUES "
                           "('a', 1, 'create', '2026-01-01 00:00:00'), ('a', 1, 'refine', '2026-01-01 00:00:00')")
    with pytest.raises(sqlite3.IntegrityError):  # the change_type CHECK
        conn.execute("INSERT INTO skill_history (skill_name, version, change_type, changed_at) "
                     "VALUES ('b', 1, 'rename', '2026-01-01 00:00:00')")


def _session(host: Any, home: Path, body: Any) -> str:
    with host.session() as session:
        with session.turn("go") as turn:
            body(host, turn)
            turn.complete("done")
    return str(session.session_id)


def test_book_19_lifecycle_rows_versions_hashes_and_reasons(tmp_path: Path) -> None:
    """BOOK-19: one row per mutation with the change-type mapping, versions 1.., hashes of SKILL.md before
    and after, the supplied reason (NULL when none), the session; ``loaded`` writes no history row."""
    def body(host: Any, turn: Any) -> None:
        write_skill(tmp_path, "pdf", "v1")
        host.skill_lifecycle("created", "pdf", provenance="agent_created", reason="new")
        write_skill(tmp_path, "pdf", "v2")
        host.skill_lifecycle("patched", "pdf", reason="fix step 2")
        write_skill(tmp_path, "pdf", "v3")
        host.skill_lifecycle("edited", "pdf")
        host.skill_lifecycle("loaded", "pdf", use_count=1)
        host.skill_lifecycle("stale", "pdf")
        host.skill_lifecycle("archived", "pdf")
        host.skill_lifecycle("restored", "pdf")
        write_skill(tmp_path, "hub", "h")
        host.skill_lifecycle("installed", "hub", provenance="installed")

    with store(tmp_path) as (host, handle):
        sid = _session(host, tmp_path, body)
    import hashlib
    h = {v: hashlib.sha256(v.encode()).hexdigest() for v in ("v1", "v2", "v3")}
    got = rows(tmp_path, "SELECT version, change_type, reason, trigger_session_id, before_hash, after_hash, "
                         "hermes_action, provenance, changed_at FROM skill_history WHERE skill_name='pdf' ORDER BY version")
    assert [r[:8] for r in got] == [
        (1, "create", "new", sid, None, h["v1"], "created", "agent_created"),
        (2, "refine", "fix step 2", sid, h["v1"], h["v2"], "patched", "agent_created"),
        (3, "refine", None, sid, h["v2"], h["v3"], "edited", "agent_created"),
        (4, "deprecate", None, sid, h["v3"], h["v3"], "stale", "agent_created"),
        (5, "deprecate", None, sid, h["v3"], h["v3"], "archived", "agent_created"),
        (6, "restore", None, sid, h["v3"], h["v3"], "restored", "agent_created"),
    ]
    assert all(TS.match(r[8]) for r in got)  # BOOK-17
    assert rows(tmp_path, "SELECT version, change_type, hermes_action FROM skill_history WHERE skill_name='hub'") == \
        [(1, "create", "installed")]
    assert rows(tmp_path, "SELECT skill_name, outcome FROM skill_runs") == [("pdf", "success")]


def test_book_19_after_hash_is_null_when_the_file_is_gone(tmp_path: Path) -> None:
    def body(host: Any, turn: Any) -> None:
        write_skill(tmp_path, "gone", "x")
        host.skill_lifecycle("created", "gone")
        (tmp_path / "skills" / "gone" / "SKILL.md").unlink()
        host.skill_lifecycle("archived", "gone")

    with store(tmp_path) as (host, handle):
        _session(host, tmp_path, body)
    assert rows(tmp_path, "SELECT change_type, after_hash IS NULL FROM skill_history ORDER BY version") == \
        [("create", 0), ("deprecate", 1)]


def test_book_19_edits_while_stopped_become_external_edit_rows_at_start(tmp_path: Path) -> None:
    """BOOK-19: at startup a hash change no lifecycle event explains is a ``refine`` / ``external_edit`` row
    with NULL session; skills unchanged give no row, and a skill seen for the first time is a ``create`` row
    ``discovered`` (issue #27: never a silent baseline)."""
    write_skill(tmp_path, "pdf", "v1")
    write_skill(tmp_path, "same", "s")
    with store(tmp_path) as (host, handle):  # first start: every skill found is a row
        handle.flush()
    assert rows(tmp_path, "SELECT skill_name, version, change_type, hermes_action, trigger_session_id "
                          "FROM skill_history ORDER BY skill_name") == \
        [("pdf", 1, "create", "discovered", None), ("same", 1, "create", "discovered", None)]
    write_skill(tmp_path, "pdf", "edited by hand")
    with store(tmp_path) as (host, handle):
        handle.flush()
    assert rows(tmp_path, "SELECT skill_name, version, change_type, hermes_action, trigger_session_id, changed_files "
                          "FROM skill_history WHERE version > 1") == \
        [("pdf", 2, "refine", "external_edit", None, '["SKILL.md"]')]
    with store(tmp_path) as (host, handle):  # nothing changed since: nothing more
        handle.flush()
    assert rows(tmp_path, "SELECT COUNT(*) FROM skill_history") == [(3,)]


def test_book_22_tool_writes_map_actions_and_quote_the_arguments(tmp_path: Path) -> None:
    """BOOK-22: ``memory`` add/replace/remove → add/modify/delete, excerpts from the arguments, the session,
    actor ``agent-reflection`` without a skill run; a failed write is no row; reads are no rows."""
    tool = memory_tool(tmp_path)

    def body(host: Any, turn: Any) -> None:
        turn.call_tool("memory", {"action": "add", "content": "likes tea", "target": "memory"}, tool)
        turn.call_tool("memory", {"action": "replace", "old_text": "likes tea", "content": "likes coffee"}, tool)
        turn.call_tool("memory", {"action": "remove", "old_text": "likes coffee"}, tool)
        turn.call_tool("memory", {"action": "add", "content": "name: Ana", "target": "user"}, tool)
        turn.call_tool("memory", {"action": "add", "content": "x"}, lambda **kw: '{"success": false, "error": "full"}')
        turn.call_tool("memory", {"action": "read"}, lambda **kw: "notes")

    with store(tmp_path) as (host, handle):
        handle.flush()
        sid = _session(host, tmp_path, body)
    assert rows(tmp_path, "SELECT file_path, change_type, actor, trigger_session_id, before_excerpt, after_excerpt "
                          "FROM memory_changes ORDER BY id") == [
        ("memories/MEMORY.md", "add", "agent-reflection", sid, None, "likes tea"),
        ("memories/MEMORY.md", "modify", "agent-reflection", sid, "likes tea", "likes coffee"),
        ("memories/MEMORY.md", "delete", "agent-reflection", sid, "likes coffee", None),
        ("memories/USER.md", "add", "agent-reflection", sid, None, "name: Ana"),
    ]  # and no user-direct row: the end-of-run rescan knows the tool wrote these files
    (run,) = rows(tmp_path, "SELECT trajectory_id, turn_id FROM task_runs")
    assert run[0] and run[1]  # each row names the run and the turn that made it (as task_runs does)
    assert rows(tmp_path, "SELECT DISTINCT trajectory_id, turn_id FROM memory_changes") == [run]


def test_book_22_actor_is_skill_execution_while_a_skill_runs(tmp_path: Path) -> None:
    tool = memory_tool(tmp_path)

    def body(host: Any, turn: Any) -> None:
        turn.call_tool("memory", {"action": "add", "content": "before the skill"}, tool)
        host.skill_lifecycle("loaded", "pdf")
        turn.call_tool("memory", {"action": "add", "content": "during the skill"}, tool)

    with store(tmp_path) as (host, handle):
        _session(host, tmp_path, body)
    assert rows(tmp_path, "SELECT after_excerpt, actor FROM memory_changes ORDER BY id") == [
        ("before the skill", "agent-reflection"), ("during the skill", "skill-execution")]


def test_book_22_out_of_band_edits_are_user_direct_at_start_and_end_of_run(tmp_path: Path) -> None:
    """BOOK-22: a rescan at process start and at the end of every ``agent.run``: a changed entry ``modify`` (the
    old and the new entry, as the agent's rows quote them), a new file's entries ``add``, a removed file's
    ``delete``; NULL session."""
    mem = tmp_path / "memories"
    mem.mkdir()
    (mem / "MEMORY.md").write_text("a\n§\nb\n§\nc")
    (mem / "OLD.md").write_text("old\n")
    with store(tmp_path) as (host, handle):
        handle.flush()
    (mem / "MEMORY.md").write_text("a\n§\nB changed\n§\nc\n")  # while the agent was stopped
    with store(tmp_path) as (host, handle):
        handle.flush()
        assert rows(tmp_path, "SELECT file_path, change_type, actor, trigger_session_id, before_excerpt, "
                              "after_excerpt FROM memory_changes") == [
            ("memories/MEMORY.md", "modify", "user-direct", None, "b", "B changed")]

        def body(host: Any, turn: Any) -> None:  # the user edits during a run
            (mem / "NEW.md").write_text("new\n")
            (mem / "OLD.md").unlink()

        _session(host, tmp_path, body)
        handle.flush()
    assert rows(tmp_path, "SELECT file_path, change_type, before_excerpt, after_excerpt FROM memory_changes "
                          "WHERE id > 1 ORDER BY file_path") == [
        ("memories/NEW.md", "add", None, "new"), ("memories/OLD.md", "delete", "old", None)]


def test_book_21_excerpts_are_cut_with_an_ellipsis(tmp_path: Path) -> None:
    """BOOK-21: memory_changes excerpts are cut to observability.audit.excerpt_chars with an ellipsis."""
    tool = memory_tool(tmp_path)
    long = "x" * 600

    with store(tmp_path, excerpt_chars=50) as (host, handle):
        _session(host, tmp_path, lambda h, t: t.call_tool("memory", {"action": "add", "content": long}, tool))
    (after,) = rows(tmp_path, "SELECT after_excerpt FROM memory_changes")[0]
    assert after == "x" * 49 + "…" and len(after) == 50


def test_book_25_task_runs_and_llm_calls(tmp_path: Path) -> None:
    """BOOK-25: one ``task_runs`` row per ``agent.run`` (outcome, counts, tokens, cost, the run's UUID as
    trajectory id, ``task_class``), one ``llm_calls`` row per attempt (error attempts with their type)."""
    class Overloaded(Exception):
        status_code = 503
        retryable = True

    calls = iter([Overloaded("busy"), RESPONSE])

    def provider(request: Any) -> Any:
        item = next(calls)
        if isinstance(item, Exception):
            raise item
        return item

    with store(tmp_path) as (host, handle):
        with host.session() as session:
            with session.turn("go") as turn:
                turn.call_llm({"model": "m1", "messages": []}, provider, max_retries=1, retry_delay=lambda n: 0.0)
                turn.call_tool("read_file", {"path": "a"}, lambda path: "x")
                turn.complete("ok")
            with pytest.raises(RuntimeError), session.turn("fail"):
                raise RuntimeError("boom")
    runs = rows(tmp_path, "SELECT outcome, llm_calls, tool_calls, input_tokens, output_tokens, cost_usd, task_class, "
                          "length(trajectory_id), platform, error_type IS NULL FROM task_runs ORDER BY id")
    assert runs[0] == ("success", 2, 1, 1200, 800, None, "cli:interactive", 36, "cli", 1)
    assert runs[1][0] == "failed" and runs[1][9] == 0
    llm = rows(tmp_path, "SELECT status, error_type, provider, model, input_tokens, output_tokens, api_request_id "
                         "FROM llm_calls ORDER BY id")
    assert [r[0] for r in llm] == ["error", "ok"] and llm[0][1] is not None and llm[1][1] is None
    assert llm[1][2:6] == ("openai", "m1", 1200, 800) and llm[0][6] == llm[1][6]  # one logical request
    for table, column in (("task_runs", "started_at"), ("task_runs", "ended_at"), ("llm_calls", "ended_at")):
        assert all(TS.match(v) for (v,) in rows(tmp_path, f"SELECT {column} FROM {table}"))


def test_rows_are_written_on_the_store_thread_never_the_callers(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[str] = []
    original = StoreWriter.commit

    def commit(self: StoreWriter) -> bool:
        threads.append(threading.current_thread().name)
        return original(self)

    monkeypatch.setattr(StoreWriter, "commit", commit)
    with store(tmp_path) as (host, handle):
        _session(host, tmp_path, lambda h, t: t.call_tool("read_file", {"path": "a"}, lambda path: "x"))
        handle.flush()
    assert threads and threading.main_thread().name not in threads
    assert rows(tmp_path, "SELECT COUNT(*) FROM task_runs") == [(1,)]


def test_book_22_a_scan_that_runs_ahead_of_a_tool_write_never_blames_the_user(tmp_path: Path) -> None:
    """The writer runs behind the agent: a rescan processed after a memory tool wrote its file but before the
    tool's end reached the store sees an unexplained change. It is held as a candidate and the tool's write
    explains it: one ``agent-reflection`` row, no ``user-direct`` row."""
    tool = memory_tool(tmp_path)
    with store(tmp_path) as (host, handle):
        def writing_tool(**args: Any) -> str:
            result = tool(**args)
            handle.sink.request_scan("scan_memory")  # a periodic scan lands now
            assert handle.sink.flush(5)
            return result

        _session(host, tmp_path, lambda h, t: t.call_tool("memory", {"action": "add", "content": "fact"},
                                                          writing_tool))
    assert rows(tmp_path, "SELECT actor, change_type FROM memory_changes") == [("agent-reflection", "add")]

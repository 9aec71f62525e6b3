"""The store under bad input and across processes (spec 06 BOOK-16, BOOK-22, BOOK-26; issue "bad input")."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.profile import open_profile, release_all
from hermes_pipeline.sinks.observability_store import PricingError, store_path

from ._support import rows, store


@pytest.fixture(autouse=True)
def _release() -> Any:
    yield
    release_all()


def _enable(home: Path, extra: str = "") -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("observability:\n  audit:\n    enabled: true\n" + extra, encoding="utf-8")


def test_profile_with_audit_enabled_records_and_off_adds_no_consumer(tmp_path: Path) -> None:
    """BOOK-16 / §0: the profile's ``observability.audit.enabled`` starts the store; off, nothing listens."""
    off = open_profile(tmp_path / "off")
    assert "observability_store" not in off.consumers
    assert not (tmp_path / "off" / "observability").exists()
    _enable(tmp_path / "on")
    profile = open_profile(tmp_path / "on")
    handle = profile.consumers["observability_store"]
    host = profile.host()
    with host.session() as session, session.turn("hi") as turn:
        turn.call_tool("read_file", {"path": "a"}, lambda path: "x")
        turn.complete("ok")
    profile.close()
    assert handle.sink.stats()["rows_written"] >= 1
    assert rows(tmp_path / "on", "SELECT outcome, tool_calls FROM task_runs") == [("success", 1)]


def test_memory_tool_overrides_from_the_profile(tmp_path: Path) -> None:
    """BOOK-9 ``observability.memory_tools``: a configured tool is a memory write with a row."""
    home = tmp_path / "p"
    _enable(home, "  memory_tools:\n    notes_save: memory.update\n")
    profile = open_profile(home)
    host = profile.host()
    with host.session() as session, session.turn("hi") as turn:
        turn.call_tool("notes_save", {"path": "memories/notes.md", "content": "remember"}, lambda **kw: "ok")
        turn.complete("ok")
    profile.close()
    assert rows(home, "SELECT file_path, change_type, after_excerpt FROM memory_changes") == \
        [("memories/notes.md", "add", "remember")]


def test_a_corrupt_store_is_kept_aside_and_a_new_one_started(tmp_path: Path, caplog: Any) -> None:
    path = store_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not sqlite" * 100)
    with store(tmp_path) as (host, handle):
        with host.session() as session, session.turn("hi") as turn:
            turn.complete("ok")
    assert rows(tmp_path, "SELECT COUNT(*) FROM task_runs") == [(1,)]
    aside = [p for p in path.parent.iterdir() if ".corrupt-" in p.name]
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"this is not sqlite")
    assert "not a database" in caplog.text


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True,
                    reason="running as root, whom file modes do not stop: a read-only home cannot be made here "
                           "(run the suite as another user)")
def test_a_read_only_home_warns_and_the_agent_runs(tmp_path: Path, caplog: Any) -> None:
    home = tmp_path / "ro"
    home.mkdir()
    home.chmod(0o500)
    try:
        with store(home) as (host, handle):
            with host.session() as session, session.turn("hi") as turn:
                assert turn.call_tool("read_file", {"path": "a"}, lambda path: "x") == "x"
                turn.complete("ok")
            handle.flush()
            assert handle.sink.stats()["failed"]
    finally:
        home.chmod(0o700)
    assert "observability store: a write failed (readonly" in caplog.text


def test_a_store_that_cannot_be_created_warns_and_the_agent_runs(tmp_path: Path, caplog: Any) -> None:
    """Whatever the user, a file where the store's directory should be makes it impossible."""
    (tmp_path / "observability").write_text("a file, not a directory")
    with store(tmp_path) as (host, handle):
        with host.session() as session, session.turn("hi") as turn:
            assert turn.call_tool("read_file", {"path": "a"}, lambda path: "x") == "x"
            turn.complete("ok")
        handle.flush()
        assert handle.sink.stats()["failed"]
    assert "observability store: a write failed (readonly" in caplog.text


def test_a_locked_store_keeps_rows_until_the_lock_is_released(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process holding the write lock past the busy timeout: rows stay pending, none is lost."""
    from hermes_pipeline.sinks.observability_store import db

    with store(tmp_path) as (host, handle):
        handle.flush()
        monkeypatch.setattr(db, "BUSY_MS", 50)
        blocker = sqlite3.connect(store_path(tmp_path), isolation_level=None)
        blocker.execute("PRAGMA busy_timeout = 50")
        handle.sink.store_writer.connection().execute("PRAGMA busy_timeout = 50")
        blocker.execute("BEGIN IMMEDIATE")
        with host.session() as session, session.turn("hi") as turn:
            turn.complete("ok")
        assert not handle.flush()  # written? no: the lock is held
        assert handle.sink.stats()["rows_pending"] >= 1
        blocker.execute("ROLLBACK")
        blocker.close()
        with host.session() as session, session.turn("again") as turn:
            turn.complete("ok")
        assert handle.flush()
    assert rows(tmp_path, "SELECT COUNT(*) FROM task_runs") == [(2,)]


def test_a_memory_directory_that_is_a_symlink_loop_warns(tmp_path: Path, caplog: Any) -> None:
    (tmp_path / "memories").symlink_to(tmp_path / "memories")
    with store(tmp_path) as (host, handle):
        with host.session() as session, session.turn("hi") as turn:
            turn.complete("ok")
    assert "symlink loop" in caplog.text
    assert rows(tmp_path, "SELECT COUNT(*) FROM task_runs") == [(1,)]


def test_loops_inside_the_memory_directory_are_not_followed(tmp_path: Path) -> None:
    mem = tmp_path / "memories"
    (mem / "sub").mkdir(parents=True)
    (mem / "sub" / "loop").symlink_to(mem)
    (mem / "A.md").write_text("a")
    with store(tmp_path) as (host, handle):
        handle.flush()
    (mem / "A.md").write_text("b")
    with store(tmp_path) as (host, handle):
        handle.flush()
    assert rows(tmp_path, "SELECT file_path, change_type FROM memory_changes") == [("memories/A.md", "modify")]


@pytest.mark.parametrize("table, key", [
    ({"openai/gpt-4o": {"input": -1, "output": 2}}, "observability.pricing.openai/gpt-4o.input"),
    ({"openai/gpt-4o": {"input": 1, "output": "two"}}, "observability.pricing.openai/gpt-4o.output"),
    ({"openai": {"gpt-4o": {"input": 1, "output": 1, "cache_read": float("nan")}}},
     "observability.pricing.openai.gpt-4o.cache_read"),
])
def test_bad_prices_are_a_typed_error_naming_the_key(tmp_path: Path, table: Any, key: str) -> None:
    """BOOK-26: a negative or non-numeric price is refused with the dotted key."""
    with pytest.raises(PricingError) as info, store(tmp_path, pricing=table):
        pass
    assert info.value.key == key and key in str(info.value)


def test_bad_prices_in_a_profile_warn_and_the_agent_runs(tmp_path: Path) -> None:
    home = tmp_path / "p"
    _enable(home, "  pricing:\n    openai/gpt-4o: {input: -3, output: 1}\n")
    profile = open_profile(home)
    assert any(d.field == "observability.pricing" for d in profile.settings.diagnostics)
    host = profile.host()
    with host.session() as session, session.turn("hi") as turn:
        turn.complete("ok")
    profile.close()


def _worker(home: str, index: int, count: int) -> None:
    from pathlib import Path

    from tests.sinks.observability_store._support import store, write_skill

    with store(Path(home)) as (host, handle):
        with host.session() as session:
            for k in range(count):
                with session.turn(f"turn {k}") as turn:
                    write_skill(Path(home), "shared", f"{index}-{k}")
                    host.skill_lifecycle("patched", "shared", reason=f"p{index}-{k}")
                    turn.complete("ok")


def test_processes_of_one_profile_write_one_store_without_losing_rows(tmp_path: Path) -> None:
    """Several processes of one profile write at once: every row arrives, skill versions stay 1..N."""
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_worker, args=(str(tmp_path), i, 15)) for i in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    assert rows(tmp_path, "SELECT COUNT(*) FROM task_runs") == [(45,)]
    versions = [v for (v,) in rows(tmp_path, "SELECT version FROM skill_history WHERE skill_name='shared' "
                                             "AND hermes_action='patched' ORDER BY version")]
    assert len(versions) == 45
    all_versions = [v for (v,) in rows(tmp_path, "SELECT version FROM skill_history WHERE skill_name='shared' "
                                                 "ORDER BY version")]
    assert all_versions == list(range(1, len(all_versions) + 1))

"""Writes that fail inside the transaction (disk full at insert or commit time, an I/O error) and what the rows
say once the store can be written again (spec 06 BOOK-18, BOOK-19, BOOK-21, BOOK-22, BOOK-25; issue 26 "nothing
lost silently").

The fault is injected at the SQLite level: the store's transaction runs its inserts, then SQLite answers
"database or disk is full" instead of committing, as a full disk does. Two invariants:

- a row retried after such a failure is the change *as it was when it happened*: each skill version its own
  hashes and kept texts, each memory row the file after its own call and the whole entry it replaced, never the
  files as they are at the retry;
- a change whose rows were given up (the disk stayed full until the process ended) is found by the next start's
  rescan but not blamed on the user: no ``user-direct`` actor, no ``external_edit``; the row says why.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.demo.profile_tools import ProfileTools
from hermes_pipeline.export.blobs import read_blob
from hermes_pipeline.sinks.observability_store import db, store_path
from hermes_pipeline.sinks.observability_store.failures import failures_path

from ._support import rows, store

SKILL = "---\nname: dfull\ndescription: d\n---\n1. {}\n"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _full_at_commit(monkeypatch: pytest.MonkeyPatch) -> dict[str, bool]:
    """While ``faults["full"]`` is set, every store transaction runs its statements and then fails as a full disk
    fails at commit time (the transaction is rolled back)."""
    faults = {"full": False}
    real = db.transaction

    @contextlib.contextmanager
    def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        with real(conn) as inner:
            yield inner
            if faults["full"]:
                raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(db, "transaction", transaction)
    return faults


def _agent_changes(tmp_path: Path, host: Any) -> str:
    """The agent creates ``dfull`` and patches it twice, adds a memory entry and replaces another by a search text;
    returns the session."""
    tools = ProfileTools(tmp_path, host).tools()
    skill, memory = tools["skill_manage"].fn, tools["memory"].fn
    with host.session() as session, session.turn("learn") as turn:
        turn.call_tool("skill_manage", {"action": "create", "name": "dfull", "category": "ops",
                                        "content": SKILL.format("one")}, skill)
        for old, new in (("one", "two"), ("two", "three")):
            turn.call_tool("skill_manage", {"action": "patch", "name": "dfull", "old_string": f"1. {old}",
                                            "new_string": f"1. {new}"}, skill)
        turn.call_tool("memory", {"action": "add", "content": "Disk full fact"}, memory)
        turn.call_tool("memory", {"action": "replace", "old_text": "Base", "content": "Base fact v2"}, memory)
        turn.complete("ok")
    return session.session_id


def test_book_18_21_rows_retried_after_a_failed_commit_keep_the_moment_of_their_change(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """BOOK-18/BOOK-21 under a write that fails inside the transaction: the held rows written once the store
    can be written again carry each version's own SKILL.md hash (v1 → v2 → v3, a chain) and kept text, the memory
    ``add`` the hash of the file right after it, and the ``replace`` the whole entry it replaced."""
    faults = _full_at_commit(monkeypatch)
    (tmp_path / "memories").mkdir()
    (tmp_path / "memories" / "MEMORY.md").write_text("Base fact", encoding="utf-8")
    with store(tmp_path) as (host, handle):
        assert handle.flush()
        faults["full"] = True
        session = _agent_changes(tmp_path, host)
        handle.flush(2.0)
        stats = handle.sink.stats()
        assert stats["write_failures_by_kind"].get("full", 0) >= 1 and stats["rows_pending"] > 0
        after_add = hashlib.sha256(b"Base fact\n\xc2\xa7\nDisk full fact").hexdigest()
        faults["full"] = False
        handle.sink.request_scan("scan_memory")  # the next batch: the held rows are written first
        assert handle.flush()
    versions = rows(tmp_path, "SELECT version, hermes_action, trigger_session_id, before_hash, after_hash, "
                              "changed_files FROM skill_history WHERE skill_name = 'dfull' ORDER BY version")
    texts = [SKILL.format(n) for n in ("one", "two", "three")]
    assert [v[:3] for v in versions] == [(1, "created", session), (2, "patched", session), (3, "patched", session)]
    assert [v[4] for v in versions] == [_sha(t) for t in texts]
    assert [v[3] for v in versions] == [None, _sha(texts[0]), _sha(texts[1])]
    assert [json.loads(v[5]) for v in versions] == [["SKILL.md"]] * 3
    assert [read_blob(tmp_path, _sha(t)) for t in texts] == texts  # each version's text, kept at its moment
    memory = rows(tmp_path, "SELECT change_type, actor, before_excerpt, after_excerpt, file_hash FROM memory_changes "
                            "ORDER BY id")
    final = hashlib.sha256((tmp_path / "memories" / "MEMORY.md").read_bytes()).hexdigest()
    assert memory == [("add", "agent-reflection", None, "Disk full fact", after_add),
                      ("modify", "agent-reflection", "Base fact", "Base fact v2", final)]


def test_book_19_22_changes_lost_to_a_store_full_to_the_end_are_not_blamed_on_the_user(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store stays unwritable until the process ends: its rows are counted lost and the failure record names
    the skill and the memory file they were about. The next start's rescan finds those changes and records
    them without blaming the user (BOOK-19's ``external_edit`` and BOOK-22's ``user-direct`` are for changes nobody
    recorded): the skill ``unattributed`` with provenance ``unknown``, the memory rows with no actor, each with a
    reason naming the loss. A later hand edit is the user's again."""
    faults = _full_at_commit(monkeypatch)
    (tmp_path / "memories").mkdir()
    (tmp_path / "memories" / "MEMORY.md").write_text("Base fact", encoding="utf-8")
    with store(tmp_path) as (host, handle):
        assert handle.flush()
        faults["full"] = True
        _agent_changes(tmp_path, host)
        handle.flush(1.0)
    assert handle.sink.stats()["rows_lost"] > 0
    record = json.loads(failures_path(store_path(tmp_path)).read_text(encoding="utf-8"))
    faults["full"] = False
    with store(tmp_path) as (host, handle):
        assert handle.flush()
    skill = rows(tmp_path, "SELECT change_type, hermes_action, trigger_session_id, provenance, reason, after_hash "
                           "FROM skill_history WHERE skill_name = 'dfull'")
    assert len(skill) == 1
    assert skill[0][:4] == ("create", "unattributed", None, "unknown")
    assert "lost" in skill[0][4] and "agent" in skill[0][4]
    assert skill[0][5] == _sha(SKILL.format("three"))
    memory = rows(tmp_path, "SELECT change_type, actor, before_excerpt, after_excerpt, reason FROM memory_changes "
                            "ORDER BY id")
    assert sorted(m[:4] for m in memory) == [("add", None, None, "Disk full fact"),
                                             ("modify", None, "Base fact", "Base fact v2")]
    assert all(m[4] and "lost" in m[4] for m in memory)
    assert rows(tmp_path, "SELECT COUNT(*) FROM memory_changes WHERE actor = 'user-direct'") == [(0,)]
    assert {"skill:dfull", "memory:memories/MEMORY.md"} <= set(record.get("unrecorded") or ())
    listed = json.loads(failures_path(store_path(tmp_path)).read_text(encoding="utf-8")).get("unrecorded")
    assert listed == {}  # answered by that rescan: a later change is judged as any other

    path = tmp_path / "memories" / "MEMORY.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n§\nwritten by hand", encoding="utf-8")
    (tmp_path / "skills" / "ops" / "dfull" / "SKILL.md").write_text(SKILL.format("by hand"), encoding="utf-8")
    with store(tmp_path) as (host, handle):
        assert handle.flush()
    assert rows(tmp_path, "SELECT actor, after_excerpt FROM memory_changes ORDER BY id DESC LIMIT 1") == \
        [("user-direct", "written by hand")]
    assert rows(tmp_path, "SELECT hermes_action, reason FROM skill_history WHERE skill_name = 'dfull' "
                          "ORDER BY version DESC LIMIT 1") == [("external_edit", None)]


def test_rows_waiting_in_a_process_that_died_count_as_lost(tmp_path: Path) -> None:
    """A process killed while its rows waited for a retry never gives them up: the record names them with its
    pid while they wait, and once that process is gone they count as lost; the waiting rows of a live process (this
    one) do not, and entries given up count whoever reads them."""
    from hermes_pipeline.sinks.observability_store.failures import ANY_SKILL
    from hermes_pipeline.sinks.observability_store.unrecorded import Unrecorded

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    record = {"unrecorded": {"skill:gone": {"at": "t1", "pid": int(dead.stdout)},
                             "skill:mine": {"at": "t2", "pid": os.getpid()},
                             "memory:memories/MEMORY.md": {"at": "t3", "pid": 0}}}
    seen = Unrecorded(record)
    assert seen.why("skill:gone") and seen.why("memory:memories/MEMORY.md")
    assert seen.why("skill:mine") is None and seen.why("skill:other") is None
    assert Unrecorded({"unrecorded": {ANY_SKILL: {"at": "t", "pid": 0}}}).why("skill:other")
    legacy = {"failing_since": "t0", "kinds": {"full": {"rows_lost": 3}}}  # a record of an earlier version
    assert Unrecorded(legacy).why("memory:memories/USER.md")

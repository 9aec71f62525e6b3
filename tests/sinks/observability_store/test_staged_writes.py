"""``staged_writes`` (schema 8): a staged write's row, completed by the user's decision (:mod:`.staged`).

The Hermes CLI end-to-end cases (approve, deny, the agent's rows of an approved write) are
``tests/hermes/test_write_approval_e2e.py``; here the row rules: a decision sets the status and a late ``staged``
never undoes it, fields fill what the row does not know, and the run is that of ``task_runs`` for the session and
turn that staged the write.
"""

from __future__ import annotations

from pathlib import Path

from hermes_pipeline.sinks.observability_store import connect, store_path
from hermes_pipeline.sinks.observability_store.staged import (ApprovedMemoryWrite, Pending, StagedWrite, record,
                                                              resolved)


def test_a_decision_completes_the_staged_row_and_a_late_staging_never_undoes_it(tmp_path: Path) -> None:
    conn = connect(store_path(tmp_path))
    conn.execute("INSERT INTO task_runs (trajectory_id, session_id, turn_id, ended_at) VALUES ('run-1', 's1', 't1', "
                 "'2026-01-01 00:00:00')")
    staged = Pending("p1", "memory", "add", "memories/MEMORY.md", summary="add to memory: x")
    record(conn, StagedWrite(staged, session_id="s1", turn_id="t1", tool_call_id="call_1"))
    decided = Pending("p1", "memory", "add", origin="background_review", staged_at="2026-01-01 00:00:00")
    record(conn, StagedWrite(decided, "approved", decided_at="2026-01-02 00:00:00", decided_by="user:slack:U1"))
    record(conn, StagedWrite(staged, session_id="s9"))  # a staging reported late changes nothing decided
    assert conn.execute("SELECT subject, origin, summary, session_id, turn_id, trajectory_id, tool_call_id, status, "
                        "decided_by FROM staged_writes").fetchall() == [
        ("memories/MEMORY.md", "background_review", "add to memory: x", "s1", "t1", "run-1", "call_1", "approved",
         "user:slack:U1")]
    write = ApprovedMemoryWrite("memory", {}, "agent-reflection", "approval:p1", "tok", "2026-01-02 00:00:00",
                                approved_by="user", pending_id="p1")
    assert resolved(conn, write).session_id == "s1" and resolved(conn, write).trajectory_id == "run-1"
    record(conn, StagedWrite(Pending("p2", "skills", "create", "pdf"), "denied", decided_by="user"))  # never seen
    assert conn.execute("SELECT status, session_id, staged_at IS NOT NULL FROM staged_writes WHERE pending_id = 'p2'"
                        ).fetchall() == [("denied", None, 1)]
    orphan = ApprovedMemoryWrite("memory", {}, "agent-reflection", "approval:p3", "tok", "2026-01-02 00:00:00",
                                 approved_by="user", pending_id="p3")
    assert resolved(conn, orphan).session_id is None  # staged where the store never saw it: no session invented
    conn.close()

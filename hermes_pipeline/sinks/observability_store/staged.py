"""Writes a write-approval gate staged, and what the user decided on each (``staged_writes``, schema 8).

With Hermes' ``skills.write_approval`` / ``memory.write_approval`` on, its ``skill_manage`` and ``memory`` tools do
not write: they stage the call's arguments (a pending record ``<id>``) and answer ``{"success": true, "staged": true,
"pending_id": "<id>"}``. The user later approves the write (``/skills approve <id>``, ``/memory approve <id>``, in
the CLI or through the gateway), and Hermes applies it then, outside any tool call, or denies it (``reject``,
``deny``, ``drop``), and nothing is written.

- :class:`StagedWrites` is a plugin of the profile's engine: on the ``post_tool_call`` of a staged call it queues a
  ``staged_writes`` row (status ``staged``) with the tool call, the session and the turn that staged it.
- The host's adapter (the Hermes bridge) tells it about each decision: :meth:`StagedWrites.approving` before an
  approved write is applied (the probes look at the skill or memory file before it, and put the in-flight mark a
  tool call puts, so no rescan takes the write for a hand edit), :meth:`StagedWrites.finish` after it, and
  :meth:`StagedWrites.denied`. An applied write is the agent's: a ``skill_history`` version with the action of the
  staged call, or ``memory_changes`` rows of actor ``agent-reflection``, in the session, run and turn that staged
  it (when the store saw the staging), with ``approved_by`` (who approved) and ``pending_id``; the staged row
  becomes ``approved`` (``failed`` with the error when Hermes could not apply it), or ``denied`` with no content
  row at all.

Every row is written on the store's writer thread (:func:`record`, :func:`resolved`); the calls here only read the
files (as a tool call's probes do) and queue.
"""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from ...contract.hookspecs import hookimpl
from ...engine.scrub import safe_scrub
from ...export.memory_changes import json_mapping
from ...export.task_runs import CHANGE_TYPES, MemoryWrite, SkillChange
from .schema import sqlite_utc
from .skill_probe import SKILL_TOOL, SkillHashProbe
from .skill_tree import public_name

__all__ = ["APPROVAL_SESSION", "ApprovedMemoryWrite", "ApprovedSkillChange", "Pending", "StagedWrite",
           "StagedWrites", "record", "resolved"]

logger: Final = logging.getLogger("hermes_pipeline.sinks.observability_store")

MEMORY_TOOL: Final = "memory"
SUBSYSTEMS: Final = {SKILL_TOOL: "skills", MEMORY_TOOL: "memory"}
"""Hermes' tools a write-approval gate stages, → the subsystem (``staged_writes.subsystem``)."""
MEMORY_FILES: Final = {"memory": "MEMORY.md", "user": "USER.md"}
APPROVAL_SESSION: Final = "approval:"
"""The session an approved change is matched by in the probes (``approval:<pending id>``), until its row is written
with the session that staged it."""
MAX_TEXT: Final = 500
"""At most this many characters of a staged write's summary or error are kept."""
_COLUMNS: Final = ("pending_id", "subsystem", "action", "subject", "origin", "summary", "staged_at", "session_id",
                   "turn_id", "trajectory_id", "tool_call_id", "status", "decided_at", "decided_by", "error_message")


@dataclass(frozen=True, slots=True)
class Pending:
    """One staged write as the host describes it: its id, ``skills`` or ``memory``, the action, the skill or memory
    file it is about, where it came from (``foreground``, ``background_review``), the host's one-line summary, when
    it was staged (``YYYY-MM-DD HH:MM:SS``, ``None``: unknown)."""

    pending_id: str
    subsystem: str
    action: str | None = None
    subject: str | None = None
    origin: str | None = None
    summary: str | None = None
    staged_at: str | None = None


@dataclass(frozen=True, slots=True)
class StagedWrite:
    """A ``staged_writes`` row to insert or complete (a ``None`` field keeps what the row has)."""

    pending: Pending
    status: str = "staged"
    session_id: str | None = None
    turn_id: str | None = None
    tool_call_id: str | None = None
    decided_at: str | None = None
    decided_by: str | None = None
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class ApprovedSkillChange(SkillChange):
    """The skill change an approved staged write made (the session and run come from its ``staged_writes`` row)."""

    approved_by: str | None = None
    pending_id: str | None = None


@dataclass(frozen=True, slots=True)
class ApprovedMemoryWrite(MemoryWrite):
    """The memory write an approved staged write made (the session and run come from its ``staged_writes`` row)."""

    approved_by: str | None = None
    pending_id: str | None = None


def _text(value: Any) -> str | None:
    return safe_scrub(value)[:MAX_TEXT] if isinstance(value, str) and value else None


def subject_of(subsystem: str, args: Mapping[str, Any] | None) -> str | None:
    """What a staged write is about: the skill's name, or the memory file (``memories/MEMORY.md``)."""
    if args is None:
        return None
    if subsystem == "skills":
        name = args.get("name")
        return public_name(name.strip()) if isinstance(name, str) and name.strip() else None
    target = args.get("target")
    file_name = MEMORY_FILES.get(target if isinstance(target, str) else "memory")
    return f"memories/{file_name}" if file_name else None


def record(conn: sqlite3.Connection, item: StagedWrite) -> int:
    """Insert ``item``'s ``staged_writes`` row, or complete the row of its staged write: a decision sets the status
    (a late ``staged`` never undoes one), other fields fill what the row does not know yet. The run (``trajectory_id``)
    is that of ``task_runs`` for the session and turn once the run has ended. Returns 1."""
    p = item.pending
    values = {"pending_id": p.pending_id, "subsystem": p.subsystem, "action": p.action,
              "subject": _text(p.subject), "origin": p.origin, "summary": _text(p.summary),
              "staged_at": p.staged_at or sqlite_utc(), "session_id": item.session_id, "turn_id": item.turn_id,
              "trajectory_id": None, "tool_call_id": item.tool_call_id, "status": item.status,
              "decided_at": item.decided_at, "decided_by": _text(item.decided_by),
              "error_message": _text(item.error_message)}
    keep = ", ".join(f"{c} = COALESCE(staged_writes.{c}, excluded.{c})" for c in _COLUMNS
                     if c not in ("pending_id", "status", "staged_at", "decided_at", "decided_by", "error_message"))
    conn.execute(f"INSERT INTO staged_writes ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))}) "
                 f"ON CONFLICT (pending_id) DO UPDATE SET {keep}, "
                 "status = CASE WHEN excluded.status = 'staged' THEN staged_writes.status ELSE excluded.status END, "
                 "decided_at = COALESCE(excluded.decided_at, staged_writes.decided_at), "
                 "decided_by = COALESCE(excluded.decided_by, staged_writes.decided_by), "
                 "error_message = COALESCE(excluded.error_message, staged_writes.error_message)",
                 tuple(values[c] for c in _COLUMNS))
    if item.status != "staged":
        conn.execute("UPDATE staged_writes SET trajectory_id = (SELECT trajectory_id FROM task_runs WHERE "
                     "task_runs.session_id = staged_writes.session_id AND task_runs.turn_id = staged_writes.turn_id "
                     "ORDER BY id DESC LIMIT 1) WHERE pending_id = ? AND trajectory_id IS NULL", (p.pending_id,))
    return 1


Approved = TypeVar("Approved", ApprovedSkillChange, ApprovedMemoryWrite)


def resolved(conn: sqlite3.Connection, change: Approved) -> Approved:
    """``change`` in the session, turn and run of the call that staged it (``None`` where the store never saw the
    staging: it was staged before the store was on, or its row was lost)."""
    row = conn.execute("SELECT session_id, turn_id, trajectory_id FROM staged_writes WHERE pending_id = ?",
                       (change.pending_id,)).fetchone()
    session, turn, run = row if row is not None else (None, None, None)
    if run is None and session and turn:
        found = conn.execute("SELECT trajectory_id FROM task_runs WHERE session_id = ? AND turn_id = ? "
                             "ORDER BY id DESC LIMIT 1", (session, turn)).fetchone()
        run = found[0] if found is not None else None
    return dataclasses.replace(change, session_id=session or None, turn_id=turn or None, trajectory_id=run or None)


@dataclass
class _Applying:
    pending: Pending
    args: dict[str, Any]
    call_id: str
    session: str


class StagedWrites:
    """``staged_writes`` rows and the changes of approved writes (see the module docstring).

    Args:
        submit: queues an item for the store's writer thread (:meth:`~.sink.ObservabilityStoreSink.submit`).
        probe, memory_probe: the store's probes (:class:`~.skill_probe.SkillHashProbe`,
            :class:`~.memory_probe.MemoryProbe`), which read the files around an approved write as around a tool
            call.
    """

    def __init__(self, submit: Callable[[object], bool], probe: SkillHashProbe, memory_probe: Any) -> None:
        self.submit = submit
        self.probe = probe
        self.memory_probe = memory_probe
        self._lock = threading.Lock()
        self._applying: dict[str, _Applying] = {}

    def _queue(self, item: object) -> None:
        if not self.submit(item):
            logger.warning("hermes_pipeline: observability store: a staged write's row could not be queued (the "
                           "store is closed or full)", extra={"event": "observability_staged_write_dropped"})

    @hookimpl
    def post_tool_call(self, tool_name: str, args: Any, result: Any, session_id: str, tool_call_id: str,
                       turn_id: str) -> None:
        subsystem = SUBSYSTEMS.get(tool_name) if isinstance(tool_name, str) else None
        if subsystem is None or not isinstance(result, str) or '"staged"' not in result:
            return
        answer = json_mapping(result)
        pending_id = answer.get("pending_id") if answer is not None else None
        if answer is None or answer.get("staged") is not True or not isinstance(pending_id, str) or not pending_id:
            return
        parsed = json_mapping(args)
        action = parsed.get("action") if parsed is not None else None
        if subsystem == "memory" and parsed is not None and parsed.get("operations"):
            action = "batch"
        pending = Pending(pending_id, subsystem, action if isinstance(action, str) else None,
                          subject_of(subsystem, parsed), summary=answer.get("gist") or None)
        self._queue(StagedWrite(pending, session_id=str(session_id or "") or None,
                                turn_id=str(turn_id or "") or None, tool_call_id=str(tool_call_id or "") or None))

    def approving(self, pending: Pending, args: Mapping[str, Any]) -> str:
        """Before Hermes applies the approved write ``pending`` with the staged arguments ``args``: the probes read
        the files it writes and mark them in flight. Returns the token for :meth:`finish`."""
        token = f"approved-{pending.pending_id}-{uuid.uuid4().hex[:8]}"
        session = f"{APPROVAL_SESSION}{pending.pending_id}"
        plain = dict(args)
        if pending.subsystem == "skills":
            self.probe.pre_tool_call(tool_name=SKILL_TOOL, args=plain, tool_call_id=token, session_id=session)
        else:
            self.memory_probe.pre_tool_call(tool_name=MEMORY_TOOL, args=plain, tool_call_id=token)
        with self._lock:
            self._applying[token] = _Applying(pending, plain, token, session)
        return token

    def finish(self, token: str, *, ok: bool, decided_by: str, lifecycle: str | None = None,
               reason: str | None = None, error: str | None = None) -> None:
        """After Hermes applied (``ok``) or failed to apply the write of ``token``: the agent's change with who
        approved it (``decided_by``), and the staged row's status. ``lifecycle``: the skill lifecycle action the
        write is (``patched``, ``created``, …; a skill write that is none changed nothing)."""
        with self._lock:
            applying = self._applying.pop(token, None)
        if applying is None:
            return
        pending, now = applying.pending, sqlite_utc()
        subject = subject_of(pending.subsystem, applying.args)
        if pending.subsystem == "skills":
            name = str(applying.args.get("name") or "").strip()
            if ok and lifecycle is not None and name:
                self.probe.on_skill_lifecycle(action=lifecycle, skill_name=name, session_id=applying.session)
                self._queue(ApprovedSkillChange(
                    public_name(name), lifecycle, CHANGE_TYPES.get(lifecycle, "refine"),
                    "agent_created" if lifecycle == "created" else None, reason, applying.session, now,
                    approved_by=decided_by, pending_id=pending.pending_id))
            self.probe.post_tool_call(tool_name=SKILL_TOOL, tool_call_id=token)  # no change: the mark goes
        else:
            if ok:
                self.memory_probe.post_tool_call(tool_name=MEMORY_TOOL, args=applying.args, tool_call_id=token,
                                                 session_id=applying.session or "", turn_id="")
            self._queue(ApprovedMemoryWrite(MEMORY_TOOL, applying.args, "agent-reflection", None, token, now, ok,
                                            approved_by=decided_by, pending_id=pending.pending_id))
        status = "approved" if ok else "failed"
        self._queue(StagedWrite(dataclasses.replace(pending, subject=pending.subject or subject), status,
                                decided_at=now, decided_by=decided_by, error_message=None if ok else error))
        logger.info("hermes_pipeline: staged %s write %s %s by %s", pending.subsystem, pending.pending_id, status,
                    decided_by, extra={"event": f"staged_write_{status}"})

    def denied(self, pending: Pending, decided_by: str) -> None:
        """The user denied the staged write ``pending``: nothing was written; its row says so."""
        self._queue(StagedWrite(pending, "denied", decided_at=sqlite_utc(), decided_by=decided_by))
        logger.info("hermes_pipeline: staged %s write %s denied by %s", pending.subsystem, pending.pending_id,
                    decided_by, extra={"event": "staged_write_denied"})

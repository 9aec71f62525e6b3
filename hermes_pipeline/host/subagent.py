"""Delegated child agents (spec 01 §7.9)."""

from __future__ import annotations

import asyncio
import threading
import time
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ..contract.status import ChildStatus
from ..engine import ids
from .session import Session

if TYPE_CHECKING:
    from .turn import Turn


class SubagentRun:
    """One delegated child. ``subagent_start`` has fired when you hold it.

    :attr:`session` is the child's own :class:`Session` (its hooks carry the child's IDs, OBS-50).
    Call :meth:`finish` with the child's status and summary; as a context manager, an exception
    reports ``error`` (``interrupted`` for ``KeyboardInterrupt`` / cancellation) and a block left
    without :meth:`finish` reports ``completed``. The child session is finalized at the end.
    """

    def __init__(self, parent: Turn, *, role: str, goal: str, child_session_id: str | None) -> None:
        self.parent = parent
        self.child_role = role
        self.child_subagent_id = ids.new_subagent_id()
        self.session = Session(parent.session.host, child_session_id or ids.new_session_id(), subagent=self)
        self._started_ns = time.perf_counter_ns()
        self._lock = threading.Lock()
        self.status: str | None = None
        parent_session = parent.session
        parent_session.host.emit("subagent_start", {
            "parent_session_id": parent_session.session_id, "parent_turn_id": parent.turn_id,
            "parent_subagent_id": parent_session.subagent_id, "child_session_id": self.session.session_id,
            "child_subagent_id": self.child_subagent_id, "child_role": role, "child_goal": goal,
        })

    def finish(self, status: str = ChildStatus.COMPLETED.value, *, summary: str | None = None,
               outcome: str | None = None) -> None:
        """Report the child's end once (``subagent_stop``) and finalize its session."""
        with self._lock:
            if self.status is not None:
                return
            self.status = status
        host = self.parent.session.host
        if "subagent_stop" in host.engine.hook_listeners:
            history, dropped = self.session.tool_history()
            payload: dict[str, Any] = {
                "parent_session_id": self.parent.session.session_id, "parent_turn_id": self.parent.turn_id,
                "child_session_id": self.session.session_id, "child_subagent_id": self.child_subagent_id,
                "child_role": self.child_role, "child_status": status, "child_summary": summary,
                "duration_ms": (time.perf_counter_ns() - self._started_ns) // 1_000_000,
                "tool_call_history": history, "tool_call_history_dropped": dropped,
            }
            if outcome is not None:
                payload["child_outcome"] = outcome
            host.emit("subagent_stop", payload)
        self.session.finalize(reason="session_boundary")

    def __enter__(self) -> SubagentRun:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            self.finish()
        elif issubclass(exc_type, KeyboardInterrupt | asyncio.CancelledError):
            self.finish(ChildStatus.INTERRUPTED.value)
        else:
            self.finish(ChildStatus.ERROR.value, summary=None, outcome=exc_type.__name__)

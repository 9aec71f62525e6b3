"""Approval prompts and human-input waits (spec 01 §7.7, §7.8).

Both are observe-only: plugins cannot answer or veto them (OBS-42). Each start event is paired
with exactly one end event, also when the wait is abandoned or raises (OBS-43, OBS-44).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ..contract.status import ApprovalChoice, HumanInputOutcome
from ..engine import ids
from ..engine.scrub import scrub_prompt

if TYPE_CHECKING:
    from .session import Host


class Approval:
    """One approval prompt. ``pre_approval_request`` has fired when you hold this object.

    Call :meth:`resolve` with the user's choice (``once``, ``session``, ``always``, ``deny``,
    ``timeout``, ``cancelled``). Used as a context manager, a block left without a choice reports
    ``timeout``, and one left by an exception reports ``cancelled`` (the request was withdrawn).
    """

    def __init__(self, host: Host, fields: dict[str, Any]) -> None:
        self._host = host
        self._fields = fields
        self.choice: str | None = None
        host.emit("pre_approval_request", dict(fields))

    @property
    def approved(self) -> bool:
        """Whether the resolved choice lets the command run."""
        return self.choice in (ApprovalChoice.ONCE, ApprovalChoice.SESSION, ApprovalChoice.ALWAYS)

    def resolve(self, choice: str, decided_by: str | None = None) -> bool:
        """Report the outcome once (``post_approval_response``); later calls are ignored.

        An empty choice is reported as ``timeout``. ``decided_by``: who decided (``user``,
        ``smart_approval``, ...); by default ``timeout`` for a timeout, ``none`` for a withdrawn
        request, else ``user``. Returns :attr:`approved`.
        """
        if self.choice is None:
            self.choice = choice or ApprovalChoice.TIMEOUT.value
            if decided_by is None:
                decided_by = ("timeout" if self.choice == ApprovalChoice.TIMEOUT else
                              "none" if self.choice == ApprovalChoice.CANCELLED else "user")
            self._host.emit("post_approval_response", {**self._fields, "choice": self.choice,
                                                        "decided_by": decided_by})
        return self.approved

    def __enter__(self) -> Approval:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.choice is None:
            self.resolve(ApprovalChoice.CANCELLED.value if exc_type is not None else ApprovalChoice.TIMEOUT.value)


class HumanInput:
    """One wait for a human (sudo password, clarify question, approval confirmation).

    ``on_human_input_request`` has fired when you hold this object. Call :meth:`resolve` with the
    outcome (``submitted``, ``provided``, ``cancelled``, ``deny``); never pass what the human typed
    (OBS-45). As a context manager, an exception or a missing outcome reports ``error`` (OBS-44).
    """

    def __init__(
        self,
        host: Host,
        *,
        kind: str,
        prompt: str,
        session_id: str,
        session_key: str,
        metadata: Mapping[str, Any] | None,
    ) -> None:
        self._host = host
        self.request_id = ids.new_request_id()
        self.outcome: str | None = None
        self._fields: dict[str, Any] = {**(metadata or {})}
        self._fields.update(
            kind=kind,
            request_id=self.request_id,
            session_id=session_id,
            session_key=session_key,
            platform=host.platform or "cli",
            prompt=scrub_prompt(prompt) if "on_human_input_request" in host.engine.hook_listeners
            or "on_human_input_resolved" in host.engine.hook_listeners else "",
        )
        host.emit("on_human_input_request", dict(self._fields))

    def resolve(self, outcome: str) -> None:
        """Report how the wait ended, exactly once (``on_human_input_resolved``)."""
        if self.outcome is None:
            self.outcome = outcome or HumanInputOutcome.ERROR.value
            self._host.emit("on_human_input_resolved", {**self._fields, "outcome": self.outcome})

    def __enter__(self) -> HumanInput:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.outcome is None:
            self.resolve(HumanInputOutcome.ERROR.value)

"""Errors of the replay layer: bad input the user can cause, and a divergence in strict mode."""

from __future__ import annotations

from typing import Any

from ..contract.errors import LLMExecutionBlocked

__all__ = ["ReplayDivergence", "TrajectoryError"]


class TrajectoryError(Exception):
    """A trajectory that cannot be used (missing, not JSON, not ATIF, summarised, truncated payloads...).

    Attributes:
        path: the file (or id) concerned.
        step: the ATIF ``step_id`` concerned, when one is.
        key: the ``--set`` key or document key concerned, when one is.
    """

    def __init__(self, message: str, *, path: str | None = None, step: int | None = None,
                 key: str | None = None) -> None:
        where = ", ".join(part for part in (path, f"step {step}" if step is not None else None,
                                            f"key {key!r}" if key else None) if part)
        super().__init__(f"{where}: {message}" if where else message)
        self.path = path
        self.step = step
        self.key = key


class ReplayDivergence(LLMExecutionBlocked):
    """Strict replay stopped: the k-th call does not match the recording.

    It is an :class:`~hermes_pipeline.contract.errors.LLMExecutionBlocked`, so the engine always
    propagates it to the host's call site and never falls back to the real provider.

    Attributes:
        step: the 1-based index of the LLM call (agent step) that diverged.
        reason: what differed.
    """

    def __init__(self, step: int, reason: str, *, metadata: dict[str, Any] | None = None) -> None:
        super().__init__(f"replay diverged at step {step}: {reason}", metadata=metadata)
        self.step = step
        self.divergence_reason = reason

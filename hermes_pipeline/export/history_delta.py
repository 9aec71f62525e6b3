"""A trajectory's recorded requests as what each adds to the one before (``atif.llm_history = "delta"``).

Every request of an agent loop repeats the whole conversation so far, so the requests of a session written
whole grow with the square of its length. The ATOF file writes each history as a prefix delta (FMT-25); the
trajectory store does the same across the agent steps of one trajectory document: a step's
``extra.hermes.llm_request`` holds only the history entries after the first ``messages_offset`` ones, which
are those of the previous agent step's request (in document order) when that history is a prefix of this
one. A step without ``messages_offset`` holds its history whole.

:func:`delta_steps` is the writer's side, :func:`whole_steps` the readers' (through
:func:`hermes_pipeline.readers.definitions.expand_trajectory`, which every trajectory reader calls).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .content import HISTORY_KEYS

__all__ = ["OFFSET_KEY", "HistoryError", "delta_steps", "whole_steps"]

OFFSET_KEY: Final = "messages_offset"
"""``extra.hermes.messages_offset`` of an agent step: how many history entries come from the previous request."""


class HistoryError(ValueError):
    """A step's ``messages_offset`` cannot be applied (not a count, or beyond the previous request's history).

    Attributes:
        index: the position of the step in ``steps``.
    """

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(reason)
        self.index = index


def _parts(step: Any) -> tuple[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any], str, list[Any]] | None:
    """``(hermes, request, body, history key, history)`` of an agent step with a recorded history, else ``None``."""
    extra = step.get("extra") if isinstance(step, Mapping) else None
    hermes = extra.get("hermes") if isinstance(extra, Mapping) else None
    request = hermes.get("llm_request") if isinstance(hermes, Mapping) else None
    body = request.get("body") if isinstance(request, Mapping) else None
    if not isinstance(body, Mapping):
        return None
    assert isinstance(hermes, Mapping) and isinstance(request, Mapping)
    key = HISTORY_KEYS.get(str(hermes.get("api_mode") or "chat_completions"))
    history = body.get(key) if key is not None else None
    if key is None or not isinstance(history, list):
        return None
    return hermes, request, body, key, history


def _with(step: Mapping[str, Any], hermes: Mapping[str, Any], request: Mapping[str, Any],
          body: Mapping[str, Any], key: str, history: list[Any], offset: int | None) -> dict[str, Any]:
    """``step`` with its request's history ``history`` and its ``messages_offset`` ``offset`` (none: removed)."""
    new_hermes = {**hermes, "llm_request": {**request, "body": {**body, key: history}}}
    new_hermes.pop(OFFSET_KEY, None)
    if offset:
        new_hermes[OFFSET_KEY] = offset
    return {**step, "extra": {**step["extra"], "hermes": new_hermes}}


def delta_steps(steps: list[Any]) -> list[Any]:
    """``steps`` (whole histories) with each agent step's history cut to what its request adds to the previous
    recorded request (copied along the changed paths; other steps as they are)."""
    out = []
    previous: list[Any] | None = None
    for step in steps:
        parts = _parts(step)
        if parts is None:
            out.append(step)
            continue
        hermes, request, body, key, history = parts
        keep = len(previous) if previous is not None and 0 < len(previous) <= len(history) \
            and history[:len(previous)] == previous else 0
        out.append(_with(step, hermes, request, body, key, history[keep:], keep) if keep else step)
        previous = history
    return out


def whole_steps(steps: list[Any]) -> list[Any]:
    """The inverse of :func:`delta_steps`: each agent step's history whole again (new step objects along the
    changed paths).

    Raises:
        HistoryError: a ``messages_offset`` that is not a positive count within the previous request's history.
    """
    out = []
    previous: list[Any] = []
    gap: Any = None
    """The ``step_id`` of an agent step without a recorded request since the previous history (named when the
    next delta cannot be rebuilt: its request was removed or redacted)."""
    for index, step in enumerate(steps):
        parts = _parts(step)
        if parts is None:
            extra = step.get("extra") if isinstance(step, Mapping) else None
            hermes = extra.get("hermes") if isinstance(extra, Mapping) else None
            if isinstance(hermes, Mapping) and OFFSET_KEY in hermes:
                raise HistoryError(index, "messages_offset on a step whose llm_request has no history list")
            if isinstance(step, Mapping) and step.get("source") == "agent" and isinstance(hermes, Mapping) \
                    and not hermes.get("synthetic") and not isinstance(hermes.get("llm_request"), Mapping):
                gap = step.get("step_id", index + 1)
            out.append(step)
            continue
        hermes, request, body, key, history = parts
        offset = hermes.get(OFFSET_KEY)
        if offset is None:
            out.append(step)
            previous, gap = history, None
            continue
        if type(offset) is not int or not 0 < offset <= len(previous):
            if gap is not None:
                raise HistoryError(index, f"step {gap} has no recorded llm_request (removed or redacted), so the "
                                          "next request, stored as what it adds to that one, cannot be rebuilt")
            raise HistoryError(index, f"messages_offset {offset!r} is not within the previous request's "
                                      f"{len(previous)} history entries")
        gap = None
        whole = previous[:offset] + history
        out.append(_with(step, hermes, request, body, key, whole, None))
        previous = whole
    return out

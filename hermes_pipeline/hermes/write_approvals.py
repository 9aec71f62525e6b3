"""Hermes' write-approval decisions, recorded as what they are: the agent's staged write, approved or denied.

With ``skills.write_approval`` / ``memory.write_approval`` on, Hermes' ``skill_manage`` and ``memory`` tools stage
their arguments as a pending record (``$HERMES_HOME/pending/<skills|memory>/<id>.json``) instead of writing. The
user decides later with ``/skills approve|reject|deny|drop <id>|all`` (``/memory`` alike), in the CLI or through
the gateway, both through ``hermes_cli.write_approval_commands.handle_pending_subcommand``. An approval calls
``tools.skill_manager_tool.apply_skill_pending(payload)`` (``skill_manage`` with the gate bypassed; a JSON answer)
or ``tools.memory_tool.apply_memory_pending(payload, store)`` (the store's ``add`` / ``replace`` / ``remove`` /
``apply_batch``; a dict answer), then deletes the record; a denial only deletes the record. Neither runs inside a
tool call, so no hook of Hermes reports them.

:func:`install` wraps those three functions in their modules (the callers import them from there at each call):

- ``apply_skill_pending`` / ``apply_memory_pending``: the staged write is found among Hermes' pending records by its
  payload; the observability store's :class:`~hermes_pipeline.sinks.observability_store.staged.StagedWrites` is told
  before (the files are read and marked in flight, as around a tool call) and after (the agent's change with who
  approved it, or the failure). Hermes' result is returned unchanged; an exception goes on as Hermes raised it.
- ``handle_pending_subcommand``: who decides (``user`` in the CLI; ``user:<platform>:<user id>`` when the gateway's
  message event names one), and for ``reject`` / ``deny`` / ``drop`` the pending records that went: each is a
  denied staged write.

Fail-open: a function that is missing or whose parameters are not the ones expected is left alone with one warning
(the writes it applies are then found by the rescans, as hand edits); a recording that fails is logged and Hermes
goes on as if the bridge were not there.
"""

from __future__ import annotations

import contextvars
import importlib
import inspect
import logging
import sys
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING, Any, Final

from ..export.timestamps import sqlite_utc
from .skill_calls import TOOL as SKILL_TOOL
from .skill_calls import lifecycle_event

if TYPE_CHECKING:
    from ..sinks.observability_store.staged import Pending, StagedWrites

__all__ = ["TARGETS", "install", "uninstall"]

logger: Final = logging.getLogger("hermes_pipeline.hermes")


@dataclass(frozen=True)
class Target:
    """One Hermes function the bridge wraps: where it is, the parameters it must start with, what it does."""

    module: str
    name: str
    params: tuple[str, ...]
    subsystem: str | None
    """``skills`` / ``memory`` for the functions applying a write; ``None`` for the command handler."""


TARGETS: Final = (
    Target("tools.skill_manager_tool", "apply_skill_pending", ("payload",), "skills"),
    Target("tools.memory_tool", "apply_memory_pending", ("payload", "store"), "memory"),
    Target("hermes_cli.write_approval_commands", "handle_pending_subcommand", ("subsystem", "args"), None),
)
"""Hermes Agent 0.19's functions behind ``/skills`` and ``/memory`` approve / deny."""
DENY: Final = frozenset({"reject", "deny", "drop"})
"""Hermes' words for denying a staged write."""
WRAPPED: Final = "__hermes_pipeline_wrapped__"
_FRAMES: Final = 8

_lock = threading.Lock()
_recorder: StagedWrites | None = None
_originals: dict[tuple[str, str], Callable[..., Any]] = {}
_decider: contextvars.ContextVar[str | None] = contextvars.ContextVar("hermes_pipeline_write_decider", default=None)


def _expected(fn: Callable[..., Any], params: tuple[str, ...]) -> bool:
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return False
    return names[:len(params)] == list(params)


def install(recorder: StagedWrites) -> list[str]:
    """Record Hermes' write-approval decisions into ``recorder`` (see the module docstring); the functions wrapped.
    Called again (another profile, a test), the wrappers stay and record into the new ``recorder``."""
    global _recorder
    done: list[str] = []
    with _lock:
        _recorder = recorder
        for target in TARGETS:
            where = f"{target.module}.{target.name}"
            try:
                module = importlib.import_module(target.module)
            except Exception as exc:
                logger.warning("hermes_pipeline: cannot record approved or denied staged writes through %s: its "
                               "module does not import (%s: %s); such writes are found by the rescans instead",
                               where, type(exc).__name__, str(exc)[:200])
                continue
            fn = getattr(module, target.name, None)
            if callable(fn) and getattr(fn, WRAPPED, False):
                done.append(where)
                continue
            if not callable(fn) or not _expected(fn, target.params):
                logger.warning("hermes_pipeline: cannot record approved or denied staged writes through %s: %s in "
                               "this Hermes; such writes are found by the rescans instead", where,
                               "it is missing" if not callable(fn) else
                               f"it does not take ({', '.join(target.params)}, ...)")
                continue
            wrapper = _apply_wrapper(fn, target.subsystem) if target.subsystem else _command_wrapper(fn)
            setattr(wrapper, WRAPPED, True)
            _originals[(target.module, target.name)] = fn
            setattr(module, target.name, wrapper)
            done.append(where)
    return done


def uninstall() -> None:
    """Put Hermes' functions back and record nothing more."""
    global _recorder
    with _lock:
        _recorder = None
        for (module_name, name), fn in list(_originals.items()):
            module = sys.modules.get(module_name)
            if module is not None and getattr(getattr(module, name, None), WRAPPED, False):
                setattr(module, name, fn)
        _originals.clear()


def _failed(what: str, exc: Exception) -> None:
    logger.warning("hermes_pipeline: recording a staged write's %s failed (%s: %s); Hermes continues without it",
                   what, type(exc).__name__, str(exc)[:200])


# ---------------------------------------------------------------------------------------------- who, which write

def _who(frame: FrameType | None) -> str:
    """The user deciding: ``user:<platform>:<user id>`` when a caller (the gateway's command handler) has the
    message ``event`` naming them, else ``user`` (the CLI's user at the terminal)."""
    for _ in range(_FRAMES):
        if frame is None:
            break
        source = getattr(frame.f_locals.get("event"), "source", None)
        platform = getattr(source, "platform", None)
        if platform is not None:
            name = str(getattr(platform, "value", platform))
            user = getattr(source, "user_id", None) or getattr(source, "user_name", None)
            return f"user:{name}:{user}" if user else f"user:{name}"
        frame = frame.f_back
    return "user"


def _records(subsystem: str) -> list[Mapping[str, Any]]:
    """Hermes' pending records of ``subsystem``, oldest first."""
    from tools import write_approval  # type: ignore[import-not-found,import-untyped,unused-ignore]

    records = write_approval.list_pending(subsystem)
    return [r for r in records if isinstance(r, Mapping)] if isinstance(records, list) else []


def _pending(subsystem: str, record: Mapping[str, Any]) -> Pending:
    from ..sinks.observability_store.staged import Pending, subject_of

    payload = record.get("payload")
    args = payload if isinstance(payload, Mapping) else None
    created = record.get("created_at")
    action = record.get("action") or (args.get("action") if args is not None else None)
    return Pending(str(record.get("id") or ""), subsystem, str(action) if action else None, subject_of(subsystem, args),
                   str(record.get("origin") or "") or None, str(record.get("summary") or "") or None,
                   sqlite_utc(int(created * 1_000_000)) if isinstance(created, int | float) else None)


def _find(subsystem: str, payload: Any) -> Pending:
    """The pending record ``payload`` is the staged write of (the first with that payload); an id of its own when
    Hermes has none (the function was called by something else than its approve command)."""
    from ..sinks.observability_store.staged import Pending

    for record in _records(subsystem):
        if record.get("payload") == payload and record.get("id"):
            return _pending(subsystem, record)
    return Pending(f"unlisted-{uuid.uuid4().hex[:8]}", subsystem,
                   str(payload.get("action")) if isinstance(payload, Mapping) and payload.get("action") else None)


# ---------------------------------------------------------------------------------------------- the wrappers

def _apply_wrapper(original: Callable[..., Any], subsystem: str) -> Callable[..., Any]:
    def apply_pending(payload: Any, *args: Any, **kwargs: Any) -> Any:
        recorder, token = _recorder, None
        if recorder is not None and isinstance(payload, Mapping):
            try:
                token = recorder.approving(_find(subsystem, payload), payload)
            except Exception as exc:
                _failed("approval", exc)
        try:
            result = original(payload, *args, **kwargs)
        except Exception as exc:
            if recorder is not None and token is not None:
                _finish(recorder, token, subsystem, payload, None, str(exc))
            raise
        if recorder is not None and token is not None:
            _finish(recorder, token, subsystem, payload, result, None)
        return result

    apply_pending.__name__ = original.__name__
    apply_pending.__doc__ = original.__doc__
    apply_pending.__wrapped__ = original  # type: ignore[attr-defined]
    return apply_pending


def _finish(recorder: StagedWrites, token: str, subsystem: str, payload: Mapping[str, Any], result: Any,
            raised: str | None) -> None:
    try:
        decided_by = _decider.get() or "user"
        if subsystem == "skills":
            from ..export.memory_changes import json_mapping

            answer = json_mapping(result) if isinstance(result, str) else None
            event = lifecycle_event({"tool_name": SKILL_TOOL, "args": dict(payload), "result": result, "status": "ok"})
            ok = answer is not None and answer.get("success") is True
            error = raised or (str(answer.get("error") or "") if answer is not None and not ok else None)
            recorder.finish(token, ok=ok, decided_by=decided_by, lifecycle=event["action"] if event else None,
                            reason=event["reason"] if event else None, error=error)
        else:
            ok = isinstance(result, Mapping) and result.get("success") is True
            error = raised or (str(result.get("error") or "") if isinstance(result, Mapping) and not ok else None)
            recorder.finish(token, ok=ok, decided_by=decided_by, error=error)
    except Exception as exc:
        _failed("approval", exc)


def _command_wrapper(original: Callable[..., Any]) -> Callable[..., Any]:
    def handle_pending_subcommand(subsystem: Any, args: Any, *rest: Any, **kwargs: Any) -> Any:
        words = [str(a) for a in args] if isinstance(args, list | tuple) else []
        before: list[Mapping[str, Any]] | None = None
        decided_by = "user"
        recorder = _recorder
        try:
            decided_by = _who(sys._getframe(1))
            if recorder is not None and words and words[0].lower() in DENY and subsystem in ("skills", "memory"):
                target = words[1] if len(words) > 1 else ""
                before = [r for r in _records(subsystem) if target.lower() == "all" or r.get("id") == target]
        except Exception as exc:
            _failed("denial", exc)
        reset = _decider.set(decided_by)
        try:
            return original(subsystem, args, *rest, **kwargs)
        finally:
            _decider.reset(reset)
            if before and recorder is not None:
                _denied(recorder, str(subsystem), before, decided_by)

    handle_pending_subcommand.__name__ = original.__name__
    handle_pending_subcommand.__doc__ = original.__doc__
    handle_pending_subcommand.__wrapped__ = original  # type: ignore[attr-defined]
    return handle_pending_subcommand


def _denied(recorder: StagedWrites, subsystem: str, before: list[Mapping[str, Any]], decided_by: str) -> None:
    """The records Hermes deleted: each a denied staged write."""
    try:
        left = {r.get("id") for r in _records(subsystem)}
        for record in before:
            if record.get("id") not in left:
                recorder.denied(_pending(subsystem, record), decided_by)
    except Exception as exc:
        _failed("denial", exc)

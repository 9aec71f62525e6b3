"""Reporting skill lifecycle events from a host: ``on_skill_lifecycle`` (spec 04 FMT-24 rows 18-20).

A host calls :meth:`Host.skill_lifecycle` after a skill mutation or load *succeeded* (a failed
patch is not reported). Inside a turn the correlation IDs come from the ambient context, so a skill
tool only needs ``host.skill_lifecycle("patched", "my-skill", reason="...")``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from .context import current_context

if TYPE_CHECKING:
    from .session import Host

HOOK: Final = "on_skill_lifecycle"
ACTIONS: Final = frozenset({"created", "patched", "edited", "file_written", "file_removed", "stale", "archived",
                            "deleted", "restored", "installed", "loaded"})
"""The actions of Hermes' skill lifecycle (``file_written`` / ``file_removed``: a supporting file of the skill
changed; ``deleted``: the skill was removed, not archived)."""
PROVENANCES: Final = frozenset({"agent_created", "external", "installed", "local", "unknown"})


def skill_payload(action: str, skill_name: str, *, provenance: str | None = None, reason: str | None = None,
                  session_id: str | None = None, turn_id: str | None = None, use_count: int | None = None,
                  reused: bool | None = None, reuse_after_patch: bool | None = None) -> dict[str, Any]:
    """The ``on_skill_lifecycle`` payload; IDs not given come from the ambient context.

    Raises:
        ValueError: ``action`` is not a lifecycle action, ``skill_name`` is empty or names a path,
            or ``provenance`` is not one of the known values.
    """
    if action not in ACTIONS:
        raise ValueError(f"unknown skill lifecycle action {action!r} (expected one of {', '.join(sorted(ACTIONS))})")
    if not isinstance(skill_name, str) or not skill_name.strip() or "/" in skill_name or "\\" in skill_name \
            or skill_name in (".", ".."):
        raise ValueError(f"skill_name must be a skill directory name, not {skill_name!r}")
    if provenance is not None and provenance not in PROVENANCES:
        raise ValueError(f"unknown skill provenance {provenance!r} (expected one of {', '.join(sorted(PROVENANCES))})")
    ctx = current_context()
    if session_id is None:
        session_id = ctx.session.session_id if ctx.session is not None else ""
    if turn_id is None:
        turn_id = ctx.turn.turn_id if ctx.turn is not None and ctx.session is not None \
            and ctx.session.session_id == session_id else ""
    return {"action": action, "skill_name": skill_name, "provenance": provenance, "success": True,
            "reason": reason, "session_id": session_id, "turn_id": turn_id, "use_count": use_count,
            "reused": reused, "reuse_after_patch": reuse_after_patch}


def report_skill(host: Host, action: str, skill_name: str, **fields: Any) -> None:
    """Fire ``on_skill_lifecycle`` on ``host``'s engine if anyone listens (see :func:`skill_payload`)."""
    if HOOK not in host.engine.hook_listeners:
        return
    host.emit(HOOK, skill_payload(action, skill_name, **fields))

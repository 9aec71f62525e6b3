"""Hermes' ``skill_manage`` calls, reported as the skill lifecycle events Hermes itself never fires.

Hermes Agent 0.19 has no skill lifecycle hook: a skill changes through its ``skill_manage`` tool
(actions ``create``, ``patch``, ``edit``, ``delete``, ``write_file``, ``remove_file``, its schema),
and the only trace of it is the tool call. The bridge turns each *successful* call (Hermes'
result ``{"success": true, …}``; a call the write-approval gate only staged, ``"staged": true``,
changed nothing yet) into the contract's ``on_skill_lifecycle`` event, fired right after the tool
ran and before its ``post_tool_call`` (so a consumer reading the files, like the observability
store's hash probe, sees what the call wrote; that probe also reads the call's arguments on
``pre_tool_call``, where ``file_path`` names the file the call writes):

======================  =================================================================
``skill_manage`` action ``on_skill_lifecycle`` action
======================  =================================================================
``create``              ``created`` (provenance ``agent_created``)
``patch``               ``patched`` (``SKILL.md`` or, with ``file_path``, a supporting file)
``edit``                ``edited``
``delete``              ``deleted``; ``archived`` when Hermes archived it (curator pass)
``write_file``          ``file_written``
``remove_file``         ``file_removed``
======================  =================================================================

The ``reason`` is what the call says about why: a ``reason`` argument when the model gave one,
for a ``delete`` the skill it was ``absorbed_into``; nothing is invented. Arguments may be a
mapping or a JSON string.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..export.memory_changes import json_mapping

TOOL: Final = "skill_manage"
ACTIONS: Final = {"create": "created", "patch": "patched", "edit": "edited", "delete": "deleted",
                  "write_file": "file_written", "remove_file": "file_removed"}


def lifecycle_event(payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``on_skill_lifecycle`` payload for one ``post_tool_call`` of ``skill_manage``, ``None`` when
    the call changed nothing (failed, refused, staged for approval, an unknown action)."""
    if payload.get("tool_name") != TOOL or payload.get("status") not in (None, "ok"):
        return None
    args = json_mapping(payload.get("args"))
    result = json_mapping(payload.get("result"))
    if args is None or result is None or result.get("success") is not True or result.get("staged"):
        return None
    action = args.get("action")
    name = args.get("name")
    lifecycle = ACTIONS.get(action) if isinstance(action, str) else None
    if lifecycle is None or not isinstance(name, str) or not name.strip() or "/" in name or "\\" in name:
        return None
    if lifecycle == "deleted" and result.get("_archived") is True:
        lifecycle = "archived"
    reason = args.get("reason") if isinstance(args.get("reason"), str) and args.get("reason") else None
    absorbed = args.get("absorbed_into")
    if reason is None and action == "delete" and isinstance(absorbed, str) and absorbed.strip():
        reason = f"absorbed into {absorbed.strip()}"
    return {"action": lifecycle, "skill_name": name.strip(),
            "provenance": "agent_created" if lifecycle == "created" else None, "success": True, "reason": reason,
            "session_id": str(payload.get("session_id") or ""), "turn_id": str(payload.get("turn_id") or ""),
            "use_count": None, "reused": None, "reuse_after_patch": None}

"""The hook catalogue: names, families, gating and hang classes (spec 01 §7.0, spec 02 §3).

Field lists are read from the hookspecs in :mod:`.hookspecs`, which stay the one statement of the
contract.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

from . import hookspecs
from .status import MiddlewareKind

HangClass = Literal["B", "C"]


@dataclass(frozen=True, slots=True)
class HookInfo:
    """What the contract says about one observer hook."""

    name: str
    family: str
    must_gate: bool
    """The host MUST check ``has_hook`` before building the payload (OBS-66)."""
    return_used: bool
    """Return values affect behaviour (spec 01 §5)."""
    hang_class: HangClass
    """``B`` bounded and fail-open, ``C`` bounded and fail-closed (OBS-73, OBS-74)."""
    fields: tuple[str, ...]
    """Payload fields in hookspec order, without ``telemetry_schema_version``."""


def _fields(name: str) -> tuple[str, ...]:
    params = inspect.signature(getattr(hookspecs, name)).parameters
    return tuple(p for p in params if p not in ("telemetry_schema_version", "middleware_schema_version"))


_TABLE: tuple[tuple[str, str, bool, bool, HangClass], ...] = (
    ("on_session_start", "session", False, False, "B"),
    ("on_session_end", "session", False, False, "B"),
    ("on_session_finalize", "session", False, False, "B"),
    ("on_session_reset", "session", False, False, "B"),
    ("pre_llm_call", "turn", False, True, "B"),
    ("post_llm_call", "turn", False, False, "B"),
    ("transform_llm_output", "turn", False, True, "B"),
    ("pre_api_request", "request", True, False, "B"),
    ("post_api_request", "request", True, False, "B"),
    ("api_request_error", "request", True, False, "B"),
    ("pre_tool_call", "tool", False, True, "C"),
    ("post_tool_call", "tool", True, False, "B"),
    ("transform_tool_result", "tool", True, True, "B"),
    ("pre_approval_request", "approval", False, False, "B"),
    ("post_approval_response", "approval", False, False, "B"),
    ("on_human_input_request", "human_input", False, False, "B"),
    ("on_human_input_resolved", "human_input", False, False, "B"),
    ("subagent_start", "subagent", False, False, "B"),
    ("subagent_stop", "subagent", False, False, "B"),
    ("on_session_segment", "extension", False, False, "B"),
    ("on_compaction", "extension", False, False, "B"),
    ("on_skill_lifecycle", "extension", False, False, "B"),
    ("on_context_snapshot", "extension", False, False, "B"),
    ("pre_verify", "hermes", False, True, "B"),
    ("transform_terminal_output", "hermes", False, True, "B"),
    ("pre_gateway_dispatch", "hermes", False, True, "B"),
    ("post_gateway_dispatch", "hermes", False, False, "B"),
    ("kanban_task_claimed", "hermes", False, False, "B"),
    ("kanban_task_completed", "hermes", False, False, "B"),
    ("kanban_task_blocked", "hermes", False, False, "B"),
)

OBSERVER_HOOKS: Final[MappingProxyType[str, HookInfo]] = MappingProxyType(
    {row[0]: HookInfo(*row, fields=_fields(row[0])) for row in _TABLE}
)
"""Every observer hook: the ``hermes.observer.v1`` catalogue, then hermes_pipeline extensions, then the
Hermes Agent hooks outside the catalogue (family ``hermes``)."""

V1_HOOKS: Final[tuple[str, ...]] = tuple(name for name, info in OBSERVER_HOOKS.items()
                                         if info.family not in ("extension", "hermes"))
"""The 19 hooks of the ``hermes.observer.v1`` catalogue (spec 01 §7.0)."""

MIDDLEWARE_KINDS: Final[tuple[str, ...]] = tuple(k.value for k in MiddlewareKind)
"""The valid middleware kinds (MW-3)."""

MIDDLEWARE_HOOKSPEC_PREFIX: Final = "middleware_"
"""Middleware kind ``k`` is exposed as the pluggy hookspec ``middleware_<k>`` (MW-4)."""

MIDDLEWARE_FIELDS: Final[MappingProxyType[str, tuple[str, ...]]] = MappingProxyType(
    {k: _fields(MIDDLEWARE_HOOKSPEC_PREFIX + k) for k in MIDDLEWARE_KINDS}
)
"""Call arguments of each middleware kind, from its hookspec."""

"""Where a session runs and how it was entered: the hook ``platform`` as an ``execution_surface`` and an
``entrypoint`` (SM-41, SM-42), closed enums shared by shared metrics and the observability store."""

from __future__ import annotations

from typing import Final

EXECUTION_SURFACES: Final = frozenset({"api", "batch", "cli", "desktop", "gateway", "other", "python",
                                       "scheduled_task", "tui", "unknown"})
ENTRYPOINTS: Final = frozenset({"api", "background", "batch", "delegated", "gateway_message", "interactive",
                                "other", "python", "scheduled_task", "unknown"})
"""The ``execution_surface`` and ``entrypoint`` values: closed enums, nothing else is valid (SM-40)."""

# ---------- surface from the hook platform; entrypoint: declared, delegated, else from the surface (SM-41, SM-42)

_SURFACES: Final = {"cli": "cli", "tui": "tui", "desktop": "desktop", "api_server": "api", "api": "api",
                    "cron": "scheduled_task", "scheduler": "scheduled_task", "scheduled": "scheduled_task",
                    "batch": "batch", "python": "python", "gateway": "gateway"}
GATEWAY_PLATFORMS: Final = frozenset({"telegram", "discord", "slack", "whatsapp", "email", "teams", "signal", "feishu",
                                      "matrix", "mattermost", "sms", "webhook", "homeassistant", "dingtalk", "wecom",
                                      "qq", "line", "wechat", "yuanbao", "bluebubbles", "imessage"})
"""Messaging platforms served by the Hermes gateway (SM-41 names the first eight; the rest are
other gateway adapters)."""

_ENTRY_BY_SURFACE: Final = {"cli": "interactive", "desktop": "interactive", "tui": "interactive",
                            "gateway": "gateway_message", "api": "api", "scheduled_task": "scheduled_task",
                            "batch": "batch", "python": "python", "other": "other", "unknown": "unknown"}


def execution_surface(platform: object) -> str:
    """SM-41: hook ``platform`` → ``execution_surface``."""
    name = platform.strip().lower() if isinstance(platform, str) else ""
    if not name:
        return "unknown"
    if name in _SURFACES:
        return _SURFACES[name]
    return "gateway" if name in GATEWAY_PLATFORMS else "other"


def entrypoint(surface: str, *, declared: object = None, delegated: bool = False) -> str:
    """SM-42: a declared entrypoint in the enum wins; else ``delegated`` for subagents; else by surface."""
    if isinstance(declared, str) and declared in ENTRYPOINTS:
        return declared
    if delegated:
        return "delegated"
    return _ENTRY_BY_SURFACE.get(surface, "unknown")

"""Interpretation of the four behaviour-affecting observer returns (spec 01 §5, OBS-28, OBS-29)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

logger: Final = logging.getLogger("hermes_pipeline.dispatch")


def llm_context(results: Sequence[Any]) -> str | None:
    """``pre_llm_call``: non-empty strings and truthy ``{"context": str}`` joined by a blank line."""
    parts: list[str] = []
    for result in results:
        if isinstance(result, str):
            if result:
                parts.append(result)
        elif isinstance(result, dict):
            context = result.get("context")
            if isinstance(context, str) and context:
                parts.append(context)
    return "\n\n".join(parts) if parts else None


@dataclass(frozen=True, slots=True)
class ToolDirective:
    """The combined effect of ``pre_tool_call`` returns."""

    block_message: str | None
    """Set when a valid block won; the tool must not run."""
    args: dict[str, Any]
    """Effective arguments after the modify directives that precede the block (or all of them)."""
    modified: bool


def tool_directive(results: Sequence[Any], args: dict[str, Any]) -> ToolDirective:
    """``pre_tool_call``: first valid block wins; earlier modifies shallow-merge in dispatch order."""
    effective = args
    modified = False
    for result in results:
        action = result.get("action") if isinstance(result, dict) else None
        if action == "block":
            message = result.get("message")
            if isinstance(message, str) and message:
                return ToolDirective(message, effective, modified)
        elif action == "modify":
            new_args = result.get("args")
            if isinstance(new_args, dict) and new_args:
                effective = {**effective, **new_args}
                modified = True
                continue
        logger.debug("hermes_pipeline: ignored pre_tool_call return %.200r", result)
    return ToolDirective(None, effective, modified)


def first_str(results: Sequence[Any]) -> str | None:
    """``transform_tool_result``: the first ``str`` wins."""
    for result in results:
        if isinstance(result, str):
            return result
    return None


def first_nonempty_str(results: Sequence[Any]) -> str | None:
    """``transform_llm_output``: the first non-empty ``str`` wins."""
    for result in results:
        if isinstance(result, str) and result:
            return result
    return None

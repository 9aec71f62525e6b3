"""This engine's callback results, folded into the one return value Hermes reads from the bridge.

Hermes' plugin manager collects one value per registered callback and its call sites interpret
them (``hermes_cli/plugins.py``, ``agent/turn_context.py``, ``agent/turn_finalizer.py``,
``model_tools.py``, ``tools/terminal_tool.py``, ``gateway/run.py``). The bridge is one callback, so
the results of every consumer in this engine are combined here by the contract's rules, into the
shape that call site accepts. Hooks not listed return ``None`` (their results are ignored anyway).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Final

__all__ = ["fold"]

logger: Final = logging.getLogger("hermes_pipeline.hermes")
_warned: set[str] = set()


def _context(results: list[Any]) -> dict[str, str] | None:
    """``pre_llm_call``: every non-empty string or ``{"context": str}``, joined by a blank line."""
    texts = [r if isinstance(r, str) else r.get("context") for r in results
             if (isinstance(r, str) and r) or (isinstance(r, dict) and isinstance(r.get("context"), str)
                                              and r.get("context"))]
    return {"context": "\n\n".join(t for t in texts if isinstance(t, str))} if texts else None


def _tool_block(results: list[Any]) -> dict[str, str] | None:
    """``pre_tool_call``: the first block with a non-empty message (Hermes has no ``modify``)."""
    for result in results:
        if not isinstance(result, dict):
            continue
        action, message = result.get("action"), result.get("message")
        if action == "block" and isinstance(message, str) and message:
            return {"action": "block", "message": message}
        if action == "modify" and "modify" not in _warned:
            _warned.add("modify")
            logger.warning("hermes_pipeline: a pre_tool_call 'modify' directive was ignored: Hermes Agent applies "
                           "only 'block' from pre_tool_call; rewrite tool arguments with tool_request middleware")
    return None


def _first_string(results: list[Any]) -> str | None:
    """``transform_tool_result`` / ``transform_terminal_output``: the first ``str``."""
    return next((r for r in results if isinstance(r, str)), None)


def _first_text(results: list[Any]) -> str | None:
    """``transform_llm_output``: the first non-empty ``str``."""
    return next((r for r in results if isinstance(r, str) and r), None)


def _verify(results: list[Any]) -> dict[str, Any] | None:
    """``pre_verify``: the first ``continue`` (or Stop-style ``block``) directive with a message."""
    for result in results:
        if isinstance(result, dict):
            action = str(result.get("action") or result.get("decision") or "").strip().lower()
            message = result.get("message") or result.get("reason")
            if action in ("continue", "block") and isinstance(message, str) and message.strip():
                return result
    return None


def _gateway(results: list[Any]) -> dict[str, Any] | None:
    """``pre_gateway_dispatch``: the first ``skip``, ``rewrite`` (with text) or ``allow`` directive."""
    for result in results:
        if isinstance(result, dict):
            action = result.get("action")
            if action in ("skip", "allow") or (action == "rewrite" and isinstance(result.get("text"), str)):
                return result
    return None


_FOLDS: Final[dict[str, Callable[[list[Any]], Any]]] = {
    "pre_llm_call": _context,
    "pre_tool_call": _tool_block,
    "transform_tool_result": _first_string,
    "transform_terminal_output": _first_string,
    "transform_llm_output": _first_text,
    "pre_verify": _verify,
    "pre_gateway_dispatch": _gateway,
}


def fold(hook: str, results: list[Any]) -> Any:
    """The value the bridge returns to Hermes for ``hook`` given this engine's ``results``."""
    if not results:
        return None
    folder = _FOLDS.get(hook)
    return folder(results) if folder is not None else None

"""Which observer hook the current context is inside, so that a hook cannot run tools (observers are read-only).

:meth:`~hermes_pipeline.engine.core.Engine.dispatch` marks the context while it calls observers; the
host's tool path refuses to start while the mark is set. Without it a ``pre_tool_call`` observer that
calls ``call_tool`` re-enters ``pre_tool_call`` and recurses until the interpreter's limit, running the
tool at every level. A ``contextvars`` variable follows the callback onto hang-protection workers and
async-callback tasks (both run in a copy of the caller's context) and stays per task under asyncio.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Final

from ..contract.errors import ReentrantToolCallError

in_hook: Final[ContextVar[str | None]] = ContextVar("hermes_pipeline_in_hook", default=None)
"""The observer hook being dispatched in this context, or ``None``."""


def refuse_in_hook(what: str, tool_name: str) -> None:
    """Raise :class:`ReentrantToolCallError` when called from inside an observer hook."""
    hook = in_hook.get()
    if hook is not None:
        raise ReentrantToolCallError(
            f"{what}({tool_name!r}) was called from inside a {hook!r} observer callback: observers are read-only "
            "and cannot run tools (the call was refused, nothing ran); run tools from the agent loop or from "
            "tool_execution middleware"
        )

"""The ambient call context: which session, turn and tool call the current code runs in.

Stored in :mod:`contextvars`, so asyncio tasks inherit it automatically and a worker thread gets
it through :func:`run_in_context` (or ``contextvars.copy_context().run``). Hooks that fire deep
inside a tool (approval prompts, human input) read their correlation IDs from here (MW-42 step 4).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, ParamSpec, TypeVar

if TYPE_CHECKING:
    from .session import Session
    from .turn import Turn

P = ParamSpec("P")
R = TypeVar("R")


class CallContext:
    """Where the current code runs: session, turn and (inside a tool) the tool call. Read-only.

    (A plain slotted class rather than a frozen dataclass: one is created per tool call, and
    frozen-dataclass construction costs several times more.)
    """

    __slots__ = ("session", "tool_call_id", "tool_name", "turn")

    def __init__(self, session: Session | None = None, turn: Turn | None = None, tool_call_id: str = "",
                 tool_name: str = "") -> None:
        self.session = session
        self.turn = turn
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name

    def __repr__(self) -> str:
        session = self.session.session_id if self.session is not None else None
        turn = self.turn.turn_id if self.turn is not None else None
        return f"CallContext(session={session!r}, turn={turn!r}, tool_call_id={self.tool_call_id!r})"


EMPTY_CONTEXT: Final = CallContext()
current: Final[contextvars.ContextVar[CallContext]] = contextvars.ContextVar(
    "hermes_pipeline_call_context", default=EMPTY_CONTEXT
)


def current_context() -> CallContext:
    """The :class:`CallContext` of the calling code (empty outside any session)."""
    return current.get()


def run_in_context(fn: Callable[P, R]) -> Callable[P, R]:
    """Wrap ``fn`` so that it runs in a copy of the *current* context, e.g. on another thread.

    ``executor.submit(run_in_context(work), ...)`` keeps session and turn correlation.
    """
    ctx = contextvars.copy_context()

    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        return ctx.run(fn, *args, **kwargs)

    return call


def _set(value: CallContext) -> contextvars.Token[CallContext]:
    return current.set(value)


def _reset(token: contextvars.Token[CallContext]) -> None:
    try:
        current.reset(token)
    except ValueError:  # reset from another context (e.g. generator finalised elsewhere)
        current.set(EMPTY_CONTEXT)


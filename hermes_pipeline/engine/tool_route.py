"""What a tool call needs to know about the engine's listeners, read once per stage (spec 02 §8.2, FMT-79).

A host's tool path asks, for every call: is there middleware (then the call goes the gated way), does
anyone listen at all, who listens on ``pre_tool_call`` and ``post_tool_call`` and are they all recorders
(then their record lanes take the call's fields, :meth:`~hermes_pipeline.engine.core.Engine.record_lanes`),
is there a ``transform_tool_result`` or ``subagent_stop`` listener. Asked through the live listener views,
that is a handful of dictionary lookups on objects the agent's thread has not touched since its last tool call
(on real payloads the LLM call between two tool calls evicts them from the CPU caches, and each cold lookup
costs more than the lookup itself). :class:`ToolRoute` holds the answers in one tuple: the engine keeps the
current one as a plain tuple of the same fields (:attr:`Engine.tool_route`; the interpreter unpacks an exact
tuple fastest) and forgets it whenever a registry it reads changes or hang protection is switched, so the host
reads one attribute per stage and unpacks it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from .callbacks import Entry

if TYPE_CHECKING:
    from .core import Engine

Lanes = tuple[Callable[[tuple[Any, ...]], None], ...]


class ToolRoute(NamedTuple):
    """The engine's listeners as the tool path sees them (a snapshot; see the module docstring)."""

    gated: bool
    """Some middleware is registered: the call goes through the gated :class:`~hermes_pipeline.host.tools.ToolCall`."""
    observed: bool
    """Some observer listens on some hook (else, outside a subagent, the tool is called bare)."""
    pre: tuple[Entry, ...] | None
    """The ``pre_tool_call`` listeners, or ``None``."""
    pre_lanes: Lanes | None
    """Their record lanes when every one is a recorder (:meth:`Engine.record_lanes`), else ``None``."""
    post: tuple[Entry, ...] | None
    """The ``post_tool_call`` listeners, or ``None``."""
    post_lanes: Lanes | None
    """Their record lanes when every one is a recorder, else ``None``."""
    transform: bool
    """Someone listens on ``transform_tool_result``."""
    subagent_stop: bool
    """Someone listens on ``subagent_stop`` (a subagent's tool calls are then recorded for it)."""


def tool_route(engine: Engine, hooks: Mapping[str, tuple[Entry, ...]],
               middleware: Mapping[str, tuple[Entry, ...]]) -> ToolRoute:
    """The :class:`ToolRoute` of ``engine``'s current listeners (``hooks``, ``middleware``: its live views)."""
    pre = hooks.get("pre_tool_call")
    post = hooks.get("post_tool_call")
    return ToolRoute(bool(middleware), bool(hooks), pre, engine.record_lanes("pre_tool_call", pre) if pre else None,
                     post, engine.record_lanes("post_tool_call", post) if post else None,
                     "transform_tool_result" in hooks, "subagent_stop" in hooks)

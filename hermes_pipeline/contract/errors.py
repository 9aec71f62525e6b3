"""Typed errors a user of the library can meet.

Each message says what was wrong, where, and what to do.
"""

from __future__ import annotations

from typing import Any


class HermesPipelineError(Exception):
    """Base class of every error raised by ``hermes_pipeline`` on purpose."""


class PluginError(HermesPipelineError):
    """A plugin could not be registered or loaded."""


class InvalidCallbackError(PluginError, TypeError):
    """A hook or middleware callback is not usable (for example not callable).

    Raised at registration time, never during dispatch.
    """


class WrapperHookimplError(PluginError):
    """A wrapper-style hookimpl was registered for an observer or middleware hook (OBS-13)."""


class PluginLoadError(PluginError):
    """A plugin (module path, object or entry point) could not be imported or activated."""


class NextCallReusedError(RuntimeError):
    """``next_call`` was called a second time within one execution-middleware frame (MW-29)."""


class NextCallAfterReturnError(NextCallReusedError):
    """A kept ``next_call`` was called after its middleware frame had returned (MW-29).

    The chain is over by then: running the terminal call again would execute a tool or a provider call
    nobody is waiting for, outside every hook and trace. Call ``next_call`` inside the callback only.
    """


class ReentrantToolCallError(HermesPipelineError, RuntimeError):
    """An observer hook called ``call_tool`` / ``acall_tool`` while the engine was dispatching a hook to it.

    Observers are a read-only contract: a hook that runs tools would re-enter the hooks it is part of
    (a ``pre_tool_call`` observer calling ``call_tool`` recurses until the interpreter's limit). The call
    is refused before anything runs; the hook's failure is counted and logged like any other.
    """


class ReadOnlyPayloadError(HermesPipelineError, TypeError):
    """An observer tried to change a value of a hook payload (observers are read-only, OBS-19).

    Tool arguments reach observers as a read-only copy; to change a tool's input return a
    ``{"action": "modify", "args": ...}`` directive from ``pre_tool_call`` or use ``tool_request``
    middleware, which are recorded in the trace.
    """


class LLMExecutionBlocked(Exception):
    """Raised by an ``llm_execution`` middleware to refuse a provider call deliberately (MW-35).

    It always propagates to the caller of the LLM path and is never handled fail-open.

    Args:
        reason: why the call was refused, shown to the user.
        metadata: extra details; ``checked_by`` is filled in by the engine when missing.
    """

    def __init__(self, reason: str, *, metadata: dict[str, Any] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.metadata: dict[str, Any] = dict(metadata or {})

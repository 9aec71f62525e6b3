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

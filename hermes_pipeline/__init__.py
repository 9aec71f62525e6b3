"""hermes_pipeline: telemetry and middleware engine for LLM agent runtimes.

Implements the Hermes observer-hook contract (``hermes.observer.v1``) and middleware contract
(``hermes.middleware.v1``) on pluggy hookspecs. Host authors use :class:`Host`; plugin authors use
:data:`hookimpl` or a ``register(ctx)`` function.
"""

from .contract.errors import (
    HermesPipelineError,
    InvalidCallbackError,
    LLMExecutionBlocked,
    NextCallReusedError,
    PluginError,
    PluginLoadError,
    WrapperHookimplError,
)
from .contract.hookspecs import hookimpl, hookspec
from .contract.versions import MIDDLEWARE_SCHEMA_VERSION, PACKAGE_VERSION, TELEMETRY_SCHEMA_VERSION
from .engine.core import Engine
from .host import Host, Session, Turn
from .runtime import get_engine

__version__ = PACKAGE_VERSION


def __getattr__(name: str) -> object:
    """Lazy access to the configuration layer (``open_profile``, ``ConfigError``)."""
    if name in ("open_profile", "ConfigError"):
        from . import config

        return getattr(config, name)
    raise AttributeError(f"module 'hermes_pipeline' has no attribute {name!r}")


__all__ = [
    "MIDDLEWARE_SCHEMA_VERSION",
    "TELEMETRY_SCHEMA_VERSION",
    "ConfigError",
    "Engine",
    "HermesPipelineError",
    "Host",
    "InvalidCallbackError",
    "LLMExecutionBlocked",
    "NextCallReusedError",
    "PluginError",
    "PluginLoadError",
    "Session",
    "Turn",
    "WrapperHookimplError",
    "get_engine",
    "hookimpl",
    "hookspec",
    "open_profile",
]

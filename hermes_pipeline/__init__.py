"""hermes_pipeline: telemetry and middleware engine for LLM agent runtimes.

Implements the Hermes observer-hook contract (``hermes.observer.v1``) and middleware contract
(``hermes.middleware.v1``) on pluggy hookspecs. Host authors use :class:`Host`; plugin authors use
:data:`hookimpl` or a ``register(ctx)`` function.
"""

from typing import TYPE_CHECKING

from . import runtime as _runtime
from ._lazy import lazy_names
from .contract.versions import MIDDLEWARE_SCHEMA_VERSION, PACKAGE_VERSION, TELEMETRY_SCHEMA_VERSION

if TYPE_CHECKING:
    from .config import ConfigError
    from .contract.errors import (
        HermesPipelineError,
        InvalidCallbackError,
        LLMExecutionBlocked,
        NextCallAfterReturnError,
        NextCallReusedError,
        PluginError,
        PluginLoadError,
        ReadOnlyPayloadError,
        ReentrantToolCallError,
        WrapperHookimplError,
    )
    from .contract.hookspecs import hookimpl, hookspec
    from .engine.core import Engine
    from .host import Host, Session, Turn
    from .profile import open_profile
    from .runtime import get_engine

__version__ = PACKAGE_VERSION

_HOME = {
    "HermesPipelineError": "contract.errors", "InvalidCallbackError": "contract.errors",
    "LLMExecutionBlocked": "contract.errors", "NextCallReusedError": "contract.errors",
    "NextCallAfterReturnError": "contract.errors", "ReadOnlyPayloadError": "contract.errors",
    "ReentrantToolCallError": "contract.errors",
    "PluginError": "contract.errors", "PluginLoadError": "contract.errors", "WrapperHookimplError": "contract.errors",
    "hookimpl": "contract.hookspecs", "hookspec": "contract.hookspecs",
    "Engine": "engine.core", "Host": "host", "Session": "host", "Turn": "host", "get_engine": "runtime",
    "open_profile": "profile", "ConfigError": "config",
}
"""Where each public name lives. They load on first use, so that importing one part of the package (the
Hermes bridge's entry point, which stays inert without a pipeline file) does not load the engine and the
host API with it."""

__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())


def _activate_process_engine(engine: "Engine") -> object:
    """Decide the pipeline activation of a new process engine (:func:`get_engine`) for the default profile.

    The package root is the one place above every layer: it hands this to :mod:`.runtime`, which sits below
    the profile package and may not import it."""
    from .profile.process import activate_default

    return activate_default(engine)


_runtime.set_activation(_activate_process_engine)

__all__ = [
    "MIDDLEWARE_SCHEMA_VERSION",
    "TELEMETRY_SCHEMA_VERSION",
    "ConfigError",
    "Engine",
    "HermesPipelineError",
    "Host",
    "InvalidCallbackError",
    "LLMExecutionBlocked",
    "NextCallAfterReturnError",
    "NextCallReusedError",
    "PluginError",
    "PluginLoadError",
    "ReadOnlyPayloadError",
    "ReentrantToolCallError",
    "Session",
    "Turn",
    "WrapperHookimplError",
    "get_engine",
    "hookimpl",
    "hookspec",
    "open_profile",
]

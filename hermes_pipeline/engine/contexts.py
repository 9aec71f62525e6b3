"""The engine as plugins see it: the ``ctx`` of ``register(ctx)`` plugins and of components, and the
small :class:`PluginHost` protocol through which they (and :class:`~hermes_pipeline.engine.plugins.PluginSet`)
reach the engine, so that neither imports :mod:`hermes_pipeline.engine.core`."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .plugins import PluginSet
    from .registry import Registry

__all__ = ["ComponentContext", "PluginContext", "PluginHost"]


class PluginHost(Protocol):
    """What a :class:`PluginSet` and its plugin contexts use of the engine they belong to (the
    :class:`~hermes_pipeline.engine.core.Engine` is one): its two registries, its plugin set and
    the public registration methods. Passed in, so this module never imports the engine."""

    hooks: Registry
    middleware: Registry
    plugins: PluginSet

    def register_hook(self, hook_name: str, callback: Callable[..., Any], *, plugin: str = ...,
                      group: int = ...) -> Any: ...

    def register_middleware(self, kind: str, callback: Callable[..., Any], *, plugin: str = ...,
                            group: int = ...) -> Any: ...

class PluginContext:
    """The ``ctx`` handed to a ``register(ctx)`` plugin (OBS-2, OBS-3, MW-2)."""

    def __init__(self, engine: PluginHost, plugin_name: str, config: Mapping[str, Any] | None = None) -> None:
        self._engine = engine
        self.plugin_name = plugin_name
        """The name the plugin is registered under."""
        self.config: Mapping[str, Any] = MappingProxyType(dict(config or {}))
        """Configuration given to the plugin (read-only; empty when none)."""
        self.logger = logging.getLogger(f"hermes_pipeline.plugin.{plugin_name}")

    def register_hook(self, hook_name: str, callback: Callable[..., Any]) -> None:
        """Append ``callback`` to the observer list for ``hook_name``; it is called with keyword arguments."""
        self._engine.register_hook(hook_name, callback, plugin=self.plugin_name)

    def register_middleware(self, kind: str, callback: Callable[..., Any]) -> None:
        """Append ``callback`` to the middleware list for ``kind`` (``llm_request``, ``tool_request``,
        ``llm_execution`` or ``tool_execution``)."""
        self._engine.register_middleware(kind, callback, plugin=self.plugin_name)

    def register_plugin(self, obj: object) -> None:
        """Register the ``@hookimpl`` methods of a helper object as part of this plugin.

        They are removed together with the plugin. Useful for a component that delegates to
        exporter objects (for example one scope plugin shared by several sinks).
        """
        from .plugins import LoadedPlugin

        plugins = self._engine.plugins
        record = plugins.get(self.plugin_name)
        if record is None:
            record = LoadedPlugin(self.plugin_name, obj, "helper")
        label = f"{self.plugin_name}/{type(obj).__qualname__}@{id(obj):x}"
        plugins._add_hookimpls(label, obj, record, owner=self.plugin_name)


class ComponentContext(PluginContext):
    """The context handed to a component class's constructor (spec 03 §15.2).

    Carries ``kind``, the read-only ``config``, ``policy``, a ``logger`` named
    ``hermes_pipeline.component.<kind>``, ``diagnostics`` and ``native`` (``None`` without the
    native runtime), plus ``register_hook`` / ``register_middleware``. No profile identity;
    ``output_directory`` is where a component writes local files its config does not place
    (the activating profile's ``$HERMES_HOME/telemetry``; ``None`` outside an activation).
    """

    def __init__(
        self,
        engine: PluginHost,
        kind: str,
        config: Mapping[str, Any] | None = None,
        *,
        policy: Any = None,
        diagnostics: Any = None,
        native: Any = None,
        output_directory: Path | None = None,
    ) -> None:
        super().__init__(engine, f"component:{kind}", config)
        self.kind = kind
        self.policy = policy
        self.diagnostics = diagnostics
        self.native = native
        self.output_directory = output_directory
        self.logger = logging.getLogger(f"hermes_pipeline.component.{kind}")

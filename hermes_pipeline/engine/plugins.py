"""The three plugin styles on one engine.

1. **pluggy hookimpls** — an object or module with ``@hookimpl`` functions named after hooks
   (OBS-10) or middleware hookspecs ``middleware_<kind>`` (MW-4).
2. **``register(ctx)``** — the seed documents' style: a module (or any object) with a ``register``
   function, or that function itself, called once with a :class:`PluginContext` whose
   ``register_hook`` / ``register_middleware`` append kwargs-only callbacks (OBS-2, MW-2).
3. **Component classes** (spec 03 §15.2) — a class with ``kind`` and ``activate()``, constructed
   with a :class:`ComponentContext`; after activation its own hookimpls are registered too.

Entry points in the group ``hermes_pipeline.components`` resolve to any of these and are loaded by
name only, never by importing the whole group (CFG-80).
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import inspect
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Final

import pluggy

from ..contract import hookspecs
from ..contract.errors import PluginError, PluginLoadError, WrapperHookimplError
from ..contract.hooks import MIDDLEWARE_HOOKSPEC_PREFIX, MIDDLEWARE_KINDS, OBSERVER_HOOKS
from ..contract.versions import COMPONENT_ENTRY_POINT_GROUP, PROJECT_NAME
from .callbacks import NORMAL, TRYFIRST, TRYLAST, adapt_hookimpl, describe
from .deadline import Deadline, call_shutdown
from .registry import add_entry

from .contexts import ComponentContext as ComponentContext
from .contexts import PluginContext as PluginContext
from .contexts import PluginHost as PluginHost

logger: Final = logging.getLogger("hermes_pipeline.plugins")


@dataclass(slots=True)
class LoadedPlugin:
    """Bookkeeping for one loaded plugin."""

    name: str
    obj: object
    style: str
    """``hookimpl``, ``register`` or ``component``."""
    instance: object | None = None
    """The component instance, for ``flush`` / ``shutdown``."""
    hook_names: list[str] = field(default_factory=list)
    context: PluginContext | None = None
    """The context handed to the plugin, rebound when the plugin is adopted by another set."""


def is_component_class(obj: object) -> bool:
    """A class with a callable ``activate`` (spec 03 §15.2)."""
    return inspect.isclass(obj) and callable(getattr(obj, "activate", None))


def register_function(obj: object) -> Callable[..., Any] | None:
    """The ``register(ctx)`` callable of a plugin: the object itself if it is a function."""
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        return obj
    if inspect.isclass(obj):
        return None
    register = getattr(obj, "register", None)
    return register if callable(register) else None


def has_hookimpls(obj: object) -> bool:
    """Whether ``obj`` carries at least one ``@hookimpl`` (the activation tells a hookimpl object from a
    ``register(ctx)`` plugin with it)."""
    marker = PROJECT_NAME + "_impl"
    for attr in dir(obj):
        try:
            if hasattr(getattr(obj, attr), marker):
                return True
        except Exception:
            continue
    return False


class PluginSet:
    """Loads, tracks and removes the plugins of one engine (a :class:`PluginHost`)."""

    def __init__(self, engine: PluginHost) -> None:
        self._engine = engine
        self._lock = threading.RLock()
        self._loaded: dict[str, LoadedPlugin] = {}

    @functools.cached_property
    def manager(self) -> pluggy.PluginManager:
        """The pluggy plugin manager, used to parse and validate hookimpls; made on first use (reading the
        hookspecs costs about 3 ms, and a host makes several engines that may never load a plugin object)."""
        manager = pluggy.PluginManager(PROJECT_NAME)
        manager.add_hookspecs(hookspecs)
        return manager

    # ----------------------------------------------------------------- queries

    def names(self) -> list[str]:
        """Names of the loaded plugins in load order."""
        with self._lock:
            return list(self._loaded)

    def get(self, name: str) -> LoadedPlugin | None:
        """Bookkeeping for ``name``, or ``None``."""
        with self._lock:
            return self._loaded.get(name)

    # ----------------------------------------------------------------- adding

    def add(
        self,
        plugin: object,
        *,
        name: str | None = None,
        config: Mapping[str, Any] | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> str:
        """Add ``plugin`` and return its name.

        Accepts an object or module with ``@hookimpl`` functions, a module/object with
        ``register(ctx)`` (both at once is fine), a bare ``register``-style function, or a component
        class. ``context`` supplies extra :class:`ComponentContext` fields (``policy``,
        ``diagnostics``, ``native``) for a component class. Raises
        :class:`~hermes_pipeline.PluginError` (or a subclass) when the plugin is unusable; nothing of
        a failed plugin stays registered.
        """
        name = name or self._default_name(plugin)
        with self._lock:
            if name in self._loaded:
                raise PluginError(f"a plugin named {name!r} is already loaded; remove it first or pass another name")
            record = LoadedPlugin(name, plugin, "hookimpl")
            self._loaded[name] = record
        try:
            if is_component_class(plugin):
                self._add_component(record, plugin, config, context)
            else:
                register = register_function(plugin)
                if register is not None:
                    record.style = "register"
                    record.context = PluginContext(self._engine, name, config)
                    register(record.context)
                if not inspect.isfunction(plugin):
                    self._add_hookimpls(name, plugin, record)
                if register is None and not record.hook_names:
                    raise PluginError(
                        f"plugin {name!r} ({type(plugin).__name__}) has no @hookimpl functions and no register(ctx); "
                        "nothing to load"
                    )
        except BaseException:
            self._discard(name)
            raise
        logger.debug("hermes_pipeline: loaded plugin %r (%s)", name, record.style)
        return name

    def _default_name(self, plugin: object) -> str:
        if isinstance(plugin, ModuleType):
            return plugin.__name__
        kind = getattr(plugin, "kind", None)
        if is_component_class(plugin) and isinstance(kind, str):
            return f"component:{kind}"
        return describe(plugin) if (inspect.isfunction(plugin) or inspect.isclass(plugin)) else \
            f"{type(plugin).__module__}.{type(plugin).__qualname__}@{id(plugin):x}"

    def _add_component(
        self, record: LoadedPlugin, cls: Any, config: Mapping[str, Any] | None,
        context: Mapping[str, Any] | None = None,
    ) -> None:
        kind = getattr(cls, "kind", None)
        if not isinstance(kind, str) or not kind:
            raise PluginLoadError(f"component class {describe(cls)} has no string 'kind' class attribute")
        record.style = "component"
        ctx = ComponentContext(self._engine, kind, config, **dict(context or {}))
        ctx.plugin_name = record.name
        record.context = ctx
        instance = cls(ctx)
        record.instance = instance
        instance.activate()
        self._add_hookimpls(record.name, instance, record)

    def _add_hookimpls(self, name: str, obj: object, record: LoadedPlugin, owner: str | None = None) -> None:
        """Register ``obj``'s hookimpls. With ``owner``, they belong to that plugin (removed with it)
        and ``obj`` is not kept in the pluggy manager, which is only used to parse and validate."""
        if not has_hookimpls(obj):
            return
        try:
            self.manager.register(obj, name=name)
        except pluggy.PluginValidationError as exc:
            raise PluginError(f"plugin {name!r}: {exc}") from None
        except ValueError as exc:
            raise PluginError(f"plugin {name!r} could not be registered: {exc}") from None
        impls = [
            (caller.name, impl)
            for caller in self.manager.get_hookcallers(obj) or []
            for impl in caller.get_hookimpls()
            if impl.plugin is obj
        ]
        if owner is not None:
            self.manager.unregister(name=name)
        for _, impl in impls:
            if impl.wrapper or impl.hookwrapper:
                raise WrapperHookimplError(
                    f"plugin {name!r}: hook {impl.function.__name__!r} is a wrapper hookimpl; wrappers cannot be "
                    "isolated per callback. Use middleware to wrap behaviour (OBS-13)"
                )
        for caller_name, impl in impls:
            group = TRYFIRST if impl.tryfirst else TRYLAST if impl.trylast else NORMAL
            invoke = adapt_hookimpl(impl.function, tuple(impl.argnames) + tuple(impl.kwargnames))
            kind = caller_name.removeprefix(MIDDLEWARE_HOOKSPEC_PREFIX)
            if caller_name.startswith(MIDDLEWARE_HOOKSPEC_PREFIX) and kind in MIDDLEWARE_KINDS:
                registry, target = self._engine.middleware, kind
            else:
                registry, target = self._engine.hooks, caller_name
                if target not in OBSERVER_HOOKS:
                    logger.warning(
                        "hermes_pipeline: plugin %r implements unknown hook %r; it is stored and fires only if a host "
                        "emits that name. Valid hooks: %s", name, target, ", ".join(OBSERVER_HOOKS),
                    )
            add_entry(registry, target, impl.function, owner or name, group, invoke)
            record.hook_names.append(target)

    # ----------------------------------------------------------------- loading by reference

    def load(self, target: str, *, config: Mapping[str, Any] | None = None, name: str | None = None) -> str:
        """Import ``"pkg.module"`` or ``"pkg.module:attr"`` and add the result as a plugin."""
        return self.add(import_object(target), name=name, config=config)

    def load_entry_point(self, name: str, *, config: Mapping[str, Any] | None = None) -> str:
        """Load the object published as ``name`` in the ``hermes_pipeline.components`` group.

        Only that entry point is imported (CFG-80). Two distributions publishing the same name is
        an error naming both (CFG-81); an import failure is a :class:`PluginLoadError`.
        """
        matches = list(importlib.metadata.entry_points(group=COMPONENT_ENTRY_POINT_GROUP, name=name))
        if not matches:
            available = sorted({ep.name for ep in importlib.metadata.entry_points(group=COMPONENT_ENTRY_POINT_GROUP)})
            raise PluginLoadError(
                f"no plugin named {name!r} in entry-point group {COMPONENT_ENTRY_POINT_GROUP!r}; "
                f"installed: {', '.join(available) or 'none'}"
            )
        dists = {getattr(ep.dist, "name", "?") for ep in matches}
        if len(dists) > 1:
            raise PluginLoadError(
                f"entry point {name!r} in group {COMPONENT_ENTRY_POINT_GROUP!r} is published by more than one "
                f"distribution: {', '.join(sorted(dists))}; uninstall one"
            )
        try:
            obj = matches[0].load()
        except Exception as exc:
            raise PluginLoadError(
                f"entry point {name!r} ({matches[0].value}) failed to import: {type(exc).__name__}: {exc}"
            ) from exc
        plugin_name = f"component:{name}" if is_component_class(obj) else name
        return self.add(obj, name=plugin_name, config=config)

    # ----------------------------------------------------------------- removal

    def remove(self, name: str, *, flush_timeout: float = 5.0, close: bool = True) -> bool:
        """Remove ``name``: its callbacks and middleware go, a component is flushed and shut down.

        Flush and shutdown share one deadline of ``flush_timeout`` seconds: the flush gets at most
        half of it, the shutdown what is left (passed to a ``shutdown(deadline)``; a ``shutdown()``
        without a parameter keeps its own). With ``close=False`` only the registrations are removed;
        the caller then owns the component's ``flush`` / ``shutdown`` (the pipeline activation does
        this to track failures).
        """
        record = self._discard(name)
        if record is None:
            return False
        if not close:
            return True
        instance = record.instance
        deadline = Deadline(flush_timeout)
        for method in ("flush", "shutdown"):
            fn = getattr(instance, method, None) if instance is not None else None
            if callable(fn):
                try:
                    if method == "flush":
                        fn(deadline.remaining() / 2)
                    else:
                        call_shutdown(fn, deadline.remaining())
                except Exception as exc:
                    logger.warning("hermes_pipeline: %s() of plugin %r raised %s: %s", method, name,
                                   type(exc).__name__, str(exc)[:200])
        return True

    def adopt(self, staging: PluginSet) -> list[str]:
        """Move every plugin of ``staging`` (a set on a private engine) into this set, in load order.

        Used to publish a batch of activated components at once (spec 03 CFG-47 step 9): the
        callbacks keep their relative registration order, contexts are rebound to this engine, and
        ``staging`` is left empty. Raises :class:`PluginError` before moving anything if a name is
        already loaded here.
        """
        names = staging.names()
        with self._lock:
            clash = [n for n in names if n in self._loaded]
        if clash:
            raise PluginError(f"plugins already loaded: {', '.join(clash)}; remove them first")
        moved = set(names)
        for registry, source in ((self._engine.hooks, staging._engine.hooks),
                                 (self._engine.middleware, staging._engine.middleware)):
            entries = sorted((e for n in source.names() for e in source.get(n) if e.plugin in moved),
                             key=lambda e: e.seq)
            for e in entries:
                add_entry(registry, e.name, e.callback, e.plugin, e.group, e.invoke, e.takes_all)
        for name in names:
            record = staging._discard(name)
            if record is None:  # pragma: no cover - names() came from staging
                continue
            target = record.instance if record.instance is not None else record.obj
            if record.hook_names and has_hookimpls(target):
                self.manager.register(target, name=name)
            if record.context is not None:
                record.context._engine = self._engine
            with self._lock:
                self._loaded[name] = record
        return names

    def remove_all(self) -> None:
        """Remove every plugin, in reverse load order."""
        for name in reversed(self.names()):
            self.remove(name)

    def _discard(self, name: str) -> LoadedPlugin | None:
        with self._lock:
            record = self._loaded.pop(name, None)
        self._engine.hooks.remove_where(lambda e: e.plugin == name)
        self._engine.middleware.remove_where(lambda e: e.plugin == name)
        if self.manager.get_plugin(name) is not None:
            self.manager.unregister(name=name)
        return record


def import_object(target: str) -> object:
    """Import ``"pkg.module"`` or ``"pkg.module:attr.path"``; errors are :class:`PluginLoadError`."""
    module_name, _, attr_path = target.partition(":")
    if not module_name:
        raise PluginLoadError(f"plugin reference {target!r} is empty; expected 'package.module[:object]'")
    try:
        obj: object = importlib.import_module(module_name)
    except Exception as exc:
        raise PluginLoadError(f"plugin module {module_name!r} failed to import: {type(exc).__name__}: {exc}") from exc
    for part in filter(None, attr_path.split(".")):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise PluginLoadError(f"plugin reference {target!r}: {part!r} not found") from None
    return obj

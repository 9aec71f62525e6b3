"""Process-wide activation of the pipeline (spec 03 §10, §11): decide once, publish atomically,
roll back on failure, release when the last profile host leaves.

It wires what the configuration layer read and validated (:func:`hermes_pipeline.config.load_pipeline`)
onto an engine, so it lives with the rest of the wiring in this package; ``config/`` only reads files.

States (§11.1): ``UNINITIALIZED`` → (first profile host) ``DISABLED`` | ``ACTIVE`` | ``FAILED``;
the last release returns to ``UNINITIALIZED`` (or stays ``FAILED`` while cleanup is pending).
``FOREIGN`` needs the native runtime and cannot occur in this build.
"""

from __future__ import annotations

import atexit
import enum
import inspect
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..config.components import register_component, validate_config
from ..config.diagnostics import ComponentDiagnostics, Diagnostic, Diagnostics
from ..config.discovery import SELECTOR_ENV, PipelineSettings, legacy_env_names
from ..config.errors import ConfigError, NativeRuntimeRequired
from ..config.pipeline import NATIVE_UNAVAILABLE, LoadedPipeline, load_pipeline
from ..config.policy import Policy, ValidationContext, fixed_locator
from ..engine.core import Engine
from ..engine.deadline import SHUTDOWN_DEADLINE, Deadline, call_shutdown, exit_deadline
from ..engine.plugins import has_hookimpls, is_component_class, register_function

logger: Final = logging.getLogger("hermes_pipeline.config")

ACTIVE_LOG_LINE: Final = "Relay plugins are active process-wide and apply to all profiles hosted by this Hermes process."
"""Logged at INFO whenever the state becomes ``ACTIVE`` (CFG-50)."""

FLUSH_TIMEOUT: Final = SHUTDOWN_DEADLINE
"""Seconds the teardown of the activation may take in all (flushes and shutdowns of every component)."""


class ActivationState(str, enum.Enum):
    """The process activation states of spec 03 §11.1."""

    UNINITIALIZED = "UNINITIALIZED"
    DISABLED = "DISABLED"
    ACTIVE = "ACTIVE"
    FOREIGN = "FOREIGN"
    FAILED = "FAILED"


class NoopNativeHost:
    """The explicit no-op native host used when the native runtime is unavailable (CFG-59)."""

    available: Final = False

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def shutdown(self) -> None:
        """Does nothing."""


@dataclass
class ActivationReport:
    """The report of CFG-87: state, layered sources, diagnostics and the degraded-mode reason."""

    state: ActivationState = ActivationState.UNINITIALIZED
    selector_env: str = SELECTOR_ENV
    selected: str | None = None
    """The selected file (absolute), or ``None`` when the selector is unset."""
    sources: list[str] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    degraded_reason: str | None = None
    components: list[str] = field(default_factory=list)
    """Registered plugin names (``component:<kind>``) in activation order."""
    cause: str | None = None
    """Why the load failed (``FAILED`` only)."""
    nothing_exported: str | None = None
    """``ACTIVE`` only: why the activation exports nothing and registers no middleware, when it does not."""
    output_directory: str | None = None
    """Where components write local files their config does not place: the deciding profile's
    ``$HERMES_HOME/telemetry`` (outputs default to the profile, never to the working directory)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form."""
        return {"state": self.state.value, "selector_env": self.selector_env, "selected": self.selected,
                "sources": list(self.sources), "diagnostics": [d.to_dict() for d in self.diagnostics],
                "degraded_reason": self.degraded_reason, "components": list(self.components), "cause": self.cause,
                "nothing_exported": self.nothing_exported,
                "output_directory": self.output_directory}


def _plugin_object(kind: str, obj: Any) -> Any:
    """A component class, or a plugin object the engine adds as it is."""
    if is_component_class(obj):
        return obj
    register = register_function(obj)
    if register is not None and (inspect.isfunction(obj) or not has_hookimpls(obj)):
        return register_component(kind, register)
    return obj


def _add(staging: Engine, kind: str, obj: Any, config: dict[str, Any], policy: Policy,
         diagnostics: Diagnostics, output_directory: Path | None = None) -> str:
    name = f"component:{kind}"
    plugin = _plugin_object(kind, obj)
    try:
        if is_component_class(plugin):
            context = {"policy": policy, "diagnostics": ComponentDiagnostics(kind, diagnostics),
                       "native": NoopNativeHost(NATIVE_UNAVAILABLE), "output_directory": output_directory}
            return staging.plugins.add(plugin, name=name, config=config, context=context)
        return staging.plugins.add(plugin, name=name, config=config)
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(f"component {kind!r} failed to activate: {type(exc).__name__}: {exc}",
                          code="pipeline.activation_failed") from None


def activate_loaded(engine: Engine, loaded: LoadedPipeline, diagnostics: Diagnostics, *,
                    output_directory: Path | None = None) -> list[str]:
    """Steps 8–9 of CFG-47: activate on a private engine, then publish everything at once.

    ``output_directory`` is handed to every component class as ``ctx.output_directory``.

    On any failure the already-activated components are shut down in reverse order, nothing is
    published and :class:`ConfigError` is raised (CFG-48).
    """
    staging = Engine()
    try:
        for plan in loaded.components:
            if plan.enabled and plan.resolved is not None:
                _add(staging, plan.kind, plan.resolved.obj, plan.config, plan.policy, diagnostics,
                     output_directory)
        for dyn in loaded.dynamic:
            from ..config.dynamic import import_python_plugin  # only files with [[plugins.dynamic]] need the manifests

            obj = import_python_plugin(dyn)
            if is_component_class(obj) and getattr(obj, "kind", dyn.id) != dyn.id:
                raise ConfigError(f"component class of plugin {dyn.id!r} declares another kind",
                                  path=dyn.manifest_path, key="load.entrypoint", code="pipeline.component_invalid")
            if is_component_class(obj) and not hasattr(obj, "kind"):
                obj.kind = dyn.id
            config = dyn.config
            if is_component_class(obj):
                vctx = ValidationContext(component=dyn.id, policy=loaded.policy, diagnostics=diagnostics,
                                         locate=fixed_locator(str(dyn.manifest_path)),
                                         key_prefix=f"plugins.dynamic[{dyn.index}].config")
                config, _ = validate_config(obj, config, vctx)
                diagnostics.raise_if_failed()
            _add(staging, dyn.id, obj, config, loaded.policy, diagnostics, output_directory)
    except BaseException:
        staging.plugins.remove_all()
        raise
    return engine.plugins.adopt(staging.plugins)


class ProcessActivation:
    """The single process-wide activation shared by every hosted profile (§11)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._holders: set[str] = set()
        self._engine: Engine | None = None
        self._names: list[str] = []
        self._pending: list[tuple[str, Any]] = []
        self._previous_timeout: float | None = None
        self._legacy_logged = False
        self._degraded_logged = False
        self._degraded_warned = False
        self._atexit = False
        self.report = ActivationReport()

    @property
    def state(self) -> ActivationState:
        """The current state."""
        return self.report.state

    @property
    def engine(self) -> Engine | None:
        """The engine the current activation was decided on (``None`` before the first holder)."""
        return self._engine

    def components(self) -> list[Any]:
        """The instances of the activated components, in activation order (a read-only view for the
        profiles, which look there for a scope plugin they can share)."""
        with self._lock:
            engine = self._engine
            if engine is None:
                return []
            records = [engine.plugins.get(name) for name in self._names]
            return [record.instance for record in records if record is not None]

    def holders(self) -> list[str]:
        """Keys of the profile hosts currently holding the activation."""
        with self._lock:
            return sorted(self._holders)

    def acquire(self, holder: str, engine: Engine, settings: PipelineSettings | None = None, *,
                hook_callback_timeout: float | None = None, output_directory: Path | None = None) -> ActivationReport:
        """Join the activation; the first holder decides it (CFG-50). Never raises for bad config.

        ``output_directory`` (the deciding profile's ``telemetry`` directory) is handed to the
        components when this holder decides.
        """
        with self._lock:
            if not self._holders:
                if self._pending:
                    self._cleanup()
                if self._pending:
                    self.report = ActivationReport(ActivationState.FAILED,
                                                   cause="cleanup of the previous activation is still pending")
                else:
                    self._engine = engine
                    if hook_callback_timeout is not None:
                        self._previous_timeout = engine.hook_callback_timeout
                        engine.hook_callback_timeout = hook_callback_timeout
                    self.report = self._decide(engine, settings or PipelineSettings(), output_directory)
            self._holders.add(holder)
            return self.report

    def acquire_if_unheld(self, holder: str, engine: Engine, settings: PipelineSettings | None = None, *,
                          hook_callback_timeout: float | None = None,
                          output_directory: Path | None = None) -> ActivationReport | None:
        """:meth:`acquire`, but only when nobody holds the activation; ``None`` (and nothing
        joined) when a profile host already decided it."""
        with self._lock:
            if self._holders:
                return None
            return self.acquire(holder, engine, settings, hook_callback_timeout=hook_callback_timeout,
                                output_directory=output_directory)

    def _decide(self, engine: Engine, settings: PipelineSettings,
                output_directory: Path | None = None) -> ActivationReport:
        diagnostics = Diagnostics()
        report = ActivationReport()
        legacy = legacy_env_names()
        selector = settings.selector()
        if legacy:
            tail = ("they are ignored because a pipeline file is selected" if selector else
                    f"set {SELECTOR_ENV} to a pipeline file (plugins.toml) to configure exporters")
            diagnostics.warning("pipeline.legacy_env_ignored",
                                f"legacy variables {', '.join(legacy)} no longer export anything; {tail}",
                                log=not self._legacy_logged)
            self._legacy_logged = True
        if selector is None:
            report.state = ActivationState.DISABLED
            report.diagnostics = diagnostics.items
            return report
        selected = settings.selected_path()
        report.selected = str(selected)
        report.output_directory = str(output_directory) if output_directory is not None else None
        report.degraded_reason = NATIVE_UNAVAILABLE
        try:
            loaded = load_pipeline(settings, selected=selected, diagnostics=diagnostics)
            report.sources = loaded.sources
            self._names = activate_loaded(engine, loaded, diagnostics, output_directory=output_directory)
        except Exception as exc:
            cause = str(exc) if isinstance(exc, ConfigError) else f"{type(exc).__name__}: {exc}"
            self._degraded(diagnostics, needed=isinstance(exc, NativeRuntimeRequired) or any(
                isinstance(f, NativeRuntimeRequired) for f in diagnostics.failures))
            diagnostics.error("pipeline.load_failed", f"pipeline configuration could not be loaded from {selected}: "
                              f"{cause}; continuing without pipeline plugins", source=str(selected))
            report.state, report.cause = ActivationState.FAILED, cause
            report.diagnostics = diagnostics.items
            return report
        self._degraded(diagnostics, needed=False)  # it activated, so nothing needed the native runtime
        report.state = ActivationState.ACTIVE
        report.components = list(self._names)
        report.nothing_exported = loaded.nothing_exported()
        if report.nothing_exported:  # the same sentence config validate prints
            diagnostics.warning("pipeline.nothing_exported",
                                f"activation ACTIVE, but nothing is exported: {report.nothing_exported}",
                                source=str(selected))
        report.diagnostics = diagnostics.items
        logger.info(ACTIVE_LOG_LINE)
        if not self._atexit:
            atexit.register(self._shutdown_at_exit)
            self._atexit = True
        return report

    def _shutdown_at_exit(self) -> None:
        """The ``atexit`` safety net: shut down within what is left of the process-exit deadline."""
        self.shutdown(exit_deadline().remaining())

    def _degraded(self, diagnostics: Diagnostics, *, needed: bool) -> None:
        """Degraded mode, reported once per process: a WARNING only when a configured component or
        manifest needs the native runtime; otherwise an INFO entry in the report, logged at DEBUG."""
        message = (f"native runtime unavailable: {NATIVE_UNAVAILABLE}; pure-Python components and python "
                   "plugins keep working")
        if needed:
            diagnostics.warning("pipeline.degraded", message, log=not self._degraded_warned)
            self._degraded_warned = True
            return
        diagnostics.info("pipeline.degraded", message + " (nothing configured needs it)", log=False)
        if not self._degraded_logged:
            logger.debug("hermes_pipeline: pipeline.degraded: %s", message)
        self._degraded_logged = True

    def release(self, holder: str, *, deadline: float = FLUSH_TIMEOUT) -> ActivationReport:
        """Leave the activation; the last holder tears it down (CFG-55) within ``deadline`` seconds."""
        with self._lock:
            self._holders.discard(holder)
            if self._holders:
                return self.report
            engine = self._engine
            if self.report.state == ActivationState.ACTIVE and engine is not None:
                for name in reversed(self._names):
                    record = engine.plugins.get(name)
                    if engine.plugins.remove(name, close=False) and record is not None:
                        self._pending.append((name, record.instance))
                self._names = []
            if engine is not None and self._previous_timeout is not None:
                engine.hook_callback_timeout = self._previous_timeout
                self._previous_timeout = None
            self._cleanup(deadline)
            if self._pending:
                self.report = ActivationReport(ActivationState.FAILED, cause="cleanup pending",
                                               diagnostics=self.report.diagnostics)
            else:
                self.report = ActivationReport()
            return self.report

    def _cleanup(self, seconds: float = FLUSH_TIMEOUT) -> None:
        """Flush, then shut down, the detached components in reverse activation order, all within one
        deadline of ``seconds``: the flushes get at most half of it, the shutdowns what is left."""
        failed: list[tuple[str, Any]] = []
        deadline = Deadline(seconds)
        flushes = Deadline(seconds / 2)
        for method in ("flush", "shutdown"):
            for name, instance in self._pending:
                fn = getattr(instance, method, None)
                if not callable(fn):
                    continue
                try:
                    if method == "flush":
                        fn(flushes.remaining())
                    else:
                        call_shutdown(fn, deadline.remaining())
                except Exception as exc:
                    retry = method == "shutdown"
                    logger.warning("hermes_pipeline: %s() of %r raised %s%s", method, name, type(exc).__name__,
                                   "; will retry at the next release" if retry else "")
                    if retry:
                        failed.append((name, instance))
        self._pending = failed

    def shutdown(self, deadline: float = FLUSH_TIMEOUT) -> ActivationReport:
        """Release every holder (interpreter exit, tests), within ``deadline`` seconds in all."""
        end = Deadline(deadline)
        with self._lock:
            for holder in list(self._holders):
                self.release(holder, deadline=end.remaining())
            if not self._holders and self.report.state != ActivationState.UNINITIALIZED and not self._pending:
                self.report = ActivationReport()
            return self.report


PROCESS: Final = ProcessActivation()
"""The process-wide activation."""

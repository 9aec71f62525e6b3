"""Profiles: the entry point for host authors (spec 03 §11, §13).

(Over 400 lines on purpose: a profile's life, the process-wide list of open profiles in which the
first decides the activation and the last releases it, and the projection the profile shares with
its consumers are one lifecycle.)

    from hermes_pipeline.config import open_profile

    profile = open_profile()                 # $HERMES_HOME, default ~/.hermes
    host = profile.host(platform="gateway")  # a Host on the process-wide engine
    ...
    profile.close()                          # the last profile releases the pipeline

The first profile opened in a process decides the pipeline activation; later profiles (other
``HERMES_HOME`` directories) join it, share its components and middleware, and keep their own
``config.yaml`` snapshot.

A profile's first-party consumers that read scope events (trajectory store, observability store,
quick OTel endpoint) listen to one projection, :attr:`Profile.shared_projection`: the pipeline's
when it runs an ``observability`` component that fits, else one the profile makes
(:class:`ProfileProjection`). A hook is then enqueued and projected once, whatever the number of
consumers, and they all see the same scope UUIDs.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from ..engine.core import Engine
from ..engine.plugins import import_object
from ..export.paths import default_output_directory
from ..host import Host, SegmentPolicy
from ..runtime import profile_engine
from . import activation as _activation
from .activation import ActivationReport
from .discovery import PipelineSettings, canonical
from .profile_config import ProfileSettings, load_profile_settings
from .redaction_key import load_redaction_key

logger = logging.getLogger("hermes_pipeline.config")
_lock = threading.RLock()
_profiles: dict[Path, Profile] = {}

FIRST_PARTY_CONSUMERS: dict[str, str] = {
    "structured_logs": "hermes_pipeline.logs:attach_for_profile",
    "shared_metrics": "hermes_pipeline.shared_metrics.profile_entry:attach_for_profile",
    "trajectory_store": "hermes_pipeline.sinks.trajectory_store:attach_for_profile",
    "observability_store": "hermes_pipeline.sinks.observability_store:attach_for_profile",
    "quick_otel": "hermes_pipeline.sinks.quick_otel:attach_for_profile",
}
"""Per-profile first-party consumers (CFG-85), started from the profile's ``config.yaml``.

Each is ``module:function`` taking the :class:`Profile` and returning a handle with ``close()``
(or ``None`` when the profile has it switched off). They are imported by name when a profile
opens, so this layer never imports the consumer packages, which sit above it; a consumer whose
:data:`CONSUMER_GATES` entry says it is off is not imported at all.
"""


def _observability_flag(name: str) -> Callable[[ProfileSettings], bool]:
    def gate(settings: ProfileSettings) -> bool:
        return getattr(getattr(settings, "observability", None), name, True) is True
    return gate


CONSUMER_GATES: Final[dict[str, Callable[[ProfileSettings], bool]]] = {
    "trajectory_store": lambda settings: settings.trajectories.enabled is True,
    "observability_store": _observability_flag("audit_enabled"),
    "quick_otel": _observability_flag("otel_enabled"),
}
"""Whether a consumer can be on for a profile's settings, read without importing it (import cost: the Hermes
bridge pays every module imported while a profile opens). Consumers not listed (structured logs, shared metrics,
whose switched-off state still has work to do) are always imported and decide for themselves."""

SHARED_QUEUE_SIZE: Final = 10_000
"""Capacity of a profile's own shared projection queue (hook records, FMT-80)."""
CLOSE_DEADLINE: Final = 5.0


class _SessionClaims:
    """The Hermes session ids hooked through one profile's engine (``tryfirst``, on the caller's thread, only on
    the hooks that name a new or first-seen session: never per tool call).

    A profile whose consumers listen to the pipeline's projection (on the process engine, fed by every profile's
    hosts) passes them only the events of these sessions, so they still see that profile's events alone. Bounded:
    the oldest ids are forgotten past :attr:`LIMIT` (long-finished sessions)."""

    LIMIT: Final = 100_000

    def __init__(self) -> None:
        self.sessions: dict[str, None] = {}
        self._lock = threading.Lock()

    def claim(self, *session_ids: str | None) -> None:
        sessions = self.sessions
        for session_id in session_ids:
            if session_id and session_id not in sessions:
                with self._lock:
                    sessions[session_id] = None
                    if len(sessions) > self.LIMIT:
                        del sessions[next(iter(sessions))]

    def hookimpls(self) -> object:
        from ..contract.hookspecs import hookimpl

        claim = self.claim

        class Claims:
            @hookimpl(tryfirst=True)
            def on_session_start(self, session_id: str) -> None:
                claim(session_id)

            @hookimpl(tryfirst=True)
            def on_session_reset(self, session_id: str, new_session_id: str | None) -> None:
                claim(session_id, new_session_id)

            @hookimpl(tryfirst=True)
            def on_session_segment(self, session_id: str) -> None:
                claim(session_id)

            @hookimpl(tryfirst=True)
            def on_compaction(self, session_id: str, new_session_id: str) -> None:
                claim(session_id, new_session_id)

            @hookimpl(tryfirst=True)
            def pre_llm_call(self, session_id: str) -> None:  # one per turn: a session first seen mid-way
                claim(session_id)

            @hookimpl(tryfirst=True)
            def subagent_start(self, parent_session_id: str, child_session_id: str) -> None:
                claim(parent_session_id, child_session_id)

            @hookimpl(tryfirst=True)
            def pre_gateway_dispatch(self, session_id: str) -> None:
                claim(session_id)

        return Claims()


def pipeline_projection(engine: Engine) -> Any:
    """The hook projection of the pipeline's ``observability`` component, when one runs on ``engine``'s parent
    (the process engine a profile engine inherits from) and scrubs credentials; else ``None``."""
    process = _activation.PROCESS
    parent = engine.parent
    if parent is None or getattr(process, "_engine", None) is not parent:
        return None
    assert parent is not None
    for name in list(getattr(process, "_names", ())):
        record = parent.plugins.get(name)
        projection = getattr(getattr(getattr(record, "instance", None), "exporters", None), "projection", None)
        if projection is not None and getattr(projection, "deferred", False) is True \
                and getattr(projection, "redact_credentials", False) is True and not getattr(projection, "_closed", True):
            return projection
    return None


class ProfileProjection:
    """The one hook projection every first-party consumer of a profile listens to (trajectory store,
    observability store, quick OTel endpoint): a hook is enqueued once on the caller's thread and projected
    once, whatever the number of consumers, and they all see the same scope UUIDs (FMT-56).

    It is the pipeline's own projection when the pipeline file runs an ``observability`` component whose
    projection fits (credentials scrubbed; the profile sets no ``observability.memory_tools``, which would
    classify tools differently, and its ``observability.max_value_chars`` is the component's ``max_value_chars``): the profile's consumers are then more listeners of it, given only the events
    of the sessions hooked through this profile's engine (:class:`_SessionClaims`). Otherwise the profile makes
    one deferred projection on its own engine, created when the first consumer attaches and removed when the
    last one detaches.

    Each consumer's listener is called on its own: one that raises never keeps an event from the others
    (FMT-83). :meth:`close` (the profile's close) ends every open scope of an own projection first, so every
    consumer writes its partial runs, then the consumers detach.
    """

    def __init__(self, profile: Profile) -> None:
        self._profile = profile
        self._lock = threading.RLock()
        self.projection: Any = None
        """The projection listened to (``None`` until a consumer attaches)."""
        self.borrowed = False
        """Whether :attr:`projection` is the pipeline's (else the profile's own)."""
        self._plugin_name: str | None = None
        self._claims: _SessionClaims | None = None
        self._claims_name: str | None = None
        self._listeners: dict[int, tuple[Callable[[Any], None], Callable[[Any], None]]] = {}
        self._closed = False

    def _memory_tools(self) -> dict[str, str]:
        tools = getattr(getattr(self._profile.settings, "observability", None), "memory_tools", None)
        return dict(tools) if isinstance(tools, dict) else {}

    def _max_value_chars(self) -> int | None:
        value = getattr(getattr(self._profile.settings, "observability", None), "max_value_chars", None)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def _open(self) -> None:
        engine = self._profile.engine
        memory_tools = self._memory_tools()
        max_chars = self._max_value_chars()
        borrowed = pipeline_projection(engine)
        if borrowed is not None and dict(getattr(borrowed, "memory_tools", {}) or {}) == memory_tools \
                and (max_chars is None or getattr(borrowed, "max_value_chars", None) == max_chars):
            claims = _SessionClaims()
            self._claims_name = engine.add_plugin(claims.hookimpls(), name=f"hermes.profile.sessions.{id(self):x}")
            self._claims, self.projection, self.borrowed = claims, borrowed, True
            return
        from ..export.projection import ScopePlugin

        projection = ScopePlugin(deferred=True, max_queue_size=SHARED_QUEUE_SIZE, memory_tools=memory_tools,
                                 max_value_chars=max_chars)
        self._plugin_name = engine.add_plugin(projection, name=f"hermes.profile.projection.{id(self):x}")
        self.projection, self.borrowed = projection, False

    def _filtered(self, listener: Callable[[Any], None]) -> Callable[[Any], None]:
        from ..export.scopes import SESSION_KEY

        assert self._claims is not None
        sessions = self._claims.sessions

        def deliver(event: Any) -> None:
            session_id = event.metadata.get(SESSION_KEY)
            if session_id in sessions or (not session_id and len(_profiles) <= 1):
                listener(event)

        deliver.__qualname__ = getattr(listener, "__qualname__", type(listener).__qualname__)
        return deliver

    def add_listener(self, listener: Callable[[Any], None]) -> None:
        """Deliver every later event of this profile to ``listener`` (a consumer's sink)."""
        with self._lock:
            if self._closed:
                raise RuntimeError(f"profile {self._profile.home} is closed")
            if self.projection is None:
                self._open()
            registered = self._filtered(listener) if self.borrowed else listener
            self._listeners[id(listener)] = (listener, registered)
            self.projection.add_listener(registered)

    def remove_listener(self, listener: Callable[[Any], None]) -> None:
        """Stop delivering to ``listener``; the last one out removes an own projection (the hooks then cost
        nothing until a consumer attaches again). The pipeline's stays listened to with the profile's session
        claims until the profile closes, so a consumer restarted on it still knows the sessions already open."""
        with self._lock:
            entry = self._listeners.pop(id(listener), None)
            if entry is None or self.projection is None:
                return
            self.projection.remove_listener(entry[1])
            if not self._listeners and not self._closed and not self.borrowed:
                self._release(CLOSE_DEADLINE)

    def listeners(self) -> int:
        """How many consumers listen."""
        return len(self._listeners)

    def flush(self, timeout: float = 5.0) -> bool:
        """Barrier: every hook received before the call has been projected and handed to the consumers."""
        projection = self.projection
        if projection is None or getattr(projection, "_closed", False):
            return True
        return bool(projection.flush(timeout))

    def publication_stats(self) -> dict[str, int]:
        """The projection's queue counters (the pipeline's when borrowed)."""
        projection = self.projection
        return dict(projection.publication_stats()) if projection is not None else {"pipeline.events_dropped": 0}

    def _release(self, deadline: float) -> bool:
        engine = self._profile.engine
        projection, self.projection = self.projection, None
        ok = True
        try:
            if self.borrowed:
                ok = bool(projection.flush(deadline))
                for _, registered in self._listeners.values():
                    projection.remove_listener(registered)
                if self._claims_name is not None:
                    engine.remove_plugin(self._claims_name)
            else:
                if self._plugin_name is not None:
                    engine.remove_plugin(self._plugin_name)
                ok = bool(projection.shutdown(deadline))  # open scopes end: consumers write their partial runs
        finally:
            self._plugin_name = self._claims_name = None
            self._claims = None
            self.borrowed = False
        return ok

    def close(self, deadline: float = CLOSE_DEADLINE) -> bool:
        """The profile closes: no hook reaches the consumers any more, what was queued is delivered, and an own
        projection ends its open scopes (``close_reason = "shutdown"``); the consumers detach afterwards."""
        with self._lock:
            if self._closed:
                return True
            self._closed = True
            if self.projection is None:
                return True
            projection = self.projection
            ok = self._release(deadline)
            self.projection = projection  # the consumers still detach from it (a no-op now)
            return ok


class Profile:
    """One hosted profile: its home, its cached ``config.yaml`` snapshot, and the process activation."""

    def __init__(self, home: Path, settings: ProfileSettings, pipeline: PipelineSettings) -> None:
        self.home = home
        """Canonical absolute path of ``$HERMES_HOME``."""
        self._settings = settings
        self._pipeline = pipeline
        self.closed = False
        self.engine: Engine = profile_engine().child()
        """This profile's engine: every process-wide plugin, plus the profile's own first-party
        consumers (which therefore see only this profile's events)."""
        self.consumers: dict[str, Any] = {}
        """Running first-party consumers by name (e.g. ``shared_metrics``)."""
        self.shared_projection = ProfileProjection(self)
        """The one hook projection the profile's consumers listen to (:class:`ProfileProjection`)."""

    def _start_consumers(self, only: str | None = None) -> None:
        for name, target in FIRST_PARTY_CONSUMERS.items():
            if only is not None and name != only:
                continue
            gate = CONSUMER_GATES.get(name)
            if gate is not None and not gate(self._settings):
                continue  # off: not even imported
            try:
                factory: Any = import_object(target)
                handle = factory(self)
            except Exception as exc:  # a consumer never stops the profile from opening
                logger.warning("hermes_pipeline: %s could not start for profile %s: %s: %s", name, self.home,
                               type(exc).__name__, str(exc)[:200])
                continue
            if handle is not None:
                self.consumers[name] = handle

    @property
    def settings(self) -> ProfileSettings:
        """The cached ``config.yaml`` snapshot (CFG-64a)."""
        return self._settings

    @property
    def activation(self) -> ActivationReport:
        """The process activation report (shared by every profile)."""
        return _activation.PROCESS.report

    def reload(self) -> ProfileSettings:
        """Re-read ``config.yaml`` (explicit reload: the profile works from a cached snapshot until then).

        The shared-metrics collection gate follows the new snapshot at once: switched off, the profile's
        metrics subscriber is detached (counters stop; local state is kept); switched on, one is attached.
        The hook timeout is process-wide and stays as the first profile set it.
        """
        with _lock:
            before = self._settings.shared_metrics.enabled is True
            self._settings = load_profile_settings(self.home, managed=self._pipeline.managed_config)
            if not self.closed and (self._settings.shared_metrics.enabled is True) != before:
                self._restart_consumer("shared_metrics")
            return self._settings

    def _restart_consumer(self, name: str) -> None:
        handle = self.consumers.pop(name, None)
        if handle is not None:
            try:
                handle.close()
            except Exception as exc:
                logger.warning("hermes_pipeline: closing %s of profile %s failed: %s", name, self.home, exc)
        self._start_consumers(only=name)

    def host(self, **kwargs: Any) -> Host:
        """A :class:`~hermes_pipeline.host.Host` on this profile's engine (``kwargs`` as for ``Host``).

        Session segmentation follows the profile's ``gateway.telemetry.session_segments`` unless
        ``segments`` is passed.
        """
        segments = self._settings.session_segments
        kwargs.setdefault("segments", SegmentPolicy(on_compaction=segments.on_compaction,
                                                    max_turns=segments.max_turns))
        return Host(self.engine, **kwargs)

    def close(self) -> None:
        """Stop hosting this profile; the last one closed releases the pipeline (CFG-55)."""
        with _lock:
            if self.closed:
                return
            self.closed = True
            _profiles.pop(self.home, None)
            try:  # first: the consumers get what was queued and the ends of open scopes
                self.shared_projection.close(CLOSE_DEADLINE)
            except Exception as exc:
                logger.warning("hermes_pipeline: closing the shared projection of profile %s failed: %s", self.home, exc)
            for name, handle in reversed(list(self.consumers.items())):
                try:
                    handle.close()
                except Exception as exc:
                    logger.warning("hermes_pipeline: closing %s of profile %s failed: %s", name, self.home, exc)
            self.consumers.clear()
            _activation.PROCESS.release(str(self.home))

    def __enter__(self) -> Profile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Profile({str(self.home)!r}, activation={_activation.PROCESS.report.state.value})"


def open_profile(hermes_home: str | Path | None = None, *, settings: PipelineSettings | None = None) -> Profile:
    """Host the profile at ``hermes_home`` (default ``$HERMES_HOME``, else ``~/.hermes``).

    Reads its ``config.yaml`` once, and joins (or, for the first profile, decides) the
    process-wide pipeline activation on :func:`hermes_pipeline.get_engine`. Opening an already
    open profile returns the same object. Configuration problems never raise: they are in
    ``profile.activation.diagnostics`` and ``profile.settings.diagnostics``.
    """
    pipeline = settings or PipelineSettings()
    home = canonical(Path(hermes_home).expanduser() if hermes_home is not None else pipeline.hermes_home_path())
    with _lock:
        existing = _profiles.get(home)
        if existing is not None:
            return existing
        profile_settings = load_profile_settings(home, managed=pipeline.managed_config)
        load_redaction_key(home, profile_settings.observability.audit_enabled
                           or profile_settings.trajectories.enabled)
        timeout = profile_settings.hook_callback_timeout if profile_settings.hook_callback_timeout_set else None
        _activation.PROCESS.acquire(str(home), profile_engine(), pipeline, hook_callback_timeout=timeout,
                                    output_directory=default_output_directory(home))
        profile = Profile(home, profile_settings, pipeline)
        profile._start_consumers()
        _profiles[home] = profile
        global _exit_registered
        if not _exit_registered:  # registered after the activation's own exit hook, so it runs before it
            atexit.register(_close_profiles_at_exit)
            _exit_registered = True
        return profile


_exit_registered = False


def _close_profiles_at_exit() -> None:
    """Interpreter exit: close every profile a host left open, so that its first-party consumers (trajectory
    store, observability store, shared metrics) write what they still hold instead of losing it."""
    with _lock:
        for profile in list(_profiles.values()):
            try:
                profile.close()
            except Exception as exc:  # one profile never keeps the others from closing
                logger.warning("hermes_pipeline: closing profile %s at exit failed: %s", profile.home, exc)


DEFAULT_HOLDER_SUFFIX = " (get_engine)"
"""Marks the activation holder of :func:`activate_default` (distinct from an opened profile's)."""


def activate_default(engine: Engine) -> ActivationReport | None:
    """Activate the selected pipeline file on the process engine that
    :func:`hermes_pipeline.get_engine` just created, on behalf of the default profile.

    Called once per process engine (by name, from :mod:`hermes_pipeline.runtime`). Does nothing
    when ``HERMES_NEMO_RELAY_PLUGINS_TOML`` is unset (nothing is processed at all then) or when a
    profile already decided the activation. Otherwise the default profile (``$HERMES_HOME``, else
    ``~/.hermes``) decides it as its first host would: its ``plugins.hook_callback_timeout``
    applies, outputs without a directory go to its ``telemetry`` directory, and the activation is
    held until :func:`release_all` or interpreter exit. A bad file never raises: the state is
    ``FAILED`` and ``pipeline.load_failed`` is logged (the process runs without pipeline plugins).
    The profile's first-party consumers (shared metrics) start only with :func:`open_profile`.
    """
    pipeline = PipelineSettings()
    if pipeline.selector() is None:
        return None
    home = canonical(pipeline.hermes_home_path())
    settings = load_profile_settings(home, managed=pipeline.managed_config)
    timeout = settings.hook_callback_timeout if settings.hook_callback_timeout_set else None
    return _activation.PROCESS.acquire_if_unheld(str(home) + DEFAULT_HOLDER_SUFFIX, engine, pipeline,
                                                 hook_callback_timeout=timeout,
                                                 output_directory=default_output_directory(home))


def open_profiles() -> list[Profile]:
    """The profiles currently hosted by this process."""
    with _lock:
        return list(_profiles.values())


def release_all() -> ActivationReport:
    """Close every profile and release the pipeline (tests, embedding, interpreter exit)."""
    with _lock:
        for profile in list(_profiles.values()):
            profile.close()
        return _activation.PROCESS.shutdown()

"""Profiles: the entry point for host authors (spec 03 §11, §13).

    from hermes_pipeline.config import open_profile

    profile = open_profile()                 # $HERMES_HOME, default ~/.hermes
    host = profile.host(platform="gateway")  # a Host on the process-wide engine
    ...
    profile.close()                          # the last profile releases the pipeline

The first profile opened in a process decides the pipeline activation; later profiles (other
``HERMES_HOME`` directories) join it, share its components and middleware, and keep their own
``config.yaml`` snapshot.
"""

from __future__ import annotations

import atexit
import logging
import threading
from pathlib import Path
from typing import Any

from ..engine.core import Engine
from ..engine.plugins import import_object
from ..export.paths import default_output_directory
from ..host import Host, SegmentPolicy
from ..runtime import profile_engine
from . import activation as _activation
from .activation import ActivationReport
from .discovery import PipelineSettings, canonical
from .profile_config import ProfileSettings, load_profile_settings

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
opens, so this layer never imports the consumer packages, which sit above it.
"""


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

    def _start_consumers(self, only: str | None = None) -> None:
        for name, target in FIRST_PARTY_CONSUMERS.items():
            if only is not None and name != only:
                continue
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

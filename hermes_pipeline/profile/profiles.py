"""Profiles: the entry point for host authors (spec 03 §11, §13).

    from hermes_pipeline.profile import open_profile

    profile = open_profile()                 # $HERMES_HOME, default ~/.hermes
    host = profile.host(platform="gateway")  # a Host on the process-wide engine
    ...
    profile.close()                          # the last profile releases the pipeline

The first profile opened in a process decides the pipeline activation (:mod:`.activation`); later profiles
(other ``HERMES_HOME`` directories) join it, share its components and middleware, and keep their own
``config.yaml`` snapshot. A profile starts its consumers (:mod:`.consumers`) and hands them its one shared
event stream (:class:`~hermes_pipeline.profile.stream.SharedStream`).
"""

from __future__ import annotations

import atexit
import logging
import threading
from pathlib import Path
from typing import Any

from .._deprecated import renamed_attributes
from ..config.discovery import PipelineSettings, canonical
from ..config.profile_config import ProfileSettings, load_profile_settings
from ..config.redaction_key import load_redaction_key
from ..engine.core import Engine
from ..engine.scrub import safe_scrub
from ..export.paths import default_output_directory
from ..host import Host, SegmentPolicy
from ..runtime import profile_engine
from . import activation
from .activation import ActivationReport
from .builtin_consumers import BUILTIN_CONSUMERS
from .consumers import ProfileConsumer, registered_consumers
from .stream import CLOSE_DEADLINE, SharedStream

logger = logging.getLogger("hermes_pipeline.config")
_lock = threading.RLock()
_profiles: dict[Path, Profile] = {}


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
        """Running consumers' handles by name (e.g. ``shared_metrics``)."""
        self.consumer_failures: dict[str, str] = {}
        """Consumers that could not start, by name, and why (also logged as a warning)."""
        self.stream = SharedStream(self, is_only_profile=lambda: len(_profiles) <= 1)
        """The one stream of scope events the profile's consumers listen to (:class:`SharedStream`)."""
        self._registry: list[ProfileConsumer] = []

    __getattr__ = renamed_attributes("Profile", {"shared_projection": "stream"})

    def _start_consumers(self, only: str | None = None) -> None:
        if not self._registry:
            self._registry, failures = registered_consumers(BUILTIN_CONSUMERS)
            for name, reason in failures.items():
                self._failed(name, reason)
        for consumer in self._registry:
            name = consumer.name
            if only is not None and name != only:
                continue
            try:
                if not consumer.enabled(self._settings):
                    continue  # off: its package is not even imported
                handle = consumer.attach(self)
            except Exception as exc:  # a consumer never stops the profile from opening
                self._failed(name, f"{type(exc).__name__}: {str(exc)[:200]}")
                continue
            self.consumer_failures.pop(name, None)
            if handle is not None:
                self.consumers[name] = handle

    def _failed(self, name: str, reason: str) -> None:
        reason = safe_scrub(reason)  # an exception's text may quote a credential: kept and shown scrubbed
        self.consumer_failures[name] = reason
        logger.warning("hermes_pipeline: %s could not start for profile %s: %s", name, self.home, reason)

    @property
    def settings(self) -> ProfileSettings:
        """The cached ``config.yaml`` snapshot (CFG-64a)."""
        return self._settings

    @property
    def activation(self) -> ActivationReport:
        """The process activation report (shared by every profile)."""
        return activation.PROCESS.report

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
                self.stream.close(CLOSE_DEADLINE)
            except Exception as exc:
                logger.warning("hermes_pipeline: closing the shared stream of profile %s failed: %s", self.home, exc)
            for name, handle in reversed(list(self.consumers.items())):
                try:
                    handle.close()
                except Exception as exc:
                    logger.warning("hermes_pipeline: closing %s of profile %s failed: %s", name, self.home, exc)
            self.consumers.clear()
            activation.PROCESS.release(str(self.home))

    def __enter__(self) -> Profile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Profile({str(self.home)!r}, activation={activation.PROCESS.report.state.value})"


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
        activation.PROCESS.acquire(str(home), profile_engine(), pipeline, hook_callback_timeout=timeout,
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


def open_profiles() -> list[Profile]:
    """The profiles currently hosted by this process."""
    with _lock:
        return list(_profiles.values())


def release_all() -> ActivationReport:
    """Close every profile and release the pipeline (tests, embedding, interpreter exit)."""
    with _lock:
        for profile in list(_profiles.values()):
            profile.close()
        return activation.PROCESS.shutdown()

"""Starting the store for a profile (a built-in consumer of :mod:`hermes_pipeline.profile`, BOOK-16).

:func:`attach_for_profile` reads the profile's ``observability.audit`` settings and, when enabled,
feeds an :class:`~.sink.ObservabilityStoreSink` from the profile's one scope stream
(:class:`~hermes_pipeline.profile.stream.SharedStream`: only that profile's events, the same
scope UUIDs as its other consumers, so ``task_runs.trajectory_id`` is the name of the trajectory file
of the same run, BOOK-3). :func:`attach_store` without ``stream`` puts a scope plugin of the
store's own on the engine. A daemon thread asks for the rescans: memory every 10 minutes,
skills once a day, and the retention cleanup at start and every 24 hours (BOOK-19, BOOK-22, BOOK-48).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any, Final

from ...config.observability_settings import ObservabilitySettings, read_observability
from ..._deprecated import renamed_attributes, renamed_keyword
from ...engine.core import Engine
from ..base import SinkContext
from ...export.call_cost import parse_pricing
from .store_writer import PRUNE, SCAN_MEMORY, SCAN_SKILLS
from .sink import SCAN_ALL, ObservabilityStoreSink

__all__ = ["StoreHandle", "attach_for_profile", "attach_store"]

logger: Final = logging.getLogger("hermes_pipeline.sinks.observability_store")
CLOSE_DEADLINE: Final = 5.0
MEMORY_SCAN_SECONDS: Final = 600.0
SKILL_SCAN_SECONDS: Final = 86_400.0
PRUNE_SECONDS: Final = 86_400.0
START_SCAN_TIMEOUT: Final = 2.0


class StoreHandle:
    """A running store: the sink, the scope stream feeding it, the timer thread. :meth:`close` stops it."""

    __getattr__ = renamed_attributes("observability_store.StoreHandle", {"projection": "stream"})

    def __init__(self, engine: Engine, home: Path, settings: ObservabilitySettings, *, stream: Any = None,
                 **former: Any) -> None:
        stream = renamed_keyword("observability_store.StoreHandle", former, "shared_projection", "stream", stream)
        from ...export.scope_hooks import ScopePlugin

        self.engine = engine
        self.home = home
        self.settings = settings
        self.sink = ObservabilityStoreSink({
            "home": str(home), "memory_dirs": list(settings.memory_dirs), "skills_dir": settings.skills_dir,
            "excerpt_chars": settings.excerpt_chars, "pricing": settings.pricing, "runs_days": settings.runs_days,
            "history_days": settings.history_days},
            SinkContext(name="observability_store", base_dir=home, max_queue_bytes=settings.max_queue_bytes))
        self.sink.request_scan(SCAN_ALL)  # at process start: the baseline, and edits made while stopped
        self.sink.request_scan(PRUNE)  # and the retention cleanup, then every 24 hours
        # The baseline must be the files as they are now, not when the writer next wakes up: wait for it
        # (bounded; on the writer thread, at profile open, never during a turn).
        self.sink.flush(START_SCAN_TIMEOUT)
        from .inflight import INFLIGHT_DIR
        from .memory_probe import MemoryProbe
        from .skill_probe import SkillHashProbe

        inflight = self.sink.store_writer.path.parent / INFLIGHT_DIR
        self.probe = SkillHashProbe(self.sink.store_writer.skill_roots, inflight=inflight)
        self.memory_probe = MemoryProbe(home, list(settings.memory_dirs), dict(settings.memory_tools),
                                        inflight=inflight)
        self.sink.store_writer.probe = self.probe
        self.sink.store_writer.memory_probe = self.memory_probe
        self.memory_probe.submit = self.sink.submit  # memory files the agent's file tools change (.memory_probe)
        from .staged import StagedWrites

        self.staged = StagedWrites(self.sink.submit, self.probe, self.memory_probe)
        """Writes a write-approval gate staged, and the user's decisions on them (:mod:`.staged`)."""
        self.probe_name = engine.add_plugin(self.probe, name=f"hermes.observability_store.skills.{id(self):x}")
        self.memory_probe_name = engine.add_plugin(self.memory_probe,
                                                   name=f"hermes.observability_store.memory.{id(self):x}")
        self.staged_name = engine.add_plugin(self.staged, name=f"hermes.observability_store.staged.{id(self):x}")
        self._own = stream is None
        self.stream = ScopePlugin((self.sink,), deferred=True, memory_tools=dict(settings.memory_tools),
                                  max_queue_bytes=settings.max_queue_bytes) if self._own else stream
        if self._own:
            self.plugin_name: str | None = engine.add_plugin(self.stream,
                                                             name=f"hermes.observability_store.{id(self):x}")
        else:
            self.plugin_name = None
            try:
                self.stream.add_listener(self.sink)
            except BaseException:
                engine.remove_plugin(self.probe_name)
                engine.remove_plugin(self.memory_probe_name)
                engine.remove_plugin(self.staged_name)
                self.sink.shutdown(CLOSE_DEADLINE)
                raise
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._timers, name="hermes-observability-timers", daemon=True)
        self._thread.start()

    def _timers(self) -> None:
        now = time.monotonic()
        next_memory, next_skills = now + MEMORY_SCAN_SECONDS, now + SKILL_SCAN_SECONDS
        next_prune = now + PRUNE_SECONDS
        while True:
            now = time.monotonic()
            if now >= next_prune:
                next_prune = now + PRUNE_SECONDS
                self.sink.request_scan(PRUNE)
            if now >= next_memory:
                next_memory = now + MEMORY_SCAN_SECONDS
                self.sink.request_scan(SCAN_MEMORY)
            if now >= next_skills:
                next_skills = now + SKILL_SCAN_SECONDS
                self.sink.request_scan(SCAN_SKILLS)
            wait = min(next_memory, next_skills, next_prune) - now
            if self._stop.wait(max(wait, 0.0)):
                return

    def flush(self, timeout: float = 5.0) -> bool:
        """Make what is queued into scope events and write every row (``False`` on timeout)."""
        end = time.monotonic() + timeout
        ok = bool(self.stream.flush(timeout))
        return self.sink.flush(max(end - time.monotonic(), 0.0)) and ok

    def close(self) -> None:
        """Write what is queued and stop; idempotent."""
        if self._stop.is_set():
            return
        self._stop.set()
        try:
            self.engine.remove_plugin(self.probe_name)
            self.engine.remove_plugin(self.memory_probe_name)
            self.engine.remove_plugin(self.staged_name)
            from ...export.scope_hooks import release_listener

            release_listener(self.engine, self.plugin_name, self.stream, self.sink, own=self._own,
                             deadline=CLOSE_DEADLINE)
        finally:
            self.sink.shutdown(CLOSE_DEADLINE)
            self.memory_probe.end_all_marks()  # calls whose rows never came (cut short) explain nothing more
            self.probe.end_all_marks()


def attach_store(engine: Engine, home: Path, settings: ObservabilitySettings, *, stream: Any = None,
                 **former: Any) -> StoreHandle:
    """Record what ``engine`` sees into the store of ``home`` (see the module docstring).

    ``stream``: a scope stream to listen to (a ``ScopePlugin`` or the profile's ``SharedStream``) instead of a
    scope plugin of the store's own; its former name ``shared_projection`` still works (deprecated).

    Raises:
        PricingError: ``observability.pricing`` has a bad price (the message names the key).
    """
    stream = renamed_keyword("observability_store.attach_store", former, "shared_projection", "stream", stream)
    parse_pricing(settings.pricing)
    from ...export.gitignore import ensure_gitignore

    try:  # inside a git work tree the store never gets committed by accident (BOOK-34)
        if ensure_gitignore(home, "observability/"):
            logger.info("hermes_pipeline: observability store: added observability/ to the profile's .gitignore")
    except OSError:
        pass

    return StoreHandle(engine, home, settings, stream=stream)


def attach_for_profile(profile: Any) -> StoreHandle | None:
    """The first-party consumer entry: the store of ``profile``, or ``None`` when audit is off."""
    settings = getattr(profile.settings, "observability", None)
    if not isinstance(settings, ObservabilitySettings):
        settings = read_observability(profile.home)
    if not settings.audit_enabled:
        return None
    return attach_store(profile.engine, Path(profile.home), settings,
                        stream=getattr(profile, "stream", None))

"""Starting the store for a profile (a built-in consumer of :mod:`hermes_pipeline.profile`, BOOK-28).

:func:`attach_for_profile` reads the profile's cached ``observability.trajectories`` settings and,
when enabled, feeds a :class:`~.sink.TrajectoryStoreSink` from the profile's one scope stream
(:class:`~hermes_pipeline.profile.stream.SharedStream`: only that profile's events, whatever
``plugins.toml`` says, with the same scope UUIDs as the profile's other consumers), prunes old files
at once and every 24 hours on a daemon thread, and adds ``trajectories/`` to the profile's
``.gitignore`` inside a git work tree (BOOK-34). :func:`attach_store` without ``stream``
puts a scope plugin of the store's own on the engine.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Final

from ..._deprecated import renamed_attributes, renamed_keyword
from ...engine.core import Engine
from ...engine.deadline import Deadline
from ...export.files import DAY_SECONDS
from ..base import SinkContext
from ...export.gitignore import ensure_gitignore
from .prune import prune_store
from .sink import TrajectoryStoreSink

__all__ = ["StoreHandle", "attach_for_profile", "attach_store"]

logger: Final = logging.getLogger("hermes_pipeline.sinks.trajectory_store")
CLOSE_DEADLINE: Final = 5.0


class StoreHandle:
    """A running store: the scope stream feeding it, the sink, the pruning thread. :meth:`close` stops it."""

    __getattr__ = renamed_attributes("trajectory_store.StoreHandle", {"projection": "stream"})

    def __init__(self, engine: Engine, directory: Path, retention_days: int, *, stream: Any = None,
                 max_queue_bytes: int | None = None, **former: Any) -> None:
        stream = renamed_keyword("trajectory_store.StoreHandle", former, "shared_projection", "stream", stream)
        self.engine = engine
        self.directory = directory
        self.retention_days = retention_days
        self.sink = TrajectoryStoreSink({"directory": str(directory)},
                                        SinkContext(name="trajectory_store", base_dir=directory,
                                                    max_queue_bytes=max_queue_bytes))
        self._stop = threading.Event()
        self._pruner: threading.Thread | None = None
        try:
            self.pruned = len(prune_store(directory, retention_days))
        except BaseException:
            self.sink.shutdown(CLOSE_DEADLINE)
            raise
        self._own = stream is None
        self.plugin_name: str | None = None
        if self._own:
            from ...export.scope_hooks import ScopePlugin

            self.stream: Any = ScopePlugin((self.sink,), deferred=True, max_queue_bytes=max_queue_bytes)
            self.plugin_name = engine.add_plugin(self.stream, name=f"hermes.trajectory_store.{id(self):x}")
        else:  # attached last: nothing after this can fail and leave a listener behind
            self.stream = stream
            self.stream.add_listener(self.sink)
        if retention_days > 0:
            self._pruner = threading.Thread(target=self._prune_daily, name="hermes-trajectory-prune", daemon=True)
            self._pruner.start()

    def _prune_daily(self) -> None:
        while not self._stop.wait(DAY_SECONDS):
            try:
                self.pruned += len(prune_store(self.directory, self.retention_days))
            except Exception as exc:  # pruning never stops the store
                logger.warning("hermes_pipeline: trajectory store: pruning failed: %s", type(exc).__name__)

    def flush(self, timeout: float = 5.0) -> bool:
        """Make what is queued into scope events and write every run that ended, within ``timeout`` seconds
        in all (the sink gets what the stream left of it); ``False`` on timeout."""
        deadline = Deadline(timeout)
        streamed = bool(self.stream.flush(deadline.remaining()))
        return bool(self.sink.flush(deadline.remaining())) and streamed

    def close(self) -> None:
        """Stop recording: open runs become partial trajectories; idempotent."""
        self._stop.set()
        try:
            from ...export.scope_hooks import release_listener

            release_listener(self.engine, self.plugin_name, self.stream, self.sink, own=self._own,
                             deadline=CLOSE_DEADLINE)
        finally:
            self.sink.shutdown(CLOSE_DEADLINE)


def attach_store(engine: Engine, home: Path, directory: Path, *, retention_days: int = 90, stream: Any = None,
                 max_queue_bytes: int | None = None, **former: Any) -> StoreHandle:
    """Record every run ``engine`` sees into ``directory`` (see the module docstring).

    ``stream``: a scope stream to listen to (``add_listener`` / ``remove_listener`` / ``flush``: a
    :class:`~hermes_pipeline.export.scope_hooks.ScopePlugin` or the profile's
    :class:`~hermes_pipeline.profile.stream.SharedStream`) instead of a scope plugin of the store's own. Its
    former name ``shared_projection`` still works (deprecated). ``max_queue_bytes``: the byte bound of the store's
    queues (the profile's ``observability.max_queue_bytes``; ``None``: its writer queue is bounded by event count).
    """
    stream = renamed_keyword("trajectory_store.attach_store", former, "shared_projection", "stream", stream)
    if ensure_gitignore(home):
        logger.info("hermes_pipeline: trajectory store: added trajectories/ to the profile's .gitignore")
    return StoreHandle(engine, directory, retention_days, stream=stream, max_queue_bytes=max_queue_bytes)


def attach_for_profile(profile: Any) -> StoreHandle | None:
    """The first-party consumer entry: the store of ``profile``, or ``None`` when it is switched off."""
    settings = profile.settings.trajectories
    if not settings.enabled:
        return None
    return attach_store(profile.engine, profile.home, settings.directory(profile.home),
                        retention_days=settings.retention_days,
                        stream=getattr(profile, "stream", None),
                        max_queue_bytes=getattr(getattr(profile.settings, "observability", None), "max_queue_bytes",
                                                None))

"""Reporting of callback failures: warn once per key, count always (OBS-15, OBS-16).

The first failure of a (hook, callback, exception type, message) key is a WARNING; repeats are
DEBUG. Counters per plugin and per hook stay queryable through :meth:`FailureLog.snapshot`.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Final

from .callbacks import Entry

logger: Final = logging.getLogger("hermes_pipeline.dispatch")

MESSAGE_CHARS: Final = 200


@dataclass(frozen=True, slots=True)
class FailureStats:
    """Counts of callback failures and timeouts since the engine started."""

    by_plugin: dict[str, int]
    by_hook: dict[str, int]
    timeouts: dict[str, int]


class FailureLog:
    """Thread-safe warn-once log and counters for callback failures."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: set[tuple[str, str, str, str]] = set()
        self._by_plugin: Counter[str] = Counter()
        self._by_hook: Counter[str] = Counter()
        self._timeouts: Counter[str] = Counter()

    def callback_failed(self, what: str, entry: Entry, exc: BaseException, *, quiet: bool = False) -> None:
        """Record that ``entry`` raised ``exc`` while handling ``what`` (a hook or middleware kind).

        ``quiet`` logs even the first occurrence at DEBUG (human-input hooks, OBS-47).
        """
        message = str(exc)[:MESSAGE_CHARS]
        key = (what, entry.qualname, type(exc).__qualname__, message)
        with self._lock:
            first = key not in self._seen
            if first:
                self._seen.add(key)
            self._by_plugin[entry.plugin] += 1
            self._by_hook[what] += 1
        level = logging.WARNING if first and not quiet else logging.DEBUG
        logger.log(
            level,
            "hermes_pipeline: %s callback %s of plugin %r raised %s: %s (ignored; the agent loop continues%s)",
            what,
            entry.qualname,
            entry.plugin,
            type(exc).__name__,
            message,
            "" if first else "; repeated",
        )

    def callback_timed_out(self, what: str, entry: Entry) -> None:
        """Count a hang-protection timeout (the warning itself is rate-limited by the hang guard)."""
        with self._lock:
            self._timeouts[entry.plugin] += 1
            self._by_hook[what] += 1

    def snapshot(self) -> FailureStats:
        """A copy of the counters."""
        with self._lock:
            return FailureStats(dict(self._by_plugin), dict(self._by_hook), dict(self._timeouts))

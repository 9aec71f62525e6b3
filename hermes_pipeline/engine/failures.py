"""Reporting of callback failures: warn once per key, report suppressed repeats, count always (OBS-15, OBS-16).

The first failure of a (plugin, hook, exception type) key is a WARNING; repeats are DEBUG, and at most
once per :data:`REPORT_INTERVAL` seconds per key the next repeat also logs one WARNING saying how many
failures of that key were suppressed since the last report. The exception message is not part of the
key: a plugin whose messages differ on every call (they often embed the arguments) would otherwise
log a warning per call (hermes_pipeline decision; the reference keys on the message too, which let
one plugin write 906 warning lines in 100 turns). Messages are credential-scrubbed before they are
cut to 200 characters, so a callback that echoes its arguments never puts a payload secret in the log.
Counters per plugin and per hook stay queryable through :meth:`FailureLog.snapshot`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from .callbacks import Entry
from .excepthook import install_thread_excepthook
from .logscrub import install_log_scrubbing
from .scrub import scrub_message

logger: Final = logging.getLogger("hermes_pipeline.dispatch")
install_log_scrubbing()  # every record of the package's loggers is credential-scrubbed (see logscrub)
install_thread_excepthook()  # and every traceback a thread prints to stderr (see excepthook)

MESSAGE_CHARS: Final = 200
REPORT_INTERVAL: Final = 60.0
"""Seconds between two reports of suppressed repeats of one key."""


@dataclass(frozen=True, slots=True)
class FailureStats:
    """Counts of callback failures and timeouts since the engine started."""

    by_plugin: dict[str, int]
    by_hook: dict[str, int]
    timeouts: dict[str, int]


class _KeyState:
    """Repeats of one key not reported yet, and when they were last reported."""

    __slots__ = ("reported_at", "suppressed")

    def __init__(self, now: float) -> None:
        self.suppressed = 0
        self.reported_at = now


def _message_of(exc: BaseException) -> str:
    """``str(exc)`` scrubbed and cut to 200 characters; a marker when ``str()`` itself raises."""
    try:
        text = str(exc)
    except Exception:
        return f"<unprintable {type(exc).__name__}>"
    return scrub_message(text if type(text) is str else str.__str__(text), MESSAGE_CHARS)


def _report(count: int, what: str, plugin: str, type_name: str, since: float) -> None:
    logger.warning(
        "hermes_pipeline: %d more failure%s of %s callbacks of plugin %r raising %s suppressed in the last %d s "
        "(the agent loop continues)",
        count,
        "" if count == 1 else "s",
        what,
        plugin,
        type_name,
        round(since),
    )


class FailureLog:
    """Thread-safe warn-once log, suppressed-repeat reports and counters for callback failures.

    Args:
        clock: monotonic seconds (injectable for tests).
        report_interval: minimum seconds between two suppressed-repeat reports of one key.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic, report_interval: float = REPORT_INTERVAL) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self._interval = report_interval
        self._keys: dict[tuple[str, str, str], _KeyState] = {}
        self._by_plugin: Counter[str] = Counter()
        self._by_hook: Counter[str] = Counter()
        self._timeouts: Counter[str] = Counter()

    def callback_failed(self, what: str, entry: Entry, exc: BaseException, *, quiet: bool = False) -> None:
        """Record that ``entry`` raised ``exc`` while handling ``what`` (a hook or middleware kind).

        ``quiet`` logs even the first occurrence at DEBUG and never reports repeats (human-input
        hooks, OBS-47).
        """
        message = _message_of(exc)
        type_name = type(exc).__qualname__
        key = (entry.plugin, what, type_name)
        now = self._clock()
        report = 0
        since = 0.0
        with self._lock:
            state = self._keys.get(key)
            first = state is None
            if state is None:
                self._keys[key] = _KeyState(now)
            else:
                state.suppressed += 1
                if not quiet and now - state.reported_at >= self._interval:
                    report, since = state.suppressed, now - state.reported_at
                    state.suppressed, state.reported_at = 0, now
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
        if report:
            _report(report, what, entry.plugin, type(exc).__name__, since)

    def report_suppressed(self) -> int:
        """Log now the count of every key's repeats not reported yet (e.g. when a host winds down); returns
        how many keys were reported. Each key's interval restarts."""
        now = self._clock()
        pending: list[tuple[int, str, str, str, float]] = []
        with self._lock:
            for (plugin, what, type_name), state in self._keys.items():
                if state.suppressed:
                    pending.append((state.suppressed, what, plugin, type_name.rpartition(".")[2],
                                    now - state.reported_at))
                    state.suppressed, state.reported_at = 0, now
        for count, what, plugin, type_name, since in pending:
            _report(count, what, plugin, type_name, since)
        return len(pending)

    def callback_timed_out(self, what: str, entry: Entry) -> None:
        """Count a hang-protection timeout (the warning itself is rate-limited by the hang guard)."""
        with self._lock:
            self._timeouts[entry.plugin] += 1
            self._by_hook[what] += 1

    def snapshot(self) -> FailureStats:
        """A copy of the counters."""
        with self._lock:
            return FailureStats(dict(self._by_plugin), dict(self._by_hook), dict(self._timeouts))

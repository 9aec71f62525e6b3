"""Clocks and the one timestamp text format of the shared-metrics store (SM-48).

Every TEXT timestamp the store writes is ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` in UTC with exactly six
fractional digits, so comparing two stamps as strings compares them as times; counter periods
are UTC dates ``YYYY-MM-DD``. The clock is a seam: tests and benchmarks pass a
:class:`ManualClock` instead of reading the system time.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, date, datetime, timedelta
from collections.abc import Callable
from typing import Protocol


class Clock(Protocol):
    """Wall time (UTC, timezone-aware) and a monotonic reading in seconds."""

    def now(self) -> datetime:
        """The current UTC time."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes backwards (durations only)."""
        ...


class SystemClock:
    """The real clocks: :func:`datetime.now` in UTC and :func:`time.monotonic`."""

    def now(self) -> datetime:
        """The current UTC time."""
        return datetime.now(UTC)

    def monotonic(self) -> float:
        """:func:`time.monotonic`."""
        return time.monotonic()


class ManualClock:
    """A clock that moves only when told to (thread-safe); for tests, the smoke script and benchmarks.

    ``set`` may move wall time backwards (a rolled-back system clock); the monotonic reading only
    moves forward with :meth:`advance`.
    """

    def __init__(self, start: datetime, monotonic: float = 1000.0) -> None:
        self._lock = threading.Lock()
        self._now = _aware(start)
        self._mono = monotonic

    def now(self) -> datetime:
        """The current (manual) UTC time."""
        with self._lock:
            return self._now

    def monotonic(self) -> float:
        """The current (manual) monotonic reading."""
        with self._lock:
            return self._mono

    def set(self, when: datetime) -> None:
        """Jump the wall clock to ``when`` (forwards or backwards); the monotonic clock stays."""
        with self._lock:
            self._now = _aware(when)

    def advance(self, seconds: float) -> None:
        """Move both clocks forward by ``seconds``."""
        with self._lock:
            self._now += timedelta(seconds=seconds)
            self._mono += seconds


def _aware(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def stamp(value: datetime) -> str:
    """``value`` as the store's fixed-width UTC text (SM-48)."""
    v = _aware(value)
    return (f"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}:{v.second:02d}"
            f".{v.microsecond:06d}Z")


def parse_stamp(text: str) -> datetime:
    """Parse a stamp written by :func:`stamp` (also accepts other ISO 8601 UTC forms)."""
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return _aware(value)


def period_of(value: datetime) -> str:
    """The UTC date of ``value`` as ``YYYY-MM-DD`` (a counter period, SM-48)."""
    return _aware(value).date().isoformat()


def period_bounds(period: str) -> tuple[str, str]:
    """``(period_start, period_end)`` stamps of a UTC date period: midnight to the next midnight."""
    day = date.fromisoformat(period)
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    return stamp(start), stamp(start + timedelta(days=1))


def day_start(value: datetime) -> datetime:
    """Midnight UTC of the day of ``value``."""
    v = _aware(value)
    return datetime(v.year, v.month, v.day, tzinfo=UTC)


class HookClock:
    """The accounting's clock: the time of the fact being counted, not of the writer thread counting it.

    Shared metrics counts on its writer thread, from the events of the profile's stream: each event's own time
    (``timestamp_us``, the hook's time, stamped once by the stream) is replayed while it is counted
    (:meth:`enter` / :meth:`leave`), so counter periods and durations are those of the hooks, not of the queue.
    Durations are differences of these times (:meth:`monotonic` replays the same instant in seconds). The
    host's outer task boundary takes its time with :meth:`capture`, in the same frame.

    The replayed time is per thread: a host call counted on its own thread (setup and skill marks) reads the
    wrapped clock."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._local = threading.local()
        self.capture: Callable[[], tuple[datetime | float, float]] = (
            _system_capture if type(clock) is SystemClock else self._capture)
        """The time now, in the frame of the events' times, to be replayed when it is counted."""

    def _capture(self) -> tuple[datetime | float, float]:
        now = self.clock.now()
        return now, now.timestamp()

    def enter(self, stamp: tuple[datetime | float, float]) -> None:
        """Replay ``stamp`` (``(wall time, seconds)``) on this thread until :meth:`leave`."""
        self._local.stamp = stamp

    def leave(self) -> None:
        """Read the wrapped clock again on this thread."""
        self._local.stamp = None

    def now(self) -> datetime:
        stamp = getattr(self._local, "stamp", None)
        if stamp is None:
            return self.clock.now()
        wall = stamp[0]
        return wall if isinstance(wall, datetime) else datetime.fromtimestamp(wall, UTC)

    def monotonic(self) -> float:
        stamp = getattr(self._local, "stamp", None)
        return stamp[1] if stamp is not None else self.clock.monotonic()


def _system_capture() -> tuple[datetime | float, float]:
    now = time.time()
    return now, now

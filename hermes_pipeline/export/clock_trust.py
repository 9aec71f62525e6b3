"""Whether retention may trust the clock, and a record's age that a wrong clock cannot inflate.

Retention deletes what is older than a window, and "older" is measured against the system clock. A clock that
is wrong for one start (a VM before NTP sync, a dead RTC battery) would otherwise delete history: 200 days
ahead, every record looks expired; records written 400 days behind look expired to the next correct start.
Both local stores (trajectory files, the observability store's rows) share this rule; it lives here because
what two sinks share moves down into ``export/``. The rule, also in ``docs/retention-clock.md``:

1. **A clock it cannot trust deletes nothing.** ``now`` is untrusted when it is earlier than the last prune
   that ran on a trusted clock or than the newest *vouched* record (by more than :data:`TOLERANCE_S`), or
   later than both by more than the retention window plus :data:`MARGIN_S` (a jump that would expire
   everything at once). Untrusted: nothing is deleted, a warning is logged, the verdict is kept in the
   store's ledger for ``doctor``. A record is *vouched* once a trusted prune has seen it; records that
   appeared under an untrusted clock never vouch for that clock.
2. **A record's age is also the time a trusted clock has known it.** The ledger keeps, per record (file
   name, or table row id through checkpoints), when a trusted prune first saw it; a record is deleted only
   when both its own timestamp and that first sighting are older than the window. A record written under
   a clock that was behind is therefore kept a full window after a trusted clock first saw it; one dated
   in the future of a trusted ``now`` is judged by its first sighting only. Records already there when
   the ledger was created (a store older than this rule) are judged by their own timestamp.
3. **A large jump ahead is confirmed, not assumed.** After a long idle period the clock is legitimately
   far past the last prune; such a verdict records when it was seen together with the boot's own clock
   (``CLOCK_BOOTTIME`` and the boot id, which no wall-clock change moves). A later prune on the same boot
   whose wall clock advanced like the boot clock, at least :data:`CONFIRM_S` later, trusts it again.

The ledger is read with :func:`~hermes_pipeline.host.profile_files.read_regular_bytes` (on a store's thread): a
FIFO, a device, a directory or a file over :data:`MAX_LEDGER_BYTES` is refused at once, never waited for, and
treated as a damaged ledger (warned, naming it; every record kept a full window).

All times are epoch seconds; every function takes ``now`` (and the boot clock) so tests inject fake clocks.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..host.profile_files import MAX_PROFILE_FILE_BYTES, read_regular_bytes
from .atomic import write_atomically

__all__ = ["CONFIRM_S", "LEDGER_NAME", "MARGIN_S", "TOLERANCE_S", "BootClock", "ClockVerdict", "Ledger",
           "boot_clock", "judge_clock", "read_skew"]

logger: Final = logging.getLogger("hermes_pipeline.export.clock_trust")

DAY_S: Final = 86400.0
TOLERANCE_S: Final = 600.0
"""Ten minutes of slack for ordinary drift (and records stamped by the day, at most one day early, see callers)."""
MARGIN_S: Final = 7 * DAY_S
"""How far past the window beyond the last trusted prune / newest vouched record ``now`` may be."""
CONFIRM_S: Final = 7 * DAY_S
"""How long a clock far ahead must run steadily on one boot before it is trusted: long enough that a VM which
has not synced for a day or two keeps its history; a reboot starts the count again."""
LEDGER_NAME: Final = ".retention-clock"
"""The ledger's file name beside a store: hidden, and not ``*.json``, so no reader of the store lists it."""
LEDGER_VERSION: Final = 1
MAX_LEDGER_BYTES: Final = MAX_PROFILE_FILE_BYTES
"""The largest ledger read (8 MiB: a first sighting per record is some 80 bytes); a larger one is damaged."""

BootClock = tuple[str, float]
"""``(boot id, seconds on the boot clock)``: a clock no change of the wall clock moves."""


def boot_clock() -> BootClock | None:
    """This boot's id and ``CLOCK_BOOTTIME`` (Linux); ``None`` where there is no such clock."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as fh:
            boot_id = fh.read().strip()
        return boot_id, time.clock_gettime(time.CLOCK_BOOTTIME)
    except (OSError, AttributeError, ValueError):
        return None


@dataclass(frozen=True)
class ClockVerdict:
    """The judgement of ``now``: ``trusted``, else ``reason`` (one line) and ``skew_s`` (signed seconds)."""

    trusted: bool
    now: float
    reason: str = ""
    skew_s: float = 0.0
    ahead: bool = False

    def as_json(self) -> dict[str, Any]:
        return {"trusted": self.trusted, "now": self.now, "reason": self.reason,
                "skew_days": round(self.skew_s / DAY_S, 2)}


def judge_clock(now: float, *, last_trusted: float | None, newest_vouched: float | None,
                window_s: float) -> ClockVerdict:
    """Rule 1 of the module text: whether ``now`` is a clock retention may act on."""
    if last_trusted is not None and now < last_trusted - TOLERANCE_S:
        return ClockVerdict(False, now, f"the clock is {(last_trusted - now) / DAY_S:.1f} day(s) before the last "
                                        "retention run", now - last_trusted)
    if newest_vouched is not None and now < newest_vouched - TOLERANCE_S:
        return ClockVerdict(False, now, f"the clock is {(newest_vouched - now) / DAY_S:.1f} day(s) before the "
                                        "newest record", now - newest_vouched)
    known = [t for t in (last_trusted, newest_vouched) if t is not None]
    if known and now > max(known) + window_s + MARGIN_S:
        return ClockVerdict(False, now, f"the clock is {(now - max(known)) / DAY_S:.1f} day(s) past the last retention "
                                        "run and the newest record, more than the retention window",
                            now - max(known), ahead=True)
    return ClockVerdict(True, now)


class Ledger:
    """What retention remembers beside a store (``<dir>/.retention-clock``, JSON): the last trusted prune, first
    sightings (``seen``: key -> epoch seconds, ``None`` for records older than the ledger), row-id checkpoints
    (``checkpoints``: ``[time, {table: max rowid}]``), a far-ahead suspicion waiting to be confirmed and the
    last untrusted verdict (``skew``, for ``doctor``). A ledger that cannot be read is started again (warned)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.created = False
        """No ledger yet: the records present are older than the rule and judged by their own timestamps."""
        self.damaged = False
        """A ledger that could not be read: the records present are treated as first seen now (conservative)."""
        data: dict[str, Any] = {}
        try:
            loaded = json.loads(read_regular_bytes(path, MAX_LEDGER_BYTES))  # never blocks on a FIFO
            if isinstance(loaded, dict) and loaded.get("version") == LEDGER_VERSION:
                data = loaded
        except FileNotFoundError:
            self.created = True
        except (OSError, ValueError) as exc:  # a ProfileFileError (FIFO, device, too large) says what it is
            logger.warning("hermes_pipeline: retention: %s unreadable (%s); starting it again, keeping every record "
                           "a full window", path, getattr(exc, "reason", None) or type(exc).__name__)
            self.damaged = True
        self.last_trusted: float | None = _num(data.get("last_trusted"))
        seen = data.get("seen")
        self.seen: dict[str, float | None] = \
            {str(k): _num(v) for k, v in seen.items()} if isinstance(seen, dict) else {}
        checkpoints = data.get("checkpoints")
        self.checkpoints: list[tuple[float, dict[str, int]]] = [
            (float(c[0]), {str(t): int(r) for t, r in c[1].items()}) for c in checkpoints or []
            if isinstance(c, list) and len(c) == 2 and isinstance(c[0], int | float) and isinstance(c[1], dict)]
        self.suspect: dict[str, Any] | None = data.get("suspect") if isinstance(data.get("suspect"), dict) else None
        self.skew: dict[str, Any] | None = data.get("skew") if isinstance(data.get("skew"), dict) else None

    def judge(self, now: float, newest_vouched: float | None, window_s: float, *,
              boot: BootClock | None) -> ClockVerdict:
        """:func:`judge_clock`, with rule 3: a far-ahead verdict is remembered with the boot clock and trusted
        once the wall clock has run like the boot clock for :data:`CONFIRM_S` on the same boot."""
        verdict = judge_clock(now, last_trusted=self.last_trusted, newest_vouched=newest_vouched, window_s=window_s)
        if verdict.trusted:
            return verdict
        if not verdict.ahead:
            self.suspect = None
            return verdict
        s = self.suspect
        if boot is not None and s is not None and s.get("boot_id") == boot[0]:
            steady = boot[1] - float(s.get("boot", 0.0))
            if abs((now - float(s.get("wall", 0.0))) - steady) <= TOLERANCE_S:
                return ClockVerdict(True, now) if steady >= CONFIRM_S else verdict
        self.suspect = {"wall": now, "boot_id": boot[0], "boot": boot[1]} if boot is not None else None
        return verdict

    def untrusted(self, verdict: ClockVerdict, what: str) -> None:
        """Remember and log an untrusted verdict (nothing is deleted)."""
        self.skew = {"store": what, **verdict.as_json()}
        logger.warning("hermes_pipeline: %s: retention skipped, nothing deleted: %s (check the system clock; "
                       "see hermes-pipeline doctor)", what, verdict.reason)

    def trusted(self, now: float) -> None:
        """Remember a prune on a trusted clock."""
        self.last_trusted = max(now, self.last_trusted or now)
        self.skew = None
        self.suspect = None

    def save(self) -> None:
        data = {"version": LEDGER_VERSION, "last_trusted": self.last_trusted, "seen": self.seen,
                "checkpoints": [[t, rows] for t, rows in self.checkpoints], "suspect": self.suspect,
                "skew": self.skew}
        try:
            write_atomically(self.path, json.dumps(data, sort_keys=True).encode("utf-8"))
        except OSError as exc:
            logger.warning("hermes_pipeline: retention: cannot write %s (%s)", self.path, type(exc).__name__)


def read_skew(path: Path) -> dict[str, Any] | None:
    """The last untrusted verdict kept in the ledger at ``path`` (``None``: none, or no ledger)."""
    try:
        data = json.loads(read_regular_bytes(path, MAX_LEDGER_BYTES))
    except (OSError, ValueError):
        return None
    skew = data.get("skew") if isinstance(data, dict) else None
    return skew if isinstance(skew, dict) else None


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


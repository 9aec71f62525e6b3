"""Scope identities and timestamps of exported events (spec 04 FMT-14, FMT-19).

UUIDs are kept as integers on the hook caller's thread (cheap to make, compare and hash) and only
rendered as strings by exporters on their worker threads. :func:`new_uuid7` follows RFC 9562
UUIDv7: 48 bits of Unix milliseconds, 12 random bits fixed per process (``rand_a``) and 62 bits
from a per-process counter that starts at a random value (``rand_b``, RFC 9562 §6.2 method 2), so
identities are unique within a process, time-ordered and monotonic within a millisecond, and
unpredictable across processes (both are re-seeded after ``fork``).
"""

from __future__ import annotations

import itertools
import os
import time
from functools import lru_cache
from typing import Final

_MASK62: Final = (1 << 62) - 1
_VERSION_VARIANT: Final = (0x7 << 76) | (0b10 << 62)


def _seed() -> tuple[int, itertools.count[int]]:
    rand_a = int.from_bytes(os.urandom(2), "big") & 0xFFF
    return (rand_a << 64) | _VERSION_VARIANT, itertools.count(int.from_bytes(os.urandom(8), "big") >> 3)


_fixed, _counter = _seed()


def _reseed() -> None:
    global _fixed, _counter
    _fixed, _counter = _seed()


os.register_at_fork(after_in_child=_reseed)


def new_uuid7(unix_ms: int) -> int:
    """A UUIDv7 (as a 128-bit integer) for the millisecond ``unix_ms``."""
    return (unix_ms << 80) | _fixed | (next(_counter) & _MASK62)


@lru_cache(maxsize=16_384)
def uuid_str(value: int) -> str:
    """The canonical lowercase 8-4-4-4-12 form of a UUID integer.

    Cached: a scope's UUID is rendered for its start, its end and every child's ``parent_uuid``,
    by every exporter.
    """
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def uuid_int(text: str) -> int:
    """The integer of a UUID string (with or without dashes); ``ValueError`` if malformed."""
    digits = text.replace("-", "")
    if len(digits) != 32:
        raise ValueError(f"not a UUID: {text!r}")
    return int(digits, 16)


def now_us() -> int:
    """Wall-clock time in integer microseconds since the Unix epoch (UTC)."""
    return time.time_ns() // 1000


_SECONDS_KEPT: Final = 4096
_seconds: Final[dict[int, str]] = {}
"""Epoch second → ``YYYY-MM-DDTHH:MM:SS.`` (emptied when it holds :data:`_SECONDS_KEPT`)."""
_DIGITS: Final = tuple(f"{n:03d}" for n in range(1000))
_DIGITS_Z: Final = tuple(f"{n:03d}Z" for n in range(1000))


def _second(seconds: int) -> str:
    if len(_seconds) >= _SECONDS_KEPT:
        _seconds.clear()
    text = _seconds[seconds] = time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(seconds))
    return text


def rfc3339_us(epoch_us: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS.ffffffZ``: RFC 3339 UTC with exactly six fractional digits (FMT-14).

    Every exporter renders two of these per scope: the second's text is remembered and the six digits are
    put together from two tables of three (a ``:06d`` format costs several times that)."""
    seconds = epoch_us // 1_000_000
    head = _seconds.get(seconds)
    if head is None:
        head = _second(seconds)
    micros = epoch_us - seconds * 1_000_000
    return head + _DIGITS[micros // 1000] + _DIGITS_Z[micros % 1000]


def parse_timestamp_us(value: str | int) -> int:
    """Normalise an ATOF timestamp (RFC 3339 string or integer epoch microseconds) to microseconds.

    Readers compare timestamps only after this normalisation (FMT-14, FMT-15).
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, str):
        raise ValueError(f"not an ATOF timestamp: {value!r}")
    from datetime import datetime

    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    head, sep, rest = text.partition(".")
    fraction = ""
    if sep:
        digits = "".join(itertools.takewhile(str.isdigit, rest))
        fraction, text = digits, head + rest[len(digits):]
    moment = datetime.fromisoformat(text)
    whole = int(moment.timestamp()) * 1_000_000
    return whole + int((fraction + "000000")[:6]) if fraction else whole

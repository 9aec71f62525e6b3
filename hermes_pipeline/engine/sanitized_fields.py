"""The sanitized fields the engine built, known by identity (issue #29 item 5: scrub once, where a string enters).

The host API makes ``post_api_request.response`` with :func:`~hermes_pipeline.engine.sanitize.sanitize`, and the
``request`` of ``pre_api_request`` and ``api_request_error`` with
:func:`~hermes_pipeline.engine.request_field.build_request_field` (equal to the sanitizer's), on the agent's thread:
every string in them scrubbed once, every sensitive key's value redacted, JSON types only, no string longer than
:func:`bound` characters. The export's credential walk, run later on the publication thread with the
same scrubber and key rule, would give that value back unchanged, and a consumer must not re-sanitize a payload
that is already sanitized (spec 01 OBS-53). So the host records the very object it made (:func:`mark`) and the
walk keeps it without walking it when it meets that object (:func:`is_marked`), under a value bound of at least
the recorded one.

Membership is by identity, never by content: an equal dict from anywhere else (a host that built its own
``response``) is walked. Observers must treat payloads as read-only (OBS-19), as they do the request field's
shared parts (:func:`~hermes_pipeline.engine.request_field.is_sanitized_part`). The table holds its objects (so an
``id`` is never reused while it is recorded) and at most :data:`MAX_ENTRIES` of them (about that many, when several
threads mark at once): when full, the oldest leaves (the publication thread meets values in the order they were
marked, some turns behind the agent's thread, so emptying the whole table would lose those it has yet to meet), and
a value met after it left is walked, which costs time, never privacy. Thread-safe: dict operations only, a race
at worst keeps one entry more or drops one more.
"""

from __future__ import annotations

from typing import Final, TypeVar

from .sanitize import PASS1_MAX_STR, payload_max_chars

__all__ = ["MAX_ENTRIES", "bound", "is_marked", "mark"]

T = TypeVar("T")

MAX_ENTRIES: Final = 128
"""Values recorded at most (each at most the payload limit of characters: a few MB in all at worst)."""

_marked: Final[dict[int, tuple[object, int]]] = {}
"""``id`` -> (the sanitized value, the longest string it may hold)."""


def bound() -> int:
    """The longest string a value :func:`~.sanitize.sanitize` returns may hold: a cut string of pass 1 (at most
    ``PASS1_MAX_STR`` characters and the cut marker) or the preview of a truncated payload (the payload limit)."""
    return max(2 * PASS1_MAX_STR, payload_max_chars())


def mark(value: T) -> T:
    """Record ``value``, which :func:`~.sanitize.sanitize` (or the request field's builder) has just returned to the
    caller, and return it.

    Only a dict or a list is recorded (a string result is its own scrubbed form and needs no table)."""
    if type(value) is dict or type(value) is list:
        if len(_marked) >= MAX_ENTRIES:  # the oldest leaves: the newest are those the publication thread will meet
            try:
                _marked.pop(next(iter(_marked)), None)
            except (RuntimeError, StopIteration):  # another thread changed the table meanwhile
                pass
        _marked[id(value)] = (value, bound())
    return value


def is_marked(value: object, cap: int | None) -> bool:
    """Whether ``value`` is a recorded sanitized value, the very object, whose strings all fit ``cap`` (``None``:
    no bound), so that a walk with that bound would keep it as it is."""
    entry = _marked.get(id(value))
    return entry is not None and entry[0] is value and (cap is None or cap >= entry[1])

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
``id`` is never reused while it is recorded), at most :data:`MAX_ENTRIES` of them and about :data:`BUDGET_CHARS`
characters of their text (each value charged what the host counted of it, at most :func:`bound`): when full, the
oldest leave (the publication thread meets values in the order they were marked, some turns behind the agent's
thread, so emptying the whole table would lose those it has yet to meet), a value met lets go of those marked
before it (:func:`is_marked`), and a value met after it left is walked, which costs time, never privacy. The table must reach back as far as the publication queue: an unthrottled host
keeps hundreds of LLM calls queued, each with its request and response (a table of 128 entries missed about two
thirds of them in the exporters bench, and each missed value was walked whole). Thread-safe: dict operations only,
a race at worst keeps one entry more or drops one more, and may miscount a charge (the budget is a soft bound).
"""

from __future__ import annotations

from typing import Final, TypeVar

from .sanitize import PASS1_MAX_STR, payload_max_chars

__all__ = ["BUDGET_CHARS", "MAX_ENTRIES", "bound", "is_marked", "mark"]

T = TypeVar("T")

MAX_ENTRIES: Final = 4096
"""Values recorded at most."""
BUDGET_CHARS: Final = 32_000_000
"""Characters of text the recorded values may hold in all. While their records wait in the publication queue the
table keeps nothing alive that the queue does not (a value met lets go of those before it), so the budget is what
lets it reach back as far as that queue (64 MiB of estimated bytes by default): with 8 million characters, a host
replaying real sessions (requests of 10,000 characters and more) outran it, each request met after it had left was
walked whole, which slowed the publication thread further behind (the exporters' CPU per tool call doubled). What
the table can keep alive beyond the queue (records the queue refused while the publication thread met nothing) is
at most this budget: about 32 MB of text."""
ENTRY_CHARS: Final = 256
"""What an entry is charged beyond its text (its containers, keys and numbers)."""

_marked: Final[dict[int, tuple[object, int, int]]] = {}
"""``id`` -> (the sanitized value, the longest string it may hold, its charge in characters)."""
_charged = [0]
"""The charges of the values in the table (a one-item list: updated in place, no ``global``)."""


def bound() -> int:
    """The longest string a value :func:`~.sanitize.sanitize` returns may hold: a cut string of pass 1 (at most
    ``PASS1_MAX_STR`` characters and the cut marker) or the preview of a truncated payload (the payload limit)."""
    return max(2 * PASS1_MAX_STR, payload_max_chars())


def mark(value: T, chars: int | None = None) -> T:
    """Record ``value``, which :func:`~.sanitize.sanitize` (or the request field's builder) has just returned to the
    caller, and return it. ``chars``: the characters of text it holds as the host counted them (its charge against
    :data:`BUDGET_CHARS`, at most :func:`bound`); ``None`` (or anything but a count): charged :func:`bound`.

    Only a dict or a list is recorded (a string result is its own scrubbed form and needs no table)."""
    if type(value) is dict or type(value) is list:
        longest = bound()
        charge = ENTRY_CHARS + (chars if type(chars) is int and 0 <= chars <= longest else longest)
        charged = _charged
        while _marked and (len(_marked) >= MAX_ENTRIES or charged[0] + charge > BUDGET_CHARS):
            try:  # the oldest leaves: the newest are those the publication thread will meet
                entry = _marked.pop(next(iter(_marked)), None)
            except (RuntimeError, StopIteration):  # another thread changed the table meanwhile
                break
            if entry is not None:
                charged[0] -= entry[2]
        old = _marked.get(id(value))
        if old is not None:  # the same value marked again: charged once
            charged[0] -= old[2]
        _marked[id(value)] = (value, longest, charge)
        charged[0] += charge
    return value


def is_marked(value: object, cap: int | None) -> bool:
    """Whether ``value`` is a recorded sanitized value, the very object, whose strings all fit ``cap`` (``None``:
    no bound), so that a walk with that bound would keep it as it is.

    A value met leaves behind it the values marked before it: the publication thread meets them in the order they
    were marked, so those it has passed will not be asked for again (a second reader that lags behind walks them,
    which costs time, never privacy). The table then holds only what is still queued, which the queue keeps alive
    anyway: it keeps nothing alive for the garbage collector to go over again and again."""
    key = id(value)
    entry = _marked.get(key)
    if entry is None or entry[0] is not value:
        return False
    charged = _charged
    try:
        while True:
            oldest = next(iter(_marked))
            if oldest == key:
                break
            left = _marked.pop(oldest, None)
            if left is not None:
                charged[0] -= left[2]
    except (RuntimeError, StopIteration):  # another thread changed the table meanwhile: the next meeting goes on
        pass
    return cap is None or cap >= entry[1]

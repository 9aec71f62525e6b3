"""Scrub a string once, where it enters: the scrubbed result is remembered and marked (issue #29 item 5).

Every emitter (the host API's sanitized fields, the Hermes bridge's full request, the export path's entry
walk over the legacy raw fields) scrubs its strings through :func:`scrub_once`. The credential scan of
:func:`~hermes_pipeline.engine.scrub.scrub_text` then runs at most once per distinct text:

- a text the scan left unchanged is remembered by ``scrub_text`` itself (``known_clean`` / ``long_clean``): it is
  its own scrubbed form, and is not kept a second time here;
- a text the scan changed is remembered here with its result (:data:`_memo`): the conversation is sent
  again with every provider call, so without it a message holding a credential would be scanned again at
  every call, and by every later walk;
- every result is **marked as scrubbed** (:data:`_scrubbed`): a later walk over an already scrubbed value
  (the export's entry walk over the engine's sanitized ``request``; a sink) meets it and keeps it as it is,
  the same object, so no container holding it is copied either. That is safe because ``scrub_text``'s result
  is a fixpoint (it scans a changed text again until nothing changes: a credential glued to another's end is
  found once the first is replaced); ``tests/engine/test_scrub_once.py`` checks the fixpoint on generated text.

A third table holds the identifiers the engine makes itself (:mod:`.ids`: a fixed prefix, lowercase hex digits, a
decimal count), recorded where they are made (:func:`mark_made`, :data:`made_clean`): no scrubber rule matches
that alphabet, so such an id is its own scrubbed form by construction and is never scanned, where each new turn
would otherwise scan its new ``turn_id``, ``task_id`` and ``api_request_id`` once (a few microseconds each).
Membership is by the exact text the engine made: a host-supplied id that merely looks like one (``turn_`` and a
credential) is not in the table and is scanned like any foreign text. ``tests/engine/test_made_ids.py`` checks
every generator's output against the scrubber on generated values.

Both tables of scrub results are bounded by the characters they hold (emptied when full, like ``long_clean``; a
text seen after that is scanned again, which costs time, never privacy) and are emptied when the redaction key
changes (their markers would be stale). The raw texts kept as keys of :data:`_memo` are texts the process
already holds; they are never written anywhere. Thread-safe: single dict and set operations only.
"""

from __future__ import annotations

from typing import Any, Final

from . import scrub as _scrub
from .scrub import CLEAN_MAX_CHARS, REDACTION_FAILED, SCRUB_MIN_CHARS, known_clean, safe_scrub

__all__ = ["is_scrubbed", "made_clean", "mark_made", "scans", "scrub_once"]

MAX_CHARS: Final = 100_000
"""Longer texts are scrubbed every time and not remembered (as ``long_clean`` does)."""
BUDGET_CHARS: Final = 2_000_000
"""Characters both tables may hold together before they are emptied."""

_memo: Final[dict[str, str]] = {}
"""Raw text -> its scrubbed text, for texts the scan changed."""
_scrubbed: Final[set[str]] = set()
"""Texts that are the result of a scan: already scrubbed, kept as they are by a later walk."""
_state: Final[dict[str, Any]] = {"key": None, "chars": 0, "scans": 0}
made_clean: Final[set[str]] = set()
"""Identifiers the engine made itself (:func:`mark_made`), each at most ``CLEAN_MAX_CHARS`` long (a hit needs no
length test, as with ``known_clean``); read-only outside this module."""
_MADE_MAX_ENTRIES: Final = 8192


def mark_made(text: str) -> str:
    """Record ``text``, an identifier the engine has just made from its own alphabet (see the module docstring),
    as its own scrubbed form, and return it. Only :mod:`.ids` calls this, on the very text it made: a text from
    anywhere else is never recorded. When the table is full it is emptied (an id seen after that is scanned
    again, which costs time, never privacy). The table is not tied to the redaction key: an id holds no marker."""
    if len(text) <= CLEAN_MAX_CHARS:
        if len(made_clean) >= _MADE_MAX_ENTRIES:
            made_clean.clear()
        made_clean.add(text)
    return text


def _reset_if_rekeyed() -> None:
    key = _scrub._redaction_key  # the markers' key: a new key makes remembered markers stale
    if key is not _state["key"]:
        _memo.clear()
        _scrubbed.clear()
        _state["key"], _state["chars"] = key, 0


def scrub_once(text: str) -> str:
    """``text`` scrubbed (:func:`~hermes_pipeline.engine.scrub.safe_scrub`), scanning each distinct text once.

    Returns ``text`` itself when it needs no change or is already the result of a scrub; never raises."""
    n = len(text)
    if n < SCRUB_MIN_CHARS or (n <= CLEAN_MAX_CHARS and (text in known_clean or text in made_clean)):
        return text
    if _state["key"] is not _scrub._redaction_key:
        _reset_if_rekeyed()
    if text in _scrubbed:
        return text
    done = _memo.get(text)
    if done is not None:
        return done
    _state["scans"] = int(_state["scans"]) + 1
    out = safe_scrub(text)  # a fixpoint: scrub_text scans a changed text again until nothing changes
    # A text the scan left unchanged is remembered by scrub_text itself (known_clean, long_clean): only a changed
    # one is kept here. A failure may be transient: that text is scanned again next time.
    if out is not text and n <= MAX_CHARS and out != REDACTION_FAILED:
        chars = int(_state["chars"]) + n + len(out)
        if chars > BUDGET_CHARS:
            _memo.clear()
            _scrubbed.clear()
            chars = n + len(out)
        _state["chars"] = chars
        _memo[text] = out
        _scrubbed.add(out)
    return out


def is_scrubbed(text: str) -> bool:
    """Whether ``text`` is known to be the result of a scrub (or a short text known to need none, or an id the
    engine made)."""
    return text in _scrubbed or text in made_clean or (len(text) <= CLEAN_MAX_CHARS and text in known_clean) \
        or len(text) < SCRUB_MIN_CHARS


def scans() -> int:
    """How many texts :func:`scrub_once` has handed to the scanner in this process (for tests and benches)."""
    return int(_state["scans"])

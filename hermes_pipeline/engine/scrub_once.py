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

Both tables are bounded by the characters they hold (emptied when full, like ``long_clean``; a text seen
after that is scanned again, which costs time, never privacy) and are emptied when the redaction key
changes (their markers would be stale). The raw texts kept as keys of :data:`_memo` are texts the process
already holds; they are never written anywhere. Thread-safe: single dict and set operations only.
"""

from __future__ import annotations

from typing import Final

from . import scrub as _scrub
from .scrub import CLEAN_MAX_CHARS, REDACTION_FAILED, SCRUB_MIN_CHARS, known_clean, safe_scrub

__all__ = ["is_scrubbed", "scans", "scrub_once"]

MAX_CHARS: Final = 100_000
"""Longer texts are scrubbed every time and not remembered (as ``long_clean`` does)."""
BUDGET_CHARS: Final = 2_000_000
"""Characters both tables may hold together before they are emptied."""

_memo: Final[dict[str, str]] = {}
"""Raw text -> its scrubbed text, for texts the scan changed."""
_scrubbed: Final[set[str]] = set()
"""Texts that are the result of a scan: already scrubbed, kept as they are by a later walk."""
_state: Final[dict[str, object]] = {"key": None, "chars": 0, "scans": 0}


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
    if n < SCRUB_MIN_CHARS or (n <= CLEAN_MAX_CHARS and text in known_clean):
        return text
    if _state["key"] is not _scrub._redaction_key:
        _reset_if_rekeyed()
    if text in _scrubbed:
        return text
    done = _memo.get(text)
    if done is not None:
        return done
    _state["scans"] = int(_state["scans"]) + 1  # type: ignore[call-overload]
    out = safe_scrub(text)  # a fixpoint: scrub_text scans a changed text again until nothing changes
    # A text the scan left unchanged is remembered by scrub_text itself (known_clean, long_clean): only a changed
    # one is kept here. A failure may be transient: that text is scanned again next time.
    if out is not text and n <= MAX_CHARS and out != REDACTION_FAILED:
        chars = int(_state["chars"]) + n + len(out)  # type: ignore[call-overload]
        if chars > BUDGET_CHARS:
            _memo.clear()
            _scrubbed.clear()
            chars = n + len(out)
        _state["chars"] = chars
        _memo[text] = out
        _scrubbed.add(out)
    return out


def is_scrubbed(text: str) -> bool:
    """Whether ``text`` is known to be the result of a scrub (or a short text known to need none)."""
    return text in _scrubbed or (len(text) <= CLEAN_MAX_CHARS and text in known_clean) or len(text) < SCRUB_MIN_CHARS


def scans() -> int:
    """How many texts :func:`scrub_once` has handed to the scanner in this process (for tests and benches)."""
    return int(_state["scans"])  # type: ignore[call-overload]

"""The size bound of one value, for every sink (spec 04 FMT-33a's neighbour: no output holds an unbounded value).

A host may hand any size of text to a hook: a 100 MB tool result, a pasted log. Every string of every scope
event is cut, where the event enters the export path (the :class:`~hermes_pipeline.export.scopes.ScopeTracker`,
together with the credential scrubber), to at most ``max_value_chars`` characters followed by the engine's
truncation marker ``...[truncated N chars]`` (``N`` counted in the original text). So no ATOF line, ATIF step,
OTLP attribute or store row can carry more than that per value, whatever the sink. The event's metadata then
says how many of its values were cut (:data:`TRUNCATED_VALUES_KEY`), which the trajectory store turns into a
note that the run cannot be replayed byte for byte.

The scrubber runs before the cut, so a credential straddling the cut is still recognised: only the first
``max_value_chars + SCRUB_MARGIN`` characters are scrubbed (more when long redactions shortened that window: see
:func:`bounded_scrub`), which bounds the scrubber's work on a huge value (a credential is far shorter than the
margin).
"""

from __future__ import annotations

from typing import Any, Final

from ..engine.scrub import TRUNCATION_SUFFIX, marker_cut, safe_scrub, truncate
from ..engine.scrub_once import scrub_once
from .events import ScopeEvent

__all__ = ["DEFAULT_MAX_VALUE_CHARS", "MIN_MAX_VALUE_CHARS", "SCRUB_MARGIN", "TRUNCATED_VALUES_KEY",
           "bound_event", "bounded", "bounded_scrub", "max_value_chars"]

DEFAULT_MAX_VALUE_CHARS: Final = 1_000_000
"""The default bound of one string value, in characters (about 1 MB of text: any real prompt or tool result
that matters for replay, never a 100 MB line)."""
MIN_MAX_VALUE_CHARS: Final = 1_000
"""Smaller configured bounds are raised to this (the engine's own error texts are longer than a few hundred)."""
SCRUB_MARGIN: Final = 16_384
"""Characters past the bound that are still scrubbed before the cut (longer than any credential, PEM keys included)."""
TRUNCATED_VALUES_KEY: Final = "hermes.truncated_values"
"""Metadata key of an event some of whose values were cut: how many."""


def max_value_chars(value: object) -> int:
    """A configured bound, validated: an ``int`` (not ``bool``) raised to :data:`MIN_MAX_VALUE_CHARS`; ``None``
    gives the default. Anything else is a :class:`TypeError` naming the key."""
    if value is None:
        return DEFAULT_MAX_VALUE_CHARS
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"max_value_chars: expected an integer number of characters, got {type(value).__name__}")
    return max(value, MIN_MAX_VALUE_CHARS)


def bounded(text: str, cap: int | None) -> str:
    """``text`` cut to at most ``cap`` characters, never inside a redaction marker, with the truncation marker (no
    scrubbing); itself when it fits."""
    if cap is None:
        return text
    return truncate(text, cap)


def bounded_scrub(text: str, cap: int | None) -> tuple[str, bool]:
    """``(text scrubbed and cut to cap, whether it was cut)``; never raises (see the module docstring).

    The cut never halves a redaction marker. A scrubbed window is shorter than the text it came from by what its
    markers replaced, so the kept head reaches further into the text than ``cap`` characters: the window is made
    long enough that at least half of :data:`SCRUB_MARGIN` of the text lies scrubbed past the head's last
    character, however much the redactions shortened it, so a credential across the cut is still whole in it. The
    window at least doubles each time it grows, so a redaction running on for megabytes (an unterminated private
    key block) costs a few passes, not one per margin."""
    if cap is None:
        return scrub_once(text), False
    n = len(text)
    if n <= cap:
        out = scrub_once(text)  # once per distinct text: an already scrubbed text is kept as it is
        return truncate(out, cap), len(out) > cap
    end = cap + SCRUB_MARGIN
    while True:
        head = safe_scrub(text[:end])
        shortened = min(end, n) - len(head)  # how much further into the text the head's cap-th character lies
        if end >= n or end - (cap + shortened) >= SCRUB_MARGIN // 2:
            break
        end = max(cap + shortened + SCRUB_MARGIN, 2 * end)  # doubling: a few passes however long the redaction
    cut = marker_cut(head, cap)
    return head[:cut] + TRUNCATION_SUFFIX.format(n=n - cut), True


def _bound(value: Any, cap: int, cut: list[int], depth: int) -> Any:
    cls = type(value)
    if cls is str:
        if len(value) <= cap:
            return value
        cut[0] += 1
        return bounded(value, cap)
    if depth > 64:
        return value
    if cls is dict:
        out = None
        for key, item in value.items():
            new = _bound(item, cap, cut, depth + 1)
            if new is not item and out is None:
                out = dict(value)
            if out is not None:
                out[key] = new
        return value if out is None else out
    if cls is list or cls is tuple:
        items = [_bound(item, cap, cut, depth + 1) for item in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        return items if cls is list else tuple(items)
    return value


def bound_event(event: ScopeEvent, cap: int) -> ScopeEvent:
    """``event`` with every string of its name, data, profile and metadata cut to ``cap`` (no scrubbing); the
    strings of its first-party ``facts`` too, not counted in the rendered ``hermes.truncated_values``.

    For a scope plugin with credential redaction switched off: the bound holds either way. Returns the
    same object when nothing was cut."""
    cut = [0]
    name = bounded(event.name, cap)
    data = _bound(event.data, cap, cut, 0)
    profile = _bound(event.profile, cap, cut, 0)
    meta = _bound(event.metadata, cap, cut, 0)
    if name is not event.name:
        cut[0] += 1
    facts = event.facts
    new_facts = facts if facts is None else _bound(facts, cap, [0], 0)
    if not cut[0] and new_facts is facts:
        return event
    if cut[0]:
        meta = {**(meta if isinstance(meta, dict) else {}), TRUNCATED_VALUES_KEY: cut[0]}
    return ScopeEvent(event.kind, event.phase, event.uuid, event.parent_uuid, event.timestamp_us, name,
                      event.category, event.attributes, profile, data, meta, event.session_uuid, event.root_uuid,
                      facts=new_facts)

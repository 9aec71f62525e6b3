"""Credential redaction of every scope event before any sink sees it (spec 04 FMT-33a; spec 06 BOOK-12, BOOK-15).

The scope tracker keeps content fields as the hooks gave them, and some of those are raw by contract
(``user_message``, tool ``arguments`` and ``result``, the final answer, an approval ``command``, a
subagent's goal). :func:`redact_event` applies the one credential scrubber of the engine
(:func:`~hermes_pipeline.engine.scrub.scrub_text` and the sensitive-key rule) to every string of an
event's ``data``, ``category_profile`` and ``metadata``, at any depth, so every exporter inherits the
same result: local ATOF and ATIF files, ATOF streams, every OTLP endpoint type and Langfuse. Content
summaries and previews are computed by the exporters afterwards, from the scrubbed strings, so a
preview never shows a credential the scrubber recognises. The ``request`` / ``response`` / ``error``
fields were already sanitized by the engine with the same scrubber, which is idempotent, so a string
is scrubbed the same way wherever it appears.

A string is scrubbed once, where it enters, and never walked again (issue #29 item 5), so the walk keeps, by
construction and never by a guess at a shape, what is clean already: a text in the scrubber's table of texts it
left unchanged (``known_clean``) or an id the engine made itself (``made_clean``: an id a host supplied is never
in it, whatever it looks like); a sanitized part of the engine's request field or the sanitized ``response`` the
host made, the very objects (:func:`~hermes_pipeline.engine.request_field.is_sanitized_part`,
:func:`~hermes_pipeline.engine.sanitized_fields.is_marked`); the fields a scope kind built only of its constants
and such texts (:attr:`ScopeEvent.clean`); and an end's name and profile that are its published start's own
objects, which the start's walk kept as they are. ``tests/export/test_known_clean_equal.py`` checks each shortcut
against the full walk on generated input.

The walk copies only what it changes (unchanged containers are shared, as events are immutable),
keeps a mapping key and redacts its value when the key is sensitive, judges a value with the context the text rules
read (a credential name, a list that is a command line, a name/value pair's naming sibling:
:mod:`~hermes_pipeline.engine.walk_context`, the payload sanitizer's rule), renders values that are not JSON
types through the payload sanitizer (bounded and scrubbed, as the exporters' encoders would), and
stops at cycles and at :data:`MAX_DEPTH` with the sanitizer's depth marker.
"""

from __future__ import annotations

from typing import Any, Final

from ..engine.named_values import named_value_marker, credential_key, whole_marker
from ..engine.readonly import ReadOnlyDict, ReadOnlyList
from ..engine.request_field import is_sanitized_part
from ..engine.sanitized_fields import is_marked
from ..engine.sanitize import DEPTH_MARKER, PASS1_MAX_STR, sanitize
from ..engine.scrub_once import made_clean
from ..engine.walk_context import argv_context, sibling_value, value_key
from ..engine.scrub import (
    CLEAN_MAX_CHARS,
    REDACTED,
    REDACTION_FAILED,
    SCRUB_MIN_CHARS,
    hide_printed_output,
    is_sensitive_key,
    known_clean,
)
from .bounds import TRUNCATED_VALUES_KEY, bounded_scrub
from .events import CLEAN_ALL, CLEAN_DATA, CLEAN_META, CLEAN_NAME, CLEAN_PROFILE, ScopeEvent

__all__ = ["MAX_DEPTH", "redact_event", "redact_value"]

MAX_DEPTH: Final = 64
"""Containers deeper than this become ``<TypeName depth limit>`` (the exporters' encoders refuse deeper ones)."""

_plain_keys: Final[set[str]] = set()
"""String keys seen to be neither sensitive nor changed by scrubbing: one set lookup next time."""
_token_keys: Final[set[str]] = set()
"""String keys unchanged by scrubbing whose only rule is the plural-token one (``input_tokens``, ...): their
value is kept when it is ``None``, an ``int`` or a ``float`` (exactly), and redacted otherwise."""
_PLAIN_KEYS_MAX: Final = 8192
_SCALARS: Final = frozenset({bool, int, float, type(None)})
_PLAIN: Final[dict[type, type]] = {ReadOnlyDict: dict, ReadOnlyList: list}
"""The read-only views observers get of a tool's arguments (:mod:`~hermes_pipeline.engine.readonly`) are walked
as the dicts and lists they are."""
"""Exact types kept as they are (strings are scrubbed, everything else is walked or rendered)."""


PART_CAP: Final = 2 * PASS1_MAX_STR
"""Under a cap of at least this, a sanitized request part (no string longer than ``PASS1_MAX_STR`` plus its cut
marker) is kept as it is without a walk."""


class _Walk:
    """One walk's state: the containers on the current path (cycle detection), the value cap, the cuts made, and
    whether the request field's sanitized parts may be kept without a walk (see :func:`_sequence`)."""

    __slots__ = ("ids", "cap", "cut", "parts")

    def __init__(self, cap: int | None) -> None:
        self.ids: set[int] = set()
        self.cap = cap
        self.cut = 0
        self.parts = cap is None or cap >= PART_CAP

    def scrub(self, text: str) -> str:
        """``text`` scrubbed and, past the cap, cut with the truncation marker (counted in :attr:`cut`)."""
        out, cut = bounded_scrub(text, self.cap)
        if cut:
            self.cut += 1
        return out


def _text(text: str, ctx: _Walk) -> str:
    # known_clean and made_clean (the ids the engine made) only ever hold texts of at most CLEAN_MAX_CHARS
    # characters, so a hit needs no length test
    if text in known_clean or len(text) < SCRUB_MIN_CHARS or text in made_clean:
        return text
    return ctx.scrub(text)


def _remember(key: str) -> None:
    """Cache the class of a string key that scrubbing leaves unchanged (see ``_plain_keys``, ``_token_keys``)."""
    if len(key) > CLEAN_MAX_CHARS or is_sensitive_key(key, 0) or credential_key(key) or value_key(key):
        return  # always sensitive, or its value judged by its name or a sibling's: the slow path every time
    if len(_plain_keys) + len(_token_keys) >= _PLAIN_KEYS_MAX:
        _plain_keys.clear()
        _token_keys.clear()
    (_token_keys if is_sensitive_key(key, "") else _plain_keys).add(key)


def _key(key: Any, item: Any, ctx: _Walk) -> tuple[Any, bool]:
    """The rendered key and whether its value is redacted (the sensitive-key rule of 01 §8.2.4)."""
    if type(key) is str:
        text = _text(key, ctx)
        if text is key:
            _remember(key)
        return text, is_sensitive_key(key, item)
    if key is None or type(key) in (int, float, bool):
        return key, False
    try:
        text = str(key)
    except Exception:
        return REDACTION_FAILED, True
    return _text(text if type(text) is str else str.__str__(text), ctx), is_sensitive_key(text, item)


def _walk(value: Any, depth: int, ctx: _Walk) -> Any:
    cls = _PLAIN.get(type(value), type(value))
    if cls is str:
        return _text(value, ctx)
    if cls in _SCALARS:
        return value
    if cls is dict or cls is list or cls is tuple:
        if depth >= MAX_DEPTH or id(value) in ctx.ids:
            return DEPTH_MARKER.format(type_name=cls.__name__)
        return _mapping(value, depth, ctx) if cls is dict else _sequence(value, depth, ctx)
    return sanitize(value)  # str subclasses, sets, provider objects ...: what the encoders' fallback renders


# Cycle detection: ``ctx.ids`` holds the ids of the containers on the path from the field to the value
# being walked. A container enters it just before its first child that is not a string or a scalar is
# walked (a container whose children are all strings and scalars cannot be on a cycle), and leaves it
# when it is done. An exception aborts the whole walk, which owns ``ctx``: no cleanup is needed.


def _mapping(value: dict[Any, Any], depth: int, ctx: _Walk) -> dict[Any, Any]:
    # The common cases inlined (a known key with a string or a scalar value): most event metadata and
    # data are exactly that, and each event goes through here once per sink set.
    out: dict[Any, Any] | None = None
    child = depth + 1
    entered = False
    plain_keys = _plain_keys
    clean = known_clean
    made = made_clean
    scalars = _SCALARS
    new: Any
    for key, item in value.items():
        cls = _PLAIN.get(type(item), type(item))
        if key in plain_keys:
            # the hot path: a known key whose string or scalar value is kept as it is
            if cls is str:
                if item in clean or len(item) < SCRUB_MIN_CHARS or item in made:
                    if out is not None:
                        out[key] = item
                    continue
                new = ctx.scrub(item)
            elif cls in scalars:
                if out is not None:
                    out[key] = item
                continue
            else:
                if not entered:
                    ctx.ids.add(id(value))
                    entered = True
                # a nested dict within the limits is walked directly (what _walk would do, one call less),
                # unless it is a sanitized field the engine made (``response``): the walk would keep it as it is
                if cls is dict and child < MAX_DEPTH and id(item) not in ctx.ids:
                    new = item if is_marked(item, ctx.cap) else _mapping(item, child, ctx)
                else:
                    new = _walk(item, child, ctx)
            new_key = key
        elif key in _token_keys and type(key) is str:
            new_key = key
            new = item if item is None or cls is int or cls is float else REDACTED
        else:
            new_key, sensitive = _key(key, item, ctx)
            if sensitive:
                new = REDACTED
            elif type(key) is str and (cls is str or cls is int or cls is float) \
                    and (marker := named_value_marker(key, item)) is not None:
                # the value of a credential name, judged as the text rule judges it (a part hidden: the rest
                # is a string like any, cut to the cap)
                new = marker if whole_marker(marker) else _text(marker, ctx)
            elif type(key) is str and (cls is str or cls is int or cls is float) and value_key(key) \
                    and (named := sibling_value(value, key, item)) is not item:
                new = _text(str(named), ctx)  # named by a sibling: what the pair's text hides
            elif cls is str:
                new = _text(item, ctx)
            elif cls in scalars:
                new = item
            else:
                if not entered:
                    ctx.ids.add(id(value))
                    entered = True
                new = _walk(item, child, ctx)
        if out is None:
            if new_key is key and new is item:
                continue
            out = {}
            for k, v in value.items():  # the unchanged entries before this one
                if k is key:
                    break
                out[k] = v
        out[new_key] = new
    if entered:
        ctx.ids.discard(id(value))
    return value if out is None else out


def _sequence(value: list[Any] | tuple[Any, ...], depth: int, ctx: _Walk) -> list[Any] | tuple[Any, ...]:
    child = depth + 1
    entered = changed = False
    clean = known_clean
    scalars = _SCALARS
    items = []
    # a command line (its first item a string): what its text hides from an item's neighbours
    read = argv_context(value) if len(value) > 1 and type(value[0]) is str else None
    if read is not None:
        changed = True
    for item in value if read is None else read:
        cls = _PLAIN.get(type(item), type(item))
        if cls is str:
            new = item if item in clean or len(item) < SCRUB_MIN_CHARS or item in made_clean else ctx.scrub(item)
        elif cls in scalars:
            new = item
        else:
            if not entered:
                ctx.ids.add(id(value))
                entered = True
            if cls is dict and child < MAX_DEPTH and id(item) not in ctx.ids:  # as in _mapping
                # A message or tool schema of the engine's request field: already the sanitizer's output,
                # scrubbed where it entered (the same scrubber and key rule, so this walk would keep it as it is)
                new = item if ctx.parts and is_sanitized_part(item) else _mapping(item, child, ctx)
            else:
                new = _walk(item, child, ctx)
        if new is not item:
            changed = True
        items.append(new)
    if entered:
        ctx.ids.discard(id(value))
    if not changed:
        return value
    return items if type(value) is list else tuple(items)


def redact_value(value: Any, max_chars: int | None = None) -> Any:
    """``value`` with every credential the scrubber recognises replaced by ``<redacted>`` (see the module docstring).

    With ``max_chars``, a string longer than that (after scrubbing) is cut to it with the
    ``...[truncated N chars]`` marker. Returns ``value`` itself when nothing changed. Never raises for
    JSON-shaped input; a string whose scrubbing fails becomes ``<redaction failed>``, never the raw text.
    """
    return _walk(value, 0, _Walk(max_chars))


def _field(value: Any, ctx: _Walk) -> Any:
    """One of an event's three fields (a dict, ``None``, or whatever a sanitizer put there)."""
    if type(value) is dict:
        return _mapping(value, 0, ctx) if value else value
    return value if value is None else _walk(value, 0, ctx)


def _kept(value: dict[Any, Any], cap: int | None, inner: bool = False) -> bool:
    """Whether the walk would give ``value`` back as it is with nothing to scan, told from its keys and values alone:
    every key one the walk has met and found plain (``_plain_keys``), every value a string known clean (what
    :func:`_text` keeps), a scalar, or a dict that is a recorded sanitized value (:func:`is_marked`) or holds only
    such keys, strings and scalars; or a key under the plural-token rule (``_token_keys``) whose value is a count
    (``None``, an ``int`` or a ``float``, exactly: what the rule keeps). These are exactly the entries the walk's
    hot path keeps unchanged without a scan or a cut (see :func:`_mapping`), so ``True`` is the walk's own answer;
    anything else (a key not met yet, a string to scan, a list, another type, a deeper dict, a cycle) answers
    ``False`` and the caller walks. ``inner``: ``value`` is such a dict of a field (no dict may sit in it).

    Cheaper than the walk on the flat fields most events have (metadata, a tool's arguments, a profile): no walk
    state, no copy bookkeeping, no cycle set."""
    plain = _plain_keys
    tokens = _token_keys
    clean = known_clean
    made = made_clean
    scalars = _SCALARS
    for key, item in value.items():
        cls = type(item)
        if key not in plain:
            if key in tokens and type(key) is str and (item is None or cls is int or cls is float):
                continue  # the plural-token rule keeps a count
            return False
        if cls is str:
            if item in clean or len(item) < SCRUB_MIN_CHARS or item in made:
                continue
            return False
        if cls in scalars:
            continue
        if cls is not dict or inner:  # one level of dicts only
            return False
        if _kept(item, cap, True):
            continue  # every entry of the inner dict kept
        if item is value or not is_marked(item, cap):  # asked only then: a tool's arguments are never recorded
            return False  # (a dict holding itself is a cycle, which the walk marks)
    return True


def _printed(data: dict[str, Any], start: ScopeEvent) -> dict[str, Any]:
    """A tool end's ``data`` with the credential its call printed hidden in its ``result``
    (:func:`~hermes_pipeline.engine.scrub.hide_printed_output`, told by the start's ``arguments``: ``cat
    ~/.vault-token``, ``read_file`` of ``api_key.txt``); ``data`` itself when nothing is."""
    result = data.get("result")
    arguments = start.data.get("arguments") if type(start.data) is dict else None
    if type(result) is not str or type(arguments) is not dict:
        return data
    hidden = hide_printed_output(arguments, result)
    return data if hidden is result else {**data, "result": hidden}


def redact_event(event: ScopeEvent, max_chars: int | None = None, start: ScopeEvent | None = None) -> ScopeEvent:
    """``event`` with its ``name``, ``data``, ``category_profile``, ``metadata`` and ``facts`` redacted; the same
    object when nothing changed.

    With ``max_chars``, every string longer than that is cut to it with the ``...[truncated N chars]``
    marker, and the event's metadata says how many values were cut (``hermes.truncated_values``), so a
    reader such as the trajectory store can tell a complete record from a cut one.

    ``start``: for a scope end, its start as it was published (after this redaction, with the same
    ``max_chars``). An end repeats its start's name and, usually, its ``category_profile``, the very objects;
    where the end's is the published start's object, the start's walk kept it unchanged (it held nothing to
    redact or cut, or it would have been replaced by a copy), so it is kept without a second walk. A tool end's
    ``result`` is also read with its start's ``arguments`` (:func:`_printed`: a credential the call printed).
    """
    data = event.data
    if start is not None and event.category == "tool" and type(data) is dict:
        data = _printed(data, start)
    profile = event.profile
    meta = event.metadata
    name = event.name
    clean = event.clean  # fields the scope kind made of strings known clean (ScopeEvent.clean): kept as they are
    if start is not None:  # walked with the start, which kept them as they are (see the docstring)
        if name is start.name:
            clean |= CLEAN_NAME
        if profile is start.profile:
            clean |= CLEAN_PROFILE
    if clean == CLEAN_ALL and event.facts is None:
        return event  # nothing left to walk
    # A field the walk would give back as it is, told without a walk (_kept), needs no walk state either: most
    # events need none at all
    ctx: _Walk | None = None
    if clean & CLEAN_DATA or data is None or (type(data) is dict and _kept(data, max_chars)):
        new_data = data
    else:  # _field() inlined for the usual field shapes (a non-empty dict, or None)
        ctx = _Walk(max_chars)
        new_data = _mapping(data, 0, ctx) if type(data) is dict and data else _field(data, ctx)
    if clean & CLEAN_PROFILE or profile is None or (type(profile) is dict and _kept(profile, max_chars)):
        new_profile = profile
    else:
        if ctx is None:
            ctx = _Walk(max_chars)
        new_profile = _mapping(profile, 0, ctx) if type(profile) is dict and profile else _field(profile, ctx)
    if clean & CLEAN_META or (type(meta) is dict and _kept(meta, max_chars)):
        new_meta = meta
    else:
        if ctx is None:
            ctx = _Walk(max_chars)
        new_meta = _mapping(meta, 0, ctx) if type(meta) is dict and meta else _field(meta, ctx)
    # The scope name is the tool name on tool scopes (and a mark's name on marks): a host-chosen string that
    # every exporter writes as is (the ATOF ``name``, the OTLP span name), so it is scrubbed like any value.
    if type(name) is not str:
        new_name = REDACTION_FAILED
    elif clean & CLEAN_NAME or name in known_clean or len(name) < SCRUB_MIN_CHARS or name in made_clean:
        new_name = name  # what _text() keeps
    else:
        if ctx is None:
            ctx = _Walk(max_chars)
        new_name = _text(name, ctx)
    if ctx is not None and ctx.cut:
        new_meta = {**(new_meta if isinstance(new_meta, dict) else {}), TRUNCATED_VALUES_KEY: ctx.cut}
    # The first-party facts (never rendered) pass the same scrubber, in a walk of their own: a value cut there
    # never counts in the rendered ``hermes.truncated_values``. Most events have none.
    facts = event.facts
    new_facts = facts if facts is None or (type(facts) is dict and _kept(facts, max_chars)) \
        else _walk(facts, 0, _Walk(max_chars))
    if new_data is event.data and new_profile is profile and new_meta is meta and new_name is name \
            and new_facts is facts:
        return event
    return ScopeEvent(event.kind, event.phase, event.uuid, event.parent_uuid, event.timestamp_us, new_name,
                      event.category, event.attributes, new_profile, new_data, new_meta, event.session_uuid,
                      event.root_uuid, facts=new_facts)

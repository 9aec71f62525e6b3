"""The sanitized ``request`` field, converting only what is new since the previous call (issue #29).

A chat-completions request repeats most of itself at every provider call of a session: the tool schemas
(55 KB for Hermes 0.19), the system prompt and the history already sent. :func:`build_request_field`
gives exactly what :func:`~hermes_pipeline.engine.sanitize.build_request_field` gives (spec 01 §8.2.2,
§8.3; OBS-61), but converts each *part* of the body once per distinct content: every item of a list-valued
body entry (each message, each tool schema) and every other body value. A part's conversion under one
pass's caps does not depend on its siblings, so the pass result is the parts put together, and so is its
JSON encoding (the encodings of the parts joined with the encoder's own separators): the two-pass choice
and the truncation envelope are decided on the exact assembled length, as §8.2.2 says.

Why the reuse is exact (content, never identity). A part is looked up by ``orjson.dumps(part)`` with
subclasses, dataclasses and datetimes refused, so the key fixes the JSON type at every position (``true`` /
``1`` / ``1.0`` differ), every key as an exact ``str`` and every mapping's order. Two things orjson renders
alike that the sanitizer does not are ruled out by comparing the part with ``orjson.loads(key)`` (``==``,
in C): a non-finite float (rendered ``null``; ``NaN`` equals nothing) and an ``Enum`` or ``UUID`` member
(rendered as its value; equal only to itself); a tuple (rendered as a list) fails it too and is converted
afresh. The cached conversion is the conversion of ``orjson.loads(key)`` itself, so it is a function of the
key alone: a list or dict mutated since an earlier call has another key (or fails the comparison) and is
converted again. What cannot be keyed (a provider object, a cyclic list) is converted each time.

Anything outside the composition's scope takes the plain sanitizer: a body with more entries than a pass
keeps, two body keys that render alike, a part whose conversion alone passes the pass budget in pass 2, two
keys of one mapping inside a part that render alike (``1`` and ``"1"``: the plain sanitizer's budget then
counts the replaced value and may abandon a pass whose result fits, or show it in a preview), a part that does
not encode.

Bounded: the table holds at most :data:`BUDGET_BYTES` bytes of keys (emptied when full, as ``scrub_once``
does) and is emptied when the redaction key changes (cached markers would be stale); a part holding the
``<redaction failed>`` marker (a scrub failure may be transient) is never kept. Thread-safe: lookups are
single dict operations; insertions and the emptying hold :data:`_lock`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any, Final

import orjson

from . import scrub as _scrub
from .sanitize import (
    PASS1_MAX_ITEMS,
    PASS1_MAX_STR,
    PASS2_MAX_ITEMS,
    PASS2_MAX_STR,
    TRUNCATED_ITEMS_KEY,
    _BudgetExceeded,
    _convert,
    _Ctx,
    _key_entry,
    _KEY_NAMED,
    _KEY_PLURAL_TOKENS,
    _KEY_SENSITIVE,
    _KEY_VALUE,
    _REQUEST_DROPPED_KEYS,
    build_request_field as _fresh_request_field,
    payload_max_chars,
    token_value_redacted,
)
from .scrub import REDACTED, REDACTION_FAILED, hide_printed_in_request
from .walk_context import argv_context

__all__ = ["BUDGET_BYTES", "build_request_field", "cache_stats", "is_sanitized_part"]

BUDGET_BYTES: Final = 4_000_000
"""Bytes of part keys the table may hold before it is emptied (its entries hold about 4x that: ~16 MB at most)."""
_KEY_OPTIONS: Final = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
_PASSES: Final = ((PASS1_MAX_STR, PASS1_MAX_ITEMS), (PASS2_MAX_STR, PASS2_MAX_ITEMS))
_REDACTED_JSON: Final = json.dumps(REDACTED)
_encode: Final = json.JSONEncoder(ensure_ascii=False).encode
"""``json.dumps(value, ensure_ascii=False)`` without making an encoder at every call (stateless, thread-safe)."""


class _Fallback(Exception):
    """The composition does not apply: the plain sanitizer decides."""


class _Part:
    """One converted part: its result under one pass's caps, its encoding, and whether a key collided."""

    __slots__ = ("value", "encoded", "collided", "complete", "reference")

    def __init__(self, value: object, encoded: str, collided: bool, complete: bool) -> None:
        self.value, self.encoded, self.collided, self.complete = value, encoded, collided, complete
        self.reference: object = None
        """``orjson.loads`` of the part's key (set when the part is kept): what a later part must equal."""


_table: Final[dict[tuple[int, int, bytes], _Part]] = {}
_sanitized: Final[dict[int, object]] = {}
"""``id`` → value of every container part in the table: already the sanitizer's output (see :func:`is_sanitized_part`)."""
"""(pass, depth, part key) -> the part converted under that pass's caps at that depth."""
_state: Final[dict[str, Any]] = {"key": None, "bytes": 0, "hits": 0, "misses": 0}
_lock: Final = threading.Lock()


def is_sanitized_part(value: object) -> bool:
    """Whether ``value`` is a converted part held by the table (a message or tool schema of a request field), the
    very object: the sanitizer's output, each string scrubbed once where it entered and each string at most
    ``PASS1_MAX_STR`` long, never changed afterwards (parts are shared by every request that holds them), so the
    export's credential walk need not walk it again (issue #29 item 5). Thread-safe: one dict lookup."""
    return _sanitized.get(id(value)) is value


def cache_stats() -> dict[str, int]:
    """Hits, misses, entries and key bytes of the part table (for tests and benches)."""
    return {"hits": _state["hits"], "misses": _state["misses"], "entries": len(_table), "bytes": _state["bytes"]}


def _convert_part(value: object, depth: int, pass_index: int, limit: int) -> _Part:
    max_str, max_items = _PASSES[pass_index]
    ctx = _Ctx(max_str, max_items, limit, {})
    try:
        out = _convert(value, depth, ctx)
    except _BudgetExceeded:
        return _Part(None, "", ctx.collided, False)
    try:
        encoded = _encode(out)
    except Exception:  # the conversion's output is JSON-compatible; never expected
        raise _Fallback from None
    return _Part(out, encoded, ctx.collided, True)


def _part(value: object, depth: int, pass_index: int, limit: int) -> _Part:
    """``value`` converted at ``depth`` under pass ``pass_index``'s caps, from the table when its content was seen."""
    cls = type(value)
    if cls is not dict and cls is not list and not (cls is str and len(value) >= 256):  # type: ignore[arg-type]
        return _convert_part(value, depth, pass_index, limit)  # scalars and the rest: cheaper than a lookup
    try:
        key = orjson.dumps(value, option=_KEY_OPTIONS)
    except Exception:  # not keyable (a provider object, a non-str key, a cycle ...): converted each time
        return _convert_part(value, depth, pass_index, limit)
    slot = (pass_index, depth, key)
    part = _table.get(slot)
    if part is not None:
        try:
            same = value == part.reference
        except Exception:
            same = False
        if same:
            _state["hits"] += 1
            return part
        return _convert_part(value, depth, pass_index, limit)
    reference = orjson.loads(key)
    try:
        same = value == reference
    except Exception:
        same = False
    if not same:
        return _convert_part(value, depth, pass_index, limit)
    _state["misses"] += 1
    part = _convert_part(reference, depth, pass_index, limit)
    if not part.complete or REDACTION_FAILED in part.encoded:  # completeness depends on the limit; a failure may pass
        return part
    part.reference = reference
    with _lock:
        if _state["key"] is not _scrub._redaction_key:
            _table.clear()
            _sanitized.clear()
            _state["key"], _state["bytes"] = _scrub._redaction_key, 0
        size = int(_state["bytes"]) + len(key)
        if size > BUDGET_BYTES:
            _table.clear()
            _sanitized.clear()
            size = len(key)
        _state["bytes"] = size
        _table[slot] = part
        if type(part.value) is dict or type(part.value) is list:
            _sanitized[id(part.value)] = part.value
    return part


class _Builder:
    """One pass's encoding, put together piece by piece; stops once it passes the limit (a prefix is then kept)."""

    __slots__ = ("pass_index", "limit", "length", "collided", "encoded")

    def __init__(self, pass_index: int, limit: int) -> None:
        self.pass_index, self.limit, self.length, self.collided = pass_index, limit, 0, False
        self.encoded: list[str] = []

    def add(self, text: str) -> None:
        """Append ``text`` to the encoding; :class:`_Exceeded` once the encoding is longer than the limit."""
        self.encoded.append(text)
        self.length += len(text)
        if self.length > self.limit:
            raise _Exceeded

    def part(self, value: object, depth: int) -> object:
        """``value`` converted at ``depth`` under this pass's caps, its encoding appended."""
        part = _part(value, depth, self.pass_index, self.limit)
        self.collided = self.collided or part.collided
        if not part.complete:  # longer than the limit alone: pass 1 cannot be returned; pass 2 needs its partial form
            raise _Exceeded if self.pass_index == 0 else _Fallback
        self.add(part.encoded)
        return part.value


class _Exceeded(Exception):
    """The pass's encoding is known to pass the limit; what was put together so far is a prefix of it."""


def _assemble(body: Mapping[str, Any], b: _Builder) -> dict[str, Any]:
    """The request ``{"method": "POST", "body": body}`` converted under ``b``'s pass, its encoding in ``b``.

    Raises :class:`_Exceeded` once the encoding passes the limit (``b.encoded`` then holds a prefix of it).
    """
    cap = _PASSES[b.pass_index][1]
    if len(body) > cap:
        raise _Fallback
    out: dict[str, Any] = {}
    b.add('{"method": "POST", "body": {')
    for index, (key, value) in enumerate(body.items()):
        key_text, key_cls = _key_entry(key)
        if key_text in out:
            raise _Fallback
        b.add(f"{', ' if index else ''}{_encode(key_text)}: ")
        value_cls = type(value)
        if key_cls == _KEY_SENSITIVE or (key_cls == _KEY_PLURAL_TOKENS and token_value_redacted(value, value_cls)):
            out[key_text] = REDACTED
            b.add(_REDACTED_JSON)
            continue
        if key_cls == _KEY_NAMED or key_cls == _KEY_VALUE:
            raise _Fallback  # a value judged by its name or its siblings: the plain sanitizer's rule (rare in a body)
        if value_cls is not list:
            out[key_text] = b.part(value, 2)
            continue
        if len(value) > 1 and type(value[0]) is str and argv_context(value) is not None:
            raise _Fallback  # a command line whose text hides a credential from an item's neighbours
        items: list[Any] = []  # rule 6 for a list entry: its first *cap* items (at depth 3), then the overflow item
        out[key_text] = items
        b.add("[")
        for i, item in enumerate(value[:cap]):
            if i:
                b.add(", ")
            items.append(b.part(item, 3))
        if len(value) > cap:
            marker = {TRUNCATED_ITEMS_KEY: len(value) - cap}
            items.append(marker)
            b.add(f"{', ' if cap else ''}{json.dumps(marker)}")
        b.add("]")
    b.add("}}")
    return {"method": "POST", "body": out}


def build_request_field(provider_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The sanitized ``request`` field (§8.3, OBS-61), equal to the plain sanitizer's, parts reused by content.

    ``timeout`` and ``http_client`` are left out of the body. Each pass of §8.2.2 is put together from the
    parts' conversions; see the module notes for when the plain sanitizer is used instead.
    """
    if _state["key"] is not _scrub._redaction_key:
        with _lock:
            _table.clear()
            _sanitized.clear()
            _state["key"], _state["bytes"] = _scrub._redaction_key, 0
    if type(provider_kwargs) is dict:  # a tool result that is a credential its call printed (cat ~/.vault-token)
        provider_kwargs = hide_printed_in_request(provider_kwargs)
    body = {k: v for k, v in provider_kwargs.items() if k not in _REQUEST_DROPPED_KEYS}
    limit = payload_max_chars()
    try:
        for pass_index in (0, 1):
            b = _Builder(pass_index, limit)
            try:
                result: dict[str, Any] | None = _assemble(body, b)
            except _Exceeded:
                result = None
            if b.collided:  # the plain sanitizer's budget may then abandon a pass whose result fits: it decides
                raise _Fallback
            if result is not None:
                return result
        return {"_truncated": True, "original_type": "dict", "preview": "".join(b.encoded)[:limit]}
    except (_Fallback, RecursionError):
        return _fresh_request_field(provider_kwargs)

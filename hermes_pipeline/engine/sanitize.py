"""The observer-payload sanitizer (spec 01 §8.2.1–§8.2.3, §8.3).

(Over 400 lines on purpose: the conversion rules, both passes and the envelope are one
algorithm whose steps reference each other; splitting it would scatter the spec's §8.2.)

:func:`sanitize` turns an arbitrary value (provider kwargs, provider response objects, ...)
into a bounded, JSON-compatible, value-scrubbed structure (OBS-51, OBS-55, OBS-56, OBS-61).
:func:`jsonable` is the conversion of §8.2.3 with explicit caps; :func:`build_request_field`
and :func:`build_error_field` build the sanitized ``request`` and ``error`` fields (§8.3).

Additions beyond the spec text (all keep the output JSON-compatible and scrubbed):

* Non-finite floats become the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``, so the
  output also encodes with ``json.dumps(..., allow_nan=False)``.
* Integers too large for ``int``→``str`` conversion (``sys.get_int_max_str_digits``) become
  ``"<int N bits>"``. Subclasses of ``str``/``int``/``float`` (``StrEnum``, ``IntEnum`` ...)
  are emitted as the plain base type.
* A value no rule can render (``str()`` raised in rule 7.5, a mapping or sequence whose
  iteration raised) becomes ``"<unserializable TypeName>"``. A mapping key whose ``str()``
  raised becomes ``"<redaction failed>"`` and its value is redacted.
* Type names in markers and in the envelope's ``original_type`` are value-scrubbed too.
* A value is judged with the context the text rules read (:mod:`.walk_context`): under a credential name it
  is its credential's marker, a list that is a command line loses what its text hides from an item's neighbours
  (``["sshpass", "-p", "<marker>"]``), and a pair's value named by a sibling (``{"name": "API_KEY", "value": ...}``)
  loses what the pair's text hides.

Performance notes. Most payloads are trees of plain JSON types well within every cap; for them
pass 1 is a straight copy with scrubbed strings (:func:`_plain_copy`), and its encoding is only
computed when a cheap upper bound of its length passes ``L``. Anything else, a key that scrubbing
changes for instance, takes the general conversion below, which gives the same result for plain
trees (a property test holds the two together). The general conversion keeps a lower bound on the number of characters the
encoding of the converted output will have. Once that bound exceeds ``L`` the pass is
abandoned: pass 1 could not be returned anyway, and for pass 2 the partial structure built so
far has the same first ``L`` encoded characters as the full one, so the envelope is the one
§8.2.2 prescribes. This keeps cyclic or hugely fanned-out inputs (``x = []; x += [x] * 200``)
bounded in time and memory. The single exception: when two keys of one mapping render to the
same text (after ``str()`` and scrubbing) and pass 2 is abandoned between them, the preview can
show the earlier value where the full conversion would show the later one. Scrubbed long
strings are cached between the two passes; key scrubbing and key classification are cached
per key.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
from collections.abc import Mapping
from functools import lru_cache
from itertools import islice
from types import SimpleNamespace
from typing import Any, Final, TypeAlias

import orjson

from .scrub import (
    MARKER_RE,
    REDACTED,
    REDACTION_FAILED,
    CLEAN_MAX_CHARS as _CLEAN_MAX_CHARS,
    SCRUB_MIN_CHARS as _SCRUB_MIN_CHARS,
    is_sensitive_key,
    known_clean,
    safe_scrub,
    scrub_message,
    truncate,
)
from .named_values import named_value_marker, credential_key, whole_marker
from .scrub_once import scrub_once
from .walk_context import argv_context, sibling_value, value_key

__all__ = [
    "BYTES_MARKER",
    "DEFAULT_PAYLOAD_MAX_CHARS",
    "DEPTH_MARKER",
    "MAX_DEPTH",
    "MIN_PAYLOAD_MAX_CHARS",
    "PASS1_MAX_ITEMS",
    "PASS1_MAX_STR",
    "PASS2_MAX_ITEMS",
    "PASS2_MAX_STR",
    "PAYLOAD_MAX_CHARS_ENV",
    "SERIALIZATION_FAILED",
    "TRUNCATED_ITEMS_KEY",
    "JSONValue",
    "build_error_field",
    "build_request_field",
    "jsonable",
    "payload_max_chars",
    "sanitize",
]

JSONValue: TypeAlias = "dict[str, JSONValue] | list[JSONValue] | str | int | float | bool | None"

PAYLOAD_MAX_CHARS_ENV: Final = "HERMES_PLUGIN_PAYLOAD_MAX_CHARS"
DEFAULT_PAYLOAD_MAX_CHARS: Final = 50_000
MIN_PAYLOAD_MAX_CHARS: Final = 1_000
MAX_DEPTH: Final = 8
PASS1_MAX_STR: Final = 8_000
PASS1_MAX_ITEMS: Final = 200
PASS2_MAX_STR: Final = 1_000
PASS2_MAX_ITEMS: Final = 50
DEPTH_MARKER: Final = "<{type_name} depth limit>"
BYTES_MARKER: Final = "<{n} bytes>"
TRUNCATED_ITEMS_KEY: Final = "_truncated_items"
SERIALIZATION_FAILED: Final = "<serialization failed>"

_REQUEST_DROPPED_KEYS: Final = frozenset({"timeout", "http_client"})
_MAX_INT_BITS: Final = 12_000
"""Safely below the default ``sys.get_int_max_str_digits()`` of 4,300 digits (~14,284 bits)."""
_CACHE_MIN_CHARS: Final = 256
"""Strings at least this long have their scrubbed text cached between the two passes."""

_KEY_PLAIN: Final = 0
_KEY_SENSITIVE: Final = 1
_KEY_PLURAL_TOKENS: Final = 2
_KEY_NAMED: Final = 3
"""A credential name outside §8.2.4 (strong or weak): its string or number value is judged by :mod:`.named_values`."""
_KEY_VALUE: Final = 4
"""The key of a name/value pair's value (``value``, ``Value``, ``ParameterValue``...): its value is read with the
sibling that names it (:func:`~.walk_context.sibling_value`)."""


def token_value_redacted(value: object, cls: type) -> bool:
    """The plural-token rule (§8.2.4) applied to what the sanitizer renders: a value under a ``...tokens`` key is
    kept only when it is ``None``, or an ``int`` or ``float`` that stays a number once rendered. A non-finite
    float (rendered ``"Infinity"``, ``"NaN"``) or an int too long to print (``"<int N bits>"``) would come out as a
    string under that key, which the credential walk then redacts; redacting it here keeps the sanitizer's output
    what the walk would make of it (the walk keeps it as it is, OBS-53, FMT-33a)."""
    if value is None:
        return False
    if cls is int:
        bits: int = value.bit_length()  # type: ignore[attr-defined]  # an exact int (cls is int)
        return bits > _MAX_INT_BITS
    if cls is float:
        return not math.isfinite(value)  # type: ignore[arg-type]
    return True


_ENVIRON: Final = os.environ
_ENVIRON_DATA: Final[Any] = getattr(os.environ, "_data", None)
"""``os.environ``'s own table (encoded keys and values): ``os.environ.get`` reads it through three Python-level
calls (about 1 us); :func:`payload_max_chars` reads it directly, the same entry, while ``os.environ`` is still
that object (a test may replace the whole mapping: then the mapping in place is read)."""
_ENV_KEY: Final[Any] = os.environ.encodekey(PAYLOAD_MAX_CHARS_ENV) if _ENVIRON_DATA is not None else None
_LIMITS: Final[dict[Any, int]] = {}
"""Raw variable value -> ``L`` (a handful of distinct values in a process; emptied past 64)."""


def _parse_limit(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        return DEFAULT_PAYLOAD_MAX_CHARS
    return max(value, MIN_PAYLOAD_MAX_CHARS)


def payload_max_chars() -> int:
    """Return ``L`` from ``HERMES_PLUGIN_PAYLOAD_MAX_CHARS`` (§8.2.1), read on every call (OBS-54).

    Unset, or not parseable by ``int()``: 50,000. Values below 1,000 are raised to 1,000. A change of the
    variable takes effect at the next call: each call reads the environment's current entry (the parse of a
    value already seen is remembered, keyed by the raw value itself).
    """
    if os.environ is _ENVIRON and _ENVIRON_DATA is not None:
        encoded = _ENVIRON_DATA.get(_ENV_KEY)
        if encoded is None:
            return DEFAULT_PAYLOAD_MAX_CHARS
        limit = _LIMITS.get(encoded)
        if limit is None:
            if len(_LIMITS) >= 64:
                _LIMITS.clear()
            limit = _LIMITS[encoded] = _parse_limit(_ENVIRON.decodevalue(encoded))
        return limit
    raw = os.environ.get(PAYLOAD_MAX_CHARS_ENV)
    return DEFAULT_PAYLOAD_MAX_CHARS if raw is None else _parse_limit(raw)


# ---------------------------------------------------------------------------------------------
# Conversion (§8.2.3)
# ---------------------------------------------------------------------------------------------


class _BudgetExceeded(BaseException):
    """The encoding of the output is known to exceed the pass budget.

    Derives from ``BaseException`` so ``except Exception`` never swallows it. While it
    propagates, each enclosing container links the partial child into its own partial output
    and replaces ``partial`` with itself.
    """

    def __init__(self, partial: object) -> None:
        super().__init__()
        self.partial = partial


_NOTHING: Final = object()
_FAILED: Final = object()


class _Ctx:
    """Per-pass conversion state."""

    __slots__ = ("max_str", "max_items", "budget", "cache", "collided")

    def __init__(
        self, max_str: int, max_items: int, budget: int, cache: dict[int, tuple[str, str]] | None
    ) -> None:
        self.max_str = max_str
        self.max_items = max_items
        self.budget = budget
        """Characters the output may still add before the pass is abandoned."""
        self.cache = cache
        self.collided = False
        """Two keys of one mapping rendered to the same text (the one case where a preview of an abandoned
        pass may differ from the full result's prefix; see the module notes)."""


def _charge(ctx: _Ctx, chars: int, out: object) -> None:
    """Account ``chars`` (a lower bound of ``out``'s encoded length) against the budget."""
    ctx.budget -= chars
    if ctx.budget < 0:
        raise _BudgetExceeded(out)


def _type_name(value: object) -> str:
    return safe_scrub(type(value).__name__)


def _marker(text: str, ctx: _Ctx) -> str:
    _charge(ctx, len(text) + 2, text)
    return text


def _unserializable(value: object, ctx: _Ctx) -> str:
    return _marker(f"<unserializable {_type_name(value)}>", ctx)


def _encode(value: object) -> str | None:
    """The spec's encoding (non-ASCII literal, unknown types via ``str()``); ``None`` on failure."""
    try:
        return json.dumps(value, ensure_ascii=False, default=_default)
    except Exception:
        return None


def _default(obj: object) -> str:
    # Unreachable for converter output; scrubs anyway so no path can echo raw text (OBS-55).
    try:
        return safe_scrub(str(obj))
    except Exception:
        return REDACTION_FAILED


@lru_cache(maxsize=8192)
def _str_key_entry(key: str) -> tuple[str, int]:
    """Scrubbed text and sensitivity class of a string key (cached)."""
    if is_sensitive_key(key, None):
        cls = _KEY_SENSITIVE
    elif is_sensitive_key(key, ""):
        cls = _KEY_PLURAL_TOKENS
    elif credential_key(key):
        cls = _KEY_NAMED
    elif value_key(key):
        cls = _KEY_VALUE
    else:
        cls = _KEY_PLAIN
    return safe_scrub(key), cls


def _key_entry(key: object) -> tuple[str, int]:
    """``str(key)``, value-scrubbed, and its sensitivity class (§8.2.3 rule 5, §8.2.4)."""
    if type(key) is str:
        return _str_key_entry(key)
    try:
        return _str_key_entry(str.__str__(str(key)))
    except Exception:
        return REDACTION_FAILED, _KEY_SENSITIVE


def _scrub_cached(text: str, ctx: _Ctx) -> str:
    cache = ctx.cache
    if cache is None or len(text) < _CACHE_MIN_CHARS:
        return scrub_once(text)
    entry = cache.get(id(text))
    # The entry keeps ``text`` alive, so its id cannot be reused by another string meanwhile.
    if entry is not None and entry[0] is text:
        return entry[1]
    scrubbed = scrub_once(text)
    cache[id(text)] = (text, scrubbed)
    return scrubbed


def _convert_str(text: str, ctx: _Ctx) -> str:
    """Rule 3: value-scrub, then truncate with the standard suffix (never inside a redaction marker)."""
    scrubbed = truncate(_scrub_cached(text, ctx), ctx.max_str)
    _charge(ctx, len(scrubbed) + 2, scrubbed)
    return scrubbed


def _simple_leaf(item: object, cls: type, max_str: int) -> object:
    """Rules 2–3 for the common leaf types (exact ``str`` shorter than the cache threshold,
    ``None``, ``bool``, small ``int``); ``_NOTHING`` for anything else.

    Containers call this inline-style to skip the generic dispatch for most leaves.
    """
    if cls is str:
        if len(item) >= _CACHE_MIN_CHARS:  # type: ignore[arg-type]
            return _NOTHING
        text = scrub_once(item)  # type: ignore[arg-type]
        return truncate(text, max_str)
    if item is None or cls is bool:
        return item
    if cls is int and item.bit_length() <= _MAX_INT_BITS:  # type: ignore[attr-defined]
        return item
    return _NOTHING


def _leaf_chars(leaf: object) -> int:
    """Lower bound of the encoded length of a leaf returned by :func:`_simple_leaf`."""
    cls = type(leaf)
    if cls is str:
        return len(leaf) + 2  # type: ignore[arg-type]
    return 1 if cls is int else 4  # "null" / "true" / "false"


def _convert_mapping(value: Mapping[Any, Any], depth: int, ctx: _Ctx) -> JSONValue:
    """Rule 5: mappings, in insertion order, with key scrubbing and the sensitive-key rule."""
    start_budget = ctx.budget
    out: dict[str, JSONValue] = {}
    _charge(ctx, 1, out)
    cap = ctx.max_items
    max_str = ctx.max_str
    child = depth + 1
    leaves = child <= MAX_DEPTH
    key_text = ""
    altered = False  # some key rendered differently from the original key object
    try:
        for index, (key, item) in enumerate(value.items()):
            if index == cap:
                out[TRUNCATED_ITEMS_KEY] = len(value) - cap
                break
            key_text, cls = _str_key_entry(key) if type(key) is str else _key_entry(key)
            if key_text is not key:
                altered = True
            if altered and key_text in out:
                # Two keys render to the same text: the later value replaces the earlier one in
                # place (plain dict assignment). Refund at least what the earlier entry was
                # charged, so the budget stays a lower bound of the encoded length.
                ctx.collided = True
                ctx.budget += len(_encode(out[key_text]) or "") + len(key_text) + 4
            if cls == _KEY_VALUE and type(key) is str:
                item = sibling_value(value, key, item)  # named by a sibling: what the pair's text hides
            item_cls = type(item)
            if cls == _KEY_SENSITIVE or (cls == _KEY_PLURAL_TOKENS and token_value_redacted(item, item_cls)):
                out[key_text] = REDACTED
                continue
            ctx.budget -= len(key_text) + 4
            if cls == _KEY_NAMED:
                marker = named_value_marker(key if type(key) is str else key_text, item)
                if marker is not None and whole_marker(marker):  # the pair's JSON text hides the whole value
                    ctx.budget -= len(marker) + 2
                    if ctx.budget < 0:
                        raise _BudgetExceeded(marker)
                    out[key_text] = marker
                    continue
                if marker is not None:  # a part hidden: the rest is a string like any (scrubbed, cut)
                    item, item_cls = marker, str
            if leaves:
                leaf = _simple_leaf(item, item_cls, max_str)
                if leaf is not _NOTHING:
                    ctx.budget -= _leaf_chars(leaf)
                    if ctx.budget < 0:
                        raise _BudgetExceeded(leaf)
                    out[key_text] = leaf  # type: ignore[assignment]
                    continue
            out[key_text] = _convert(item, child, ctx)
    except _BudgetExceeded as exc:
        if exc.partial is not _NOTHING:
            out[key_text] = exc.partial  # type: ignore[assignment]
        exc.partial = out
        raise
    except Exception:
        ctx.budget = start_budget
        return _unserializable(value, ctx)
    return out


def _convert_sequence(value: Any, depth: int, ctx: _Ctx) -> JSONValue:
    """Rule 6: the first *cap* items, plus ``{"_truncated_items": N}`` if items were dropped."""
    start_budget = ctx.budget
    out: list[JSONValue] = []
    _charge(ctx, 1, out)
    cap = ctx.max_items
    max_str = ctx.max_str
    child = depth + 1
    leaves = child <= MAX_DEPTH
    append = out.append
    try:
        n = len(value)
        if (type(value) is list or type(value) is tuple) and n > 1 and type(value[0]) is str:
            read = argv_context(value)  # a command line: what its text hides from an item's neighbours
            if read is not None:
                value = read
        for item in value if n <= cap else islice(value, cap):
            if leaves:
                leaf = _simple_leaf(item, type(item), max_str)
                if leaf is not _NOTHING:
                    ctx.budget -= _leaf_chars(leaf)
                    if ctx.budget < 0:
                        raise _BudgetExceeded(leaf)
                    append(leaf)  # type: ignore[arg-type]
                    continue
            append(_convert(item, child, ctx))
        if n > cap:
            append({TRUNCATED_ITEMS_KEY: n - cap})
    except _BudgetExceeded as exc:
        if exc.partial is not _NOTHING:
            append(exc.partial)  # type: ignore[arg-type]
        exc.partial = out
        raise
    except Exception:
        ctx.budget = start_budget
        return _unserializable(value, ctx)
    return out


def _model_dump(value: object) -> object:
    """Rule 7.1: ``model_dump`` with the ``TypeError`` fallbacks; ``_FAILED`` if it raised."""
    try:
        dump = value.model_dump  # type: ignore[attr-defined]
    except Exception:
        return _FAILED
    for kwargs in ({"mode": "json", "warnings": False}, {"mode": "json"}, {}):
        try:
            return dump(**kwargs)
        except TypeError:
            continue
        except Exception:
            return _FAILED
    return _FAILED


def _has_attr(value: object, name: str) -> bool:
    try:
        return hasattr(value, name)
    except Exception:
        return False


def _convert_object(value: object, depth: int, ctx: _Ctx) -> JSONValue:
    """Rule 7: provider objects. A step that raises falls through to the next one."""
    child = depth + 1
    result: object = _FAILED
    if _has_attr(value, "model_dump"):
        result = _model_dump(value)
    if result is _FAILED:
        try:
            if dataclasses.is_dataclass(value) and not isinstance(value, type):
                result = dataclasses.asdict(value)
        except Exception:
            pass
    if result is _FAILED and isinstance(value, SimpleNamespace):
        try:
            result = vars(value)
        except Exception:
            pass
    if result is _FAILED and _has_attr(value, "__dict__"):
        try:
            result = {
                k: v
                for k, v in value.__dict__.items()
                if not (isinstance(k, str) and k.startswith("_"))
            }
        except Exception:
            pass
    if result is not _FAILED:
        return _convert(result, child, ctx)
    try:
        text = str(value)
    except Exception:
        return _unserializable(value, ctx)
    if type(text) is not str:
        text = str.__str__(text)
    return _marker(_scrub_cached(text, ctx)[: ctx.max_str], ctx)


def _convert_other(value: object, depth: int, ctx: _Ctx) -> JSONValue:
    """Rules 2–7 for everything except the exact built-in types handled in :func:`_convert`."""
    # Subclasses of the scalar types are emitted as the plain base type.
    if isinstance(value, str):
        return _convert_str(str.__str__(value), ctx)
    if isinstance(value, int):  # bool cannot be subclassed
        return _convert(int.__int__(value), depth, ctx)
    if isinstance(value, float):
        return _convert(float.__float__(value), depth, ctx)
    # Rule 4: binary data.
    if isinstance(value, (bytes, bytearray)):
        return _marker(f"<{len(value)} bytes>", ctx)
    if isinstance(value, memoryview):
        try:
            nbytes = value.nbytes
        except Exception:  # released memoryview
            return _unserializable(value, ctx)
        return _marker(f"<{nbytes} bytes>", ctx)
    # Rule 5: mappings.
    if isinstance(value, Mapping):
        return _convert_mapping(value, depth, ctx)
    # Rule 6: sequences and sets.
    if isinstance(value, (list, tuple, set, frozenset)):
        return _convert_sequence(value, depth, ctx)
    # Rule 7: provider objects.
    return _convert_object(value, depth, ctx)


def _convert(value: object, depth: int, ctx: _Ctx) -> JSONValue:
    """``jsonable(value, depth)`` of §8.2.3 under ``ctx``'s caps; the first matching rule wins."""
    # Rule 1: depth limit.
    if depth > MAX_DEPTH:
        return _marker(f"<{_type_name(value)} depth limit>", ctx)
    cls = type(value)
    # Fast paths for the exact built-in types.
    if cls is str:
        return _convert_str(value, ctx)  # type: ignore[arg-type]
    if cls is dict:
        return _convert_mapping(value, depth, ctx)  # type: ignore[arg-type]
    if cls is list or cls is tuple:
        return _convert_sequence(value, depth, ctx)
    # Rule 2: scalars.
    if value is None or cls is bool:
        _charge(ctx, 4, value)
        return value  # type: ignore[return-value]
    if cls is int:
        if value.bit_length() > _MAX_INT_BITS:  # type: ignore[attr-defined]
            return _marker(f"<int {value.bit_length()} bits>", ctx)  # type: ignore[attr-defined]
        _charge(ctx, 1, value)
        return value  # type: ignore[return-value]
    if cls is float:
        if not math.isfinite(value):  # type: ignore[arg-type]
            positive = value > 0  # type: ignore[operator]
            text = "NaN" if value != value else ("Infinity" if positive else "-Infinity")
            return _marker(text, ctx)
        _charge(ctx, 1, value)
        return value  # type: ignore[return-value]
    try:
        return _convert_other(value, depth, ctx)
    except _BudgetExceeded:
        raise
    except Exception:  # e.g. an isinstance() check on an object whose __class__ raises
        return _unserializable(value, ctx)


def jsonable(value: object, *, max_str: int, max_items: int, depth: int = 0) -> JSONValue:
    """Convert ``value`` to a JSON-compatible, value-scrubbed structure (§8.2.3).

    ``max_str`` and ``max_items`` are the string and collection caps of one pass; ``depth`` is
    the depth of ``value`` (the root has depth 0; values deeper than 8 become
    ``<TypeName depth limit>``). Never raises for objects whose ``model_dump``, ``__dict__``
    or ``__str__`` raise. Unlike :func:`sanitize`, there is no size budget, so a hugely
    fanned-out self-referencing input costs what the spec's rules imply.
    """
    return _convert(value, depth, _Ctx(max_str, max_items, sys.maxsize, None))


# ---------------------------------------------------------------------------------------------
# The two-pass algorithm (§8.2.2)
# ---------------------------------------------------------------------------------------------


def _run_pass(
    value: object, max_str: int, max_items: int, limit: int, cache: dict[int, tuple[str, str]]
) -> tuple[JSONValue, bool]:
    """One conversion pass; returns ``(result, complete)``.

    ``complete`` is false when the pass was abandoned because its encoding is known to exceed
    ``limit`` characters; ``result`` is then the partial structure, whose encoding shares its
    first ``limit`` characters with the full result's.
    """
    ctx = _Ctx(max_str, max_items, limit, cache)
    try:
        return _convert(value, 0, ctx), True
    except _BudgetExceeded as exc:
        return exc.partial, False  # type: ignore[return-value]


class _NotPlain(Exception):
    """The value needs the full algorithm (see :func:`_plain_copy`)."""


_plain_keys: Final[set[str]] = set()
"""Keys seen to be plain (not sensitive, unchanged by scrubbing): one set lookup each next time.

This set and the clean-text check inlined in :func:`_plain_str` repeat what ``_str_key_entry`` and
``scrub_text`` would answer; calling them for every key and string instead made sanitizing a chat
completion about 65% slower (measured side by side)."""
_token_keys: Final[set[str]] = set()
"""Keys seen to fall under the plural-token rule only (``input_tokens``, ...; unchanged by scrubbing): their
value is kept when it is ``None``, an ``int`` or a ``float`` (exactly), and redacted otherwise."""
_PLAIN_KEYS_MAX: Final = 8192


def _plain_str(item: str) -> str:
    """A string of :func:`_plain_copy`: scrubbed; raises :class:`_NotPlain` past the pass-1 cap."""
    n = len(item)
    if n >= _SCRUB_MIN_CHARS and not (n <= _CLEAN_MAX_CHARS and item in known_clean):
        item = scrub_once(item)  # scanned once per distinct text; a failure is the failure marker
        if len(item) > PASS1_MAX_STR:
            raise _NotPlain
    return item


def _plain_scalar(item: Any, cls: type) -> Any:
    """A non-string scalar of :func:`_plain_copy`; raises :class:`_NotPlain` for anything else."""
    if item is None or cls is bool or (cls is int and item.bit_length() <= 63) or (cls is float and item - item == 0.0):
        return item
    raise _NotPlain


def _plain_key(key: Any, item: Any) -> bool:
    """Whether ``key`` is kept as is; ``False`` when its value is redacted; :class:`_NotPlain` otherwise."""
    if type(key) is not str:
        raise _NotPlain
    key_text, key_cls = _str_key_entry(key)
    if key_text != key:
        raise _NotPlain
    if key_cls == _KEY_SENSITIVE:
        return False
    if key_cls == _KEY_NAMED or key_cls == _KEY_VALUE:
        raise _NotPlain  # its value is judged by its name, or by a sibling (the full algorithm; _plain_copy's own)
    if len(key) <= _CLEAN_MAX_CHARS:
        if len(_plain_keys) + len(_token_keys) >= _PLAIN_KEYS_MAX:
            _plain_keys.clear()
            _token_keys.clear()
        (_plain_keys if key_cls == _KEY_PLAIN else _token_keys).add(key)
    return key_cls == _KEY_PLAIN or item is None or type(item) is int or type(item) is float


def _plain_copy(value: Any, depth: int) -> JSONValue:
    """Pass 1 for the common case: a tree of exact JSON types within every cap, copied.

    Exactly the result :func:`_convert` gives under the pass-1 caps, but without the generic
    dispatch and budget accounting. Raises :class:`_NotPlain` (or whatever scrubbing raised) for
    anything the shortcut does not cover: a container whose items would pass the depth limit,
    more items than the cap, a non-``str`` key or a key that scrubbing changes, a string longer
    than the cap after scrubbing, an integer over 63 bits, a non-finite float, or any other type.
    """
    child = depth + 1
    if child > MAX_DEPTH or len(value) > PASS1_MAX_ITEMS:
        raise _NotPlain
    plain_keys = _plain_keys
    clean = known_clean  # a clean text is at most _CLEAN_MAX_CHARS long: kept as is, no call (see _plain_str)
    if type(value) is dict:
        out: dict[str, JSONValue] = {}
        for key, item in value.items():
            if key not in plain_keys:
                if key in _token_keys and type(key) is str:
                    if not (item is None or type(item) is int or type(item) is float):
                        out[key] = REDACTED
                        continue
                elif type(key) is str and value_key(key) and _str_key_entry(key) == (key, _KEY_VALUE):
                    item = sibling_value(value, key, item)  # named by a sibling: what the pair's text hides
                elif not _plain_key(key, item):
                    out[key] = REDACTED
                    continue
            cls = type(item)
            if cls is str:
                out[key] = item if item in clean else _plain_str(item)
            elif cls is dict or cls is list or cls is tuple:
                out[key] = _plain_copy(item, child)
            else:
                out[key] = _plain_scalar(item, cls)
        return out
    items: list[JSONValue] = []
    append = items.append
    # a command line (its first item a string): what its text hides from an item's neighbours
    read = argv_context(value) if len(value) > 1 and type(value[0]) is str else None
    for item in value if read is None else read:
        cls = type(item)
        if cls is str:
            append(item if item in clean else _plain_str(item))
        elif cls is dict or cls is list or cls is tuple:
            append(_plain_copy(item, child))
        else:
            append(_plain_scalar(item, cls))
    return items


def _plain_pass(value: object, limit: int) -> JSONValue | object:
    """Pass 1 through :func:`_plain_copy` when it applies and fits ``limit``; else ``_NOTHING``.

    The fit is first judged from the orjson encoding, which escapes exactly like the spec's
    encoding but has no spaces after separators and may print a float one character shorter:
    the spec's encoding has at most twice its length.
    """
    cls = type(value)
    try:
        if cls is dict or cls is list or cls is tuple:
            out = _plain_copy(value, 0)
        elif cls is str:
            out = _plain_str(value)  # type: ignore[arg-type]
        else:
            out = _plain_scalar(value, cls)
    except Exception:  # _NotPlain, or scrubbing failed: the full algorithm decides
        return _NOTHING
    return out if _fits_plain(out, limit) else _NOTHING


def _fits_plain(out: JSONValue, limit: int) -> bool:
    """Whether the encoding of ``out`` (a :func:`_plain_copy` result) has at most ``limit`` characters (see
    :func:`_plain_pass`)."""
    try:
        if 2 * len(orjson.dumps(out)) <= limit:
            return True
    except (TypeError, ValueError):  # e.g. a lone surrogate: judge by the spec's encoding below
        pass
    encoded = _encode(out)
    return encoded is not None and len(encoded) <= limit


def sanitize(value: object) -> JSONValue:
    """Sanitize one observer payload field (§8.2.2; OBS-51, OBS-54, OBS-55, OBS-61).

    Pass 1 converts with depth 8 / strings 8,000 / collections 200; if its JSON encoding
    (``ensure_ascii=False``) has at most ``L`` characters it is returned. Otherwise pass 2
    converts the original value with strings 1,000 / collections 50; if that fits it is
    returned, else ``{"_truncated": True, "original_type": <type name>, "preview": <first L
    characters of the pass-2 encoding>}``. An encoding failure yields
    ``"<serialization failed>"``. Values are scrubbed on every path; never raises.
    """
    limit = payload_max_chars()
    plain = _plain_pass(value, limit)
    if plain is not _NOTHING:
        return plain  # type: ignore[return-value]
    cache: dict[int, tuple[str, str]] = {}
    first, complete = _run_pass(value, PASS1_MAX_STR, PASS1_MAX_ITEMS, limit, cache)
    if complete:
        encoded = _encode(first)
        if encoded is None:
            return SERIALIZATION_FAILED
        if len(encoded) <= limit:
            return first
    second, complete = _run_pass(value, PASS2_MAX_STR, PASS2_MAX_ITEMS, limit, cache)
    encoded = _encode(second)
    if encoded is None:
        return SERIALIZATION_FAILED
    if complete and len(encoded) <= limit:
        return second
    return {"_truncated": True, "original_type": _type_name(value), "preview": encoded[:limit]}


# ---------------------------------------------------------------------------------------------
# Sanitized field shapes (§8.3)
# ---------------------------------------------------------------------------------------------


def build_request_field(provider_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The sanitized ``request`` field: ``sanitize({"method": "POST", "body": <kwargs>})``.

    ``timeout`` and ``http_client`` are left out of the body (§8.3, OBS-61). The result is the
    sanitized dict or the truncation envelope; if encoding failed, the marker is placed in
    ``body`` (``{"method": "POST", "body": "<serialization failed>"}``) so the field stays a dict.
    """
    body = {k: v for k, v in provider_kwargs.items() if k not in _REQUEST_DROPPED_KEYS}
    result = sanitize({"method": "POST", "body": body})
    if isinstance(result, dict):
        return result
    return {"method": "POST", "body": result}


def build_error_field(
    exc_or_type: str | BaseException | type[BaseException], message: str
) -> dict[str, str]:
    """The sanitized ``error`` field ``{"type": ..., "message": ...}`` (§8.3, OBS-62).

    A string ``exc_or_type`` (class name or synthetic label such as ``"InvalidAPIResponse"``)
    is passed unchanged; an exception instance or class is reduced to its class name.
    ``message`` is value-scrubbed and cut to 8,000 characters with the standard suffix.
    """
    if isinstance(exc_or_type, str):
        type_name = exc_or_type
    elif isinstance(exc_or_type, type):
        type_name = exc_or_type.__name__
    else:
        type_name = type(exc_or_type).__name__
    if not isinstance(message, str):
        try:
            message = str(message)
        except Exception:
            return {"type": type_name, "message": REDACTION_FAILED}
    return {"type": type_name, "message": scrub_message(message)}

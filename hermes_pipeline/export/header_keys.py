"""Credential header names removed from every recorded provider request, at any depth (FMT-28).

A provider attempt's ``request`` (:mod:`~hermes_pipeline.export.scope_kinds.llm_call`) may carry the
HTTP headers the host sent; the keys below never reach a listener, whatever ``redact_credentials`` says.
"""

from __future__ import annotations

import re
from typing import Any, Final

import orjson

HEADER_KEYS: Final = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key",
                                 "anthropic-api-key", "x-goog-api-key"})


def strip_header_keys(value: Any) -> Any:
    """``value`` without the credential header keys of FMT-28 at any depth (same object if none).

    Runs over every recorded request, whose history grows with the conversation, so it first asks
    :func:`_may_hold_header_key` (one encoding in C) and walks only when a header name may be a key.
    The walk descends only dict and list values; a string key seen not to be a header key is one set
    lookup next time.
    """
    if isinstance(value, dict):
        return _strip_mapping(value) if _may_hold_header_key(value) else value
    if isinstance(value, list):
        return _strip_sequence(value) if _may_hold_header_key(value) else value
    return value


_QUOTED_HEADER_KEY: Final = re.compile(
    b'"(?:' + b"|".join(re.escape(key.encode("ascii")) for key in sorted(HEADER_KEYS)) + b')"', re.IGNORECASE)
"""A header name between quotes, in any ASCII case (a bytes pattern folds ASCII case only, as ``bytes.lower``)."""


def _may_hold_header_key(value: Any) -> bool:
    """``False`` only when no key of ``value`` at any depth can be a credential header key.

    A string key ``k`` with ``k.lower()`` a header name is encoded as ``"k"`` (header names need no
    escapes), so an ASCII encoding in which no quoted header name appears in any ASCII case (one search for
    all of them) holds none. Anything orjson refuses (other key or value types, deep nesting) and any non-ASCII
    output (``"\u212a".lower() == "k"``) answers ``True``: the caller walks. A header name that is only a
    string value answers ``True`` too, which costs the walk and nothing else.
    """
    try:
        encoded = orjson.dumps(value)
    except Exception:  # noqa: BLE001 - not plain JSON data: walk it
        return True
    if not encoded.isascii():
        return True
    return _QUOTED_HEADER_KEY.search(encoded) is not None  # one scan for every name


_plain_keys: Final[set[str]] = set()
"""String keys seen not to be credential header keys (bounded by :data:`_PLAIN_KEYS_MAX`)."""
_PLAIN_KEYS_MAX: Final = 4096


def _is_header_key(key: Any) -> bool:
    if type(key) is str:
        if key in _plain_keys:
            return False
        if key.lower() in HEADER_KEYS:
            return True
        if len(_plain_keys) >= _PLAIN_KEYS_MAX:
            _plain_keys.clear()
        _plain_keys.add(key)
        return False
    return isinstance(key, str) and key.lower() in HEADER_KEYS


def _strip_child(item: Any) -> Any:
    cls = type(item)
    if cls is str or item is None or cls is int or cls is float or cls is bool:
        return item
    if isinstance(item, dict):
        return _strip_mapping(item)
    if isinstance(item, list):
        return _strip_sequence(item)
    return item


def _strip_mapping(value: dict[Any, Any]) -> dict[Any, Any]:
    out: dict[Any, Any] | None = None
    for key, item in value.items():
        if _is_header_key(key):
            if out is None:
                out = dict(value.items())
            del out[key]
            continue
        new = _strip_child(item)
        if new is not item:
            if out is None:
                out = dict(value.items())
            out[key] = new
    return value if out is None else out


def _strip_sequence(value: list[Any]) -> list[Any]:
    out: list[Any] | None = None
    for index, item in enumerate(value):
        new = _strip_child(item)
        if new is not item:
            if out is None:
                out = list(value)
            out[index] = new
    return value if out is None else out

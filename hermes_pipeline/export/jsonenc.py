"""JSON encoding of exported documents: orjson first, the standard library when it cannot (FMT-52); and the
parsing of JSON text a model or a tool wrote (:func:`loads_exact`), which must keep every number as written.

Exporters encode every event (ATOF lines) and every trajectory (ATIF documents) on their worker
threads, where the encoder is most of the CPU an event costs; orjson does it about ten times faster
than :mod:`json`. The output is the same JSON text as ``json.dumps(..., ensure_ascii=False)`` with
the same separators, except that floats use the shortest round-trip form (``1e-7``, not ``1e-07``).

Documents that orjson refuses (integers beyond 64 bits, strings with lone surrogates, nesting
deeper than 255) and non-JSON values go the slow way: the standard encoder, with values it does
not know rendered by the sanitizer's ``jsonable`` (scrubbed, bounded). Dataclasses, datetimes and
``str`` subclasses are passed to that fallback too, so every non-JSON value is scrubbed alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring
from typing import Any, Final

import orjson

__all__ = ["canonical", "compact", "compact_line", "indented", "indented_text"]

_PASS: Final = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS
_COMPACT: Final = _PASS | orjson.OPT_NON_STR_KEYS
_INDENTED: Final = _COMPACT | orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
"""With the final newline of a document: appended by orjson, not by copying the whole document once more."""
_CANONICAL: Final = _COMPACT | orjson.OPT_SORT_KEYS
_dumps: Final = orjson.dumps

# orjson encodes about 1.5x faster without OPT_NON_STR_KEYS, which changes nothing for string keys, so
# each encoder tries without it first: a document with another key type raises TypeError and is encoded
# again with the option (then, if need be, by the standard library), so the output is the same.
_STR_KEYS: Final = ~orjson.OPT_NON_STR_KEYS
_LINE: Final = _PASS | orjson.OPT_APPEND_NEWLINE


def _orjson(value: Any, option: int) -> bytes:
    try:
        return _dumps(value, default=_jsonable, option=option & _STR_KEYS)
    except (TypeError, ValueError):
        return _dumps(value, default=_jsonable, option=option)


def _jsonable(value: Any) -> Any:
    from ..engine.readonly import ReadOnlyDict, ReadOnlyList

    cls = type(value)
    if cls is ReadOnlyDict:  # the read-only views observers get of tool arguments: the containers they are
        return dict(value)
    if cls is ReadOnlyList:
        return list(value)
    from ..engine.sanitize import jsonable

    return jsonable(value, max_str=8000, max_items=200)


def compact(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON (``,`` and ``:`` without spaces, non-ASCII kept)."""
    try:
        return _orjson(value, _COMPACT)
    except (TypeError, ValueError):
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_jsonable)
        return text.encode("utf-8", "replace")


def compact_line(value: Any) -> bytes:
    """``compact(value) + b"\\n"`` (a JSON line), the newline appended by orjson without a copy."""
    try:
        return _dumps(value, default=_jsonable, option=_LINE)
    except (TypeError, ValueError):
        return compact(value) + b"\n"


_LONG_DIGITS: Final = re.compile(r"[0-9]{19}")
"""A run of digits that may be an integer orjson cannot hold (beyond ``[-2**63, 2**64 - 1]``)."""


def loads_exact(text: str) -> Any:
    """``text`` parsed as JSON, every number as the standard parser reads it; ``ValueError`` when it is no JSON.

    orjson parses about five times faster but turns an integer beyond 64 bits into a float (``20000000000000000000``
    becomes ``2e+19``, digits lost) and refuses ``NaN``, ``Infinity`` and lone surrogates: text with a run of 19
    digits, and text orjson refuses, is parsed by :func:`json.loads`, so the result is always the standard one."""
    if _LONG_DIGITS.search(text) is None:
        try:
            return orjson.loads(text)
        except ValueError:  # orjson.JSONDecodeError: NaN, Infinity, lone surrogates, or no JSON at all
            pass
    return json.loads(text)


def canonical(value: Any) -> str:
    """Keys sorted, compact, non-ASCII kept (the digest form of FMT-32), as text."""
    try:
        return _orjson(value, _CANONICAL).decode("utf-8")
    except (TypeError, ValueError):
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_jsonable)


def indented(value: Any) -> bytes:
    """``value`` as UTF-8 JSON indented by two spaces, with a final newline (ATIF documents, FMT-52)."""
    try:
        return _orjson(value, _INDENTED)
    except (TypeError, ValueError):
        return (indented_text(value) + "\n").encode("utf-8", "replace")


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if key is True or key is False or key is None:
        return "true" if key is True else "false" if key is False else "null"
    return _float(key) if isinstance(key, float) else str(key)


def indented_text(value: Any, fallback: Callable[[Any], Any] = _jsonable) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)`` for documents orjson refuses.

    Unlike the standard library it accepts integers of any size and renders values that are not
    JSON types through ``fallback`` (the sanitizer's ``jsonable`` by default).
    """
    out: list[str] = []
    add = out.append

    def write(item: Any, pad: str, depth: int) -> None:
        kind = type(item)
        if kind is str:
            add(encode_basestring(item))
        elif item is None:
            add("null")
        elif item is True:
            add("true")
        elif item is False:
            add("false")
        elif kind is int:
            add(int.__repr__(item))
        elif kind is float:
            add(_float(item))
        elif depth > 400:
            raise ValueError("document nested too deeply")
        elif kind is dict or isinstance(item, Mapping):
            if not item:
                add("{}")
                return
            inner = pad + "  "
            separator = "{\n"
            for key, child in item.items():
                add(separator + inner + encode_basestring(_key(key)) + ": ")
                separator = ",\n"
                write(child, inner, depth + 1)
            add("\n" + pad + "}")
        elif kind is list or kind is tuple or isinstance(item, list | tuple):
            if not item:
                add("[]")
                return
            inner = pad + "  "
            separator = "[\n"
            for child in item:
                add(separator + inner)
                separator = ",\n"
                write(child, inner, depth + 1)
            add("\n" + pad + "]")
        elif isinstance(item, str):
            add(encode_basestring(str(item)))
        elif isinstance(item, int):
            add(int.__repr__(int(item)))
        elif isinstance(item, float):
            add(_float(float(item)))
        else:
            write(fallback(item), pad, depth + 1)

    write(value, "", 0)
    return "".join(out)

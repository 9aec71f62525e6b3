"""A value judged by the name it is kept under: the mapping form of the text rule for named values (OBS-58, OBS-59).

The sensitive-key rule of 01 §8.2.4 hides a whole value (``<redacted>``) under a handful of key shapes. The credential
scrubber goes further in text: under a credential name (``db_pass``, ``encryption_key``, ``signing_key``,
``dsn``, ``pin``, ``otp``: :func:`.scrub_names.credential_name`), ``"db_pass": "..."`` in JSON or ``db_pass=...`` loses
its value as a credential span, unless the value is one no credential name hides (a placeholder, code, a count:
:func:`.scrub_names.kept_value`). A mapping entry is that same pair, so every walk of a mapping (the payload
sanitizer, the export walk, :mod:`.walk_context`) judges it the same way: by the text rules themselves, reading the
pair's JSON text (:func:`pair_pieces`), so the value becomes what scrubbing the mapping's JSON text makes of it, with
the same marker, whatever the text rules come to know.
"""

from __future__ import annotations

import json
from bisect import bisect_left, bisect_right
from functools import lru_cache
from itertools import accumulate
from typing import Final

from .scrub import MARKER_RE, find_spans, redaction_marker, replace_spans
from .scrub_names import credential_name

__all__ = ["Piece", "named_value_marker", "pair_pieces", "credential_key", "whole_marker"]

Piece = tuple[int, int, str]
"""``(start, end, secret)``: a span of a value's text and the secret its marker stands for."""

_CACHED_CHARS: Final = 512
"""Values at most this long have their reading remembered (names and values recur in every payload)."""


@lru_cache(maxsize=8192)
def credential_key(key: str) -> bool:
    """Whether ``key`` is a credential name, strong (``db_pass``) or weak (``key``, ``session``, ``code``,
    ``signature``): its value is judged by :func:`named_value_marker`, as the pair's text is (a weak name hides only
    a value that looks generated, in text and in a mapping alike)."""
    return credential_name(key) != 0


def _read_pair(key: str, value: str | int | float, sibling: tuple[str, str] | None) -> tuple[Piece, ...]:
    head = "{" + (f"{json.dumps(sibling[0])}: {json.dumps(sibling[1])}, " if sibling else "") + f"{json.dumps(key)}: "
    body = json.dumps(value, ensure_ascii=False)
    quoted = 1 if isinstance(value, str) else 0
    start, end = len(head) + quoted, len(head) + len(body) - quoted
    pieces = [(max(s, start) - start, min(e, end) - start, secret)
              for s, e, secret in find_spans(head + body + "}") if e > start and s < end]
    if not pieces or not isinstance(value, str) or body[1:-1] == value:
        return tuple(pieces)
    # the value is written with escapes: a piece covers the characters whose escapes the text's span covers
    ends = list(accumulate(len(json.dumps(ch, ensure_ascii=False)) - 2 for ch in value))
    return tuple((bisect_right(ends, s), bisect_left(ends, e) + 1, secret) for s, e, secret in pieces)


_read_cached: Final = lru_cache(maxsize=4096, typed=True)(_read_pair)


def pair_pieces(key: str, value: str | int | float, sibling: tuple[str, str] | None = None) -> tuple[Piece, ...]:
    """What the text rules read as a credential in ``value`` within the JSON text of the mapping ``{key: value}``
    (with ``sibling``, ``{sibling[0]: sibling[1], key: value}``: a name/value pair), as pieces of the value's text
    (the string itself, ``json.dumps`` of a number) with the text's secrets, so a marker made from a piece is the
    one scrubbing that text gives. Raises what scrubbing raises."""
    if isinstance(value, str) and len(value) > _CACHED_CHARS:
        return _read_pair(key, value, sibling)
    return _read_cached(key, value, sibling)


def named_value_marker(key: str, value: object) -> str | None:
    """What replaces ``value`` kept under the key ``key``: the credential's marker when scrubbing the pair's JSON
    text hides the whole value, the value's text with the hidden part replaced when it hides a part (a
    ``postgres://`` URL's password); ``None`` when the value stays (a key that is no credential name, a value
    no credential name hides, or one that is no string or number). A number hidden so becomes the marker string."""
    cls = type(value)
    if cls is str:
        text: str = value  # type: ignore[assignment]  # exactly a str (cls is str)
    elif cls is int or cls is float:
        text = json.dumps(value)
    else:
        return None
    if not text or not credential_key(key):
        return None
    try:
        pieces = pair_pieces(key, value)  # type: ignore[arg-type]  # a str, int or float (cls above)
    except Exception:
        return redaction_marker(text)  # the text rules failed on it: hidden, never shown
    if not pieces:
        return None
    if len(pieces) == 1 and pieces[0][0] == 0 and pieces[0][1] == len(text):
        return redaction_marker(pieces[0][2])
    return replace_spans(text, list(pieces))


def whole_marker(replacement: str) -> bool:
    """Whether a :func:`named_value_marker` result is a marker alone (the whole value hidden)."""
    return MARKER_RE.fullmatch(replacement) is not None

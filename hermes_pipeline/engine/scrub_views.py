"""Decoded views of a text, each with a map back to the text's own offsets (spec 04 FMT-33a; issue #25).

A credential reaches the scrubber in wrappers: a Hermes tool result is a JSON document whose strings are
JSON-escaped (``"1|API_KEY=abc\\n2|HOST=x"``), a tool argument may hold JSON inside JSON inside JSON, a URL
carries its parameters percent-encoded. The detectors of :mod:`.scrub` read each *view* of the text as plain
text (the text itself, then up to :data:`MAX_JSON_LEVELS` levels of JSON string unescaping, then
percent-decoding), and every span a detector finds in a view is mapped back to the exact span of the original
text that encodes it. Only that span is replaced: every other byte of the original stays as it was, whatever
the wrapper.

A view is built only when the text holds an escape it would decode, and a map is a list of segments (a run of
literal characters maps linearly, an escape maps to its whole source sequence), so a text without escapes
costs one substring test per kind of view.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Final

__all__ = ["MAX_JSON_LEVELS", "View", "views"]

MAX_JSON_LEVELS: Final = 4
"""JSON-escape levels decoded (a value JSON-encoded three times inside a JSON document is four levels)."""

_JSON_ESCAPE: Final = re.compile(r'\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt\'])')
_JSON_SIMPLE: Final = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", '"': '"', "\\": "\\", "/": "/", "'": "'"}
_PERCENT: Final = re.compile(r"%[0-9A-Fa-f]{2}")


class View:
    """A decoded text and the map of its offsets to the offsets of the text it was decoded from."""

    __slots__ = ("text", "_parent", "_dstart", "_sstart", "_literal")

    def __init__(self, text: str, parent: View | None = None, dstart: list[int] | None = None,
                 sstart: list[int] | None = None, literal: list[bool] | None = None) -> None:
        self.text = text
        self._parent = parent
        self._dstart = dstart
        self._sstart = sstart
        self._literal = literal

    def root_offset(self, i: int) -> int:
        """The offset in the original text of this view's offset ``i`` (``0 <= i <= len(self.text)``)."""
        view: View | None = self
        while view is not None and view._dstart is not None:
            assert view._sstart is not None and view._literal is not None
            k = bisect_right(view._dstart, i) - 1
            start = view._dstart[k]
            i = view._sstart[k] + (i - start if view._literal[k] else 0)
            view = view._parent
        return i


def _decode(view: View, pattern: re.Pattern[str], decode: object) -> View | None:
    """The view of ``view.text`` with every match of ``pattern`` replaced by ``decode(match)`` (one character)."""
    text = view.text
    pieces: list[str] = []
    dstart: list[int] = []
    sstart: list[int] = []
    literal: list[bool] = []
    d = 0
    last = 0
    for m in pattern.finditer(text):
        s = m.start()
        if s > last:
            dstart.append(d)
            sstart.append(last)
            literal.append(True)
            pieces.append(text[last:s])
            d += s - last
        dstart.append(d)
        sstart.append(s)
        literal.append(False)
        pieces.append(decode(m))  # type: ignore[operator]
        d += 1
        last = m.end()
    if not dstart:
        return None
    dstart.append(d)
    sstart.append(last)
    literal.append(True)
    if last < len(text):
        pieces.append(text[last:])
    return View("".join(pieces), view, dstart, sstart, literal)


def _json_char(m: re.Match[str]) -> str:
    body = m.group(0)[1:]
    if body[0] == "u":
        return chr(int(body[1:], 16))
    return _JSON_SIMPLE[body]


def _percent_char(m: re.Match[str]) -> str:
    return chr(int(m.group(0)[1:], 16))


def views(text: str) -> list[View]:
    """The text itself, then its JSON-unescaped views (deepest last), then its percent-decoded view."""
    root = View(text)
    out = [root]
    if "\\" in text:
        view = root
        for _ in range(MAX_JSON_LEVELS):
            if "\\" not in view.text:
                break
            decoded = _decode(view, _JSON_ESCAPE, _json_char)
            if decoded is None:
                break
            out.append(decoded)
            view = decoded
    if "%" in text:
        decoded = _decode(root, _PERCENT, _percent_char)
        if decoded is not None:
            out.append(decoded)
            # a percent-encoded value may itself hold JSON escapes (``%5C%22``)
            if "\\" in decoded.text:
                again = _decode(decoded, _JSON_ESCAPE, _json_char)
                if again is not None:
                    out.append(again)
    return out

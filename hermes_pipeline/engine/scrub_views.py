"""Decoded views of a text, each with a map back to the text's own offsets (spec 04 FMT-33a; issue #25).

A credential reaches the scrubber in wrappers: a Hermes tool result is a JSON document whose strings are
JSON-escaped (``"1|API_KEY=abc\\n2|HOST=x"``), a tool argument may hold JSON inside JSON inside JSON, a URL
carries its parameters percent-encoded, a terminal's output is coloured. The detectors of :mod:`.scrub` read
each *view* of the text as plain text (the text itself, then up to :data:`MAX_JSON_LEVELS` levels of JSON string
unescaping, then percent-decoding), and every span a detector finds in a view is mapped back to the exact span
of the original text that encodes it. Only that span is replaced: every other byte of the original stays as it
was, whatever the wrapper.

How each view decodes:

* **JSON** (``\\n``, ``\\"``, ``\\\\``, ``\\uXXXX``; a surrogate pair is one character): escaped backslashes
  right before a quote that is *not* escaped (``…\\\\" ./run``) stay as they are. JSON escapes every quote inside
  a string, so that quote ends a string at this level and the backslashes end the value: decoding them could make
  the quote an escaped one (``\\"``), and a value read in the next view would run over the rest of the text. A
  level is decoded only while it holds an escape that can be decoded this way.
* **Percent** (``%XX``; twice when the text encodes a ``%``, ``%253D``: a URL inside a URL's parameter): the
  bytes of a run of ``%XX`` are decoded as UTF-8, a multi-byte character is one
  character mapped to its whole ``%XX%XX…`` sequence; a byte that does not start a valid UTF-8 sequence stays
  ``%XX`` (never half a character, never a Latin-1 guess such as ``%A0`` read as a space), and so do encoded
  backslashes right before a quote (as in the JSON views, they would make it an escaped quote).
* **HTML** (``&quot;``, ``&#34;``, ``&#x22;``, ``&apos;``, ``&lt;``, ``&gt;``, ``&amp;``, ``&#61;``,
  ``&colon;``, ``&nbsp;``): a page or a listing that shows JSON, a quoted setting or markup escaped
  (``{&quot;password&quot;: &quot;P&quot;}``, ``api_key&#61;P``), read from the deepest JSON view, only when the
  text escapes a quote, a tag, ``=``, ``:`` or a no-break space.
* **Terminal colour codes** (ANSI CSI sequences ``ESC [ … m`` / ``ESC [ K``, charset and cursor escapes) and the
  characters a page shows as nothing (zero-width space, joiners, byte order mark, soft hyphen): every view that
  holds one is read without them, as a terminal shows the text, so ``ESC[32mghp_…`` has no letter
  glued in front of the key and ``ESC[01;31mESC[KAPI_KEYESC[mESC[K=…`` (``grep --color``) is ``API_KEY=…``.
  An escape next to a credential stays outside its span; one inside a value is replaced with it.

A view is built only when the text holds an escape it would decode, and a map is a list of segments (a run of
literal characters maps linearly, an escape maps to its whole source sequence, an ANSI sequence to nothing), so
a text without escapes costs one substring test per kind of view.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from typing import Final

__all__ = ["MAX_JSON_LEVELS", "View", "percent_decoded", "views"]

MAX_JSON_LEVELS: Final = 4
"""JSON-escape levels decoded (a value JSON-encoded three times inside a JSON document is four levels)."""

_JSON_ESCAPE: Final = re.compile(r'\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt\'])')
_JSON_SIMPLE: Final = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", '"': '"', "\\": "\\", "/": "/", "'": "'"}
_LOW_SURROGATE: Final = re.compile(r"\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_PERCENT_RUN: Final = re.compile(r"%[0-9A-Fa-f]{2}(?:%[0-9A-Fa-f]{2})*")  # a literal first: found at C speed
# ANSI escape sequences a terminal consumes without showing anything: CSI (colours ``ESC[…m``, erase ``ESC[K``,
# cursor moves), charset designations (``ESC(B``) and the one-character escapes (``ESC7``, ``ESC=``, ``ESCM``).
# OSC sequences (``ESC]8;;url ESC\\``: hyperlinks) are left alone: their payload is text a credential can be in.
_ANSI: Final = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|[()*+][0-9A-Za-z]|[78=>DEHMNOZc])")
_INVISIBLE: Final = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad")
"""Characters a page or an editor shows as nothing (zero-width space, non-joiner, joiner, word joiner, byte order
mark, soft hyphen): inside a name they hide it (``token\u200b: P``)."""
_SHOWN: Final = re.compile(_ANSI.pattern + "|[" + "".join(_INVISIBLE) + "]")

# A decoded piece: (source start, source end, decoded text of at most one character).
_Piece = tuple[int, int, str]


class View:
    """A decoded text and the map of its offsets to the offsets of the text it was decoded from. ``percent``: the
    view reads the text percent-decoded (it or a view it was decoded from decoded ``%XX``)."""

    __slots__ = ("text", "percent", "json", "_parent", "_dstart", "_sstart", "_literal")

    def __init__(self, text: str, parent: View | None = None, dstart: list[int] | None = None,
                 sstart: list[int] | None = None, literal: list[bool] | None = None) -> None:
        self.text = text
        self.percent: bool = parent is not None and parent.percent
        self.json = False
        """The view is ``parent``'s text JSON-unescaped."""
        self._parent = parent
        self._dstart = dstart
        self._sstart = sstart
        self._literal = literal

    def root_span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that encodes this view's ``text[start:end]`` (``start < end``).

        The start is where the source of the view's character ``start`` begins, the end where the source of its
        character ``end - 1`` ends: an escape that decodes to nothing (a colour code) just before or after the
        span stays outside it."""
        view: View | None = self
        while view is not None and view._dstart is not None:
            start, end = view._parent_span(start, end)
            view = view._parent
        return start, end

    def _parent_span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the parent's text that encodes ``text[start:end]`` (one step of :meth:`root_span`)."""
        dstart, sstart, literal = self._dstart, self._sstart, self._literal
        assert dstart is not None and sstart is not None and literal is not None
        k = bisect_right(dstart, start) - 1
        start = sstart[k] + (start - dstart[k] if literal[k] else 0)
        k = bisect_right(dstart, end - 1) - 1
        end = sstart[k] + (end - dstart[k]) if literal[k] else sstart[k + 1]
        return start, end

    def crosses_strings(self, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` covers, in a text a JSON-unescaped view was decoded from, a quote that ends or
        starts a string of that text (a quote no backslash escapes, beside JSON's punctuation): what a deeper view
        reads there runs over the structure of the level above (``{"password":"\\"","api_key":"\\""}`` unescaped holds
        three quotes in a row, read as a triple-quoted string), which no correct reading holds as one value."""
        view: View = self
        while view._parent is not None and view._dstart is not None:
            parent = view._parent.text
            start, end = view._parent_span(start, end)
            if view.json:
                k = parent.find('"', start, end)
                while k >= 0:
                    if (parent[k - 1:k] in _STRING_EDGE_BEFORE or parent[k + 1:k + 2] in _STRING_EDGE_AFTER) and \
                            not _escaped(parent, k):
                        return True
                    k = parent.find('"', k + 1, end)
            view = view._parent
        return False


_STRING_EDGE_BEFORE: Final = frozenset({",", ":", "{", "["})
_STRING_EDGE_AFTER: Final = frozenset({",", ":", "}", "]"})
"""What stands beside a JSON string's quote on the side away from the string (the string's edge)."""


def _escaped(text: str, at: int) -> bool:
    """Whether the character at ``at`` follows an odd run of backslashes."""
    k = at
    while k > 0 and text[k - 1] == "\\":
        k -= 1
    return (at - k) % 2 == 1


def _build(view: View, pieces: Iterator[_Piece]) -> View | None:
    """The view of ``view.text`` with each piece's source replaced by its decoded text (sorted, not overlapping);
    ``None`` when there is no piece."""
    text = view.text
    parts: list[str] = []
    dstart: list[int] = []
    sstart: list[int] = []
    literal: list[bool] = []
    add_part, add_d, add_s, add_literal = parts.append, dstart.append, sstart.append, literal.append
    d = 0
    last = 0
    for s, e, decoded in pieces:
        if s > last:
            add_d(d)
            add_s(last)
            add_literal(True)
            add_part(text[last:s])
            d += s - last
        add_d(d)
        add_s(s)
        add_literal(False)
        add_part(decoded)
        d += len(decoded)
        last = e
    if not dstart:
        return None
    add_d(d)
    add_s(last)
    add_literal(True)
    if last < len(text):
        add_part(text[last:])
    return View("".join(parts), view, dstart, sstart, literal)


def _json_pieces(text: str) -> Iterator[_Piece]:
    """The JSON escapes of ``text``, a surrogate pair as one character; never the escaped backslashes right before
    a quote that is not escaped (``…\\\\" ./run``): JSON escapes every quote inside a string, so that quote ends
    a string at this level, and decoding the backslashes before it would make it an escaped quote in the view."""
    skip = 0  # the end of the last run of backslashes or surrogate pair read as a whole
    for m in _JSON_ESCAPE.finditer(text):
        s, e = m.span()
        if s < skip:
            continue
        body = text[s + 1]
        if body == "u":
            code = int(text[s + 2:e], 16)
            if 0xD800 <= code < 0xDC00 and _LOW_SURROGATE.match(text, e):
                low = int(text[e + 2:e + 6], 16)
                yield s, e + 6, chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00))
                skip = e + 6
            else:
                yield s, e, chr(code)
        elif body == "\\":
            # a run of backslashes is decoded as a whole (one look at what follows it, however long the run)
            end = e
            while text[end:end + 1] == "\\":
                end += 1
            skip = s + (end - s) // 2 * 2  # an odd run's last backslash escapes the character after it
            if (end - s) % 2 == 0 and text[end:end + 1] == '"':
                continue  # escaped backslashes, then the quote that ends this level's string
            for pair in range(s, skip, 2):
                yield pair, pair + 2, "\\"
        else:
            yield s, e, _JSON_SIMPLE[body]


def _utf8_size(lead: int) -> int:
    """The length of the UTF-8 sequence ``lead`` starts (0: a continuation byte, or one no sequence starts with)."""
    if lead < 0x80:
        return 1
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    return 4 if 0xF0 <= lead <= 0xF4 else 0


def _percent_pieces(text: str) -> Iterator[_Piece]:
    """The ``%XX`` sequences of ``text`` decoded as UTF-8: one character per valid sequence; a byte that does not
    start one is left as it is, and so is a backslash right before a quote or a backslash that is not encoded
    (``…%5C", "x"``, ``…%5C\\", \\"x\\"``): decoded, it would make that quote an escaped one, and a value read in
    this view would run over the rest of the text."""
    for run in _PERCENT_RUN.finditer(text):
        start = run.start()
        data = bytes.fromhex(run.group(0).replace("%", ""))
        i, n = 0, len(data)
        tail = n  # where the backslashes ending the run start, when a quote or a backslash follows it
        if text[run.end():run.end() + 1] in ("\"", "'", "`", "\\"):
            while tail > 0 and data[tail - 1] == 0x5C:
                tail -= 1
        while i < n:
            if i >= tail:
                break  # backslashes that end the run before a quote stay encoded
            size = _utf8_size(data[i])
            if size and i + size <= n:
                try:
                    char = data[i:i + size].decode("utf-8")
                except UnicodeDecodeError:
                    pass
                else:
                    yield start + 3 * i, start + 3 * (i + size), char
                    i += size
                    continue
            i += 1  # not the start of a valid UTF-8 sequence: ``%XX`` stays


def percent_decoded(text: str) -> str:
    """``text`` with its ``%XX`` sequences decoded as the percent view decodes them."""
    decoded = _build(View(text), _percent_pieces(text)) if "%" in text else None
    return text if decoded is None else decoded.text


def _unshown_pieces(text: str) -> Iterator[_Piece]:
    for m in _SHOWN.finditer(text):
        yield m.start(), m.end(), ""


_ENTITY: Final = re.compile(r"&(?:(?P<name>quot|apos|amp|lt|gt|equals|colon|nbsp);|#(?P<dec>[0-9]{1,7});"
                            r"|#[xX](?P<hex>[0-9a-fA-F]{1,6});)")
_ENTITY_NAMES: Final = {"quot": '"', "apos": "'", "amp": "&", "lt": "<", "gt": ">", "equals": "=", "colon": ":",
                        "nbsp": " "}
_ENTITY_HINTS: Final = ("&quot;", "&#34;", "&#x22;", "&#X22;", "&apos;", "&#39;", "&#x27;", "&#X27;", "&lt;",
                        "&#61;", "&#x3d;", "&#x3D;", "&#X3D;", "&equals;", "&#58;", "&#x3a;", "&#x3A;", "&#X3A;",
                        "&colon;", "&nbsp;", "&#160;", "&#xa0;", "&#xA0;")
"""An HTML view is read only when the text escapes a quote, a tag, or what stands between a name and its value:
what makes a name and its value a pair (``{&quot;password&quot;: &quot;P&quot;}``,
``&lt;password&gt;P&lt;/password&gt;``, ``api_key&#61;P``, ``password&colon; P``, ``Password:&nbsp;P``); ``&amp;``
alone changes no credential's reading. A no-break space reads as a blank."""


def _html_pieces(text: str) -> Iterator[_Piece]:
    """The character references of ``text`` that name a character (``&quot;``, ``&#34;``, ``&#x22;``, ``&amp;``,
    ``&lt;``, ``&gt;``, ``&apos;``, ``&equals;``, ``&colon;``, ``&nbsp;`` read as a blank); a number that names none
    (a surrogate, past U+10FFFF, NUL) stays as it is."""
    for m in _ENTITY.finditer(text):
        name, dec, hexa = m.group("name"), m.group("dec"), m.group("hex")
        if name is not None:
            yield m.start(), m.end(), _ENTITY_NAMES[name]
            continue
        code = int(dec) if dec is not None else int(hexa, 16)
        if 0 < code <= 0x10FFFF and not 0xD800 <= code < 0xE000:
            yield m.start(), m.end(), " " if code == 0xA0 else chr(code)


def _shown(view: View) -> View:
    """``view`` read as a terminal or a page shows it: without its ANSI escape sequences and the characters shown as
    nothing (:data:`_INVISIBLE`; ``view`` itself without any)."""
    text = view.text
    if "\x1b" not in text and (text.isascii() or not any(c in text for c in _INVISIBLE)):
        return view
    return _build(view, _unshown_pieces(view.text)) or view


def views(text: str) -> list[View]:
    """The text itself, then its JSON-unescaped views (deepest last), then the deepest of those with its HTML
    character references decoded (when it escapes a quote or a tag), then its percent-decoded view; each read
    without terminal colour codes when it holds any."""
    root = _shown(View(text))
    out = [root]
    if "\\" in text:
        view = root
        for _ in range(MAX_JSON_LEVELS):
            if "\\" not in view.text:
                break
            decoded = _build(view, _json_pieces(view.text))
            if decoded is None:
                break
            decoded.json = True
            view = _shown(decoded)
            out.append(view)
    if "&" in text and any(hint in text for hint in _ENTITY_HINTS):
        html = _build(out[-1], _html_pieces(out[-1].text))  # a page's text, in a tool result's JSON perhaps
        if html is not None:
            out.append(html)
    if "%" in text:
        decoded = _build(root, _percent_pieces(root.text))
        if decoded is not None:
            decoded.percent = True
            decoded = _shown(decoded)
            out.append(decoded)
            # a percent-encoded value may itself hold JSON escapes (``%5C%22``)
            if "\\" in decoded.text:
                again = _build(decoded, _json_pieces(decoded.text))
                if again is not None:
                    again.json = True
                    out.append(_shown(again))
            # a URL inside a URL's parameter, encoded twice (``%253D`` is ``%3D``, which is ``=``)
            if "%25" in text:
                twice = _build(decoded, _percent_pieces(decoded.text))
                if twice is not None:
                    out.append(_shown(twice))
    return out

"""Value scrubbing for observer payloads (spec 01 §8.2.4, §8.2.5, §8.4, §7.9; spec 04 FMT-33a).

(Over 400 lines on purpose: the sensitive-key table of §8.2.4 and the public scrubbing functions are kept
side by side with the marker rule, so what a redaction looks like is stated once.)

This module holds the string-level half of the payload sanitizer:

* :func:`scrub_text` replaces every credential's span in free text by a marker (OBS-57, OBS-58, OBS-59),
  and changes nothing else;
* :func:`find_spans` says where the credentials are (in plain text, JSON-escaped text of any level and
  percent-encoded text: :mod:`.scrub_views`), found by format (:mod:`.scrub_tokens`) or by what stands in
  front of them (:mod:`.scrub_shapes`, names judged by :mod:`.scrub_names`) or by the layout around them (labels,
  tables, sentences, setters: :mod:`.scrub_layouts`);
* :func:`redaction_marker` is ``<redacted:`` + 8 hex digits of a keyed hash of the secret + ``>``: distinct
  secrets stay distinct after redaction, the same secret gets the same marker wherever it appears;
* :func:`safe_scrub` never raises and never falls back to the raw text (OBS-60);
* :func:`scrub_message` / :func:`scrub_prompt` are the error-message (OBS-62, OBS-39) and
  human-input prompt (OBS-64) variants;
* :func:`is_sensitive_key` is the sensitive-key rule of §8.2.4;
* :func:`url_target` renders a subagent ``tool_call_history`` target (§7.9, OBS-48).

Performance: every regex is compiled once at import time; each family of rules runs only when a substring
it cannot match without occurs; a decoded view is built only when the text holds an escape; a short text
already found clean (tool names, IDs, paths recur in every payload) costs one set lookup, and so does a long
one (the conversation is sent again with every provider call). The patterns run on whole texts take time linear
in the text on the adversarial runs of ``tests/engine/test_scrub_linear_time.py`` (no nested or adjacent
quantifiers over one run, names bounded by ``MAX_NAME_CHARS``); some others would be quadratic under ``finditer``
and are only matched at one position or on a bounded slice.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from functools import lru_cache
from typing import Final

from .scrub_clients import command_prints_credential, file_names_credential, printed_token
from .scrub_layouts import find_layout_spans
from .scrub_names import human_password, without_mark
from .scrub_shapes import EMPHASIS_MARKS, emphasis_opened, find_shape_spans, markup_cut, userinfo_end
from .scrub_tokens import find_token_spans
from .scrub_views import percent_decoded, views

__all__ = [
    "MARKER_RE",
    "QuotedSecret",
    "REDACTED",
    "REDACTION_FAILED",
    "TRUNCATION_SUFFIX",
    "find_spans",
    "hide_printed_in_history",
    "hide_printed_in_request",
    "hide_printed_output",
    "is_sensitive_key",
    "marker_cut",
    "redaction_marker",
    "safe_scrub",
    "scrub_message",
    "scrub_prompt",
    "scrub_text",
    "set_redaction_key",
    "truncate",
    "url_target",
]

REDACTED: Final = "<redacted>"
"""Marker of a whole value hidden because of its key (01 §8.2.1, §8.2.4); a credential found in text gets
:func:`redaction_marker` instead."""

REDACTION_FAILED: Final = "<redaction failed>"
"""Value-scrub failure marker (§8.2.1, OBS-60)."""

TRUNCATION_SUFFIX: Final = "...[truncated {n} chars]"
"""String truncation suffix; ``n`` is the number of characters removed (§8.2.1)."""

ERROR_MESSAGE_MAX_CHARS: Final = 8000
"""Cap for ``error.message`` (OBS-62) and ``post_tool_call.error_message`` (OBS-39)."""

TARGET_MAX_CHARS: Final = 512
"""Cap for one ``tool_call_history`` target (§7.9)."""

# ---------------------------------------------------------------------------------------------
# Sensitive-key rule (§8.2.4)
# ---------------------------------------------------------------------------------------------

_EXACT_SENSITIVE_KEYS: Final = frozenset(
    {
        "apikey",
        "authorization",
        "proxyauthorization",
        "cookie",
        "cookies",
        "setcookie",
        "headers",
        "extraheaders",
        "requestheaders",
        "httpheaders",
        "token",
        "accesstoken",
        "refreshtoken",
        "oauthtoken",
        "idtoken",
        "sessiontoken",
        "clientsecret",
        "password",
        "passwd",
        "secret",
        "secretkey",
        "secretaccesskey",
        "privatekey",
        "credentials",
        "passwords",
        "secrets",
        "privatekeys",
        "secretkeys",
        "apikeys",
        "apitokens",
        "accesstokens",
        "refreshtokens",
        "authtokens",
        "oauthtokens",
        "bearertokens",
        "sessiontokens",
        "idtokens",
        "clientsecrets",
    }
)

# ``privatekey`` is hermes_pipeline's addition to the reference list (§8.2.4 Choice).
_SENSITIVE_SUFFIXES: Final = (
    "apikey",
    "apikeys",
    "token",
    "auth",
    "secret",
    "secrets",
    "secretkey",
    "secretkeys",
    "privatekey",
    "privatekeys",
    "password",
    "passwords",
    "passwd",
    "credential",
    "credentials",
)

# hermes_pipeline's additions (spec 04 FMT-33a widens the detector list): passphrases, access keys and the
# short password names ``pass`` / ``pwd`` (``aws_secret_access_key`` ends with ``accesskey``).
_COUNT_OR_SECRET_KEYS: Final = frozenset({"pass"})
"""Additions that follow the plural-token rule: ``{"pass": 10, "fail": 0}`` is a count of passed tests."""
_EXTRA_SUFFIXES: Final = ("passphrase", "passphrases", "accesskey", "accesskeys", "pwd")

_SHELL_DIRECTORIES: Final = frozenset({"PWD", "OLDPWD"})
"""The shell's working-directory variables (an environment dump's ``PWD``: a path, judged by the text rules)."""
_KEY_NOT_SENSITIVE: Final = 0
_KEY_ALWAYS_SENSITIVE: Final = 1
_KEY_PLURAL_TOKENS: Final = 2


def normalize_key(key: str) -> str:
    """Lowercase ``key`` and keep only the characters for which ``str.isalnum`` holds (§8.2.4)."""
    return "".join([ch for ch in key.lower() if ch.isalnum()])


@lru_cache(maxsize=8192)
def _key_class(key: str) -> int:
    """Classify a key: never / always sensitive, or sensitive depending on the value (rule c)."""
    if key in _SHELL_DIRECTORIES:
        return _KEY_NOT_SENSITIVE
    norm = normalize_key(key)
    if norm in _EXACT_SENSITIVE_KEYS or norm.endswith(_SENSITIVE_SUFFIXES):
        return _KEY_ALWAYS_SENSITIVE
    if norm.endswith(_EXTRA_SUFFIXES):
        return _KEY_ALWAYS_SENSITIVE
    if norm.endswith("tokens") or norm in _COUNT_OR_SECRET_KEYS:
        return _KEY_PLURAL_TOKENS
    return _KEY_NOT_SENSITIVE


def is_sensitive_key(key: str, value: object) -> bool:
    """Return whether ``key`` is sensitive for ``value`` under the rule of §8.2.4.

    The key is normalized (lowercased, non-alphanumerics dropped). It is sensitive on an exact
    match with one of the 38 names, on a suffix match (plus hermes_pipeline's additions: the suffixes
    ``passphrase``, ``accesskey`` and ``pwd``), or (plural-token rule) when it ends with ``tokens`` and
    ``value`` is neither ``None`` nor exactly an ``int`` or ``float``; a ``bool`` value therefore counts
    as sensitive. The addition ``pass`` follows the plural-token rule (``{"pass": 10, "fail": 0}`` is a
    count), and the shell's ``PWD`` / ``OLDPWD`` (exactly so written: an environment dump's directories)
    are left to the text rules, which hide a password there but keep a path. Classification of a key is
    cached.
    """
    cls = _key_class(key if type(key) is str else str(key))
    if cls == _KEY_ALWAYS_SENSITIVE:
        return True
    if cls == _KEY_PLURAL_TOKENS:
        return not (value is None or type(value) is int or type(value) is float)
    return False


# ---------------------------------------------------------------------------------------------
# Credential spans (§8.2.5) and their replacement
# ---------------------------------------------------------------------------------------------

SCRUB_MIN_CHARS: Final = 5
"""Texts shorter than this cannot hold a credential any rule finds (the shortest, e.g. ``pin=1``, have 5)."""

_KEY_ENV: Final = "HERMES_PIPELINE_REDACTION_KEY"
_redaction_key: bytes = (os.environ.get(_KEY_ENV) or "").encode() or secrets.token_bytes(16)
MARKER_RE: Final = re.compile(r"<redacted(?::[0-9a-f]{8})?>")
"""Every redaction marker: ``<redacted:xxxxxxxx>`` (a credential's span) or ``<redacted>`` (a whole value)."""
_MARKER_HEAD: Final = "<redacted"
_MARKER_MAX: Final = len("<redacted:0123abcd>")


def marker_cut(text: str, cap: int) -> int:
    """Where to cut ``text`` to at most ``cap`` characters without cutting a redaction marker in two: ``cap``, or
    the start of the marker that straddles it (half a marker is neither text nor a marker that ``trajectory
    redact`` or a reader recognises). The marker may start anywhere in the ``_MARKER_MAX - 1`` characters before
    ``cap``, so its head ``<redacted`` may itself cross ``cap``."""
    start = text.rfind(_MARKER_HEAD, max(0, cap - _MARKER_MAX + 1), cap + len(_MARKER_HEAD) - 1)
    if start >= 0:
        m = MARKER_RE.match(text, start)
        if m is not None and m.end() > cap:
            return start
    return cap


def set_redaction_key(key: bytes) -> None:
    """Key the markers' hashes (a profile keeps one so that its stores' markers agree across processes).

    The default is ``HERMES_PIPELINE_REDACTION_KEY`` or, without it, a random key per process."""
    global _redaction_key
    if not key:
        raise ValueError("a redaction key must not be empty")
    _redaction_key = bytes(key)
    known_clean.clear()
    long_clean.clear()
    _marker.cache_clear()


@lru_cache(maxsize=4096)
def _marker(secret: str) -> str:
    digest = hmac.new(_redaction_key, secret.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
    return f"<redacted:{digest[:8]}>"


def redaction_marker(secret: str) -> str:
    """The marker that replaces ``secret``: ``<redacted:`` + 8 hex digits of a keyed hash + ``>``.

    Distinct secrets get distinct markers (rows keyed by a redacted name never merge); the hash is keyed, so a
    marker confirms no guess of the secret to whoever lacks the key."""
    return _marker(secret)


class QuotedSecret(str):
    """A secret written bare where the text needs a string in its place (a number after a quoted key:
    ``{"pin": 483920}``): its marker goes between two of :attr:`quote`, the key's closing quote as the text writes it
    (``"``, ``'``, ``\\"`` in JSON-escaped text, ``%22`` percent-encoded), so the text stays the same JSON, JS or
    Python (``{"pin": "<redacted:…>"}``). Equal to the secret itself: it gets the secret's marker."""

    quote: str

    def __new__(cls, secret: str, quote: str) -> QuotedSecret:
        self = super().__new__(cls, secret)
        self.quote = quote
        return self


def find_spans(text: str, gated: bool = True) -> list[tuple[int, int, str]]:
    """The credentials in ``text``: ``(start, end, secret)`` with ``text[start:end]`` the credential as it is
    written (escaped or encoded) and ``secret`` its decoded value; sorted, never overlapping. A secret that stood bare
    where its marker must be a string is a :class:`QuotedSecret` (:func:`replace_spans` quotes its marker).

    ``gated=False`` runs every rule without its pre-check (the tests' reference).

    How the spans of several views combine: within one view, overlapping spans (a key inside a ``NAME=value``)
    are one credential, their union, and its secret is what that view reads there. Across views, a span that
    holds another's wins with its own secret (the plain view cut a value at an escape the JSON view reads
    through); equal spans keep the secret of the view read first (the text itself before its JSON decodings, so a
    secret gets the same marker whatever wrapper it came in); the secret of a URL's query value or userinfo password
    is what its ``%XX`` escapes encode, whichever view read it (``?password=Xk9m%2BQ2v``, ``?password=a%26b`` and
    ``password=Xk9m+Q2v``, ``password=a&b`` hold the same secrets; elsewhere ``%2B`` is three characters of a
    literal), and the secret of a JSON pair's string value is what its escapes encode (``"password": "a\\u00e9"``
    and ``password: aé``); spans of different views that only overlap are united (every character of the union is
    one some view reads as a credential). A deeper view never reads past what the view above it reads as the end of
    a string (:mod:`.scrub_views`), and the percent-decoded view's spans end at a quote, a space or an ``&`` written
    as such, so no span covers text that no correct reading holds as a credential.

    A marker already in the text (``<redacted:…>``) is opaque: no span covers any part of it (a rule reading
    ``<redacted`` as a user name and the rest as a password finds nothing), so scrubbing a scrubbed text changes
    nothing."""
    found: list[tuple[int, int, str]] = []
    userinfo: list[tuple[int, int]] = []  # the text's own URLs' userinfo passwords: a deeper view's value ends there
    starts: list[int] = []
    for view in views(text):
        vtext = view.text
        spans: list[tuple[int, int]] = []
        wraps: dict[tuple[int, int], int] = {}
        find_token_spans(vtext, spans, gated)
        tokens = len(spans)
        low = vtext.lower()
        find_shape_spans(vtext, low, spans, gated, wraps, userinfo if vtext is text else None)
        if userinfo and not starts:
            starts = [s for s, _ in userinfo]
        find_layout_spans(vtext, low, spans, gated)
        if not spans:
            continue
        if tokens and len(spans) > tokens:
            _end_at_tokens(vtext, spans, tokens)
        if userinfo and vtext is text:
            ends = {e for _, e in userinfo}
            spans = [span for span in spans if span[0] not in ends]  # …9PW=@db:3306: a name inside a password
        plain = vtext is text
        if "<redacted" in vtext:
            spans = _outside_markers(vtext, spans)
        for s, e in _union(spans):  # one view's reading: spans that overlap are one credential
            quote = wraps.get((s, e)) if wraps else None
            if vtext[e - 1] in _CLOSES or "<" in vtext[s:e]:
                e = enclosure_cut(vtext, s, e)
            if vtext[e - 1] in EMPHASIS_MARKS or vtext[s] in EMPHASIS_MARKS:
                s, e = unmarked(vtext, s, e)
            if vtext[s] == "<" and e - s > 2:
                s, e = _angled(vtext, s, e)
            if plain and "&" in vtext[max(0, s - 1):e]:
                s, e = _entity_quoted(vtext, s, e)
            if vtext[e:e + 1] in _HUMAN_MARKS and human_password(without_mark(vtext[s:e].rstrip("!?"))):
                while vtext[e:e + 1] in _HUMAN_MARKS and _QUERY_AFTER.match(vtext, e) is None:
                    e += 1  # the password is Summer2024!: the marks people end their passwords with
            if not plain and view.crosses_strings(s, e):
                continue  # {"password":"\"","api_key":"\""}: a deeper view's """…""" over the structure above it
            rs, re_ = (s, e) if plain else view.root_span(s, e)
            secret = vtext[s:e]
            if view.percent:
                cut = _LITERAL_END.search(text, rs, re_)
                if cut is not None:  # a "%22" decoded into a quote ran the value over the text's own "&page=2"
                    re_ = cut.start()
                    secret = percent_decoded(text[rs:re_])
            if starts and view.percent:
                end = userinfo_end(userinfo, starts, rs, re_)
                if end != re_:  # bob:FtIE%5BOS~%273CRY9pw%3A6@db: what the view decoded ends at the raw "@"
                    re_, secret = end, percent_decoded(text[rs:end])
            if re_ <= rs:
                continue
            if not view.percent and "%" in secret and _URL_PART_BEFORE.search(text, max(0, rs - 256), rs):
                secret = percent_decoded(secret)  # a URL's own encoding: the secret is what it encodes
            if "\\" in secret and vtext[e:e + 1] == '"' and _JSON_PAIR_BEFORE.search(vtext, max(0, s - 160), s):
                secret = _json_string(secret)  # "password": "a\u00e9": a JSON string is what its escapes encode
            if quote is not None:
                qs, qe = (quote, quote + 1) if plain else view.root_span(quote, quote + 1)
                secret = QuotedSecret(secret, text[qs:qe])
            found.append((rs, re_, secret))
    return _merged(found)


def _angled(text: str, start: int, end: int) -> tuple[int, int]:
    """A credential's span ``[start, end)`` without the angle brackets around it (``password: <P>``, ``密码：<P>.``: the
    brackets are the text's; a sentence's closing punctuation after them stays outside too); a quoted string's are its
    own (``"password": "<P>"``)."""
    if start and text[start - 1] in "\"'`":
        return start, end
    k = end
    while k - start > 2 and text[k - 1] in _CLOSING:
        k -= 1
    if text[k - 1] == ">" and not _ANGLE_INSIDE.search(text, start + 1, k - 1):
        return start + 1, k - 1
    return start, end


def _entity_quoted(text: str, start: int, end: int) -> tuple[int, int]:
    """A credential's span ``[start, end)`` without the quotes around it written as character references
    (``api_key=&#39;P&#39;``, ``password = &quot;P&quot;;`` in a page's source): the text's own reading sees a run
    of characters; the references are the page's quotes, which stay (with what follows the closing one)."""
    opener = _QUOTE_REFERENCE_RE.match(text, start, end)
    if opener is not None:
        start = opener.end()
    else:
        opener = _QUOTE_REFERENCE_BEFORE_RE.search(text, max(0, start - 10), start)
        if opener is None:
            return start, end
    name = opener.group(0).lower()[:-1]
    close = text[start:end].lower().rfind(name)
    if close >= 0:
        close += start
    if close < 0 or text[close + len(name):end].strip(_AFTER_REFERENCE):
        return start, end  # token=&#39;P with the closing reference cut off: the opening one stays
    return start, close


_QUOTE_REFERENCE: Final = r"&(?i:#0*39|#x0*27|apos|quot|#0*34|#x0*22);"
_QUOTE_REFERENCE_RE: Final = re.compile(_QUOTE_REFERENCE)
"""A quote written as a character reference (what :mod:`.scrub_views`' HTML view reads as one)."""
_QUOTE_REFERENCE_BEFORE_RE: Final = re.compile(_QUOTE_REFERENCE + r"\Z")
_AFTER_REFERENCE: Final = ";,)]}"
"""What may follow a closing quote's reference inside a run the text's own reading took as a value."""
_ANGLE_INSIDE: Final = re.compile(r"[<>\s]")
"""What a secret written between angle brackets (``密码：<P>``) holds none of: the brackets are then the text's."""
_HUMAN_MARKS: Final = ("!", "?")
"""What people end a password of a word and a number with (:func:`~.scrub_names.human_password`)."""
_QUERY_AFTER: Final = re.compile(r"\?[\w.-]{1,64}=")
"""A URL's query after a value (``;jsessionid=P?a=1``): its ``?`` is the URL's, not the password's."""
_CLOSES: Final = {")": "(", "]": "[", "}": "{", "”": "“", "’": "‘", "」": "「", "』": "『", "»": "«", "`": "`"}
"""A closing bracket or quote, and what opens it."""


def enclosure_cut(text: str, start: int, end: int) -> int:
    """Where a credential read at ``[start, end)`` ends before what encloses the text it stands in: markup
    (:func:`.scrub_shapes.markup_cut`: ``<li>… P</li>``) and, at its end, a closing bracket or quote whose opener
    stands before it on its line and none inside it (``(rabbitmqctl add_user admin P)``, ``“ALTER USER app
    IDENTIFIED BY P”``); a value's own brackets stay (``Password: (P)``, ``Xk9(ab)``, a quoted ``"P}"``)."""
    if "<" in text[start:end]:
        end = markup_cut(text, start, end)
    quote = text[start - 1:start] if start else ""
    if quote and quote in "\"'`" and (text.startswith(quote, end) or text.startswith("\\" + quote, end)):
        return end  # CLIENT_SECRET="P}": a quoted value's brackets are its own
    line = text.rfind("\n", 0, start) + 1
    while end - start > 1 and text[end - 1] in _CLOSES:
        closer = text[end - 1]
        opener = _CLOSES[closer]
        if opener == closer:
            if text.count(closer, start, end - 1) or text.count(closer, line, start) % 2 == 0:
                break
        elif text.count(opener, start, end - 1) >= text.count(closer, start, end - 1) + 1 or \
                text.count(opener, line, start) <= text.count(closer, line, start):
            break
        end -= 1
    return end


def unmarked(text: str, start: int, end: int) -> tuple[int, int]:
    """A credential's span ``[start, end)`` without the Markdown emphasis around it: a run of two or more ``*``, ``_``
    or ``~`` on both of its ends (``~~P~~``), or at its end closing a run opened before it on its line, where an
    emphasis opens (glued to the text it marks: ``*the password is P*``, ``~~old token: P~~``; a list's ``* `` is
    no opener). The marks are the text's formatting, not the secret's characters."""
    if text[start] in EMPHASIS_MARKS and text[end - 1] not in EMPHASIS_MARKS:
        lead = start
        while lead < end and text[lead] == text[start]:
            lead += 1
        mark = text[start:lead]
        line_end = text.find("\n", end)
        close = text.find(mark, end, len(text) if line_end < 0 else line_end)
        if lead < end and not text[lead].isspace() and close >= end and not text[close - 1].isspace() \
                and not (text.count(mark, text.rfind("\n", 0, start) + 1, start) % 2):
            return lead, end  # *P is my password*: the emphasis opened before the value closes after it
        return start, end
    mark_char = text[end - 1]
    if mark_char not in EMPHASIS_MARKS:
        return start, end
    k = end - 1
    while k > start and text[k - 1] == mark_char:
        k -= 1
    mark = text[k:end]
    if k == start:
        return start, end  # the span is the marks alone
    if len(mark) >= 2 and text.startswith(mark, start) and start + len(mark) < k \
            and text[start + len(mark)] != mark_char:
        return start + len(mark), k  # ~~P~~, **P** (a password may start and end with one ``*``, ``_`` or ``~``)
    if emphasis_opened(text, mark, text.rfind("\n", 0, start) + 1, start):
        return start, k  # *the password is P*: the emphasis opened before the value closes after it
    return start, end  # *note* password: P*: what opened before the value closed there


def _end_at_tokens(vtext: str, spans: list[tuple[int, int]], tokens: int) -> None:
    """A value read after a name or a label (``Token: ghp_….``, ``GITHUB_TOKEN=ghp_…!``) that is a published key format
    (``spans[:tokens]``, which starts where the value starts) and then only a sentence's closing punctuation ends where
    the key does: the format says where a key ends, so the ``.`` is the sentence's. A value of no known format keeps
    such a character (``password: abc.`` is a YAML scalar ``abc.``)."""
    ends = {start: end for start, end in spans[:tokens]}
    for index in range(tokens, len(spans)):
        start, end = spans[index]
        key_end = ends.get(start)
        if key_end is not None and key_end < end and not vtext[key_end:end].strip(_CLOSING):
            spans[index] = (start, key_end)


_CLOSING: Final = ".!?:;,"
"""What closes a sentence or a clause after a key written in it."""


_URL_PART_BEFORE: Final = re.compile(r"(?:[?&;#][^\s?&;#=\"'<>\\]{1,128}=|//[^\s/?#@:\"'<>\\]{0,128}:)\Z")
"""What stands before a URL's query value or its userinfo password (where ``%XX`` is the URL's encoding)."""
_LITERAL_END: Final = re.compile(r"[\s\"'`&<>”’]")
"""What, written as it is (not percent-encoded), ends a value the percent-decoded view reads: that view's span stops
there (the text's own reading holds a value that goes on past it)."""
_JSON_PAIR_BEFORE: Final = re.compile(r'"[^"\\\n]{1,128}"[ \t]*:[ \t]*"\Z')
"""What stands before a JSON string value (``"key": "``)."""


def _json_string(raw: str) -> str:
    """The string the JSON string body ``raw`` encodes (``raw`` itself when it is none)."""
    try:
        decoded = json.loads(f'"{raw}"')
    except ValueError:
        return raw
    return decoded if type(decoded) is str else raw


def _outside_markers(vtext: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` less every marker of ``vtext``: the pieces of a span outside the markers it touches, those holding a
    letter or a digit (a piece such as the ``:`` after a marker is no credential)."""
    markers = [m.span() for m in MARKER_RE.finditer(vtext)]
    if not markers:
        return spans
    out: list[tuple[int, int]] = []
    for s, e in spans:
        pieces = [(s, e)]
        for ms, me in markers:
            if me <= s or ms >= e:
                continue
            pieces = [piece for ps, pe in pieces for piece in ((ps, min(pe, ms)), (max(ps, me), pe))
                      if piece[1] > piece[0]]
        out.extend(piece for piece in pieces
                   if piece == (s, e) or any(c.isalnum() for c in vtext[piece[0]:piece[1]]))
    return out


def _union(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` sorted, overlapping ones replaced by their union."""
    if len(spans) < 2:
        return spans
    spans.sort()
    out = [spans[0]]
    for start, end in spans[1:]:
        last_start, last_end = out[-1]
        if start < last_end:
            if end > last_end:
                out[-1] = (last_start, end)
        else:
            out.append((start, end))
    return out


def _merged(found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``found`` sorted and without overlaps: a span holding another replaces it; equal spans keep the first one's
    secret (sorting is stable); spans that overlap without one holding the other become their union, with the
    secret of the longer (never quoted: the union is no bare scalar)."""
    if len(found) < 2:
        return found
    found.sort(key=lambda span: (span[0], -span[1]))
    merged = [found[0]]
    for start, end, secret in found[1:]:
        last_start, last_end, last_secret = merged[-1]
        if start < last_end:
            if end > last_end:
                union = secret if end - start > last_end - last_start else last_secret
                merged[-1] = (last_start, end, str(union) if type(union) is QuotedSecret else union)
            continue
        merged.append((start, end, secret))
    return merged


def scrub_text(text: str) -> str:
    """Return ``text`` with every credential's span replaced by its marker, and nothing else changed (§8.2.5).

    Covers authorization schemes (OBS-57), the credential classes of OBS-58 and the published key formats of
    :mod:`.scrub_tokens`, in plain text and inside JSON-escaped (any level) or percent-encoded text; for
    structured matches (``NAME=value``, URL parameters, userinfo, quoted pairs, ``Bearer <cred>``) only the
    value is replaced (OBS-59). Every byte outside a credential's span is kept, so a JSON document stays
    the same JSON with the same lines. May raise on pathological input (e.g. ``MemoryError``); use
    :func:`safe_scrub` when a never-raising variant is needed.
    """
    n = len(text)
    if n < SCRUB_MIN_CHARS:
        return text
    short = n <= CLEAN_MAX_CHARS
    if short:
        if text in known_clean:
            return text
    elif text in long_clean:  # the conversation is sent again with every provider call
        return text
    spans = find_spans(text)
    if not spans:
        if short:
            if len(known_clean) >= _CLEAN_MAX_ENTRIES:
                known_clean.clear()
            known_clean.add(text)
        elif n <= _LONG_CLEAN_MAX_CHARS:
            global _long_clean_chars
            if _long_clean_chars + n > _LONG_CLEAN_BUDGET:
                long_clean.clear()
                _long_clean_chars = 0
            long_clean.add(text)
            _long_clean_chars += n
        return text
    out = replace_spans(text, spans)
    # One pass is not always a fixpoint: a credential glued to the end of another (``AKIA…sk-proj-…``) has no
    # boundary before it until the first is replaced. Scan the result again until nothing changes, so that
    # scrubbing is idempotent and a scrubbed text can be trusted by every later walk.
    for _ in range(_MAX_PASSES - 1):
        more = find_spans(out)
        if not more:
            return out
        out = replace_spans(out, more)
    raise ScrubDidNotSettle(f"credentials still found after {_MAX_PASSES} passes")


class ScrubDidNotSettle(ValueError):
    """A text still held credentials after :data:`_MAX_PASSES` passes (:func:`safe_scrub` gives the failure
    marker for it, never the text)."""


_MAX_PASSES: Final = 4


def replace_spans(text: str, spans: list[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end, secret)`` span (sorted, not overlapping) replaced by its marker (between
    the secret's quotes when it is a :class:`QuotedSecret`)."""
    parts: list[str] = []
    last = 0
    for start, end, secret in spans:
        parts.append(text[last:start])
        if type(secret) is QuotedSecret:
            parts.append(f"{secret.quote}{_marker(secret)}{secret.quote}")
        else:
            parts.append(_marker(secret))
        last = end
    parts.append(text[last:])
    return "".join(parts)


known_clean: Final[set[str]] = set()
"""Texts of at most ``CLEAN_MAX_CHARS`` characters that :func:`scrub_text` returned unchanged (tool
names, IDs, paths and arguments recur in every payload); read-only outside this module. Never holds a
longer text: a hit needs no length test (the exporters' redaction relies on it)."""
CLEAN_MAX_CHARS: Final = 256
_CLEAN_MAX_ENTRIES: Final = 8192

long_clean: Final[set[str]] = set()
"""Longer texts :func:`scrub_text` returned unchanged: the messages of a conversation, which every provider
call sends again (so each attempt's ``request`` would rescan the whole history); read-only outside this
module. A hit costs a hash lookup (Python caches a string's hash) and, on a hash match, one comparison.
Bounded by the total characters held; emptied when full."""
_LONG_CLEAN_MAX_CHARS: Final = 100_000
_LONG_CLEAN_BUDGET: Final = 2_000_000
_long_clean_chars = 0


def safe_scrub(text: str) -> str:
    """:func:`scrub_text`, but any exception yields ``<redaction failed>`` (OBS-60)."""
    try:
        return scrub_text(text)
    except Exception:
        return REDACTION_FAILED


def truncate(text: str, cap: int) -> str:
    """Cut ``text`` to at most ``cap`` characters plus ``...[truncated N chars]`` when it is longer, never inside a
    redaction marker (:func:`marker_cut`)."""
    n = len(text)
    if n <= cap:
        return text
    cut = marker_cut(text, cap)
    return text[:cut] + TRUNCATION_SUFFIX.format(n=n - cut)


def scrub_message(text: str, cap: int = ERROR_MESSAGE_MAX_CHARS) -> str:
    """Scrub an error message, then cut it to ``cap`` characters (OBS-62, OBS-39).

    Never raises for a ``str`` argument; a scrub failure yields ``<redaction failed>``.
    """
    return truncate(safe_scrub(text), cap)


def scrub_prompt(text: object) -> str:
    """Scrub a human-input prompt (OBS-64).

    Scrubbing always runs, whatever the host's general redaction setting. ``None`` yields
    ``""``; a non-string is rendered with ``str()`` first. On any failure the result is ``""``,
    never the raw text.
    """
    if text is None:
        return ""
    try:
        return scrub_text(text if isinstance(text, str) else str(text))
    except Exception:
        return ""


# ---------------------------------------------------------------------------------------------
# tool_call_history targets: URLs lose query string, fragment and user:password (§7.9, OBS-48)
# ---------------------------------------------------------------------------------------------

# scheme://authority path [?query] [#fragment]; each URL ends at whitespace.
_URL_RE: Final = re.compile(
    r"(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*://)([^\s/?#]*)([^\s?#]*)(?:[?#]\S*)?"
)


def _strip_url(m: re.Match[str]) -> str:
    authority = m.group(2).rpartition("@")[2]
    return f"{m.group(1)}{authority}{m.group(3)}"


def url_target(value: str, cap: int = TARGET_MAX_CHARS) -> str:
    """Render one ``tool_call_history`` target (§7.9, OBS-48).

    Every ``scheme://...`` URL in ``value`` loses its ``user:password@`` userinfo, its query
    string and its fragment; the result is value-scrubbed and cut to ``cap`` characters with
    the standard suffix. Path-like targets without a URL are only scrubbed and cut, so the
    function serves both target kinds. A scrub failure yields ``<redaction failed>``.
    """
    try:
        text = value if isinstance(value, str) else str(value)
        if "://" in text:
            text = _URL_RE.sub(_strip_url, text)
        text = scrub_text(text)
    except Exception:
        return REDACTION_FAILED
    return truncate(text, cap)


_OUTPUT_KEYS: Final = ("output", "content", "stdout", "result")
"""Where a tool's JSON result holds what it printed or read (Hermes' ``terminal`` and ``read_file``)."""


def hide_printed_output(arguments: object, result: object) -> object:
    """``result`` with the credential a tool call printed hidden: the call runs a command that prints one
    (``arguments["command"]``: ``cat ~/.vault-token``, ``echo $DB_PASSWORD``, ``op read …``) or reads a file named
    for one (``arguments["path"]`` or ``["file_path"]``: ``initialAdminPassword``, ``api_key.txt``), and its whole
    output (``result``, or the ``output`` / ``content`` / ``stdout`` / ``result`` string of a JSON object, a line
    number ``1|`` before it) is one token that a password's name would hide: that token's span becomes its marker and
    nothing else changes. The output alone says nothing of what it is, so the call's arguments tell; anything else
    returns ``result`` itself."""
    if type(arguments) is not dict or type(result) is not str or not result or not _prints_credential(arguments):
        return result
    token = None
    if result[0] == "{":
        try:
            doc = json.loads(result)
        except (ValueError, RecursionError):
            doc = None
        if type(doc) is dict:
            for key in _OUTPUT_KEYS:
                output = doc.get(key)
                if type(output) is str:
                    span = printed_token(output)
                    if span is not None:
                        token = output[span[0]:span[1]]
                        break
    else:
        span = printed_token(result)
        token = result[span[0]:span[1]] if span is not None else None
    if token is None:
        return result
    written = json.dumps(token, ensure_ascii=False)[1:-1] if result[0] == "{" else token
    return result.replace(written, redaction_marker(token))  # wherever else the result repeats it too


def _prints_credential(arguments: dict[str, object]) -> bool:
    """Whether a tool call with ``arguments`` prints a credential: its ``command`` does, or its ``path`` (``file_path``)
    is named for one."""
    command = arguments.get("command")
    if type(command) is str:
        return command_prints_credential(command)
    path = arguments.get("path", arguments.get("file_path"))
    return type(path) is str and file_names_credential(path)


@lru_cache(maxsize=4096)
def _call_arguments(arguments: str) -> dict[str, object] | None:
    """A tool call's JSON arguments when the call prints a credential (:func:`_prints_credential`), else ``None``
    (most calls: a history's calls are looked at once per request, their answers remembered)."""
    if "command" not in arguments and "path" not in arguments:
        return None
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return None
    return parsed if type(parsed) is dict and _prints_credential(parsed) else None


def hide_printed_in_request(kwargs: dict[str, object]) -> dict[str, object]:
    """A provider request's keyword arguments with each tool result in its history read with its call's arguments
    (:func:`hide_printed_output`): a chat-completions ``tool`` message after the assistant's call, a Responses
    ``function_call_output`` item after its ``function_call``, an Anthropic ``tool_result`` block (text) after its
    ``tool_use``. ``kwargs`` itself when no result changes (the usual case: one look at each message); else a copy
    with a new list and new messages where one did."""
    for list_key in ("messages", "input"):
        items = kwargs.get(list_key)
        if type(items) is list and items:
            changed = hide_printed_in_history(items)
            if changed is not items:
                kwargs = {**kwargs, list_key: changed}
    return kwargs


def hide_printed_in_history(items: list[object]) -> list[object]:
    """A provider history (messages or Responses items) with each tool result read with its call's arguments
    (:func:`hide_printed_in_request`); ``items`` itself when none changes. Never raises: a history of another shape
    (an id that is no string, calls that are no list) is returned as it is, for the scrubber alone to read."""
    try:
        return _hidden_history(items)
    except Exception:  # noqa: BLE001 - a malformed history must not fail the host's provider call
        return items


def _hidden_history(items: list[object]) -> list[object]:
    calls: dict[object, dict[str, object]] = {}
    out = items
    for index, item in enumerate(items):
        if type(item) is not dict:
            continue
        role, kind = item.get("role"), item.get("type")
        replaced: object = None
        if role == "assistant":
            content = item.get("content")
            for call in item.get("tool_calls") or ():
                function = call.get("function") if type(call) is dict else None
                arguments = function.get("arguments") if type(function) is dict else None
                parsed = _call_arguments(arguments) if type(arguments) is str else None
                if parsed is not None:
                    calls[call.get("id")] = parsed
            for block in content if type(content) is list else ():
                if type(block) is dict and block.get("type") == "tool_use" and type(block.get("input")) is dict \
                        and _prints_credential(block["input"]):
                    calls[block.get("id")] = block["input"]
        elif kind == "function_call":
            arguments = item.get("arguments")
            parsed = _call_arguments(arguments) if type(arguments) is str else None
            if parsed is not None:
                calls[item.get("call_id")] = parsed
        elif not calls:
            continue
        elif role == "tool" and item.get("tool_call_id") in calls:
            content = item.get("content")
            hidden = hide_printed_output(calls[item.get("tool_call_id")], content)
            if hidden is not content:
                replaced = {**item, "content": hidden}
        elif kind == "function_call_output" and item.get("call_id") in calls:
            output = item.get("output")
            hidden = hide_printed_output(calls[item.get("call_id")], output)
            if hidden is not output:
                replaced = {**item, "output": hidden}
        elif role == "user" and type(item.get("content")) is list:
            blocks: list[object] = item["content"]
            new_blocks = blocks
            for at, block in enumerate(blocks):
                if type(block) is dict and block.get("type") == "tool_result" and block.get("tool_use_id") in calls:
                    text = block.get("content")
                    hidden = hide_printed_output(calls[block.get("tool_use_id")], text)
                    if hidden is not text:
                        if new_blocks is blocks:
                            new_blocks = list(blocks)
                        new_blocks[at] = {**block, "content": hidden}
            if new_blocks is not blocks:
                replaced = {**item, "content": new_blocks}
        if replaced is not None:
            if out is items:
                out = list(items)
            out[index] = replaced
    return out


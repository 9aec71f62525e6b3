"""Credentials found by what stands in front of them: names, flags, URL userinfo, authorization schemes (OBS-57..59).

The shapes (spec 01 §8.2.5, widened by spec 04 FMT-33a):

* ``NAME=value`` (env files, shell, query strings, connection strings ``;AccountKey=...``, ``--name=value``);
* ``NAME: value`` (YAML, HTTP headers, logs) and quoted pairs ``"name": "value"`` / ``'name': 'value'``;
* ``--name value`` / ``-name value`` after any character that is not part of a word (``=``, a backtick, ``&``,
  a non-ASCII letter ...); ``<name>value</name>``; the password options of clients (:mod:`.scrub_clients`);
* ``scheme://user:password@host`` (also after a ``.``, as in ``jdbc:`` or ``.postgres://``);
* ``Bearer <token68>`` / ``Basic <token68>``, and what follows any scheme word after an ``Authorization`` name.

Names are judged by :mod:`.scrub_names`. Every finder appends ``(start, end)`` spans of the *value* only (the
name, the quotes and the separator stay), never reads past the end of the value (a value ends at whitespace,
a quote, a backtick, ``& ; , ) ] } < >`` or a backslash escape such as ``\\n``), and is linear in the text.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from typing import Final

from .scrub_clients import CLIENT_HINTS, find_client_passwords
from .scrub_names import MAX_NAME_CHARS, STRONG, WEAK, credential_name, credential_word, kept_value

__all__ = ["find_shape_spans", "is_sensitive_pair"]

Span = tuple[int, int]

_NAME_CHARS: Final = frozenset(string.ascii_letters + string.digits + "_.-")
_QUERY_LEADERS: Final = frozenset("?&;#")
_SCHEME_WORDS: Final = frozenset({"bearer", "basic", "token", "digest", "negotiate", "ntlm", "apikey", "api-key",
                                  "sso-key", "hmac", "aws4-hmac-sha256", "key"})

# A value: quoted (double, single, backtick; backslash escapes inside) or a run of characters that cannot
# end it. A backslash followed by an escape letter ends an unquoted value (JSON-escaped text: "...\n...").
_VALUE_RE: Final = re.compile(
    r"[ \t]*(?:\"(?P<dq>(?:[^\"\\\n]|\\.)*)\"|'(?P<sq>(?:[^'\\\n]|\\.)*)'|`(?P<bq>[^`\n]*)`"
    r"|(?P<v>(?:[^\s\"'`&;,)\]}<>\\]|\\(?![nrtbfu\"'\\/]))+))"
)
_NOT_VALUE_START: Final = frozenset(" \t)]},;+.")
_FLAG_RE: Final = re.compile(r"--?(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]*)[ \t]+(?!-)")
"""``--name value`` and the single-dash long options of Go-style tools (``-token X``; a one-letter option such as
``-p`` is no credential name)."""
_QUOTED_PAIR_RE: Final = re.compile(
    r"(?P<kq>[\"'])(?P<key>[^\"'\\\n]{1,128})(?P=kq)[ \t]*:[ \t]*"
    r"(?:\"(?P<dq>(?:[^\"\\\n]|\\.)*)\"|'(?P<sq>(?:[^'\\\n]|\\.)*)'|(?P<scalar>(?![{\[])[^\s,}\]\"'\\]+))"
)
_PAIR_END_RE: Final = re.compile(r"[\"'][ \t]*:")
_PAIR_VALUE_RE: Final = re.compile(
    r"[ \t]*(?:\"(?P<dq>(?:[^\"\\\n]|\\.)*)\"|'(?P<sq>(?:[^'\\\n]|\\.)*)'|(?P<scalar>(?![{\[])[^\s,}\]\"'\\]+))"
)
"""The end of a quoted key, and the value after its colon: :data:`_QUOTED_PAIR_RE` cut in two."""
_SINGLE_DASH_NAME_RE: Final = re.compile(r"[a-z]{2,}(?:[-_][a-z]+)*")  # ``-token``, not ``-pS3cret``
_ELEMENT_RE: Final = re.compile(
    r"<(?P<n>[A-Za-z_][A-Za-z0-9_.:-]{0,63})>[ \t]*(?P<v>[^<>\s\\][^<>\n\\]{0,1023}?)[ \t]*</(?P=n)>")
_SETTING_RE: Final = re.compile(
    r"(?<![A-Za-z0-9_-])(?:key|name)=(?P<q>[\"'])(?P<n>[^\"'\\\n]{1,128})(?P=q)[ \t]+value=(?P<r>[\"'])"
    r"(?P<v>[^\"'\\\n]*)(?P=r)")
_INT_RE: Final = re.compile(r"[-+]?\d+")
_USERINFO_RE: Final = re.compile(r"[^\s:/?#@\"'<>\\]*:(?P<pw>[^\s/?#\"'<>\\]*)@")
_SCHEME_CHARS: Final = frozenset(string.ascii_letters + string.digits + "+.-")
# The scheme word in any ASCII case (``(?ai:``: no Unicode case folding, so that where ``str.lower`` finds the word
# is where the pattern can match).
_AUTH_SCHEME_RE: Final = re.compile(
    r"(?<![A-Za-z0-9_-])(?P<w>(?ai:bearer|basic))[ \t]+(?P<c>(?:[^\s\"'`\\]|\\(?![nrtbfu\"'\\/]))+)")

def _value_span(m: re.Match[str]) -> Span | None:
    """The value's span (inside its quotes). A quoted value is refused when its opening quote rather closes the
    string the name stands in: the quoted text starts with a space or with what ends an expression
    (``getpass('Password: ')``, ``print("password: " + pw)``), or it runs over an escaped line break (a value
    never spans lines; ``\\n`` in JSON-escaped text)."""
    for group in ("dq", "sq", "bq"):
        if m.group(group) is not None:
            start, end = m.span(group)
            text = m.string
            if start < end and (text[start] in _NOT_VALUE_START or "\\n" in m.group(group)
                                or "\\r" in m.group(group)):
                return None
            return start, end
    if m.group("v") is not None:
        return m.span("v")
    return None


def _judge(text: str, name: str, span: Span, level: int, spans: list[Span]) -> None:
    """Append ``span`` unless its value is one a credential name does not hide; an ``Authorization`` value keeps
    its scheme word and loses the rest of the line."""
    start, end = span
    value = text[start:end]
    low = value.lower()
    authorization = "authoriz" in name.lower()
    if authorization and low not in _SCHEME_WORDS and value.isalpha() and len(value) <= 24:
        # ``Authorization: Bot <cred>``, ``Authorization: SSWS <cred>``: any scheme word followed by a credential
        rest = _VALUE_RE.match(text, end)
        if rest is not None and rest.start() < rest.end() and text[end] in " \t":
            inner = _value_span(rest)
            if inner is not None and inner[1] > inner[0]:
                spans.append(inner)
                return
    if low in _SCHEME_WORDS:
        if authorization or name.lower() in ("auth", "x-auth"):
            rest = _VALUE_RE.match(text, end)
            if rest is not None:
                inner = _value_span(rest)
                if inner is not None and inner[1] > inner[0]:
                    spans.append(inner)
        return
    if low.split(" ", 1)[0] in _SCHEME_WORDS and "authoriz" in name.lower():
        word = low.split(" ", 1)[0]
        start += len(word)
        while start < end and text[start] == " ":
            start += 1
        if start < end:
            spans.append((start, end))
        return
    if not kept_value(value, name, level):
        spans.append((start, end))


def _name_before(text: str, pos: int) -> tuple[int, int]:
    """The ``[start, end)`` of the name ending (spaces and tabs aside) just before ``pos``."""
    if pos == 0 or (text[pos - 1] not in _NAME_CHARS and text[pos - 1] not in " \t"):
        return pos, pos  # the common case in JSON and code (``": "``, ``): ``)
    end = pos
    while end > 0 and text[end - 1] in " \t":
        end -= 1
    start = end
    floor = max(0, end - MAX_NAME_CHARS - 1)
    while start > floor and text[start - 1] in _NAME_CHARS:
        start -= 1
    if start == floor and start > 0 and text[start - 1] in _NAME_CHARS:
        return end, end  # longer than any credential name
    if start > 0 and text[start - 1] == "\\" and start < end:
        # JSON-escaped text (any level: ``\\n``, ``\\\\n``): an escape's letters (``\\neos_token=``,
        # ``\\u00e9``) are not part of the name
        if text[start] in "nrtbf":
            start += 1
        elif text[start] == "u" and end - start >= 5 and all(c in string.hexdigits for c in text[start + 1:start + 5]):
            start += 5
    return start, end


def _assignments(text: str, spans: list[Span]) -> None:
    """``NAME=value`` and ``?name=value`` (a URL parameter's weak names count as strong)."""
    find = text.find
    eq = find("=")
    while eq >= 0:
        nxt = text[eq + 1 : eq + 2]
        if nxt in ("=", ">", "~") or (eq > 0 and text[eq - 1] in "!<>=+-*/%|&^:"):
            eq = find("=", eq + 1)
            continue
        start, end = _name_before(text, eq)
        if start < end:
            name = text[start:end]
            level = credential_name(name)
            if level:
                query = start > 0 and text[start - 1] in _QUERY_LEADERS and end == eq
                if level == WEAK and query:
                    level = STRONG
                m = _VALUE_RE.match(text, eq + 1)
                if m is not None:
                    span = _value_span(m)
                    if span is not None and query and m.group("v") is not None:
                        cut = text.find("#", span[0], span[1])  # a URL's fragment ends its parameter
                        span = (span[0], cut) if cut >= 0 else span
                    if span is not None and span[1] > span[0]:
                        _judge(text, name, span, level, spans)
                        eq = find("=", span[1])
                        continue
        eq = find("=", eq + 1)


def _colon_pairs(text: str, spans: list[Span]) -> None:
    """``NAME: value`` (not ``://``, not ``::``)."""
    find = text.find
    colon = find(":")
    while colon >= 0:
        if text[colon + 1 : colon + 2] in (":", "/", "\\", "=") or (colon > 0 and text[colon - 1] == ":"):
            colon = find(":", colon + 1)
            continue
        start, end = _name_before(text, colon)
        if start < end:
            name = text[start:end]
            level = credential_name(name)
            if level:
                m = _VALUE_RE.match(text, colon + 1)
                if (m is not None and not text[m.start():m.start() + 1] in "{["
                        and (m.group("v") is not None or m.end() > m.start() and text[m.start()] in " \t")):
                    # a quote glued to the colon (``cookie:" --x="``) closes a string the name stood in
                    span = _value_span(m)
                    if span is not None and span[1] > span[0] and not _prose_value(text, *span):
                        _judge(text, name, span, level, spans)
                        colon = find(":", span[1])
                        continue
        colon = find(":", colon + 1)


def is_sensitive_pair(key: str, value: object) -> bool:
    """Whether a quoted ``"key": value`` pair hides its value: the sensitive-key rule of §8.2.4, or a strong
    credential name (``secret_key_base``)."""
    global _is_sensitive_key
    if _is_sensitive_key is None:
        from .scrub import is_sensitive_key  # the §8.2.4 rule lives with the public API (which imports this module)

        _is_sensitive_key = is_sensitive_key
    return _is_sensitive_key(key, value) or credential_name(key) == STRONG


_is_sensitive_key: Callable[[str, object], bool] | None = None


def _quoted_pairs(text: str, spans: list[Span]) -> None:
    """Quoted ``"key": value`` pairs (JSON, Python reprs). After a pair whose key is not sensitive the search
    resumes at its value's opening quote, so a pair that starts inside that value is still found.

    Driven by the quote-colon ends of keys (found at C speed), each key read backwards to its opening quote: the
    same pairs as a search of :data:`_QUOTED_PAIR_RE` from left to right (a key holds no quote, so its opening
    quote is the nearest one before its end), at a fraction of the cost on code and JSON."""
    pos = 0  # no pair starts before this (the previous pair, or its value, reaches it)
    rfind = text.rfind
    for end in _PAIR_END_RE.finditer(text):
        close = end.start()
        quote = text[close]
        opening = rfind(quote, close - 129 if close > 129 else 0, close)
        if opening < pos or close - opening < 2:
            continue
        key = text[opening + 1:close]
        if "'" in key or '"' in key or "\\" in key or "\n" in key:
            continue  # the nearest quote, backslash or line break before the key's end is not its opening quote
        if not is_sensitive_pair(key, ""):
            # no value makes this key sensitive (a string value is the most a key can hide); its value holds no
            # quote before its own opening one, so resuming after the colon finds what resuming there would
            pos = end.end()
            continue
        m = _PAIR_VALUE_RE.match(text, end.end())
        if m is None:
            continue
        scalar = m.group("scalar")
        pos = m.end()
        if scalar is not None:
            if scalar in ("null", "None", "true", "false", "True", "False"):
                continue
            value: object = 0 if _INT_RE.fullmatch(scalar) else scalar
            if is_sensitive_pair(key, value):
                spans.append(m.span("scalar"))
            continue
        group = "dq" if m.group("dq") is not None else "sq"
        span = m.span(group)
        if span[1] > span[0] and is_sensitive_pair(key, ""):
            _judge(text, key, span, STRONG, spans)
        else:
            pos = span[0] - 1


def _markup(text: str, spans: list[Span]) -> None:
    """``<password>value</password>`` (Maven, Tomcat, XML configs) and ``<add key="ApiKey" value="..."/>`` (.NET
    application settings): the element's text or the ``value`` attribute, judged by the name."""
    for m in _ELEMENT_RE.finditer(text):
        name = m.group("n")
        level = credential_name(name)
        if level:
            _judge(text, name, m.span("v"), level, spans)
    for m in _SETTING_RE.finditer(text):
        name = m.group("n")
        level = credential_name(name)
        if level and m.end("v") > m.start("v"):
            _judge(text, name, m.span("v"), level, spans)


def _flags(text: str, spans: list[Span]) -> None:
    """``--name value`` whose name is a credential name, after any character that is not part of a word."""
    for m in _FLAG_RE.finditer(text):
        s = m.start()
        if s > 0 and (text[s - 1] in _NAME_CHARS and text[s - 1] != "."):
            continue
        name = m.group("name")
        if text[s + 1] != "-" and not (_SINGLE_DASH_NAME_RE.fullmatch(name)
                                       and credential_word(name.replace("_", "-").rsplit("-", 1)[-1])):
            continue  # ``-pS3cret app``: a value glued to a one-letter option, not an option named for a credential
        level = credential_name(name)
        if not level:
            continue
        v = _VALUE_RE.match(text, m.end())
        if v is not None:
            span = _value_span(v)
            if span is not None and span[1] > span[0]:
                _judge(text, name, span, level, spans)


def _userinfo(text: str, spans: list[Span]) -> None:
    """The password of every ``scheme://user:password@``."""
    find = text.find
    sep = find("://")
    while sep >= 0:
        start = sep
        while start > 0 and text[start - 1] in _SCHEME_CHARS:
            start -= 1
        while start < sep and not text[start].isalpha():
            start += 1
        if start < sep:
            m = _USERINFO_RE.match(text, sep + 3)
            if m is not None and m.end("pw") > m.start("pw"):
                spans.append(m.span("pw"))
                sep = find("://", m.end())
                continue
        sep = find("://", sep + 1)


def _auth_schemes(text: str, spans: list[Span]) -> None:
    """``Bearer X`` / ``Basic X`` (OBS-57: the scheme word stays, the credential goes). Written in lower case and
    followed by a lower-case word, it is prose ("a basic idea", "the bearer of"), not a header."""
    low = text.lower()
    aligned = len(low) == len(text)  # lower() keeps every offset (it does unless a letter lowers to two)
    search, match = _AUTH_SCHEME_RE.search, _AUTH_SCHEME_RE.match
    pos = 0
    ahead = {"bearer": -1, "basic": -1}  # each word's next place, sought again only once passed (else quadratic)
    while True:
        if aligned:  # the scheme words found at C speed, the pattern tried only there
            m = None
            while m is None:
                for word, at in ahead.items():
                    if -1 <= at < pos:  # len(low) + 1 once absent
                        ahead[word] = low.find(word, pos) % (len(low) + 2)
                first = min(ahead.values())
                if first > len(low):
                    return
                m = match(text, first)
                pos = first + 1
        else:
            m = search(text, pos)
        if m is None:
            return
        start, end = m.span("c")
        cred = m.group("c")
        if cred.lower() in _SCHEME_WORDS:  # "Basic Bearer <cred>": judge the second scheme word
            pos = start
            continue
        pos = end
        stripped = cred.rstrip(".,;:!?)")
        if not stripped or not (stripped[0].isalnum() or stripped[0] in "._~+/-") or not any(
                c.isalnum() for c in stripped):
            continue  # a credential is a token68 (RFC 7235): "basic | 37 |", "Token: basic (NUMBER)" hold none
        if _word(stripped) and (m.group("w")[0].islower() or stripped != cred
                                or (text[end:end + 1] == " " and text[end + 1:end + 2].isalpha())):
            continue  # "the bearer of", "Bearer tokens are ...", "Basic setup.": a sentence goes on, not a header
        if stripped.startswith("<redacted") or stripped.startswith("[REDACTED"):
            continue
        spans.append((start, start + len(stripped)))


def _word(text: str) -> bool:
    """A word as prose writes it (``tokens``, ``Setup``, ``TODO``): letters only, lower or title case (capitals
    only when short), no longer than a word gets; a generated credential mixes cases or holds a digit or a
    symbol."""
    return (len(text) <= 24 and text.isalpha()
            and (text.islower() or text.istitle() or (text.isupper() and len(text) <= 6)))


def _prose_value(text: str, start: int, end: int) -> bool:
    """``password: it must be ...``: a lower-case word after the colon that a sentence goes on from (a space and
    another lower-case word), so the colon ends a phrase, not a name."""
    value = text[start:end]
    return (value.isalpha() and value.islower() and text[end:end + 1] == " "
            and text[end + 1:end + 2].isalpha() and text[end + 1:end + 2].islower())


def find_shape_spans(text: str, low: str, spans: list[Span], gated: bool = True) -> None:
    """Append the span of every value a name, a flag, a scheme or a client option marks as a credential.

    ``gated=False`` runs every finder without its pre-check (the tests' reference: the pre-checks are exact).
    """
    if not gated:
        for finder in (_userinfo, _auth_schemes, _quoted_pairs, _colon_pairs, _assignments, _flags, _markup,
                       find_client_passwords):
            finder(text, spans)
        return
    has_hint = ("pass" in low or "pwd" in low or "secret" in low or "token" in low or "key" in low
                or "credential" in low or "cookie" in low or "auth" in low or "sig" in low or "session" in low
                or "code" in low or "pin" in low or "pat" in low or "sas" in low or "dsn" in low or "otp" in low
                or "mfa" in low)
    if "://" in text and "@" in text:
        _userinfo(text, spans)
    if "bearer" in low or "basic" in low:
        _auth_schemes(text, spans)
    if has_hint:
        has_colon = ":" in text
        if has_colon and ('"' in text or "'" in text):
            _quoted_pairs(text, spans)
        if has_colon:
            _colon_pairs(text, spans)
        if "=" in text:
            _assignments(text, spans)
        if "-" in text:
            _flags(text, spans)
        if "</" in text or "value=" in text:
            _markup(text, spans)
    if "-" in text and any(c in low for c in CLIENT_HINTS):
        find_client_passwords(text, spans)

"""Credential shapes keyed on a credential-like name: ``KEY: VALUE``, ``--flag VALUE``, command-line passwords.

The widened half of the scrubber's detector list (spec 04 FMT-33a: the scrubber of 01 §8.2 also
recognises ``KEY: VALUE`` and ``--flag VALUE`` shapes for credential-like names, and the password
options of common database clients). :mod:`~hermes_pipeline.engine.scrub` runs these rules after
its quoted-pair rule and before its ``NAME=value`` rule, each behind a cheap substring pre-check.
Each rule replaces only the value, entirely, by :data:`REDACTED` (no character of the secret is
kept), and keeps the quotes of a quoted value.

All scans are linear: the ``KEY: VALUE`` scanner starts from each ``:`` and walks the name
backwards (bounded by the previous replacement), the flag pattern is anchored on the literal
``--``, and each database-client command is scanned once up to the end of its command segment.
"""

from __future__ import annotations

import re
import string
from typing import Final

__all__ = ["ESCAPED_QUOTED", "NAME_HINTS", "REDACTED", "credential_name", "scrub_colon_pairs",
           "scrub_command_passwords", "scrub_flags"]

REDACTED: Final = "<redacted>"
"""Redaction marker (01 §8.2.1)."""

# A credential-like name: what a human or a tool names a password, passphrase, secret, token, key or
# cookie; ``pass``, ``pwd`` and ``auth`` only as the whole name or its last segment (``db_pass``), so
# ``bypass`` or ``compass`` never match. ``tokenizer`` and ``secretary`` are not credentials.
_CREDENTIAL_NAME_RE: Final = re.compile(
    r"passw(?:or)?d|pass[_-]?phrase|secret(?!ar)|token(?!iz)|api[_-]?key|access[_-]?key|private[_-]?key"
    r"|credential|cookie|authorization|(?<![a-z0-9])(?:pass|pwd|auth)$",
    re.IGNORECASE,
)

NAME_HINTS: Final = ("pass", "pwd", "secret", "token", "key", "credential", "cookie", "auth")
"""Lowercase substrings without one of which no name is credential-like (the rules' exact pre-check)."""

_NAME_CHARS: Final = frozenset(string.ascii_letters + string.digits + "_.-")
_SCHEME_WORDS: Final = ("bearer", "basic")
"""Values left to the authorization-scheme rule, which keeps the word and redacts what follows it."""

ESCAPED_QUOTED: Final = r"(?P<eq>\\[\"'])(?:(?!(?P=eq))[^\n])*+(?P=eq)?"
"""A value between escaped quotes (backslash-quote, as in JSON-encoded text), to the closing escaped quote
or the end of the line. Every value pattern tries it first, so an escaped quote never ends a value early."""
_QUOTED: Final = ESCAPED_QUOTED + r"|(?P<dq>\")[^\"\n]*+\"?|(?P<sq>')[^'\n]*+'?"
"""A quoted value (escaped, double or single quotes) to its closing quote or the end of the line."""

# The value of ``KEY: VALUE``: a quoted value, or a run of non-space, non-quote characters that does
# not open a JSON object or array.
_COLON_VALUE_RE: Final = re.compile(r"[ \t]*+(?P<v>" + _QUOTED + r"|(?![{\[])[^\s\"']++)")

# ``--name VALUE`` after a space, a quote, a parenthesis or the start of the text; the "not glued"
# check is a lookbehind placed after the literal ``--`` so the engine can skip to candidates.
_FLAG_RE: Final = re.compile(
    r"--(?<![^\s\"'(]--)(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]*+)[ \t]++(?P<v>" + _QUOTED + r"|(?!--)[^\s\"']++)"
)

# Database clients whose ``-p`` option carries the password glued to it (``mysql -pSECRET``), and
# ``sshpass``, whose ``-p`` takes it as the next word.
_DB_COMMAND_RE: Final = re.compile(r"(?<![A-Za-z0-9_])(?:mysql[a-z_-]*+|mariadb[a-z_-]*+|sshpass)(?![A-Za-z0-9_])",
                                   re.IGNORECASE)
_GLUED_P_RE: Final = re.compile(r"(?<!\S)-p(?P<v>" + _QUOTED + r"|[^\s\"';|&]++)")
_SPACED_P_RE: Final = re.compile(r"(?<!\S)-p[ \t]*+(?P<v>" + _QUOTED + r"|[^\s\"';|&-][^\s\"';|&]*+)")
_SEGMENT_END_RE: Final = re.compile(r"[\n;|&]")


def credential_name(name: str) -> bool:
    """Whether ``name`` (a key, a ``KEY:`` label or a ``--flag`` name) is credential-like."""
    return _CREDENTIAL_NAME_RE.search(name) is not None


def _kept(name_end_lower: str, value: str) -> bool:
    """Values a credential-like name does not hide: a scheme word (its own rule redacts what follows)
    and a plain count under a ``...tokens`` name (``input_tokens: 52``)."""
    low = value.lower()
    if low in _SCHEME_WORDS:
        return True
    return name_end_lower.endswith("tokens") and value.isdigit()


def _replacement(m: re.Match[str]) -> str:
    quote = m.group("eq") or m.group("dq") or m.group("sq") or ""
    return f"{quote}{REDACTED}{quote}"


def scrub_colon_pairs(text: str) -> str:
    """Redact the value of every ``NAME: value`` / ``NAME:value`` whose name is credential-like."""
    find = text.find
    value_match = _COLON_VALUE_RE.match
    name_search = _CREDENTIAL_NAME_RE.search
    name_chars = _NAME_CHARS
    parts: list[str] = []
    last = 0
    colon = find(":")
    while colon >= 0:
        end = colon
        while end > last and text[end - 1] in " \t":
            end -= 1
        start = end
        while start > last and text[start - 1] in name_chars:
            start -= 1
        if (start < end and (start == 0 or text[start - 1] not in name_chars) and name_search(text, start, end)
                and text[colon + 1 : colon + 3] != "//"):
            m = value_match(text, colon + 1)
            if m is not None and not _kept(text[start:end].lower(), m.group("v")):
                parts.append(text[last : m.start("v")])
                parts.append(_replacement(m))
                last = m.end()
                colon = find(":", last)
                continue
        colon = find(":", colon + 1)
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)


def _flag(m: re.Match[str]) -> str:
    name = m.group("name")
    if not credential_name(name) or _kept(name.lower(), m.group("v")):
        return m.group(0)
    return m.string[m.start() : m.start("v")] + _replacement(m)


def scrub_flags(text: str) -> str:
    """Redact the value of every ``--name VALUE`` whose name is credential-like (``--password X``)."""
    return _FLAG_RE.sub(_flag, text)


def scrub_command_passwords(text: str) -> str:
    """Redact ``-pSECRET`` after ``mysql`` / ``mysqldump`` / ``mariadb`` ... and ``-p SECRET`` after ``sshpass``,
    within the same command (up to the next newline, ``;``, ``|`` or ``&``)."""
    parts: list[str] = []
    last = 0
    pos = 0
    search = _DB_COMMAND_RE.search
    while True:
        m = search(text, pos)
        if m is None:
            break
        seg = _SEGMENT_END_RE.search(text, m.end())
        end = seg.start() if seg is not None else len(text)
        pattern = _SPACED_P_RE if m.group(0).lower() == "sshpass" else _GLUED_P_RE
        for pm in pattern.finditer(text, m.end(), end):
            parts.append(text[last : pm.start("v")])
            parts.append(_replacement(pm))
            last = pm.end("v")
        pos = end
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)

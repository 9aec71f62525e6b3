"""Value scrubbing for observer payloads (spec 01 §8.2.4, §8.2.5, §8.4, §7.9).

This module holds the string-level half of the payload sanitizer:

* :func:`scrub_text` rewrites credentials found in free text (OBS-57, OBS-58, OBS-59);
* :func:`safe_scrub` never raises and never falls back to the raw text (OBS-60);
* :func:`scrub_message` / :func:`scrub_prompt` are the error-message (OBS-62, OBS-39) and
  human-input prompt (OBS-64) variants;
* :func:`is_sensitive_key` is the sensitive-key rule of §8.2.4;
* :func:`url_target` renders a subagent ``tool_call_history`` target (§7.9, OBS-48).

Performance: every regex is compiled once at import time. :func:`scrub_text` lowercases the
text once and runs a rule only when one of that rule's trigger substrings occurs, so a clean
string costs one ``str.lower()`` plus a few dozen substring tests. All patterns are linear:
runs are possessive (``*+``, ``++``) wherever no backtracking is needed, and every pattern
that could start anywhere is anchored on a literal or on a word start.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

__all__ = [
    "REDACTED",
    "REDACTION_FAILED",
    "TRUNCATION_SUFFIX",
    "is_sensitive_key",
    "safe_scrub",
    "scrub_message",
    "scrub_prompt",
    "scrub_text",
    "truncate",
    "url_target",
]

REDACTED: Final = "<redacted>"
"""Redaction marker (§8.2.1)."""

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

_KEY_NOT_SENSITIVE: Final = 0
_KEY_ALWAYS_SENSITIVE: Final = 1
_KEY_PLURAL_TOKENS: Final = 2


def normalize_key(key: str) -> str:
    """Lowercase ``key`` and keep only the characters for which ``str.isalnum`` holds (§8.2.4)."""
    return "".join([ch for ch in key.lower() if ch.isalnum()])


@lru_cache(maxsize=8192)
def _key_class(key: str) -> int:
    """Classify a key: never / always sensitive, or sensitive depending on the value (rule c)."""
    norm = normalize_key(key)
    if norm in _EXACT_SENSITIVE_KEYS or norm.endswith(_SENSITIVE_SUFFIXES):
        return _KEY_ALWAYS_SENSITIVE
    if norm.endswith("tokens"):
        return _KEY_PLURAL_TOKENS
    return _KEY_NOT_SENSITIVE


def is_sensitive_key(key: str, value: object) -> bool:
    """Return whether ``key`` is sensitive for ``value`` under the rule of §8.2.4.

    The key is normalized (lowercased, non-alphanumerics dropped). It is sensitive on an exact
    match with one of the 38 names, on a suffix match, or (plural-token rule) when it ends with
    ``tokens`` and ``value`` is neither ``None`` nor exactly an ``int`` or ``float``; a ``bool``
    value therefore counts as sensitive. Classification of a key is cached.
    """
    cls = _key_class(key if type(key) is str else str(key))
    if cls == _KEY_ALWAYS_SENSITIVE:
        return True
    if cls == _KEY_PLURAL_TOKENS:
        return not (value is None or type(value) is int or type(value) is float)
    return False


# ---------------------------------------------------------------------------------------------
# Credential patterns (§8.2.5)
# ---------------------------------------------------------------------------------------------

# OBS-57: whole word Bearer/Basic, whitespace, then a run of non-whitespace, non-quote chars.
# The credential may not itself be a scheme word, so "Basic Bearer <cred>" still redacts <cred>.
_AUTH_SCHEME_RE: Final = re.compile(
    r"\b(bearer|basic)(\s++)(?!(?:bearer|basic)(?:\s|$))[^\s\"']++", re.IGNORECASE
)

# OBS-58: vendor-prefixed API keys and tokens. Case-sensitive, must not be glued to a preceding
# letter or digit (so ``task-...`` or ``mask_live_...`` never match).
_VENDOR_KEY_RE: Final = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"sk-[A-Za-z0-9_-]{10,}+"  # OpenAI / Anthropic / OpenRouter (sk-proj-, sk-ant-, ...)
    r"|[sr]k_(?:live|test)_[A-Za-z0-9]{10,}+"  # Stripe
    r"|gh[pousr]_[A-Za-z0-9]{10,}+"  # GitHub classic tokens
    r"|github_pat_[A-Za-z0-9_]{10,}+"  # GitHub fine-grained PAT
    r"|xox[a-z]-[A-Za-z0-9-]{10,}+"  # Slack
    r"|AIza[A-Za-z0-9_-]{20,}+"  # Google API keys
    r"|(?:AKIA|ASIA)[A-Z0-9]{12,}+"  # AWS access key IDs
    r"|hf_[A-Za-z0-9]{10,}+"  # Hugging Face
    r"|npm_[A-Za-z0-9]{10,}+"  # npm
    r"|pypi-[A-Za-z0-9_-]{10,}+"  # PyPI
    r"|gsk_[A-Za-z0-9]{10,}+"  # Groq
    r"|xai-[A-Za-z0-9_-]{10,}+"  # xAI
    r")"
)
_VENDOR_HINTS: Final = (
    "sk-",
    "k_live_",
    "k_test_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xox",
    "aiza",
    "akia",
    "asia",
    "hf_",
    "npm_",
    "pypi-",
    "gsk_",
    "xai-",
)

# JWTs: base64url JSON header ``eyJ...`` plus up to two more dot-separated segments.
_JWT_RE: Final = re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_=-]{10,}+(?:\.[A-Za-z0-9_=-]++){0,2}+")

# PEM private-key blocks; an unterminated block is redacted to the end of the text.
_PEM_RE: Final = re.compile(
    r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|.*+)",
    re.DOTALL,
)

# URL userinfo / DB connection strings: scheme://user:password@host -> password redacted.
# The password run may contain '@' (unencoded); it ends at the last '@' before '/', '?', '#'.
_USERINFO_RE: Final = re.compile(
    r"(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*+://[^\s:/?#@\"'<>]*+:)[^\s/?#\"']*@"
)

# Sensitive URL query parameters (case-insensitive names); only the value is replaced.
_QUERY_PARAM_RE: Final = re.compile(
    r"([?&;](?:access_token|refresh_token|id_token|token|api_key|apikey|client_secret|password"
    r"|auth|jwt|session|secret|key|code|signature|x-amz-signature)=)[^&;#\s\"']++",
    re.IGNORECASE,
)
_QUERY_HINTS: Final = ("token", "key", "secret", "password", "auth", "jwt", "session", "code", "signature")

# NAME=value assignments whose upper-cased NAME contains a secret word. The lookahead finds the
# word inside the name (lazy, bounded by the name), the name itself is matched possessively, so
# a long name costs linear time. Quoted values run to the closing quote or the end of the line.
_ASSIGNMENT_RE: Final = re.compile(
    r"(?<![A-Za-z0-9_.-])"
    r"(?=[A-Za-z0-9_.-]*?(?:API[_-]?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH))"
    r"([A-Za-z0-9_.-]++[ \t]*+=[ \t]*+)"
    r"(?:(\")[^\"\n]*+\"?|(')[^'\n]*+'?|(?!=)[^\s\"'&;]++)",
    re.IGNORECASE,
)
_ASSIGNMENT_HINTS: Final = ("key", "token", "secret", "passw", "credential", "auth")

# Quoted "key": value pairs (JSON / Python-repr text, optionally with escaped quotes as found in
# double-encoded JSON). Keys are judged with :func:`is_sensitive_key`.
_QUOTED_PAIR_RE: Final = re.compile(
    r"(?P<kq>\\?[\"'])(?P<key>[^\"'\\\n]{1,128}+)(?P=kq)[ \t]*+:[ \t]*+"
    r"(?:(?P<vq>\\?[\"'])(?P<val>(?:(?!(?P=vq))(?:\\.|[^\\\n]))*+)(?P=vq)?"
    r"|(?P<scalar>(?![{\[])[^\s,}\]\"'\\]++))"
)
_INT_RE: Final = re.compile(r"[-+]?\d++")

_MIN_SECRET_TEXT: Final = 5
"""No rule can match a text shorter than this (the shortest is ``?key=x``)."""


def _replace_assignment(m: re.Match[str]) -> str:
    quote = m.group(2) or m.group(3) or ""
    return f"{m.group(1)}{quote}{REDACTED}{quote}"


def _parse_scalar(text: str) -> object:
    """Type an unquoted JSON/Python scalar so the plural-token rule can see numbers."""
    if text in ("null", "None"):
        return None
    if text in ("true", "false", "True", "False"):
        return text[0] in "tT"
    if _INT_RE.fullmatch(text):
        return 0
    try:
        return float(text)
    except ValueError:
        return text


def _scrub_quoted_pairs(text: str) -> str:
    """Redact the values of quoted ``"key": value`` pairs whose key is sensitive.

    Written as a search loop rather than ``re.sub`` so that, for a non-sensitive key, scanning
    resumes at the start of its value: keys nested inside an escaped-JSON string value are
    still examined.
    """
    search = _QUOTED_PAIR_RE.search
    parts: list[str] = []
    last = 0
    pos = 0
    while True:
        m = search(text, pos)
        if m is None:
            break
        scalar = m.group("scalar")
        value: object = "" if scalar is None else _parse_scalar(scalar)
        if is_sensitive_key(m.group("key"), value):
            group = "val" if scalar is None else "scalar"
            parts.append(text[last : m.start(group)])
            parts.append(REDACTED)
            last = m.end(group)
            pos = m.end()
        elif scalar is None:
            pos = m.start("vq")
        else:
            pos = m.end()
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)


def scrub_text(text: str) -> str:
    """Return ``text`` with credential-looking substrings replaced by ``<redacted>`` (§8.2.5).

    Covers authorization schemes (OBS-57) and the credential classes of OBS-58. Each match is
    replaced entirely; for structured matches (``NAME=value``, URL parameters, userinfo,
    quoted pairs, ``Bearer <cred>``) only the value part is replaced (OBS-59). The function
    may raise on pathological input (e.g. ``MemoryError``); use :func:`safe_scrub` when a
    never-raising variant is needed.
    """
    if len(text) < _MIN_SECRET_TEXT:
        return text
    low = text.lower()
    if "private key" in low:
        text = _PEM_RE.sub(REDACTED, text)
    if "://" in low and "@" in low:
        text = _USERINFO_RE.sub(rf"\g<1>{REDACTED}@", text)
    has_eq = "=" in low
    if has_eq and ("?" in low or "&" in low or ";" in low) and any(h in low for h in _QUERY_HINTS):
        text = _QUERY_PARAM_RE.sub(rf"\g<1>{REDACTED}", text)
    if "bearer" in low or "basic" in low:
        text = _AUTH_SCHEME_RE.sub(rf"\g<1>\g<2>{REDACTED}", text)
    if ":" in low and ('"' in low or "'" in low):
        text = _scrub_quoted_pairs(text)
    if has_eq and any(h in low for h in _ASSIGNMENT_HINTS):
        text = _ASSIGNMENT_RE.sub(_replace_assignment, text)
    if "eyj" in low:
        text = _JWT_RE.sub(REDACTED, text)
    if any(h in low for h in _VENDOR_HINTS):
        text = _VENDOR_KEY_RE.sub(REDACTED, text)
    return text


def safe_scrub(text: str) -> str:
    """:func:`scrub_text`, but any exception yields ``<redaction failed>`` (OBS-60)."""
    try:
        return scrub_text(text)
    except Exception:
        return REDACTION_FAILED


def truncate(text: str, cap: int) -> str:
    """Cut ``text`` to ``cap`` characters plus ``...[truncated N chars]`` when it is longer."""
    n = len(text)
    if n <= cap:
        return text
    return f"{text[:cap]}...[truncated {n - cap} chars]"


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
# tool_call_history targets (§7.9, OBS-48)
# ---------------------------------------------------------------------------------------------

# scheme://authority path [?query] [#fragment]; each URL ends at whitespace.
_URL_RE: Final = re.compile(
    r"(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*+://)([^\s/?#]*+)([^\s?#]*+)(?:[?#]\S*+)?"
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

"""Value scrubbing for observer payloads (spec 01 §8.2.4, §8.2.5, §8.4, §7.9).

(Over 400 lines on purpose: most of it is the table of credential patterns of OBS-58 and
the cheap pre-checks that guard them; they are kept side by side so they cannot drift.)

This module holds the string-level half of the payload sanitizer:

* :func:`scrub_text` rewrites credentials found in free text (OBS-57, OBS-58, OBS-59);
* :func:`safe_scrub` never raises and never falls back to the raw text (OBS-60);
* :func:`scrub_message` / :func:`scrub_prompt` are the error-message (OBS-62, OBS-39) and
  human-input prompt (OBS-64) variants;
* :func:`is_sensitive_key` is the sensitive-key rule of §8.2.4;
* :func:`url_target` renders a subagent ``tool_call_history`` target (§7.9, OBS-48).

Performance: every regex is compiled once at import time. :func:`scrub_text` lowercases the
text once and runs a rule only when one of that rule's trigger substrings occurs, so a clean
string costs one ``str.lower()`` plus a few dozen substring tests, and a short string already
found clean (tool names, IDs, paths recur in every payload) costs one set lookup. All patterns are linear:
runs are possessive (``*+``, ``++``) wherever no backtracking is needed, and every pattern
that could start anywhere is anchored on a literal or on a word start.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache
from typing import Final

from .scrub_shapes import (
    ESCAPED_QUOTED,
    NAME_HINTS as _NAME_HINTS,
    REDACTED,
    scrub_colon_pairs,
    scrub_command_passwords,
    scrub_flags,
)

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
_EXTRA_EXACT_KEYS: Final = frozenset({"pass"})
_EXTRA_SUFFIXES: Final = ("passphrase", "passphrases", "accesskey", "accesskeys", "pwd")

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
    if norm in _EXTRA_EXACT_KEYS or norm.endswith(_EXTRA_SUFFIXES):
        return _KEY_ALWAYS_SENSITIVE
    if norm.endswith("tokens"):
        return _KEY_PLURAL_TOKENS
    return _KEY_NOT_SENSITIVE


def is_sensitive_key(key: str, value: object) -> bool:
    """Return whether ``key`` is sensitive for ``value`` under the rule of §8.2.4.

    The key is normalized (lowercased, non-alphanumerics dropped). It is sensitive on an exact
    match with one of the 38 names, on a suffix match (plus hermes_pipeline's additions: ``pass``, and
    the suffixes ``passphrase``, ``accesskey`` and ``pwd``), or (plural-token rule) when it ends with
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
# "Whole word" is checked by a lookbehind after the word (same as a leading \b, but it lets the
# regex engine skip to candidate positions).
_AUTH_SCHEME_RE: Final = re.compile(
    r"(bearer(?<!\wbearer)|basic(?<!\wbasic))(\s++)(?!(?:bearer|basic)(?:\s|$))[^\s\"']++",
    re.IGNORECASE,
)

# OBS-58: vendor-prefixed API keys and tokens: (prefix, body) pairs. Case-sensitive; the prefix
# must not be glued to a preceding letter or digit (so ``task-...`` or ``mask_live_...`` never
# match). The "not preceded by" check is a lookbehind placed *after* the literal prefix, which
# lets the regex engine skip quickly to candidate positions (about 3x faster on long text).
_VENDOR_PREFIXES: Final = (
    ("sk-", "[A-Za-z0-9_-]{10,}+"),  # OpenAI / Anthropic / OpenRouter (sk-proj-, sk-ant-, ...)
    ("[sr]k_(?:live|test)_", "[A-Za-z0-9]{10,}+"),  # Stripe
    ("gh[pousr]_", "[A-Za-z0-9]{10,}+"),  # GitHub classic tokens
    ("github_pat_", "[A-Za-z0-9_]{10,}+"),  # GitHub fine-grained PAT
    ("xox[a-z]-", "[A-Za-z0-9-]{10,}+"),  # Slack
    ("AIza", "[A-Za-z0-9_-]{20,}+"),  # Google API keys
    ("(?:AKIA|ASIA)", "[A-Z0-9]{12,}+"),  # AWS access key IDs
    ("hf_", "[A-Za-z0-9]{10,}+"),  # Hugging Face
    ("npm_", "[A-Za-z0-9]{10,}+"),  # npm
    ("pypi-", "[A-Za-z0-9_-]{10,}+"),  # PyPI
    ("gsk_", "[A-Za-z0-9]{10,}+"),  # Groq
    ("xai-", "[A-Za-z0-9_-]{10,}+"),  # xAI
    ("pk-lf-", "[A-Za-z0-9_-]{10,}+"),  # Langfuse public keys (secret keys are sk-lf-..., caught by sk-)
)
_VENDOR_KEY_RE: Final = re.compile(
    "|".join(f"{prefix}(?<![A-Za-z0-9]{prefix}){body}" for prefix, body in _VENDOR_PREFIXES)
)

# JWTs: base64url JSON header ``eyJ...`` plus up to two more dot-separated segments.
_JWT_RE: Final = re.compile(
    r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_=-]{10,}+(?:\.[A-Za-z0-9_=-]++){0,2}+"
)

# PEM private-key blocks; an unterminated block is redacted to the end of the text.
_PEM_RE: Final = re.compile(
    r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|.*+)",
    re.DOTALL,
)

# URL userinfo / DB connection strings: scheme://user:password@host -> password redacted.
# The password run may contain '@' (unencoded); it ends at the last '@' before '/', '?', '#'.
# Matched by :func:`_scrub_userinfo` from each "://"; equivalent regex:
#   (?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*+://[^\s:/?#@"'<>]*+:)[^\s/?#"']*@
_SCHEME_CHARS: Final = frozenset(string.ascii_letters + string.digits + "+.-")
_USERINFO_TAIL_RE: Final = re.compile(r"[^\s:/?#@\"'<>]*+:(?P<pw>[^\s/?#\"']*)@")

# Sensitive URL query parameters (case-insensitive names); only the value is replaced.
_QUERY_PARAM_RE: Final = re.compile(
    r"([?&;](?:access_token|refresh_token|id_token|token|api_key|apikey|client_secret|password"
    r"|auth|jwt|session|secret|key|code|signature|x-amz-signature)=)[^&;#\s\"']++",
    re.IGNORECASE,
)
_QUERY_HINTS: Final = (
    "token", "key", "secret", "password", "auth", "jwt", "session", "code", "signature"
)

# NAME=value assignments whose upper-cased NAME contains a secret word. Matched by
# :func:`_scrub_assignments`, which starts from each '=' and scans the name backwards, so the
# cost is proportional to the number of '=' rather than to the text length. Equivalent regex:
#   (?<![A-Za-z0-9_.-])(?=[A-Za-z0-9_.-]*?(?:API[_-]?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL
#   |AUTH))([A-Za-z0-9_.-]++[ \t]*+=[ \t]*+)(?:(")[^"\n]*+"?|(')[^'\n]*+'?|(?!=)[^\s"'&;]++)
# (case-insensitive). Quoted values run to the closing quote or the end of the line.
_NAME_CHARS: Final = frozenset(string.ascii_letters + string.digits + "_.-")
# hermes_pipeline adds passphrases, access and private keys, and ``PASS`` / ``PWD`` as the whole name or
# its last segment (``DB_PASS=``, ``pwd=``; not ``bypass=``).
_SECRET_NAME_RE: Final = re.compile(
    r"API[_-]?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|PASS[_-]?PHRASE|ACCESS[_-]?KEY|PRIVATE[_-]?KEY"
    r"|(?<![A-Za-z0-9])(?:PASS|PWD)$",
    re.IGNORECASE,
)
# (A value quoted with escaped quotes, as in JSON-encoded text, runs to the closing escaped quote.)
_ASSIGNMENT_VALUE_RE: Final = re.compile(
    r"[ \t]*+(?P<v>" + ESCAPED_QUOTED + r"|(?P<dq>\")[^\"\n]*+\"?|(?P<sq>')[^'\n]*+'?|(?!=)[^\s\"'&;]++)"
)

# Quoted "key": value pairs (JSON / Python-repr text, optionally with escaped quotes as found in
# double-encoded JSON). Keys are judged with :func:`is_sensitive_key`.
# (``\\["']|["']`` rather than ``\\?["']`` lets the engine skip to quote characters.)
_QUOTED_PAIR_RE: Final = re.compile(
    r"(?P<kq>\\[\"']|[\"'])(?P<key>[^\"'\\\n]{1,128}+)(?P=kq)[ \t]*+:[ \t]*+"
    r"(?:(?P<vq>\\[\"']|[\"'])(?P<val>(?:(?!(?P=vq))(?:\\.|[^\\\n]))*+)(?P=vq)?"
    r"|(?P<scalar>(?![{\[])[^\s,}\]\"'\\]++))"
)
_INT_RE: Final = re.compile(r"[-+]?\d++")

SCRUB_MIN_CHARS: Final = 5
"""Texts shorter than this cannot match any rule (the shortest matches, e.g. ``?key=x``, have 6)."""


def _scrub_userinfo(text: str) -> str:
    """Redact the password of every ``scheme://user:password@`` (OBS-58, OBS-59)."""
    find = text.find
    tail_match = _USERINFO_TAIL_RE.match
    scheme_chars = _SCHEME_CHARS
    letters = string.ascii_letters
    parts: list[str] = []
    last = 0
    sep = find("://")
    while sep >= 0:
        start = sep
        while start > last and text[start - 1] in scheme_chars:
            start -= 1
        if (
            start < sep
            and text[start] in letters
            and (start == 0 or text[start - 1] not in scheme_chars)
        ):
            m = tail_match(text, sep + 3)
            if m is not None:
                parts.append(text[last : m.start("pw")])
                parts.append(REDACTED)
                parts.append("@")
                last = m.end()
                sep = find("://", last)
                continue
        sep = find("://", sep + 1)
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)


def _scrub_assignments(text: str) -> str:
    """Redact the value of every ``NAME=value`` whose name contains a secret word (OBS-58)."""
    find = text.find
    value_match = _ASSIGNMENT_VALUE_RE.match
    name_chars = _NAME_CHARS
    parts: list[str] = []
    last = 0  # end of the previous replacement; matches never overlap it
    eq = find("=")
    while eq >= 0:
        end = eq
        while end > last and text[end - 1] in " \t":
            end -= 1
        start = end
        while start > last and text[start - 1] in name_chars:
            start -= 1
        # The name is judged before the value is matched: a value run can reach the end of the text,
        # so matching it first for every '=' would make "x=x=x=...token" quadratic.
        if start < end and (start == 0 or text[start - 1] not in name_chars) and _SECRET_NAME_RE.search(
                text, start, end):
            m = value_match(text, eq + 1)
            if m is not None:
                quote = m.group("eq") or m.group("dq") or m.group("sq") or ""
                parts.append(text[last : m.start("v")])
                parts.append(f"{quote}{REDACTED}{quote}")
                last = m.end()
                eq = find("=", last)
                continue
        eq = find("=", eq + 1)
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)


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


_CHARS_PER_COLON: Final = 200
"""With at most one ':' per this many characters, the KEY: VALUE rule judges the name before each ':'
instead of searching the whole text for the name hints first (measured break-even: about 180)."""
_PREFIX_REPL: Final = rf"\g<1>{REDACTED}"
_AUTH_SCHEME_REPL: Final = rf"\g<1>\g<2>{REDACTED}"


def _has_vendor_prefix(text: str) -> bool:
    """Cheap, exact pre-check for :data:`_VENDOR_KEY_RE` (its prefixes are case-sensitive)."""
    if "AIza" in text or "AKIA" in text or "ASIA" in text:
        return True
    # Every other prefix contains '-' or '_'.
    return ("-" in text or "_" in text) and (
        "sk-" in text
        or "k_live_" in text
        or "k_test_" in text
        or "ghp_" in text
        or "gho_" in text
        or "ghu_" in text
        or "ghs_" in text
        or "ghr_" in text
        or "github_pat_" in text
        or "xox" in text
        or "hf_" in text
        or "npm_" in text
        or "pypi-" in text
        or "gsk_" in text
        or "xai-" in text
        or "pk-lf-" in text
    )


def scrub_text(text: str) -> str:
    """Return ``text`` with credential-looking substrings replaced by ``<redacted>`` (§8.2.5).

    Covers authorization schemes (OBS-57) and the credential classes of OBS-58. Each match is
    replaced entirely; for structured matches (``NAME=value``, URL parameters, userinfo,
    quoted pairs, ``Bearer <cred>``) only the value part is replaced (OBS-59). The function
    may raise on pathological input (e.g. ``MemoryError``); use :func:`safe_scrub` when a
    never-raising variant is needed.

    Each rule runs only when a substring it cannot match without is present, so the common
    case (no trigger) costs a few substring tests.
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
    scrubbed = _scrub_rules(text)
    if scrubbed == text:
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
    return scrubbed


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


def _scrub_rules(text: str) -> str:
    """:func:`scrub_text` without the clean-text cache."""
    if text.isalnum():
        # No separator, quote, '=' or whitespace: only the letter-only token prefixes can match.
        if "eyJ" in text:
            text = _JWT_RE.sub(REDACTED, text)
        if "AIza" in text or "AKIA" in text or "ASIA" in text:
            text = _VENDOR_KEY_RE.sub(REDACTED, text)
        return text
    if "PRIVATE KEY" in text:
        text = _PEM_RE.sub(REDACTED, text)
    has_colon = ":" in text
    if has_colon and "://" in text and "@" in text:
        text = _scrub_userinfo(text)
    has_eq = "=" in text
    low = text.lower()
    if (
        has_eq
        and ("?" in text or "&" in text or ";" in text)
        and any(h in low for h in _QUERY_HINTS)
    ):
        text = _QUERY_PARAM_RE.sub(_PREFIX_REPL, text)
    if "bearer" in low or "basic" in low:
        text = _AUTH_SCHEME_RE.sub(_AUTH_SCHEME_REPL, text)
    if has_colon and ('"' in text or "'" in text):
        text = _scrub_quoted_pairs(text)
    # The name rules (KEY: VALUE, --flag VALUE, NAME=value) need a credential-like name, hence one of the
    # name hints. With few colons for the length it is cheaper to judge the name before each ':' than
    # to search the whole text for the hints (both are exact).
    has_hyphen = "-" in text  # one memchr; the two-character searches below cost ten times more
    has_dash = has_hyphen and "--" in text
    has_name: bool | None = None
    if has_colon:
        if text.count(":") * _CHARS_PER_COLON <= len(text):
            text = scrub_colon_pairs(text)
        else:
            has_name = any(h in low for h in _NAME_HINTS)
            if has_name:
                text = scrub_colon_pairs(text)
    if has_name is None and (has_dash or has_eq):
        has_name = any(h in low for h in _NAME_HINTS)
    if has_dash and has_name:
        text = scrub_flags(text)
    if has_hyphen and "-p" in text and ("mysql" in low or "mariadb" in low or "sshpass" in low):
        text = scrub_command_passwords(text)
    if has_eq and has_name:  # the name hints include every assignment hint
        text = _scrub_assignments(text)
    if "J" in text and "eyJ" in text:  # the one-character memchr first: "J" is rare in text
        text = _JWT_RE.sub(REDACTED, text)
    if _has_vendor_prefix(text):
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
# tool_call_history targets: URLs lose query string, fragment and user:password (§7.9, OBS-48)
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

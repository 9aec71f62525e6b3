"""Which names label a credential, and which values under such a name are one (spec 04 FMT-33a; issue #25).

The name-keyed shapes of the scrubber (``NAME=value``, ``NAME: value``, ``--name value``, ``?name=value``)
redact a value because of the name in front of it. A name is split into words (``_``, ``-``, ``.``, spaces and
camelCase boundaries: ``OPENAI_API_KEY`` -> ``openai api key``, ``xApiKey`` -> ``x api key``) and judged by its
words, never by substrings, so ``AUTHOR``, ``__author__``, ``tokenizer``, ``bypass`` or ``monkey`` are not
credential names:

* **strong** names hold a credential whatever it looks like: a word ``password`` / ``passwd`` / ``pwd`` /
  ``passphrase`` / ``secret`` / ``token`` / ``credential`` / ``cookie`` / ``auth`` / ``authorization`` /
  ``apikey`` ..., ``pass`` as the last word (``DB_PASS``), or ``key`` after a qualifier (``api key``,
  ``access key``, ``account key``, ``private key``, ``secret key`` ...);
* **weak** names (``key``, ``sig``, ``signature``, ``session``, ``code``, plural ``tokens``) hold a credential
  only when the value looks like one (:func:`secret_looking`);
* a name whose credential word is followed by a word saying it is *about* the credential (``token_count``,
  ``password_file``, ``api_key_env``, ``auth_type``, ``--password-stdin``), or a count (``max_tokens``,
  ``input_tokens``), is not a credential name.

Under any credential name a value is kept when it cannot be a credential: empty, a number under a ``token``
name, ``true`` / ``none`` / ``null`` ..., a placeholder (``<...>``, ``${VAR}``, ``$VAR``, ``{{x}}``, ``***``,
``...``), a redaction marker, or code (a call, a subscript, ``self.x`` / ``os.environ``, a type name, the name
itself).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

__all__ = ["NAME_HINTS", "STRONG", "WEAK", "credential_name", "credential_word", "kept_value", "secret_looking"]

STRONG: Final = 2
WEAK: Final = 1

NAME_HINTS: Final = ("pass", "pwd", "secret", "token", "key", "credential", "cookie", "auth", "sig", "session",
                     "code")
"""Lowercase substrings without one of which no name is a credential name (the detectors' cheap pre-check)."""

_STRONG_WORDS: Final = frozenset({
    "password", "passwords", "passwd", "pwd", "passphrase", "passphrases", "secret", "secrets", "token",
    "credential", "credentials", "cookie", "cookies", "auth", "authorization", "apikey", "apikeys",
    "accesskey", "secretkey", "privatekey", "accountkey", "masterkey", "clientsecret", "authtoken",
    "accesstoken", "refreshtoken", "sessiontoken", "idtoken", "bearertoken", "privkey", "pat", "pin",
    "sharedaccesskey", "sharedaccesssignature", "connectionstring", "sas", "dsn", "mfa", "otp", "totp",
})
_KEY_QUALIFIERS: Final = frozenset({
    "api", "access", "secret", "private", "account", "master", "encryption", "signing", "license", "licence",
    "auth", "client", "subscription", "service", "app", "consumer", "shared", "storage", "deploy", "ssh", "gpg",
    "pgp", "hmac", "jwt", "sas", "admin", "root", "write", "read", "session", "webhook",
    "crypt", "aes", "des", "rsa", "ed25519", "ecdsa", "decryption", "sign", "mac",
})
_KEY_NOT_SECRET_QUALIFIERS: Final = frozenset({
    "cache", "sort", "partition", "foreign", "index", "lookup", "hash", "dict", "map", "routing", "object", "row",
    "column", "group", "shard", "composite", "unique", "natural", "surrogate", "idempotency", "dedup", "dedupe",
    "s3", "registry", "recv", "list", "import", "export", "delete", "show", "refresh", "search", "trusted",
    "known", "authorized", "public", "pub", "verify", "verification", "range", "hot", "keyboard",
    "press", "hotkey", "shortcut", "music", "translation", "i18n", "locale", "message", "react", "dom", "state",
    "query", "form", "field", "attribute", "attr", "property", "prop", "json", "yaml", "redis", "kv",
})
"""Words before ``key`` / ``keys`` that make it a lookup, ordering or public key (``cache_key``, ``--recv-keys``,
``public_key``, ``sort_key``), never a credential."""
_WEAK_KEY_QUALIFIERS: Final = frozenset({"primary", "secondary"})
"""``primary key`` is a database column as often as a cloud account's key: its value must look generated."""
_GLUED_STRONG: Final = ("password", "passwd", "passphrase", "secret", "token", "apikey", "accesskey", "secretkey",
                        "privatekey", "credential", "credentials")
_WEAK_WORDS: Final = frozenset({"key", "keys", "sig", "signature", "session", "sessionid", "sid", "code", "tokens"})
_PASS_WORDS: Final = frozenset({"pass"})
"""Credential words only as the name's last word (``DB_PASS``; ``pass_through`` is no credential)."""
_ABOUT_WORDS: Final = frozenset({
    "count", "counts", "limit", "limits", "length", "len", "size", "type", "types", "name", "names", "file",
    "files", "path", "paths", "dir", "directory", "url", "uri", "endpoint", "endpoints", "id", "ids", "expiry",
    "expires", "expiration", "expire", "ttl", "timeout", "format", "field", "fields", "header", "headers", "env",
    "var", "variable", "prefix", "suffix", "usage", "budget", "min", "max", "num", "number", "index", "idx",
    "kind", "stdin", "cmd", "command", "policy", "rotation", "required", "enabled", "disabled", "provider",
    "source", "store", "manager", "helper", "location", "ref", "param", "parameter", "regex", "pattern", "label",
    "help", "hint", "prompt", "mode", "style", "method", "methods", "scheme", "strategy", "level", "version",
    "estimate", "estimator", "total", "rate", "ratio", "cost", "price", "error", "errors", "status", "check",
    "valid", "validation", "reset", "forgot", "strength", "age", "created", "updated", "at", "date",
    "time", "set", "input", "output", "class", "module", "plugin", "backend", "service", "handler",
    "callback", "bucket", "window", "page", "pages", "list", "lifetime", "duration", "in", "out", "used",
    "left", "remaining", "per", "flag", "option", "options", "setting", "settings", "config", "example",
    "placeholder", "description", "desc", "doc", "docs", "documentation", "link", "filename", "fd", "cache",
    "uuid", "host", "port", "user", "username", "login", "account", "email", "owner", "issuer",
    "audience", "scope", "scopes", "grant", "algorithm", "alg", "encoding", "charset", "mime", "hash_type",
})
_COUNT_LEADERS: Final = frozenset({
    "max", "min", "num", "n", "total", "input", "output", "prompt", "completion", "cached", "cache", "reasoning",
    "context", "count", "used", "remaining", "estimated", "billed", "embedding",
})

_VOCABULARY_TOKENS: Final = frozenset({
    "eos", "bos", "pad", "unk", "sep", "cls", "mask", "sos", "eot", "eom", "stop", "start", "end", "special",
    "image", "audio", "video", "vision", "tool", "think", "added", "extra", "control", "chat", "system",
    "new", "next", "first", "last", "decoder", "encoder", "default", "separator", "fim", "prefix", "suffix",
    "middle", "bad", "eog",
})
"""Words before ``token`` that name a tokenizer's vocabulary entry (``eos_token``, ``pad_token``), no credential."""

MAX_NAME_CHARS: Final = 128
"""A longer run of name characters is no name anyone gives a credential (and judging it would cost more)."""

_WORD_SPLIT: Final = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORD_SPLIT.findall(name)]


@lru_cache(maxsize=8192)
def credential_name(name: str) -> int:
    """0, :data:`WEAK` or :data:`STRONG`: how surely a value named ``name`` is a credential (module docstring)."""
    if len(name) > MAX_NAME_CHARS:
        return 0
    words = _words(name)
    if not words:
        return 0
    joined = "".join(words)
    best = 0
    last = len(words) - 1
    for i, word in enumerate(words):
        level = 0
        if word in _STRONG_WORDS:
            level = STRONG
        elif word in _PASS_WORDS and i == last:
            level = STRONG
        elif word in ("key", "keys") and i > 0 and words[i - 1] in _KEY_QUALIFIERS:
            level = STRONG
        elif word in ("key", "keys") and i > 0 and words[i - 1] in _KEY_NOT_SECRET_QUALIFIERS:
            continue
        elif word in ("key", "keys") and i > 0 and words[i - 1] in _WEAK_KEY_QUALIFIERS:
            level = WEAK
        elif word in _WEAK_WORDS:
            level = WEAK
        elif len(word) > 5 and word.endswith(_GLUED_STRONG):
            level = STRONG  # PGPASSWORD, MYSQLPASSWORD, githubtoken: a credential word glued to its qualifier
        if not level:
            continue
        rest = words[i + 1:]
        if rest and (rest[-1] in _ABOUT_WORDS or any(w in _ABOUT_WORDS and w not in ("key", "token") for w in rest)):
            continue
        if word in ("token", "tokens") and i > 0 and (words[i - 1] in _COUNT_LEADERS
                                                      or words[i - 1] in _VOCABULARY_TOKENS):
            continue
        if word == "tokens":
            level = WEAK
        best = max(best, level)
    if not best and joined in _STRONG_WORDS:
        best = STRONG
    if words == ["auth"]:
        best = WEAK  # ``auth: required``, ``auth: jwt``: a setting as often as a credential
    return best


def credential_word(word: str) -> bool:
    """Whether ``word`` (lower case) is itself a credential word (``token``, ``password``, ``key``), not one glued
    to something else."""
    return word in _STRONG_WORDS or word in _WEAK_WORDS or word in _PASS_WORDS


_PLACEHOLDER: Final = re.compile(
    r"<[^<>]*>|\$\{[^}]*\}?|\$[A-Za-z_][A-Za-z0-9_]*|\{\{.*\}\}|\{[A-Za-z_][A-Za-z0-9_.]*\}|%\([A-Za-z_]+\)s|%s"
    r"|\*+|•+|x{3,}|X{3,}|\.{2,}|…|_+|-+|#+|\?+|![A-Za-z][A-Za-z0-9_.-]*"
)
_NOT_SECRET_WORDS: Final = frozenset({
    "true", "false", "none", "null", "nil", "yes", "no", "on", "off", "undefined", "n/a", "na", "unset", "empty",
    "redacted", "hidden", "masked", "required", "optional", "str", "string", "int", "bytes", "bool", "any",
    "secretstr", "self", "cls", "sensitive", "omitted", "default", "auto", "env", "prompt", "ask", "stdin",
    "file", "keyring", "vault", "your_api_key", "your-api-key", "changeme_not", "notset", "not_set",
})
_CODE: Final = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\s*[(\[]"  # a call or a subscript
    r"|(?:import|await|lambda)(?:\s|$)"
    r"|(?:str|int|bytes|bool|float)\s*(?:\||$)"
    r"|!!"
)
# An attribute path from a name code reads credentials from (``self.token``, ``os.environ``, ``config.api_key``):
# kept only when no segment after the first looks generated (``t.vtnlNpXX2GL`` is a secret with a dot in it).
_CODE_PATH: Final = re.compile(
    r"(?:self|cls|os|env|process|config|settings|args|kwargs|opts|options|request|req|params|cfg|ctx|"
    r"context|this|data|payload|body|creds|credentials|secrets|environ|app|module|typing)"
    r"((?:\.[A-Za-z_][A-Za-z0-9_]*)+)"
)
_SNAKE_IDENT: Final = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
_WORDS_IDENT: Final = re.compile(r"[a-z]+(?:[_-][a-z]+)+|[A-Z]+(?:_[A-Z]+)+")
_DOTTED_IDENT: Final = re.compile(r"[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+")
_VARIABLE_WORDS: Final = frozenset({"password", "passwd", "pwd", "token", "secret", "key", "auth", "credential",
                                    "credentials", "cookie", "pass", "passphrase", "apikey"})


def kept_value(value: str, name: str, level: int) -> bool:
    """Whether ``value`` (already unquoted) stays under the credential name ``name`` (module docstring)."""
    v = value.strip()
    if not v:
        return True
    low = v.lower()
    if low in _NOT_SECRET_WORDS or _PLACEHOLDER.fullmatch(v):
        return True
    if v.startswith("<redacted") or v.startswith("[REDACTED"):
        return True
    words = _words(name)
    if v.lstrip("+-").replace(".", "", 1).isdigit():
        if any(w in ("token", "tokens") for w in words) or level == WEAK:
            return True
    path = _CODE_PATH.fullmatch(v)
    if path is not None and not any(secret_looking(seg) for seg in path.group(1).split(".")[1:]):
        return True
    if _CODE.match(v):
        return True
    if _DOTTED_IDENT.fullmatch(v) and not any(secret_looking(seg) for seg in v.split(".")):
        return True  # session_id.user, settings.api_key: an attribute read in code
    if "".join(_words(v)) == "".join(words) and words:
        return True  # password=password, token=token
    if _SNAKE_IDENT.fullmatch(v) and set(_words(v)) & set(words) & _VARIABLE_WORDS:
        return True  # api_key=api_key_value, token=user_token: a variable named for what it holds
    if level == WEAK:
        return not secret_looking(v)
    return False


def secret_looking(value: str) -> bool:
    """A value that looks like a generated credential: 8+ characters, no space, letters mixed with digits or
    symbols (or 16+ characters mixing cases)."""
    if len(value) < 8 or any(c.isspace() for c in value):
        return False
    if _WORDS_IDENT.fullmatch(value):
        return False  # stop_significant, user-profile, MAX_RETRIES: words joined, not generated
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    if has_digit and has_alpha:
        return True
    if has_alpha and len(value) >= 16:
        has_upper = any(c.isupper() for c in value)
        has_lower = any(c.islower() for c in value)
        symbols = any(not c.isalnum() for c in value)
        return (has_upper and has_lower and not value.istitle()) or (symbols and (has_upper or has_lower))
    return has_digit and len(value) >= 16 and any(not c.isalnum() for c in value)

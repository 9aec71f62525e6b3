"""Which names label a credential, and which values under such a name are one (spec 04 FMT-33a; issue #25).

(Over 400 lines on purpose: the name tables, the pre-check's hints computed from them and the rules for the values
a name hides are one judgement, kept in one module so that they cannot drift apart.)

The name-keyed shapes of the scrubber (``NAME=value``, ``NAME: value``, ``--name value``, ``?name=value``)
redact a value because of the name in front of it. A name is split into words (``_``, ``-``, ``.``, spaces and
camelCase boundaries: ``OPENAI_API_KEY`` -> ``openai api key``, ``xApiKey`` -> ``x api key``) and judged by its
words, never by substrings, so ``AUTHOR``, ``__author__``, ``tokenizer``, ``bypass`` or ``monkey`` are not
credential names:

* **strong** names hold a credential whatever it looks like: a word ``password`` / ``passwd`` / ``pwd`` /
  ``passphrase`` / ``secret`` / ``token`` / ``credential`` / ``cookie`` / ``auth`` / ``authorization`` /
  ``apikey`` ..., ``pass`` / ``pw`` as the last word (``DB_PASS``, ``DB_PW``), ``key`` after a qualifier (``api
  key``, ``access key``, ``private key`` ...), a compound (``connection string``, ``shared access signature``,
  ``pass word``), and the word for password in a few other languages (``Passwort``, ``senha``, ``contraseña``,
  ``Пароль``, ``密码``, ``パスワード``, ``비밀번호`` ...: :data:`FOREIGN_WORDS`, with the words for token and secret
  key; the word for key beside a qualifier: :data:`FOREIGN_KEY_WORDS`); a short credential word glued to its
  qualifier as the name's last word (``SMTPPASS``, ``DBPWD``, ``rootpw``, ``BASICAUTH``, ``oauth``; ``APPKEY``,
  ``licensekey``: ``key`` after a key qualifier), not an English word that ends so (``bypass``, ``monkey``);
* **weak** names (``key``, ``sig``, ``signature``, ``session``, ``sid``, ``code``, ``jwt``, ``pat``, plural
  ``tokens``) hold a credential only when the value looks like one (:func:`secret_looking`); in a URL's query or
  a cookie, session names (``session_id``, ``jsessionid``, ``PHPSESSID``, ``ticket``) count as strong;
* a name whose credential word is followed by a word saying it is *about* the credential (``token_count``,
  ``password_file``, ``api_key_env``, ``auth_type``, ``--password-stdin``, ``SSH_AUTH_SOCK``), or a count
  (``max_tokens``, ``input_tokens``), is not a credential name; nor is a phrase (``"Forgot password?"``,
  ``"Invalid token"``: the key of a translation).

:data:`NAME_HINTS` is computed from these tables: a text that holds none of them (lower-cased) holds no credential
name, so the detectors' pre-check on it is exact.

Under any credential name a value is kept when it cannot be a credential: empty, a number of at most three digits
(or a negative or decimal one), a number under a name that counts tokens (``max_tokens``, ``input_tokens``; not under
one that holds a token: ``refresh_token=483920`` is a credential), ``true`` / ``none`` / ``null`` / ``same-origin``
..., a placeholder (``<...>``, ``${VAR}``, ``$VAR``, ``{{x}}``, ``{x}``, ``***``, ``...``, ``sk-...``,
``YOUR_API_KEY``, ``xxxx``; what it names or starts with not generated, its words all words), a template
(``{{ .Values.x }}``, ``${{ secrets.X }}``), a redaction marker, a path, an ARN, code (a call or a subscript that
closes as a whole, of a name code gives a function, with the arguments code writes: not ``Hunter2(xyz)`` nor
``zRA9[@a9{S_k|pXz``; ``self.x`` / ``os.environ``, a dotted name, a type name, the name itself, a variable named for
what it holds when each of its pieces is a word), a regular expression; unquoted (code, YAML, a docstring) also a
lower-case word or words joined by ``_ - .`` and a CamelCase name: a generated credential mixes cases with digits or
symbols. A value written in quotes is a literal: a call only with a string argument (``"os.getenv('X')"``).
"""

from __future__ import annotations

import re
import string
from functools import lru_cache
from typing import Final

__all__ = ["FOREIGN_CODE_WORDS", "FOREIGN_KEY_WORDS", "FOREIGN_NOT_NAMES", "FOREIGN_WORDS", "NAME_HINTS", "NOT_GLUED",
           "STRONG", "WEAK", "call_extent", "camel_name", "code_call", "credential_name", "credential_word",
           "drawn_letters", "drawn_token", "english_word", "grouped_password", "kept_value", "open_call",
           "parameter_default", "phrase_name", "placeholder", "query_credential", "secret_looking", "wide_word"]

STRONG: Final = 2
WEAK: Final = 1

_STRONG_WORDS: Final = frozenset({
    "password", "passwords", "passwd", "pwd", "passphrase", "passphrases", "secret", "secrets", "token",
    "credential", "credentials", "cookie", "cookies", "auth", "authorization", "apikey", "apikeys",
    "accesskey", "secretkey", "privatekey", "accountkey", "masterkey", "clientsecret", "authtoken",
    "accesstoken", "refreshtoken", "sessiontoken", "idtoken", "bearertoken", "privkey", "pin",
    "sharedaccesskey", "sharedaccesssignature", "connectionstring", "sas", "dsn", "mfa", "otp", "totp",
    "passcode", "passkey", "creds", "psk", "psw", "pswd",
    # the word for password in other languages, written in ASCII
    "passwort", "kennwort", "senha", "contrasena", "wachtwoord", "haslo", "heslo", "salasana", "passord",
    "losenord", "sifre", "adgangskode", "jelszo",
    # and for token
    "jeton",
})
FOREIGN_CODE_WORDS: Final = (
    "验证码", "驗證碼", "校验码", "校驗碼", "动态码", "動態碼", "认证码", "認證碼", "恢复码", "恢復碼", "备用码", "備用碼",
    "認証コード", "確認コード", "ワンタイムコード", "リカバリーコード", "リカバリコード", "バックアップコード", "인증 코드",
    "인증코드", "인증번호", "확인 코드", "확인코드", "복구 코드", "복구코드", "백업 코드", "백업코드", "일회용 코드")
"""The words for a one-time, verification or recovery code (a value of digits alone is one)."""
FOREIGN_WORDS: Final = ("пароль", "密码", "密碼", "口令", "パスワード", "비밀번호", "contraseña", "hasło", "lösenord",
                        "şifre", "סיסמה", "токен", "令牌", "トークン", "토큰", "密钥", "秘钥", "密鑰", "秘鑰",
                        "シークレット", "秘密鍵", "секрет", "mot de passe", "mot_de_passe", "motdepasse", "clave secreta",
                        "패스워드", "パスフレーズ", "パスコード", "金鑰", "權杖", "授权码", "授權碼", "凭据", "憑據", "認証情報",
                        "資格情報", "비번", "암호", "كلمة المرور", "كلمة السر", "รหัสผ่าน", "mật khẩu", "jelszó", "पासवर्ड",
                        "парола", "лозинка", "κωδικός", "συνθηματικό", "رمز عبور", "סיסמא", "slaptažodis", "salasõna",
                        "lykilorð", "暗号鍵", "私钥", "私鑰", "密匙", "jeton", *FOREIGN_CODE_WORDS)
"""The word for password, token or secret key in other languages, as lower case finds it in a name (its letters are
not all ASCII, so the ASCII word split cannot see it): any name holding one is a strong credential name, unless it
holds it only inside one of :data:`FOREIGN_NOT_NAMES`."""
FOREIGN_NOT_NAMES: Final = ("암호화",)
"""Words holding a word of :data:`FOREIGN_WORDS` that name no credential: Korean ``암호화`` (encryption; ``암호``,
password, alone): ``암호화: AES-256``, ``암호화 키 길이: 256``."""
FOREIGN_KEY_WORDS: Final = ("schlüssel", "clé", "ключ", "キー", "키")
"""The word for *key* in other languages: a strong credential name beside an ASCII key qualifier (``API-Schlüssel``,
``clé API``, ``API ключ``), a weak one alone (a value under it must look generated)."""
_KEY_QUALIFIERS: Final = frozenset({
    "api", "access", "secret", "private", "priv", "account", "master", "encryption", "signing", "license", "licence",
    "auth", "client", "subscription", "service", "app", "consumer", "shared", "storage", "deploy", "ssh", "gpg",
    "pgp", "hmac", "jwt", "sas", "admin", "root", "write", "read", "session", "webhook",
    "crypt", "aes", "des", "rsa", "ed25519", "ecdsa", "decryption", "sign", "mac", "recovery", "unseal", "activation",
    "product", "backup", "vault", "wallet", "seed", "bitlocker", "filevault",
})
_CODE_NOT_SECRET_QUALIFIERS: Final = frozenset({
    "exit", "status", "error", "err", "return", "ret", "response", "resp", "http", "country", "zip", "postal", "post",
    "lang", "language", "locale", "currency", "region", "area", "phone", "dial", "iso", "op", "char", "color", "colour",
    "bar", "qr", "source", "src", "short", "product", "item", "sku", "event", "reason", "result", "exception", "signal",
    "unit", "airport", "station", "state", "city", "key", "scan", "hs", "icd", "naics", "sic", "ansi", "escape", "exec",
    "process", "rc", "termination", "close", "reply", "grpc", "rpc", "api", "fault", "failure", "diagnostic", "rule",
    "check", "lint", "warning", "finish", "stop", "tax", "department", "dept", "cost", "account", "bank", "swift",
    "branch", "routing", "course", "class", "subject", "airline", "flight", "carrier", "site", "store", "warehouse",
    "location", "vendor", "supplier", "customer", "client", "project", "job", "task", "type", "kind", "category"})
"""Words before ``code`` naming a code that is a number or a label (``exit_code``, ``country_code``, ``api_code``):
no credential; an authorization, verification or one-time code (``auth_code``, ``otp_code``) still is."""
_KEY_NOT_SECRET_QUALIFIERS: Final = frozenset({
    "cache", "sort", "partition", "foreign", "index", "lookup", "hash", "dict", "map", "routing", "object", "row",
    "column", "group", "shard", "composite", "unique", "natural", "surrogate", "idempotency", "dedup", "dedupe",
    "s3", "registry", "recv", "list", "import", "export", "delete", "show", "refresh", "search", "trusted",
    "known", "authorized", "public", "pub", "verify", "verification", "range", "hot", "keyboard",
    "press", "hotkey", "shortcut", "music", "translation", "i18n", "locale", "message", "react", "dom", "state",
    "query", "form", "field", "attribute", "attr", "property", "prop", "json", "yaml", "redis", "kv",
    "instrumentation", "socket", "websocket",
})
"""Words before ``key`` / ``keys`` that make it a lookup, ordering or public key (``cache_key``, ``--recv-keys``,
``public_key``, ``sort_key``), never a credential."""
_WEAK_KEY_QUALIFIERS: Final = frozenset({"primary", "secondary"})
"""``primary key`` is a database column as often as a cloud account's key: its value must look generated."""
_GLUED_STRONG: Final = ("password", "passwd", "passphrase", "secret", "token", "apikey", "accesskey", "secretkey",
                        "privatekey", "credential", "credentials", "creds")
_GLUED_PASS: Final = ("pass", "pwd", "pw", "auth")
"""Short credential words glued to what they belong to (``SMTPPASS``, ``keystorepass``, ``DBPWD``, ``rootpw``,
``BASICAUTH``, ``oauth``): strong unless the run is an English word or a setting that ends so
(:data:`NOT_GLUED`)."""
NOT_GLUED: Final = frozenset({"bypass", "compass", "encompass", "surpass", "trespass", "overpass", "underpass",
                               "impass", "mispass", "oldpwd", "noauth", "unauth", "nonauth", "preauth", "reauth",
                               "firstpass", "multipass", "onepass", "twopass", "singlepass"})
_KEY_HOLDERS: Final = frozenset({"material", "data", "bytes", "pem", "der", "b64", "base64", "hex", "raw", "blob"})
"""Words after ``key`` that say the value is the key itself (``key_material``, ``key_pem``): a strong name."""
_WEAK_WORDS: Final = frozenset({"key", "keys", "sig", "signature", "session", "sessionid", "sid", "code", "tokens",
                                "jwt", "pat"})
_PAT_OWNERS: Final = frozenset({
    "github", "gh", "gitlab", "gl", "ado", "azure", "azdo", "devops", "bitbucket", "jira", "atlassian", "confluence",
    "slack", "personal", "access", "hf", "huggingface", "vercel", "figma", "notion", "airtable", "docker", "dockerhub",
    "quay", "npm", "pypi", "gitea", "forgejo", "codeberg", "sourcegraph", "grafana", "api", "my", "user", "bot"})
"""What a personal access token (``PAT``) is named for before it (``GITHUB_PAT``, ``ado_pat``): the name is strong."""
_PASS_WORDS: Final = frozenset({"pass", "pw"})
"""Credential words only as the name's last word (``DB_PASS``, ``DB_PW``; ``pass_through`` is no credential)."""
_STAGE_WORDS: Final = frozenset({
    "prod", "production", "dev", "development", "staging", "stage", "stg", "test", "testing", "qa", "uat", "live",
    "sandbox", "local", "old", "new", "current", "prev", "previous", "next", "primary", "secondary", "backup"})
"""Words after ``pass`` / ``pw`` that say which environment or which of several the password is for (``DB_PASS_PROD``,
``ADMIN_PW_OLD``): the name is still the password's."""


def _stage_word(word: str) -> bool:
    return word in _STAGE_WORDS or word.isdigit() or (word[:1] == "v" and word[1:].isdigit())


_COMPOUNDS: Final = (("connection", "string"), ("shared", "access", "signature"), ("pass", "word"),
                     ("pass", "words"), ("pass", "phrase"), ("pass", "phrases"), ("pass", "wd"), ("kata", "sandi"),
                     ("kata", "laluan"), ("network", "security", "key"))
"""Credential names written as two or three words (``CONNECTION_STRING``, ``Pass_Word``, Indonesian and Malay
``Kata sandi``, ``kata laluan``, the Wi-Fi password as Windows names it, ``Network security key``)."""
_QUERY_WORDS: Final = frozenset({"jwt", "sid", "ticket", "sess", "sessid", "sessionid", "jsessionid", "phpsessid",
                                 "aspsessionid", "session"})
"""Names of a URL's query parameters and of cookies that carry a session (``?ticket=``, ``;jsessionid=``,
``PHPSESSID=``): strong there, whatever their value looks like."""
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
    "time", "set", "output", "class", "module", "plugin", "backend", "service", "handler",
    "callback", "bucket", "window", "page", "pages", "list", "lifetime", "duration", "in", "out", "used",
    "left", "remaining", "per", "flag", "option", "options", "setting", "settings", "config", "example",
    "placeholder", "description", "desc", "doc", "docs", "documentation", "link", "filename", "fd", "cache",
    "uuid", "host", "port", "user", "username", "login", "account", "email", "owner", "issuer",
    "audience", "scope", "scopes", "grant", "algorithm", "alg", "encoding", "charset", "mime", "hash_type",
    "sock", "socket", "fingerprint", "retries", "retry", "attempts", "interval", "delay", "seconds", "secs",
    "chars", "characters", "bits", "validators", "validator", "hashers", "hasher", "arn", "jar", "dict", "info",
    "hash", "hashed", "hashes", "fn", "func", "function", "invalid", "expired", "missing", "failed", "failure",
    "unavailable", "reason", "denied", "revoked", "digest", "digests", "display", "vault", "vaults", "ring", "chain",
    "agent", "santa", "accessor", "accessors", "policies", "renewable",
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
_PHRASE_WORDS: Final = frozenset({
    "forgot", "invalid", "enter", "reset", "change", "confirm", "wrong", "incorrect", "missing", "expired", "show",
    "hide", "remember", "generate", "copy", "revoke", "create", "delete", "your", "the", "a", "an", "no", "is", "not",
    "of", "to", "for", "and", "or", "with", "please", "new", "current", "old", "bad", "weak", "strong", "unknown",
})
"""Words that make a name holding a space a phrase (``"Forgot password?"``, ``"Enter your password"``: the key of
a translation or a label), not the name of a value."""

MAX_NAME_CHARS: Final = 128
"""A longer run of name characters is no name anyone gives a credential (and judging it would cost more)."""

_WORD_SPLIT: Final = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def _hints() -> tuple[str, ...]:
    """Substrings one of which the lower-cased text of any name :func:`credential_name` or :func:`query_credential`
    accepts holds: each word a rule accepts is a run of the name (one word of a compound is enough), and so is every
    foreign word. The shortest such substrings, the most common first; the foreign words last (a text whose letters
    are all ASCII holds none of them)."""
    pieces = set(_STRONG_WORDS) | _WEAK_WORDS | _PASS_WORDS | {"key"} | set(_GLUED_STRONG) | _QUERY_WORDS
    for compound in _COMPOUNDS:
        if not any(p in word for p in pieces for word in compound):
            pieces.add(compound[0])
    pieces |= set(FOREIGN_WORDS) | set(FOREIGN_KEY_WORDS)
    minimal = {p for p in pieces if not any(q != p and q in p for q in pieces)}
    order = ("key", "token", "pass", "secret", "auth", "code", "sess", "pat", "pin", "sig", "sid", "cookie")
    return tuple(sorted(minimal, key=lambda p: (not p.isascii(), order.index(p) if p in order else len(order), p)))


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORD_SPLIT.findall(name)]


def phrase_name(name: str) -> bool:
    """Whether ``name`` (a quoted key) is a phrase, not the name of a value (``"Forgot password?"``)."""
    return _phrase(name, _words(name))


def _phrase(name: str, words: list[str]) -> bool:
    """A name holding a space that reads as a phrase: it ends like a sentence or holds a word a label or a message
    is made of."""
    return " " in name.strip() and (name.rstrip()[-1:] in "?!.:…" or any(w in _PHRASE_WORDS for w in words))


@lru_cache(maxsize=8192)
def credential_name(name: str) -> int:
    """0, :data:`WEAK` or :data:`STRONG`: how surely a value named ``name`` is a credential (module docstring)."""
    if len(name) > MAX_NAME_CHARS:
        return 0
    if "." in name.strip("."):  # token.markup, credentials.username: an attribute of what the first part names
        segments = [segment for segment in name.split(".") if segment]
        tail = segments[-1]
        if _words(tail) in (["value"], ["val"]) and len(segments) > 1:
            tail = segments[-2]  # token.value
        elif _words(tail) in (["key"], ["keys"]) and len(segments) > 1:
            tail = segments[-2] + "_" + tail  # stripe.api.key, client.private.key: the key its qualifier names
        return credential_name(tail)
    words = _words(name)
    low = name.lower()
    if any(word in low for word in FOREIGN_WORDS) and (not any(word in low for word in FOREIGN_NOT_NAMES) or any(
            word in _foreign_names_only(low) for word in FOREIGN_WORDS)):
        return STRONG  # Пароль от базы, API密钥, mot de passe
    if not name.isascii():
        if any(word in low for word in FOREIGN_KEY_WORDS) and not _phrase(name, words):
            return STRONG if any(w in _KEY_QUALIFIERS for w in words) else WEAK
    if not words or len(words) > 10 or _phrase(name, words):
        return 0  # more words than a name has: a generated string (a base64 token holding "SAS" is no name)
    best = 0
    last = len(words) - 1
    for i, word in enumerate(words):
        level = 0
        width = 1
        for compound in _COMPOUNDS:
            if word == compound[0] and tuple(words[i:i + len(compound)]) == compound:
                level, width = STRONG, len(compound)
                break
        if level:
            pass
        elif word in _STRONG_WORDS:
            level = STRONG
        elif word in _PASS_WORDS and (i == last or (" " not in name.strip() and ("_" in name or "-" in name) and all(
                _stage_word(w) for w in words[i + 1:]))):
            level = STRONG  # DB_PASS, DB_PASS_PROD, ADMIN_PW_2 (an identifier: "pass 2:" is a second pass)
        elif word in ("key", "keys") and ((i > 0 and words[i - 1] in _KEY_QUALIFIERS)
                                          or words[i + 1:i + 2] and words[i + 1] in _KEY_HOLDERS):
            level = STRONG
        elif word in ("key", "keys") and i > 0 and words[i - 1] in _KEY_NOT_SECRET_QUALIFIERS:
            continue
        elif word in ("code", "codes") and i > 0 and words[i - 1] in _CODE_NOT_SECRET_QUALIFIERS:
            continue  # exit_code, status_code, country_code: a number or a name, not an authorization code
        elif word in ("key", "keys") and i > 0 and words[i - 1] in _WEAK_KEY_QUALIFIERS:
            level = WEAK
        elif word == "pat" and i > 0 and words[i - 1] in _PAT_OWNERS:
            level = STRONG  # GITHUB_PAT, githubPat, ado-pat: a personal access token (url_pat is a pattern)
        elif word in _WEAK_WORDS:
            level = WEAK
        elif len(word) > 5 and word.endswith(_GLUED_STRONG):
            level = STRONG  # PGPASSWORD, MYSQLPASSWORD, githubtoken: a credential word glued to its qualifier
        elif i == last and _glued(word) and _name_like(name.replace(" ", "_")) and not secret_looking(name):
            level = STRONG  # SMTPPASS, DBPWD, rootpw, APPKEY, licensekey, BASICAUTH, oauth
        if not level:
            continue
        rest = words[i + width:]
        if rest and (rest[-1] in _ABOUT_WORDS or any(w in _ABOUT_WORDS and w not in ("key", "token") for w in rest)):
            continue
        if word in ("token", "tokens") and i > 0 and (words[i - 1] in _COUNT_LEADERS
                                                      or words[i - 1] in _VOCABULARY_TOKENS):
            continue
        if word == "tokens":
            level = WEAK
        best = max(best, level)
    if words == ["auth"]:
        best = WEAK  # ``auth: required``, ``auth: jwt``: a setting as often as a credential
    return best


def _foreign_names_only(low: str) -> str:
    """``low`` less the words of :data:`FOREIGN_NOT_NAMES` it holds."""
    for word in FOREIGN_NOT_NAMES:
        low = low.replace(word, " ")
    return low


def _glued(word: str) -> bool:
    """Whether one word (lower case) is a short credential word glued to its qualifier: ``pass`` / ``pwd`` / ``pw`` /
    ``auth`` after at least two letters (``smtppass``, ``dbpwd``, ``rootpw``, ``basicauth``; ``oauth``), not an English
    word or setting that ends so (``bypass``, ``compass``, ``OLDPWD``, ``noauth``); or ``key`` / ``keys`` after a key
    qualifier (``appkey``, ``licensekey``, ``sessionkey``; not ``monkey``, ``hotkey``, ``publickey``)."""
    if word in NOT_GLUED or not word.isalpha():
        return False
    for piece in _GLUED_PASS:
        if word.endswith(piece) and len(word) >= len(piece) + (1 if piece == "auth" else 2):
            return True
    for piece in ("keys", "key"):
        if word.endswith(piece) and len(word) > len(piece) + 1:
            prefix = word[:-len(piece)]
            return any(prefix.endswith(q) for q in _KEY_QUALIFIERS if len(q) >= 3 or q == prefix) and not any(
                prefix.endswith(q) for q in _KEY_NOT_SECRET_QUALIFIERS | _WEAK_KEY_QUALIFIERS)
    return False


@lru_cache(maxsize=4096)
def query_credential(name: str) -> int:
    """How surely the value of a URL's query parameter or of a cookie named ``name`` is a credential: a credential
    name's weak names are strong there, and so are the session names (``session_id``, ``jsessionid``, ``ticket``)."""
    level = credential_name(name)
    if level:
        return STRONG
    words = _words(name)
    if words and (words[-1] in _QUERY_WORDS or words[-2:] in (["session", "id"], ["sess", "id"])
                  or words[-1].endswith(("sessionid", "sessid"))):
        return STRONG
    return 0


NAME_HINTS: Final = _hints()
"""Lowercase substrings without one of which no name is a credential name (the detectors' exact pre-check)."""


def credential_word(word: str) -> bool:
    """Whether ``word`` (lower case) is itself a credential word (``token``, ``password``, ``key``), not one glued
    to something else."""
    return word in _STRONG_WORDS or word in _WEAK_WORDS or word in _PASS_WORDS


_PLACEHOLDER: Final = re.compile(
    r"\{\{.*\}\}|\$\{\{.*\}\}|\{%.*%\}|<%.*%>"
    r"|%\([A-Za-z_]+\)s"
    r"|%(?:\d{1,2}\$)?[-+ #0']{0,3}\d{0,3}(?:\.\d{1,3})?(?:hh|h|ll|l|L|q|j|z|t|I64|I32)?[diouxXeEfFgGaAcspSC@]"
    r"|%\d{1,2}"  # printf's conversions (%s, %lu, %1$s, %-8.3f), a translation's positional argument (%1)
    r"|\*+|•+|x{3,}|X{3,}|\.{2,}|…|_+|-+|#+|\?+"
    r"|(?:[A-Za-z0-9]+[-_.])*[A-Za-z0-9]{0,4}(?:x{3,}|X{3,}|\*{3,}|•{3,})[A-Za-z0-9]{0,4}"  # AKIAXXXX, ghp_****abcd
)
_MASKED_KEY: Final = re.compile(
    r"(?P<prefix>(?:[A-Za-z0-9]+[-_.])*)[A-Za-z0-9]{0,4}(?:x{3,}|X{3,}|\*{3,}|•{3,})[A-Za-z0-9]{0,4}")
"""A key's prefix then a mask (``AKIAXXXX``, ``sk-proj-xxx``, ``ghp_****abcd``; :data:`_PLACEHOLDER`'s last form): a
placeholder only when no piece of the prefix looks generated."""
_NAMED_PLACEHOLDER: Final = re.compile(
    r"<(?P<angle>[^<>]*)>|\$(?P<var>[A-Za-z_][A-Za-z0-9_]*)|%(?P<env>[A-Za-z_][A-Za-z0-9_]*)%"
    r"|!!?(?P<tag>[A-Za-z][A-Za-z0-9_.:/-]*)|\$\((?P<command>[a-z][a-z0-9_.-]*)"
    r"|\$\([ \t]*(?:<[ \t]*)?(?P<run>[A-Za-z_./~][^()\s]*)(?:[ \t][^()%^<>?!#*]*|\([^()]*\))*\)"
    r"|#\{[@$]?(?P<ruby>[A-Za-z_][\w.]*)(?:[\[(][^{}]*[\])])*\}"
    r"|(?P<prefix>[A-Za-z0-9_-]{0,16})(?:\.{3}|…)"
)
"""``<your-token>``, ``$API_KEY``, ``%API_KEY%``, ``$(cat /run/secrets/x)`` (named by its command), ``$(openssl`` (a
command cut where the value was), a YAML tag (``!Ref``), Ruby's ``#{password}``, a prefix and an ellipsis
(``sk-...``): a placeholder when what it names is not itself generated (``<Xk9mQ2vLp7Rt>``, ``!Xk9mQ2vLp7Rt``,
``Xk9mQ2vLp7Rt...`` hold a secret)."""
_TAG_PARTS: Final = re.compile(r"[:/]")
_MASKED: Final = re.compile(r"[*•xX]{3,}(?:%[sdr]|\{[A-Za-z0-9_]*\})+|(?:%[sdr]|\{[A-Za-z0-9_]*\})+[*•xX]{3,}")
"""``****%s``, ``{}****``: a mask and a format field for the characters shown (a log line's masked secret)."""
_FORMAT_FIELD: Final = re.compile(
    r"\{(?P<f>[A-Za-z_][A-Za-z0-9_.]*)(?:\[[^\]{}]*\]|\([^{}]*\))*(?:![rsa])?"
    r"(?::(?:.?[<>=^])?[-+ ]?z?#?0?\d*[,_]?(?:\.\d+)?[bcdeEfFgGnosxX%]?)?\}")
"""A format field (``{api_key}``, ``{self.token}``, ``{password!r}``, ``{x:>8}``): code, unless its name looks
generated (``{Xk9mQ2vLp7Rt}`` is a value in braces)."""
_PARAMETER: Final = re.compile(r"\$\{(?P<n>[A-Za-z_][A-Za-z0-9_.]*)"
                                r"(?:\[(?P<i>[A-Za-z0-9_@*]+|\$[A-Za-z_]\w*)\])?(?:(?P<op>:?[-=?+]|:)(?P<d>[^{}]*))?\}")
"""A shell / compose parameter expansion: ``${NAME}``, ``${NAME:-default}``, ``${NAME:?message}``; and Spring's
placeholder with its default after one colon (``${DB_PASSWORD:default}``, ``${db.password:default}``); a bash
array's element (``${TOKENS[prod]}``, ``${KEYS[$i]}``)."""
_NOT_SECRET_WORDS: Final = frozenset({
    "true", "false", "none", "null", "nil", "yes", "no", "on", "off", "undefined", "n/a", "na", "unset", "empty",
    "redacted", "hidden", "masked", "required", "optional", "str", "string", "int", "bytes", "bool", "any",
    "secretstr", "self", "cls", "sensitive", "omitted", "default", "auto", "env", "prompt", "ask", "stdin",
    "file", "keyring", "vault", "your_api_key", "your-api-key", "changeme_not", "notset", "not_set",
    "same-origin", "include", "omit", "inherit", "enabled", "disabled", "httponly", "secure", "lax", "strict",
    "changeme", "x-oauth-basic", "placeholder", "dummy", "value", "test", "testing", "foo", "bar", "baz", "qux",
    "fake", "mock", "sample", "example", "demo", "secret", "password", "passwd", "pass", "pwd", "pw", "token",
    "apikey", "api_key", "api-key", "key",
    # authentication schemes and methods (auth: oauth2, AUTH_TYPE=ntlmv2): what a setting says is used, not a secret
    "oauth", "oauth1", "oauth2", "oidc", "saml", "saml2", "ntlm", "ntlmv2", "kerberos", "kerberos5", "spnego",
    "negotiate", "bearer", "digest", "hmac", "sigv4", "mtls", "pkce", "scram", "sso", "ldap", "ldaps", "totp", "hotp",
    "mfa", "2fa",
    # the word for password in other languages: an option's metavariable (--password=PASSWORT, -pw Passwort)
    "passwort", "kennwort", "contraseña", "contrasena", "contrasenya", "senha", "wachtwoord", "wachtwrd", "hasło",
    "haslo", "heslo", "lösenord", "losenord", "passord", "adgangskode", "salasana", "salasõna", "parool", "parola",
    "пароль", "парола", "лозинка", "lozinka", "geslo", "jelszó", "jelszo", "şifre", "sifre", "slaptažodis", "lykilorð",
    "κωδικός", "mdp", "pasvorto", "pasahitza", "パスワード", "密码", "密碼", "비밀번호", "암호", "पासवर्ड", "รหัสผ่าน",
})
_STOPWORDS: Final = frozenset({"the", "a", "an", "of", "to", "in", "on", "for", "is", "are", "be", "not", "no",
                               "and", "or", "with", "your", "you", "this", "that", "it", "by", "from", "as", "at",
                               "can", "will", "must", "should", "please", "if", "could", "try"})
_PLACEHOLDER_WORDS: Final = frozenset({"your", "my", "here", "placeholder", "example", "changeme", "redacted"})
"""A value made of words, one of them one of these (``your-password-here``, ``sk-your-key-here``, ``MY_TOKEN``), shows
where a credential goes; ``my`` and ``your`` only beside a word for what goes there (``my-dog-Rover-2`` is a
password)."""
_OWNER_WORDS: Final = frozenset({"my", "your"})
_WHAT_WORDS: Final = frozenset({"api", "value", "creds", "secret", "id"})
_ABBREVIATIONS: Final = frozenset({"sk", "pk", "rk", "db", "ssh", "gpg", "pgp", "aws", "gcp", "url", "dsn", "ghp",
                                   "hf", "npm", "smtp", "sftp", "ftp", "xxx", "llm", "jwt"})
"""Words without a vowel (or not English) that placeholders are written with (``sk-your-key-here``)."""
_NAME_SEPARATORS: Final = re.compile(r"[-_.]+")
_PATH_SEPARATORS: Final = re.compile(r"[/\\ ~$%{}:]+")
_NOT_IN_NAMES: Final = frozenset("!#$%&()*+,/:;<=>?@[\\]^`{|}~\"'")
_PLACEHOLDER_CORE: Final = re.compile(r"[A-Za-z0-9]+(?:[-_. ][A-Za-z0-9]+)*")
_CODE_WORDS: Final = re.compile(
    r"(?:import|await|lambda|new|not)(?:\s|$)"
    r"|(?:str|int|bytes|bool|float)\s*(?:\||$)"
)
_CALLEE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*[ \t]*(?=[(\[])")
"""The name a call or a subscript starts with (``os.environ.get``, ``config``)."""
_CLOSER: Final = {"(": ")", "[": "]", "{": "}"}
_CALL_STOP: Final = re.compile(r"[^A-Za-z0-9_ \t\r\n.,:=*+/\\-]")
"""What the scan of a call's arguments stops at: a bracket, a quote, or a character code does not write between
names, numbers and strings (a backslash it does: the call is JSON-escaped); a generated password's other symbols
(``@ # $ % ^ | ~ ! ? < >``) are in no argument list."""
_ARGUMENT_WORD: Final = re.compile(r"[A-Za-z0-9_]{6,}")
_OPERAND: Final = re.compile(r"[A-Za-z0-9_\"':(\[{]")
"""What a call's or a subscript's arguments hold when they hold any (a name, a number, a string, a slice, a
bracket)."""
_TRAILER: Final = re.compile(r"(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_CALL_SPAN: Final = 2048
_STRING_ARGUMENT: Final = re.compile(r"[(\[][ \t]*[\"']|\(\)$")
"""A call or a subscript with a string argument or none (no generated password holds a quote)."""
_WORD_NUMBER: Final = re.compile(r"(?P<w>[A-Za-z][a-z]*)[0-9]+")
# An attribute path from a name code reads credentials from (``self.token``, ``os.environ``, ``config.api_key``):
# kept only when no segment after the first looks generated (``t.vtnlNpXX2GL`` is a secret with a dot in it).
_CODE_PATH: Final = re.compile(
    r"(?:self|cls|os|env|process|config|settings|args|kwargs|opts|options|request|req|params|cfg|ctx|"
    r"context|this|data|payload|body|creds|credentials|secrets|environ|app|module|typing)"
    r"((?:\.[A-Za-z_][A-Za-z0-9_]*)+)"
)
_WORDS_JOINED: Final = re.compile(r"[a-z]+(?:[_\-:./][a-z]+)+|[A-Z]+(?:_[A-Z]+)+")
"""Lower-case words joined as names, keys and modules are (``stop_significant``, ``catalog:daily-briefing``,
``legacy.exceptions``), or a constant: no generated string."""
_HERMES_SESSION_KEY: Final = re.compile(r"agent:[A-Za-z0-9_.-]{1,64}(?::[A-Za-z0-9_.@+-]{1,128}){3,6}")
"""The Hermes Agent's session key, ``agent:<name>:<platform>:<kind>:<id>`` (``agent:main:telegram:dm:12345``): which
conversation a run belongs to, written in logs and payloads under ``session_key``."""
_FORMAT_FIELDS: Final = re.compile(r"%[-+ #0]?\d*(?:\.\d+)?[sdrifx](?![A-Za-z0-9])|\{\d{0,2}\}")
"""A printf field that no letter or digit is glued to (``%s:%s``; not ``%3iXecret``, a decoded password's
``%25`` then ``3iX``), or a positional ``{}`` field."""
_NOTE: Final = re.compile(r"[*_]{0,2}\([A-Za-z][A-Za-z ,/-]{0,30}\)[*_]{0,2}")
"""A note in parentheses (``(none)``, ``*(Optional)*``): what a table or a docstring writes where no value is."""
_SNAKE_IDENT: Final = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
_WORDS_IDENT: Final = re.compile(r"[a-z]+(?:[_-][a-z]+)+|[A-Z]+(?:_[A-Z]+)+")
_DOTTED_IDENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_PIECE: Final = re.compile(r"[a-z]+[0-9]{0,3}|[A-Z]+[0-9]{0,3}|[A-Z][a-z]+[0-9]{0,3}|[0-9]{1,4}")
_CONSTANT: Final = re.compile(r"_*[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+_*")
_SMALL_LITERAL: Final = re.compile(r"#[0-9a-fA-F]{3}|#[0-9a-fA-F]{6}|\d+(?:\.\d+){2,}")
"""A colour (``#cccccc``), a version, an OID or an address (``1.3.6.1.5.5.7.3.1``)."""
_GENERATED_GROUPS: Final = re.compile(r"[a-z]{4}(?:-[a-z]{4}){2,}")
"""``abcd-efgh-ijkl-mnop``: letters in equal groups are generated (an app-specific password), not words."""
_LOWER_WORDS: Final = re.compile(r"_*[a-z]+(?:[_.-][a-z]+)*_*")
"""``lines``, ``test_login``, ``same-origin``, ``_internal``: an identifier or a setting word (no digit)."""
_PIECES: Final = re.compile(r"[^A-Za-z0-9]+")
_VOWELS: Final = frozenset("aeiouyAEIOUY")
_NOT_ENGLISH: Final = re.compile(r"[^aeiouy]{5}|[aeiouy]{4}|(.)\1\1|q(?![ul]|\Z)")
"""In lower case: five consonants, four vowels or one letter three times in a row, or a ``q`` that no ``u`` follows
inside the word (``iejqzs``, ``tualkieqad``; a final ``q`` is an abbreviation's: ``seq``, ``req``, ``faq``; ``ql`` is
SQL's: ``mysql``, ``postgresql``, ``sqlite``, ``graphql``)."""
_ONSET: Final = re.compile(r"y?[^aeiouy]*")
_NUMBERED: Final = frozenset({"argon", "base", "sha", "md", "utf", "http", "oauth", "ipv", "ec", "s", "v", "x",
                              "python", "py", "blake", "crc", "murmur", "bcrypt", "scrypt", "pbkdf", "aes", "rsa"})
"""Words a number follows inside a name (``Argon2``, ``Base64``, ``Sha256``)."""
_TWO_LETTER_WORDS: Final = frozenset({"ex", "id", "io", "ok", "db", "js", "ui", "os", "to", "by", "of", "on", "in",
                                      "at", "as", "is", "it", "or", "no", "up", "do", "go", "me", "my", "we", "an",
                                      "ip", "fn", "op", "re", "px", "tx", "rx", "vm", "ws"})
_ONSETS: Final = frozenset({
    "", "y", "b", "bl", "br", "c", "ch", "chr", "cl", "cr", "d", "dr", "dw", "f", "fl", "fr", "g", "gl", "gn", "gr",
    "h",
    "j", "k", "kl", "kn", "kr", "l", "m", "n", "p", "ph", "pl", "pr", "ps", "q", "r", "rh", "s", "sc", "sch", "scr",
    "sh", "shr", "sk", "sl", "sm", "sn", "sp", "spl", "spr", "sq", "st", "str", "sw", "t", "th", "thr", "tr", "ts",
    "tw", "v", "w", "wh", "wr", "x", "z"})
"""The consonants an English word starts with, before its first vowel."""
_PATH: Final = re.compile(
    r"(?:/|~/|\.\.?/|\$HOME/|\$\{HOME\}/|%[A-Z_]+%\\|[A-Za-z]:\\)"
    r"(?:(?P<system>(?:home|tmp|etc|var|run|usr|opt|Users|root|mnt|srv|secrets|data|app|proc|dev|Library|private)"
    r"(?:[/\\]|$))|[^\s]*\.(?:[a-z0-9]{1,5}|[A-Z]{1,5})$|(?=[^\s/\\]*[/\\])\S*\.\d+$)"
)
"""A file's path (an absolute or home path under a system directory, or one naming a file with an extension): a
credential name's value is the file that holds the credential (``GOOGLE_APPLICATION_CREDENTIALS=/…/sa.json``). Outside
a system directory, each of its names is one people give (``./keys/server-2024.pem``, not ``/r3j/peSz/.0``)."""
_PATH_REST: Final = re.compile(r"(?:/|~/|\.\.?/|\$HOME/|\$\{HOME\}/|%[A-Z_]+%\\|[A-Za-z]:\\)[A-Za-z0-9_./\\~ -]*")
"""What a path is written with after its root: a generated password's symbols (``!#$%()*:<=>?@[]^{|}``) are in no
path's names."""
_FILE_NAME: Final = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.(?:pem|key|crt|cer|csr|der|p12|pfx|jks|keystore|"
                               r"pub|ppk|gpg|asc|kdbx|json|ya?ml|toml|ini|cfg|conf|env|txt|xml|properties)")
"""A file's name with an extension credentials are kept in (``rsakey.pem``, ``sa-prod.json``, ``.env`` files)."""
_RESOURCE: Final = re.compile(r"arn:[a-z0-9-]+:|projects/[^/\s]+/secrets/|[A-Z0-9]{16,128}/\d{8}/[a-z0-9-]+/"
                              r"[a-z0-9-]+/aws4_request$|[^@/\s]{1,64}@[^@/\s]{1,255}/\d{8}/[a-z0-9-]+/"
                              r"[a-z0-9-]+/goog4_request$")
"""The name of a stored secret (an AWS ARN, a Google secret's resource name), or the credential scope of an AWS or a
Google Cloud Storage signed request (``…/20240101/auto/storage/goog4_request`` after a service account's e-mail): no
credential itself."""
_REGEX_LIKE: Final = re.compile(
    r"\[\^?(?=[^\[\]\-\n]{0,3}-+[^\[\]\-\n])(?>[^\[\]\-\n]{0,3}-+[^\[\]\-\n]{0,3})+\]"
    r"|\{\d*,\d*\}|\(\?[:=!<P]|\\[dwsbDWS]|\.\*|\.\+")
"""A regular expression's syntax (a class of ranges, a repetition, a group's flag, a class escape). The class's
pieces are atomic and hold no ``[``, so a run of dashes, or of ``[a-``, costs linear time."""
_REGEX_TOKEN: Final = re.compile(
    r"\(\?P<\w+>|\[\^?(?:[A-Za-z0-9_.+/=:@ -]{1,3}|(?=[^\]]{0,15}?(?:a-[a-z]|A-[A-Z]|[0-9]-[0-9]|\\.))"
    r"(?:a-[a-z]|A-[A-Z]|[0-9]-[0-9]|\\.|[A-Za-z0-9_.+/=:@ -]){1,16})\]"
    r"|\{\d*,\d*\}|\{\d+\}|\(\?[:=!<P]|\\[dwsbDWS]|\.\*|\.\+")
"""The syntax of a regular expression (a class of ranges or escapes or of a few characters, a quantifier, a group's
opening, an escape, ``.*``), blanked before what is left of a pattern is judged (``[WnsR-.7P@hza]`` is no class a
pattern is written with)."""
_REGEX_SYNTAX: Final = re.compile(r"\\[dwsbDWSAZ.()\[\]{}+*?|^$/-]|\(\?(?:[:=!]|P?<)")
"""An escape (what patterns are written with and no generated password holds: it has no backslash) or a group's
extension (``(?:``, ``(?P<``: a generated password holds one once in thousands, so its other runs are judged too)."""
_WILDCARDS: Final = re.compile(r"\.\*|\.\+")
_PATTERN_TEXT: Final = re.compile(r"[A-Za-z0-9_./:@ |()?+*\\-]*")
_VARIABLE_WORDS: Final = frozenset({"password", "passwd", "pwd", "token", "secret", "key", "auth", "credential",
                                    "credentials", "cookie", "pass", "passphrase", "apikey"})
_SHORT_NUMBER: Final = re.compile(r"[+-]?\d{1,3}|-\d+(?:\.\d+)?|[+-]?\d*\.\d+")
"""A number no credential is: three digits at most (a PIN has four), negative, or a decimal fraction."""


def parameter_default(value: str) -> tuple[int, int] | None:
    """The ``[start, end)`` of the default in ``value`` when ``value`` is a parameter expansion with one
    (``${DB_PASSWORD:-P}``, ``${API_KEY:=P}``, ``${NAME-P}``, Spring's ``${DB_PASSWORD:P}``): the literal a
    configuration falls back to, a credential under a credential name; ``None`` otherwise."""
    m = _PARAMETER.fullmatch(value.strip())
    if m is None or m.group("op") is None or m.group("op")[-1] not in "-=:" or not m.group("d"):
        return None
    offset = value.index("$")
    return offset + m.start("d"), offset + m.end("d")


_GROUPED: Final = re.compile(r"[a-z]{4}(?P<sep>[ -])[a-z]{4}(?P=sep)[a-z]{4}(?P=sep)[a-z]{4}")
"""An app password as the accounts that generate one show it: four groups of four lower-case letters, apart by a
space or a dash (``ofsn jxeg ihtt qwza``, ``ofsn-jxeg-ihtt-qwza``)."""
_COMMON_FOUR: Final = frozenset("""
able also area away back band base been best body book both call came case city come copy cost data date days deal
does done down each easy else even ever face fact fail fast feel file find fine five form four free from full gave
give goes gone good half hand hard have head hear help here high hold home hope host idea into item just keep kept
kind knew know last late left less life like line link list live load long look lost love made mail main make many
mind more most move much must name need next nice none note once only open over page part past plan play post pull
push read real rest role room rule runs safe said same save says seen self send sent ship show shut side sign site
size some soon sort stay step stop such sure take talk team tell than that them then they this time told tool took
true turn type unit used user uses very view wait want week well went were what when will with word work year your
""".split())
"""Common four-letter English words: two of them among four groups make a sentence (``password: this will work
fine``), not an app password, whose groups are drawn at random (two common words in one: about one in a million)."""


def grouped_password(value: str) -> bool:
    """Whether ``value`` is an app password written as four groups of four letters (:data:`_GROUPED`): not the
    placeholder the accounts' own help shows (``xxxx xxxx xxxx xxxx``, ``abcd efgh ijkl mnop``), not four words of a
    sentence. A group that holds ``xxx`` is a group like any other (``ofsn-jxeg-ihtt-xxxa``)."""
    if len(value) != 19 or _GROUPED.fullmatch(value) is None:
        return False
    groups = value.split(value[4])
    if _shown_groups(value) or len(set(groups)) < 3:
        return False  # drawn at random, three groups at least differ (pass pass pass pass is no app password)
    return value[4] == "-" or sum(group in _COMMON_FOUR for group in groups) < 2


def _shown_groups(value: str) -> bool:
    """Whether ``value``, four groups of four letters, is the placeholder that shows where an app password goes."""
    letters = value.replace(value[4], "")
    return letters == "x" * 16 or letters == "abcdefghijklmnop"


def placeholder(value: str) -> bool:
    """Whether ``value`` shows where a credential goes rather than holding one: empty, ``none`` / ``null`` ...,
    ``<...>``, ``$VAR``, ``${VAR}``, ``{{ x }}``, ``{x}``, ``***``, ``sk-...``, ``YOUR_API_KEY``, ``xxxx``, a marker.

    What a placeholder names or starts with (``<...>``, ``$VAR``, a YAML tag, the prefix before an ellipsis) is not
    generated, and a value holding a placeholder word is made of words: ``Xk9mQ2vLp7Rt...``, ``!Xk9mQ2vLp7Rt`` and
    ``hwLXVPC+@%R7$My[`` are passwords."""
    v = value.strip()
    if not v:
        return True
    if len(v) == 19 and _GROUPED.fullmatch(v):
        return _shown_groups(v)  # xxxx-xxxx-xxxx-xxxx; an app password whose group holds xxx (ofsn-jxeg-ihtt-xxxa)
    masked = _MASKED_KEY.fullmatch(v)
    if masked is not None and any(secret_looking(piece) for piece in _PIECES.split(masked.group("prefix"))):
        return False  # 2iQqCwPcgQDgVpL_xxx: what the mask follows is generated, not a key's prefix
    if v.lower() in _NOT_SECRET_WORDS or _PLACEHOLDER.fullmatch(v) or _MASKED.fullmatch(v):
        return True
    if v.startswith(("<redacted", "[REDACTED")):
        return True
    if v.startswith(("{{", "${{", "{%")):
        opener = 3 if v[0] == "$" else 2
        if v[opener:opener + 1] in (" ", "") or v.endswith(("}}", "%}")):
            return True  # a template, perhaps cut where the value was
    named = _NAMED_PLACEHOLDER.fullmatch(v)
    if named is not None:
        what = named.group(named.lastgroup or 0)
        if named.lastgroup == "angle":
            return not secret_looking(what) and all(_name_like(word) or wide_word(word)
                                                    for word in what.split())  # <your token>, <Schlüsselkennung>
        if named.lastgroup == "run" and what[0] in "/.~":
            return _PATH_REST.fullmatch(what) is not None  # $(/usr/local/bin/get-secret), $(<./token.txt)
        if named.lastgroup == "tag" and ("/" in what or ":" in what):  # !!python/object:Secret, !!binary
            return all(part and not secret_looking(part) and _name_like(part) for part in _TAG_PARTS.split(what))
        return not secret_looking(what) and _name_like(what)
    parameter = _PARAMETER.fullmatch(v)
    if parameter is not None:
        if parameter.group("op") is None:
            return _name_like(parameter.group("n")) and not secret_looking(parameter.group("n")) and (
                parameter.group("i") is None or not secret_looking(parameter.group("i")))  # not ${Vi_P29yTI}
        return parameter.group("op")[-1] in "?+" or placeholder(parameter.group("d"))
    field = _FORMAT_FIELD.fullmatch(v)
    if field is not None and all(not secret_looking(seg) and _name_like(seg) for seg in field.group("f").split(".")):
        return True
    return _placeholder_words(v)


def _placeholder_words(v: str) -> bool:
    """``your-password-here``, ``sk-your-key-here``, ``YOUR_API_KEY``, ``my_secret_token``: words (one of them a
    placeholder word; ``my`` / ``your`` beside a word for what goes there), joined as names are."""
    core = v.strip("<>[](){}\"'")
    if not _PLACEHOLDER_CORE.fullmatch(core):
        return False
    words = _words(core)
    marks = [w for w in words if w in _PLACEHOLDER_WORDS]
    if not marks or not all(_plain_word(w) for w in words):
        return False
    if all(w in _OWNER_WORDS for w in marks) and not any(w in _WHAT_WORDS or credential_word(w) for w in words):
        return False  # my-dog-Rover-2: a passphrase
    return not any(secret_looking(piece) for piece in _PIECES.split(core) if piece)


def _path(value: str) -> bool:
    """Whether ``value`` is a file's path (:data:`_PATH`, :data:`_PATH_REST`)."""
    m = _PATH.match(value)
    if m is None or _PATH_REST.fullmatch(value) is None:
        return False
    return m.group("system") is not None or all(_name_like(name) for name in _PATH_SEPARATORS.split(value))


def wide_word(word: str) -> bool:
    """A word of letters holding one beyond ASCII (``Schlüsselkennung``, ``clé``, ``ключ``): a word of a language, which
    no generator draws."""
    return word.isalpha() and not word.isascii()


def _name_like(name: str) -> bool:
    """A name as people write one (``OPENAI_API_KEY``, ``GetAtt``, ``sk-proj-``): pieces joined by ``_ - .``, each
    lower case or capitals with a short number, or CamelCase; not a generated string (``XjweQCjEKij``)."""
    return all(not piece or _PIECE.fullmatch(piece) or camel_name(piece) for piece in _NAME_SEPARATORS.split(name)
               ) and not any(c in _NOT_IN_NAMES for c in name)


def _plain_word(word: str) -> bool:
    """A word a placeholder is written with (lower case): English-looking, a credential word, a short number or an
    abbreviation (``sk``, ``db``)."""
    if word.isdigit():
        return len(word) <= 4
    return word in _ABBREVIATIONS or credential_word(word) or english_word(word)


def code_call(value: str) -> bool:
    """Whether ``value`` is, as a whole, a call or a subscript that closes (``f(x)``, ``os.environ["X"]``,
    ``cfg.get("a")[0]``) of a name code gives a function (not a word and a number, ``Hunter2(xyz)``, nor a
    generated string), with arguments code writes: code that reads the credential, not the credential."""
    end, callee, arguments = call_extent(value, 0, len(value))
    return callee and arguments and end == len(value)


_OPEN_CALL: Final = re.compile(r"(?P<n>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)[ \t]*\("
                               r"(?:(?P<a>[A-Za-z0-9_ \t.:=*+/\"'-]*),|[\[{(]{1,3})?[ \t]*\r?(?:\n|\Z)")


def open_call(text: str, start: int) -> bool:
    """Whether a call of a name code gives a function starts at ``start`` and its arguments go on past its line, or
    past the end of ``text``: its bracket, or its arguments and a comma, end the line (``get_token(``,
    ``ECDH.convertKey(compressedKey,``, ``frozenset({``), as in a line a search printed or a file read in pieces."""
    m = _OPEN_CALL.match(text, start)
    if m is None or not _code_name(m.group("n").rsplit(".", 1)[-1]):
        return False
    return not any(_generated_word(word) for word in _ARGUMENT_WORD.findall(m.group("a") or ""))


def call_extent(text: str, start: int, limit: int) -> tuple[int, bool, bool]:
    """``(end, callee, arguments)`` for the call or subscript starting at ``start`` (before ``limit``): where it
    closes, its last bracket and what follows it (``.x``, ``(y)``, ``[0]``) included, or ``-1`` when it does not
    close; ``callee``: its name is one code gives a function (the last part of a dotted name: ``uuid.uuid4``,
    ``self.get_token``; not ``Hunter2``, ``Xk9mQ2``); ``arguments``: they are names (none generated), numbers,
    strings and the operators code writes between them (not ``@ # $ % ^ | ~ ! ? < >``)."""
    m = _CALLEE.match(text, start, limit)
    if m is None:
        return -1, False, False
    callee = _code_name(m.group(0).rstrip(" \t").rsplit(".", 1)[-1])
    arguments = True
    i = m.end()
    limit = min(limit, start + _CALL_SPAN)
    expected: list[str] = []
    opened = i
    search = _CALL_STOP.search
    while True:
        stop = search(text, i, limit)
        if stop is None:
            return -1, False, False
        at = stop.start()
        if arguments and at > i:
            arguments = not any(_generated_word(word) for word in _ARGUMENT_WORD.findall(text, i, at))
        c = text[at]
        i = at + 1
        if c in _CLOSER:
            if not expected:
                opened = at
            expected.append(_CLOSER[c])
        elif c in ")]}":
            if not expected or expected.pop() != c:
                return -1, False, False
            if not expected:
                if arguments and _OPERAND.search(text, opened + 1, at) is None and text[opened + 1:at].strip():
                    arguments = False  # x[/], f(*): operators without an operand are no arguments code writes
                trailer = _TRAILER.match(text, i, limit)
                if trailer is not None:
                    i = trailer.end()
                nxt = text[i:i + 1]
                if nxt not in ("(", "[") or i >= limit:
                    return i, callee, arguments
        elif c in "\"'":
            triple = text.startswith(c * 3, at)
            close = text.find(c * 3 if triple else c, at + (3 if triple else 1), limit)
            if close < 0:
                return -1, False, False
            i = close + (3 if triple else 1)
        elif c == "#" and expected:
            arguments = False  # a comment inside a call spread over lines (its apostrophes are no quotes)
            line = text.find("\n", at, limit)
            if line < 0:
                return -1, False, False
            i = line
        else:
            arguments = False  # @ # $ % ^ | ~ ! ? < > ;: no argument list code writes


def _generated_word(word: str) -> bool:
    """A run of letters and digits no code names anything with: both cases and digits mixed, not as names are
    written (``nZ0yxgi2fVZvk``; ``Ed25519PrivateKey``, ``rfc2965``, ``lpOverlappedTyped`` are names)."""
    return (len(word) >= 6 and any(c.isdigit() for c in word) and word.lower() != word and word.upper() != word
            and not (camel_name(word) or _identifier(word)))


_LOWER_CAMEL_NUMBERED: Final = re.compile(r"[a-z][a-z0-9]*(?:[A-Z][0-9]+|[A-Z][a-z]{2,}[0-9]*)*[A-Z][a-z]{2,}[0-9]*")
_CAPITALISED: Final = re.compile(r"[A-Z][a-z]{2,}")


def _code_name(segment: str) -> bool:
    """A name code gives a function, a class or a variable it subscripts (``get_token``, ``sha256``, ``uuid4``,
    ``Http2Client``, ``m1``): not a capitalised word and a number as passwords are made (``Hunter2``,
    ``Password1``), nor a generated string (``Xk9mQ2``, ``zRA9``)."""
    number = _WORD_NUMBER.fullmatch(segment)
    if number is not None and number.group("w")[0].isupper():
        return number.group("w").lower() in _NUMBERED  # Base64, Sha256; not Hunter2, Password1
    if any(c.isdigit() for c in segment) and not (segment.islower() or segment.isupper()):
        if camel_name(segment) or _identifier(segment):
            return True  # Http2Client; not Xk9mQ2
        lower = _LOWER_CAMEL_NUMBERED.fullmatch(segment)  # pbkdf2Sync, md5Sum, getV2Token: lowerCamel with numbers
        return lower is not None and all(english_word(word) for word in _CAPITALISED.findall(segment))
    return True


def kept_value(value: str, name: str, level: int, *, bare: bool = False, typed: bool = False,
               literal: bool = False) -> bool:
    """Whether ``value`` (already unquoted) stays under the credential name ``name`` (module docstring).

    ``bare``: the value was written without quotes where code, YAML or a docstring would write a literal in quotes,
    so a lower-case word or a constant's name is an identifier or a setting there. ``typed``: code follows the bare
    value (``| None``, ``[``, ``(``, ``=``), so a CamelCase name is a type or a class. ``literal``: the value was
    written as a string (in quotes, an element's text): a call only with a string argument or none
    (``"os.getenv('X')"``; ``"password": "X[nZ0yx]"`` is a password), a dotted name only with a part in lower case
    as modules and attributes are written (:func:`_dotted_literal`)."""
    v = value.strip()
    if len(v) <= 2:
        return True  # ">": no credential is that short
    if (not v[0].isascii() and (_POINTER.match(v) or _WIDE_PROSE.fullmatch(v))) or v.lower() in _KEEPERS:
        return True  # 密码→见1Password, 密码：存在Vault里, password: 1Password: where it is kept; 密码：请妥善保存: prose
    if v.isascii() and v.isalnum():
        return _kept_word(v, name, level, bare, typed)
    if _CODE_WORDS.match(v) or (v[-1] in ")]" and code_call(v) and (not literal or _STRING_ARGUMENT.search(v))):
        return True  # os.environ["X"], f(x): code
    if _code_text(v):
        return True  # args[token.index], {key[:8]}...{key[-4:]}, {ArrayBuffer|DataView}, "LANGFUSE_SECRET_KEY"
    path = _CODE_PATH.fullmatch(v)
    if path is not None and not any(secret_looking(seg) for seg in path.group(1).split(".")[1:]):
        return True
    if placeholder(v) or _RESOURCE.match(v) or _path(v) or _SMALL_LITERAL.fullmatch(v):
        return True
    if v.startswith("agent:") and _HERMES_SESSION_KEY.fullmatch(v):
        return True  # agent:main:telegram:dm:12345: the Hermes Agent's own session key, an address, not a secret
    if ("%" in v or "{" in v) and _format_only(v):
        return True  # '%s:%s', 'Digest %s', '{}:{}': a format string the credential is put into
    if _NOTE.fullmatch(v):
        return True  # (none), *(Optional)*, (required): a note where a table or a docstring gives no value
    if not any(c.isalnum() for c in v):
        return True  # "✅": a credential has a letter or a digit
    parameter = _PARAMETER.fullmatch(v)
    if parameter is not None and parameter.group("d") is not None:
        return kept_value(parameter.group("d"), name, level)
    words = _name_words(name)
    value_words = _words(v)
    if _SHORT_NUMBER.fullmatch(v):
        return True
    if v.lstrip("+-").isdigit() and len(v) <= 10 and (level == WEAK or _count_name(name, words)):
        return True  # max_tokens=128000, "input_tokens": "1000": a count
    if _FILE_NAME.fullmatch(v) and all(_name_like(seg) and not secret_looking(seg) for seg in v.split(".")[:-1]):
        return True  # --privkey rsakey.pem, KEY_FILE=server-2024.key: the file that holds the credential
    if _DOTTED_IDENT.fullmatch(v) and all(_identifier(seg) and not secret_looking(seg) for seg in v.split(".")) and (
            _dotted_literal(v.split(".")) if literal else _dotted_words(v.split("."))):
        return True  # session_id.user, settings.api_key, codes.IMPORT_NOT_FOUND: an attribute read in code
    if value_words and words[-len(value_words):] == value_words and "".join(value_words) == _PIECES.sub("", v.lower()):
        return True  # password=password, token=token, "login.password": "Password"
    if _SNAKE_IDENT.fullmatch(v) and set(value_words) & set(words) & _VARIABLE_WORDS and all(
            _plain_word(piece) for piece in v.split("_")):
        return True  # api_key=api_key_value, token=user_token: a variable named for what it holds (token_8f3k2j9x)
    if _REGEX_LIKE.search(v) and _pattern(v):
        return True  # pat = "^[a-z]+$", _HEX_PAT = "[0-9A-Fa-f]{1,4}": a pattern
    if " " in v and _sentence(v) and "passphrase" not in words and "passphrases" not in words:
        return True  # "Telegram could not finish bot setup.", "begin of comment": a message, not a password
    passphrase = level == STRONG and "-" in v and not _PASSWORD_WORDS.isdisjoint(words) and dashed_passphrase(v)
    if _WORDS_IDENT.fullmatch(v) and v.islower() and not _GENERATED_GROUPS.fullmatch(v) and (
            "passphrase" not in words and "passphrases" not in words) and not passphrase:
        return True  # "aws-sdk", "no-key-required", "same-origin": words joined, a setting or a sentinel
    if bare and ((_LOWER_WORDS.fullmatch(v) and not _GENERATED_GROUPS.fullmatch(v) and not passphrase)
                 or _CONSTANT.fullmatch(v)
                 or (typed and (camel_name(v) or _identifier(v)))
                 or hex_literal(v)):
        return True  # token.map = lines, PASS: test_login, credentials: ChannelCredentials | None, a constant
    if level == WEAK:
        return not (secret_looking(v) or drawn_letters(v)) or word_pieces(v) or _OBJECT_PATH.fullmatch(v) is not None
    return False


_PASSWORD_WORDS: Final = frozenset({"password", "passwd", "pass", "pw", "pwd", "passphrase", "passcode"})
"""The words of a name that say it holds a password (its value may then be a passphrase of words)."""
_PASSPHRASE_RE: Final = re.compile(r"[a-z]{3,12}(?:-[a-z]{3,12}){2,9}")
_NOT_PASSPHRASE_WORDS: Final = frozenset({
    "the", "and", "not", "none", "nil", "null", "any", "all", "each", "every", "same", "see", "use", "used", "using",
    "from", "via", "per", "for", "with", "without", "here", "there", "below", "above", "your", "our", "their", "its",
    "this", "that", "set", "unset", "get", "ask", "read", "write", "only", "required", "optional", "needed", "empty",
    "blank", "default", "example", "sample", "dummy", "fake", "test", "testing", "placeholder", "change", "changeme",
    "replace", "insert", "enter", "secret", "secrets", "password", "passwords", "passwd", "pass", "token", "key",
    "keys", "value", "values", "env", "environment", "var", "variable", "file", "files", "path", "store", "stored",
    "vault", "managed", "manager", "generate", "generated", "random", "auto", "manual", "prompt", "must", "should",
    "will", "can", "are", "was", "least", "char", "chars", "characters", "long", "length", "upper", "lower", "case",
    "digit", "digits", "number", "numbers", "symbol", "symbols", "special", "auth", "login", "user", "admin", "root",
    "app", "api", "server", "client", "local", "prod", "production", "dev", "staging", "config", "name", "ref",
    "reference", "based", "disabled", "enabled", "off", "hidden", "masked", "redacted", "omitted", "removed", "todo",
    "tbd", "like", "other", "new", "old", "current", "previous", "next"})
"""Words of a setting, a sentinel or a note (``no-key-required``, ``same-as-above``, ``read-from-env``,
``see-the-vault``), which a passphrase drawn from a word list hardly holds (of three letters at least: a shorter
word is no piece of :data:`_PASSPHRASE_RE`)."""


def password_name(name: str) -> bool:
    """Whether ``name`` says it holds a password (one of its words ``password``, ``pwd``, ``passphrase``…:
    ``DB_PASSWORD``, ``pwd``, ``smtpPass``), not a token or a key."""
    return not _PASSWORD_WORDS.isdisjoint(_words(name))


def dashed_passphrase(value: str) -> bool:
    """Whether ``value`` is a passphrase as password managers make one by default: three words or more of lower-case
    letters joined by ``-`` (``correct-horse-battery-staple``, ``rematch-wiry-unsaid``), none of them a word of a
    setting or a note (:data:`_NOT_PASSPHRASE_WORDS`: ``read-from-env``, ``same-as-above`` stay)."""
    return _PASSPHRASE_RE.fullmatch(value) is not None and not _NOT_PASSPHRASE_WORDS.intersection(value.split("-"))


_DASHED_PIECE: Final = r"(?:[a-z]{3,12}|[A-Z][a-z]{2,11}|\d{1,4})"
_DASHED_WORDS_RE: Final = re.compile(_DASHED_PIECE + r"(?:-" + _DASHED_PIECE + r"){2,7}")


def dashed_words(value: str) -> bool:
    """Whether ``value`` is words and numbers joined by ``-`` as people make a password they can remember: three
    pieces or more, two of them words (lower-case or capitalised), a capital or a number among them
    (``Blue-Falcon-77``, ``blue-falcon-77``, ``Kx-Purple-Monkey``); none a word of a setting or a note
    (``read-from-env-2`` stays). All lower-case letters are :func:`dashed_passphrase`'s."""
    if _DASHED_WORDS_RE.fullmatch(value) is None or value.islower() and not any(c.isdigit() for c in value):
        return False
    words = [piece.lower() for piece in value.split("-") if piece.isalpha()]
    return len(words) >= 2 and _NOT_PASSPHRASE_WORDS.isdisjoint(words)


_SPACED_PASSPHRASE_RE: Final = re.compile(r"[ \t]*(?P<p>[a-z]{3,12}(?: [a-z]{3,12}){2,9})[ \t.]*\Z")


def spaced_passphrase(name: str, text: str, start: int, end: int = -1) -> tuple[int, int] | None:
    """Under a passphrase's own ``name``, the span of the words that make up ``text[start:end]`` (the rest of the
    label's line) when they are a passphrase written with blanks (``correct horse battery staple``: as
    :func:`dashed_passphrase` judges them joined by dashes), else ``None`` (``see the vault``, ``not set yet``, and
    any value under another name, stay). ``end`` below 0: the end of the line ``start`` is on."""
    if "passphrase" not in name.lower():
        return None
    if end < 0:
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
    words = _SPACED_PASSPHRASE_RE.match(text, start, end)
    if words is None or not dashed_passphrase(words.group("p").replace(" ", "-")):
        return None
    return words.span("p")


_POINTER: Final = re.compile(r"(?:请|請)?(?:参见|參見|详见|詳見|见|見|参考|參考|参照|參照|查看|保存在|存放在|存在|存于|存於|放在)")
"""What a CJK note starts with when it says where a credential is kept (``见``, see; ``存在``, stored in)."""
_WIDE_PROSE: Final = re.compile(r"[\u3000-\u303f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uff01-\uff0f\uff1a-\uff20"
                                r"\uff3b-\uff40\uff5b-\uff65 ]+")
"""Words of a script written without blanks and its punctuation, none of them a letter or a digit of ASCII or its
full-width forms: a sentence (``请妥善保存``, ``已过期``), not a generated credential."""
_KEEPERS: Final = frozenset({"1password", "bitwarden", "lastpass", "keepass", "keepassxc", "dashlane", "keychain",
                              "vaultwarden", "pass", "gopass", "passbolt", "psono", "enpass", "nordpass", "proton"})
"""Password managers: a value naming one says where the credential is kept."""
_OBJECT_PATH: Final = re.compile(
    r"[A-Za-z0-9_.=-]{1,255}(?:/[A-Za-z0-9_.=-]{1,255}){1,31}\.[A-Za-z][A-Za-z0-9]{0,7}(?:\.(?:gz|bz2|xz|zst|zip))?")
"""A relative path to a file (``logs/2024/05/01/app-7f9c8d6b.log.gz``, ``reports/Q2_2024_report.xlsx``): an object
storage key or a path in a listing, under the weak name ``Key``; no generated credential ends in a file extension
after a folder."""


_LETTERS_NUMBER: Final = re.compile(r"([A-Za-z]+)([0-9]{1,4})")


def word_pieces(value: str) -> bool:
    """Whether every piece of ``value`` between symbols is a word (cased as words are: ``eu``, ``West``, ``UTF``), a
    number, or a word with a short number (``v1``, ``beta2``, ``sha256``): a region, a version, an encoding
    (``eu-west-1``, ``v1-beta2``, ``utf-8``), not a generated string (``Xk9mQ2vLp7Rt``, ``xY9-Qr7k``)."""
    for piece in _PIECES.split(value):
        if not piece or piece.isdigit():
            continue
        m = _LETTERS_NUMBER.fullmatch(piece)
        letters = m.group(1) if m is not None else piece
        if not (letters.isalpha() and (letters.islower() or letters.istitle() or letters.isupper())
                and (len(letters) <= 3 or english_word(letters))):
            return False
    return True


@lru_cache(maxsize=4096)
def _name_words(name: str) -> list[str]:
    return _words(name)


_SUBSCRIPT: Final = re.compile(
    r"[a-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\["
    r"(?:[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+|-?\d*:-?\d*|\"[^\"\n]{1,64}\"|'[^'\n]{1,64}')\]"
    r"(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
"""A subscript as code writes one: by an attribute path, a slice or a string (``args[token.index]``, ``key[:8]``)."""
_CODE_FIELD: Final = re.compile(
    r"\{(?P<n>[A-Za-z_][A-Za-z0-9_.]*)(?:\[-?\d*:?-?\d*\])?(?:![rsa])?"
    r"(?::(?:.?[<>=^])?[-+ ]?z?#?0?\d*[,_]?(?:\.\d+)?[A-Za-z%]?|:[A-Za-z0-9 .,:/-]{1,16})?\}")
"""A field of an f-string or a template (``{effective_key[:8]}``, ``{token!r}``, ``{x:>8}``, ``{date:yyyy-MM-dd}``)."""
_TYPE_UNION: Final = re.compile(
    r"[{<(]?[A-Za-z][A-Za-z0-9]*(?:\[\])?(?:[ \t]*\|[ \t]*[A-Za-z][A-Za-z0-9]*(?:\[\])?)+[}>)]?")
"""Types joined by ``|`` (``{ArrayBuffer|TypedArray}``, ``<Buffer|string>``): a signature's, not a value."""
_ENV_NAME: Final = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


def _code_text(value: str) -> bool:
    """Code or a name where a value would be: a subscript (:data:`_SUBSCRIPT`), only template fields and punctuation
    (:data:`_CODE_FIELD`, a format spec as Python or .NET write one), a union of types (:data:`_TYPE_UNION`), each of
    them names (:func:`_name_like` for a subscript's and a field's: not ``wBela[fg2.v]``, ``{a1evI:QID_>/kgh(+:}``)
    and no generated string; or a constant's or an environment variable's name (``"LANGFUSE_SECRET_KEY"``,
    ``"NO_REPLY"``: words joined by ``_``)."""
    if _SUBSCRIPT.fullmatch(value):  # names as code writes them (not wBela[fg2.v], a password's runs)
        return all(_name_like(name) and not secret_looking(name) for name in _IDENTIFIERS.findall(value))
    if "{" in value:
        fields = [m.group("n") for m in _CODE_FIELD.finditer(value)]
        if fields and not _CODE_FIELD.sub("", value).strip(" .…:/_,;()|-") and all(
                _name_like(field) and not secret_looking(field) for field in fields):
            return True
    if "|" in value and _TYPE_UNION.fullmatch(value):
        members = _IDENTIFIERS.findall(value)
        return all(map(_type_name, members)) and (value[0] in "{<(" or any(
            m.lower() in _TYPE_WORDS or camel_name(m) for m in members))  # not Summer|Breeze
    if _ENV_NAME.fullmatch(value):
        return all(_plain_word(word) or _NUMBERED_WORD.fullmatch(word) is not None for word in value.lower().split("_"))
    return False


_IDENTIFIERS: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TYPE_WORDS: Final = frozenset({
    "string", "number", "boolean", "bool", "null", "undefined", "none", "int", "str", "bytes", "float", "object", "any",
    "void", "never", "unknown", "bigint", "symbol", "list", "dict", "tuple", "set", "array", "function", "char",
    "double", "long", "short", "byte", "integer", "uint", "nil", "true", "false", "buffer", "error", "date", "path"})
"""Type names a signature writes in lower case (``string``, ``null``, ``int``)."""


def _type_name(member: str) -> bool:
    """A member of a union of types: a type name written in lower case (:data:`_TYPE_WORDS`), a CamelCase name
    (``TypedArray``) or one capitalised English word (``Buffer``); not a piece of a password (``ojXL6ozPl4``,
    ``ijkl``)."""
    if member.lower() in _TYPE_WORDS:
        return True
    return camel_name(member) or (member.istitle() and member.isalpha() and english_word(member))
_NUMBERED_WORD: Final = re.compile(r"[a-z]{1,3}[0-9]{1,2}")
"""A short word with its number, as names hold them (``s3``, ``v2``, ``gpt4``)."""


def _format_only(value: str) -> bool:
    """A format string (``%s:%s``, ``Digest %s``, ``{0}:{1}``): format fields and, besides them, only punctuation and
    English words (a generated password's ``%s`` comes with runs that are none)."""
    rest = _FORMAT_FIELDS.sub(" ", value)
    if rest == value:
        return False
    runs = _PIECES.split(rest)
    return all(not run or (run.isalpha() and (run.islower() or run.istitle() or run.isupper()) and english_word(run))
               for run in runs)  # a word is cased as words are: zAYkM and nEmk are a password's runs


def _dotted_words(segments: list[str]) -> bool:
    """A dotted name written bare as code reads an attribute: words a name is written with (each of two letters or
    more a plain word, :func:`_plain_word`), one of three letters or more (``settings.api_key``, ``session_id.user``,
    ``codes.IMPORT_NOT_FOUND``); ``v5.PP_t8.Pyc`` is a password of a generator's symbols."""
    words = [word for segment in segments for word in _words(segment)]
    return all(len(word) < 2 or word.isdigit() or _plain_word(word) for word in words) and any(
        len(word) >= 3 and word.isalpha() and (english_word(word) or credential_word(word)) for word in words)


def _dotted_literal(segments: list[str]) -> bool:
    """A dotted name in quotes as modules, attributes and settings are written (``"aiohttp.ClientSession"``,
    ``"gateway.max_sessions"``, ``"hashlib.sha256"``): a part in lower case, an English word in it, and numbers only
    after the words they follow in names (``"Zkwms.TMTOXQ"``, ``"qwns0.bohmNC"``, ``"Xhd.khmlismt"`` are passwords)."""
    if not any(segment[0].islower() for segment in segments):
        return False
    if not any(len(word) >= 3 and word.isalpha() and english_word(word) for segment in segments
               for word in _words(segment)):
        return False
    return all((number := _WORD_NUMBER.search(segment)) is None or number.group("w").lower() in _NUMBERED
               for segment in segments)


def hex_literal(value: str) -> bool:
    """A number as code writes it in hexadecimal, of 64 bits at most (``0x1F``, ``0xDEADBEEF``,
    ``0xFFFFFFFFFFFFFFFF``); longer hex digits after ``0x`` are key material (an Ethereum private key is ``0x`` and 64),
    not a literal."""
    return 2 < len(value) <= 18 and value[:2] in ("0x", "0X") and all(c in string.hexdigits for c in value[2:])


def _count_name(name: str, words: list[str]) -> bool:
    """A name that counts tokens (``max_tokens``, ``input_tokens``, ``tokens``), not one that holds a token
    (``refresh_token``, ``authToken``, ``X-Amz-Security-Token``: a number under them is a credential)."""
    return ("token" in words or "tokens" in words) and credential_name(name) != STRONG


def _pattern(value: str) -> bool:
    """Whether ``value``, holding regular expression syntax, is a pattern: its groups close, and what it holds
    besides its syntax (its classes of ranges, quantifiers, escapes, group extensions and wildcards blanked) is
    anchors, literal text and operators (anything, after an escape or a group's extension ``(?:``), the words of it
    English or of one case, never a run mixing cases or letters and digits, nor the symbols a password mixes in
    (``0.*lrFnr~4_[``, ``TUI{{N$#].*PSB_0``, ``mr8UUp}(?!Ye}.)``, ``Ab\\d9xQzz``: a generated password may hold a
    backslash)."""
    if not _groups_close(value):
        return False  # Ku(m.W@.*A: its groups do not close
    syntax = _REGEX_SYNTAX.search(value)
    rest = _REGEX_TOKEN.sub(" ", value)
    core = rest[1:] if rest.startswith("^") else rest
    core = core[:-1] if core.endswith("$") else core
    if syntax is None and _PATTERN_TEXT.fullmatch(core) is None:
        return False
    loose = syntax is None and core == rest and _WILDCARDS.sub("", value) == _REGEX_TOKEN.sub("", value)
    cases = set()
    for run in _PIECES.split(core):
        if not run:
            continue
        if syntax is None and run.isalpha() and (run.islower() or run.isupper()) and not english_word(run):
            cases.add(run.islower())
            if len(cases) > 1:
                return False  # /t[o=1]x.*CK: letters of both cases apart, no escape: a password's, not a pattern's
        if loose:  # only .* / .+: the rest is words (".*Bearer.*"), not letters a password mixes (W/CL+q@@H.+s)
            if not ((run.isalpha() and english_word(run) and (run.islower() or run.istitle() or run.isupper()))
                    or run.isdigit() or (run.isalpha() and run.islower() and len(run) <= 3)):
                return False
        elif not (run.isdigit() or (run.isalpha() and (run.islower() or run.isupper()))
                  or (run.isalpha() and run.istitle() and english_word(run)) or camel_name(run)):
            return False
    return True


def _groups_close(value: str) -> bool:
    """Whether the groups of ``value`` read as a regular expression close (escapes and classes aside)."""
    depth = 0
    i, n = 0, len(value)
    while i < n:
        c = value[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i += 2 if value[i + 1:i + 2] == "]" else 3 if value[i + 1:i + 3] == "^]" else 1
            while i < n and value[i] != "]":
                i += 2 if value[i] == "\\" else 1
            if i >= n:
                return False  # a class that never closes
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                return False
        i += 1
    return depth == 0


def _kept_word(v: str, name: str, level: int, bare: bool, typed: bool) -> bool:
    """:func:`kept_value` for a value of ASCII letters and digits only (most credentials): the rules that can keep
    such a value, without the costlier ones that need a symbol."""
    low = v.lower()
    if low in _NOT_SECRET_WORDS or (low in _PLACEHOLDER_WORDS and not secret_looking(v)):
        return True
    if "xxx" in low and _PLACEHOLDER.fullmatch(v):
        return True  # AKIAXXXXXXXXXXXXXXXX
    words = _name_words(name)
    if v.isdigit():
        if len(v) <= 3 or (len(v) <= 10 and (level == WEAK or _count_name(name, words))):
            return True  # max_tokens=128000, a count
    elif len(v) <= len(name):
        value_words = _words(v)
        if words[-len(value_words):] == value_words:
            return True  # password=password, "login.password": "Password"
    if bare and ((v.isalpha() and v.islower() and english_word(v, 11)) or (typed and (
            camel_name(v) or (v.isalpha() and (v.istitle() or v.isupper()) and english_word(v)))) or (
            hex_literal(v))):
        return True
    if level == WEAK:
        return not (secret_looking(v) or drawn_letters(v)) or word_pieces(v)
    return False


def _identifier(segment: str) -> bool:
    """A segment of a dotted name as code writes it: pieces joined by ``_``, each lower case or capitals with a short
    number (``conn_common``, ``rust_pkcs12``, ``STR_BYTES_PY3``, ``HTTP_401_UNAUTHORIZED``) or CamelCase
    (``AuthBindReq``, ``SOCKS5ReplyCode``); not a generated string (``jUywku3``, ``vtnlNpXX2GL``)."""
    pieces = [piece for piece in segment.split("_") if piece]
    if not pieces or pieces[0][0].isdigit():
        return False
    return all(_PIECE.fullmatch(piece) or camel_name(piece) for piece in pieces)


def _sentence(value: str) -> bool:
    """Three or more words that read as a sentence or a label: one of them a word sentences are made of (``of``,
    ``not``, ``your``), or a sentence's end; a passphrase is words without them."""
    words = value.split()
    if len(words) == 2 and value.rstrip()[-1:] in ".!?" and all(w.rstrip(".!?").isalpha() for w in words) and all(
            english_word(w.rstrip(".!?")) for w in words):
        return True  # "Not set!", "Invalid token.": a short message
    if len(words) < 3 or sum(1 for w in words if w.strip(".,:;!?()").isalpha()) < 3:
        return False
    return value.rstrip()[-1:] in ".!?)" or any(w.lower().strip(".,:;!?()") in _STOPWORDS for w in words)


def camel_name(value: str) -> bool:
    """A CamelCase name (``ChannelCredentials``, ``OpenKeyEx``, ``HTTPBasicAuth``, ``SOCKS5ReplyCode``): words an
    English name is made of (each starts as English words do and holds a vowel; one acronym, one number, one
    abbreviation such as ``Rsp`` at most); a generated string breaks into words that are not (``XkmQvLpRt``,
    ``KfuOGQlosVfk``)."""
    letters = value.strip("_")
    if not letters.isascii() or not letters.isalnum() or not letters[0].isalpha() or letters.upper() == letters or (
            letters.lower() == letters):
        return False
    words = _WORD_SPLIT.findall(letters)
    if len(letters) < 3 * len(words) or sum(1 for word in words if not word.isdigit()) < 2:
        return False  # XkmQvLpRt, ZEcowXLTaWIOz: a generated string breaks into many short words
    numbers = short = acronyms = 0
    for i, word in enumerate(words):
        if word.isdigit():
            numbers += 1
            if i + 1 == len(words) and len(word) <= 3 and numbers == 1 and i > 0 and (
                    words[i - 1].lower() in _NUMBERED):
                continue  # swaggerUIRedirectOauth2, decodeBase64: a numbered word ends the name
            if len(word) > 3 or numbers > 1 or i + 1 == len(words) or not words[i + 1][0].isupper() or not (
                    words[i - 1].isupper() or words[i - 1].lower() in _NUMBERED):
                return False  # SOCKS5ReplyCode, Argon2PasswordHasher: a number after an acronym or such a word
        elif word.isupper():
            acronyms += 1
            if not 2 <= len(word) <= 5 or acronyms + short > 1:
                return False
        elif len(word) == 2:
            if word.lower() not in _TWO_LETTER_WORDS:
                return False
        elif not any(c in _VOWELS for c in word):
            short += 1  # Rsp, Req, Msg: an abbreviation
            if len(word) != 3 or acronyms + short > 1 or not word.istitle():
                return False
        elif not english_word(word):
            return False  # Kfu, Qlos, Xsa: no English word is written so
    return True


@lru_cache(maxsize=8192)
def english_word(word: str, longest: int = 14) -> bool:
    """Whether ``word`` (letters) could be an English word: at most ``longest`` letters, a vowel, a beginning English
    words have, no five consonants or four vowels in a row, no letter three times in a row."""
    low = word.lower()
    if not 2 <= len(low) <= longest or not low.isalpha() or _NOT_ENGLISH.search(low):
        return False  # ojXL6ozPl4: a digit is no letter of a word
    onset = _ONSET.match(low)
    return onset is not None and onset.end() < len(low) and onset.group(0) in _ONSETS


_HUMAN_RE: Final = re.compile(r"(?P<w>[A-Za-z@$0-9]{2,20}?)[0-9]{1,4}")
_LEET: Final = str.maketrans("@$013457", "asoieast")


def human_password(value: str) -> bool:
    """A password as people make them: a word (its letters perhaps written as digits or symbols: ``F00tb@ll``,
    ``w3lc0m3``) then one to four digits (``Summer2024``, ``summ3r576``). The ``!`` and ``?`` people end such a
    password with are its own (``the password is Summer2024!``), where a generated token's are the sentence's."""
    m = _HUMAN_RE.fullmatch(value)
    if m is None:
        return False
    word = m.group("w").translate(_LEET)
    return 3 <= len(word) <= 12 and (word.islower() or (word[0].isupper() and word[1:].islower())) and (
        english_word(word))  # a word in one case or capitalised: AEWPkoGFjUXJG06 is drawn, not made


_WORD_SEPARATOR_NUMBER_RE: Final = re.compile(r"(?P<w>[A-Za-z]{3,32})[-_.@#*+ ](?P<d>[0-9]{1,8})")
"""A word, one mark, a number: how people make a password as often as glued (``Bluebird-77``, ``summer_2020``,
``Rex.2019``; a blank only inside quotes, where a value may hold one: ``is "Bluebird 77"``)."""


def without_mark(value: str) -> str:
    """``value`` as a word and a number glued when it is one with a mark between them
    (:data:`_WORD_SEPARATOR_NUMBER_RE`: ``Bluebird-77`` is judged as ``Bluebird77``, so ``sha-256``, ``utf-8`` and
    ``gpt-4`` stay as ``sha256`` does); else ``value`` itself."""
    joined = _WORD_SEPARATOR_NUMBER_RE.fullmatch(value)
    return value if joined is None else joined.group("w") + joined.group("d")


_DRAWN_SYMBOLS: Final = str.maketrans("", "", "!#^*&%$~?")
"""The symbols a password generator adds among its letters (:func:`drawn_letters` judges the letters without them;
not ``+``, which joins a key chord's names)."""


def drawn_letters(value: str) -> bool:
    """Letters alone as a generator draws them: ten at least, ASCII, of both cases with a capital after the first
    letter, and not words joined as a CamelCase name's, after a short piece too (``tGnOqgBuJRkn``,
    ``fPXqndYCAMrXlUV``; not ``HelloWorld``, ``PostgreSQL``, a capitalised word, ``Browserbase``, nor ``tmpSecretKey``,
    ``OAuthToken``). A password generator's symbols inside them (one to three of ``! # ^ * & % $ ~ ?``, none at an
    end: ``kTNbNog^kRfIdc``) leave the letters to be judged alone (``Tom&Jerry`` stays words; ``+`` joins a key chord's
    names, ``SHIFT+Ctrl+K``, and counts among the generator's symbols only beside another: ``egsPai^+&Hlutzo``)."""
    if value and not value.isalpha() and value[0].isalpha() and value[-1].isalpha():
        letters = value.translate(_DRAWN_SYMBOLS)
        if "+" in letters and len(letters) < len(value):
            letters = letters.replace("+", "")  # egsPai^+&Hlutzo: a plus among other drawn symbols is one too
        if 0 < len(value) - len(letters) <= 3:
            value = letters
    if not (len(value) >= 10 and value.isascii() and value.isalpha() and not value.islower()
            and not value[1:].islower() and not value.isupper() and not camel_name(value)):
        return False
    first = _FIRST_HUMP.match(value)
    if first is None:
        return True
    rest = value[first.end():]
    return not (camel_name(rest) and len(_WORD_HUMPS.findall(rest)) >= 2)


def drawn_token(value: str) -> bool:
    """A token as a generator draws it, with nothing around it to say so (``Use P for Jira``): twelve characters at
    least, 32 or 64 hexadecimal digits, or letters of both cases (digits and symbols too) in short runs, hardly one
    of them a word (``7kr8D!DnW1wSqfyWFokfNqXyVK``, ``zVNHpxsH7iNg7dob``, ``TrgNTcpHDYBoFT``); not a name made of
    words (``MyCompanyVPN2024``, ``iPhone15ProMax``, ``OAuth2PasswordBearer``), a git commit (40 digits), a path, a
    version, a host, an option or a variable."""
    if not 12 <= len(value) <= 256 or value[0] == "-" or any(c in value for c in _NOT_IN_TOKENS):
        return False
    if _HEX_TOKEN.fullmatch(value):
        return True
    if not (any(c.islower() for c in value) and any(c.isupper() for c in value)):
        return False
    pieces = _TOKEN_PIECES.findall(value)
    letters = [p for p in pieces if p.isalpha()]
    words = sum(1 for p in letters if len(p) >= 3 and english_word(p, 10))
    return 3 * len(pieces) >= len(value) and 4 * words <= len(letters)


_NOT_IN_TOKENS: Final = frozenset(".:=@\\~$%")
"""What no drawn token holds and paths, versions, hosts, addresses, arguments and variables do."""
_HEX_TOKEN: Final = re.compile(r"[0-9a-f]{32}|[0-9a-f]{64}|[0-9A-F]{32}|[0-9A-F]{64}")
_TOKEN_PIECES: Final = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+|[^A-Za-z0-9]+")
"""A token's runs: a word's letters (capitalised or not), capitals, digits, other characters."""


_FIRST_HUMP: Final = re.compile(r"[A-Z]?[a-z]{1,4}(?=[A-Z])|[A-Z](?=[A-Z][a-z])")
"""A short piece before a CamelCase name (``tmp`` of ``tmpSecretKey``, ``O`` of ``OAuthToken``)."""
_WORD_HUMPS: Final = re.compile(r"[A-Z][a-z]{2,}")
"""The capitalised words of a CamelCase name after such a piece: two at least (``Secret`` and ``Key``; a drawn run,
``LQONQZihm``, reads as an acronym and one word)."""


def secret_looking(value: str) -> bool:
    """A value that looks like a generated credential: 8+ characters, no space, letters mixed with digits or
    symbols (or 16+ characters mixing cases), and not words joined as names are (``stop_significant``,
    ``_internal_create_key``, ``SerializedStorageKey``)."""
    if len(value) < 8 or any(c.isspace() for c in value):
        return False
    if _WORDS_JOINED.fullmatch(value.strip("_.:/-")) or camel_name(value) or (
            "_" in value.strip("_") and _identifier(value)):
        return False  # stop_significant, user-profile, MAX_RETRIES, rust_pkcs12: words joined, not generated
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

"""Credentials found by what stands in front of them: names, flags, URL userinfo, authorization schemes (OBS-57..59).

(Over 400 lines on purpose: every shape reads its value through the one value grammar and the one judgement of this
module, so that where a value ends and when it stays are stated once for all of them.)

The shapes (spec 01 §8.2.5, widened by spec 04 FMT-33a):

* ``NAME=value`` (env files, shell, query strings, connection strings ``;AccountKey=...``, ``--name=value``), also
  with ``=>`` (PHP, Ruby, Perl), ``:=``, ``?=``, a full-width ``＝`` or a tab between name and value;
* ``NAME: value`` (YAML, HTTP headers, logs; also ``：``), YAML's anchors and tags (``&pw``, ``!!str``), block
  scalars (``|``, ``>-``), a value on the next line and the items of a list (``- P``, ``[P, Q]``);
* quoted pairs ``"name": "value"`` / ``'name' => 'value'`` / ``["name"] = "value"`` (JSON, Python, PHP, code), string
  prefixes (``b'P'``, ``r"P"``; an f-string holding ``{...}`` is code), ``define('NAME', 'P')``,
  ``os.environ.setdefault("NAME", "P")``, and ``{"name": "API_KEY", "value": "P"}`` / ``- name: X\\n  value: P``;
* ``--name value`` / ``-name value`` after any character that is not part of a word, and in an argument list
  (``["--token", "P"]``); ``<name>value</name>`` (CDATA too) and ``<x key="name">value</x>``; the password options
  of clients (:mod:`.scrub_clients`);
* ``scheme://user:password@host`` (also after a ``.`` or ``:``, and ``//user:password@host``; a password holding
  ``/ # ?`` in practice), and a bare token as the user (``https://TOKEN@github.com``);
* ``Bearer <token68>`` / ``Basic <token68>``, and what follows any scheme word after an ``Authorization`` name
  (``Digest``: the ``response=`` only); ``Cookie:`` / ``Set-Cookie:`` headers pair by pair;
* ``${NAME:-P}`` / ``${NAME:=P}``: the default of a parameter named for a credential.

Names are judged by :mod:`.scrub_names`. Every finder appends ``(start, end)`` spans of the *value* only (the
name, the quotes and the separator stay), never reads past the end of the value (a value ends at whitespace,
a quote, a backtick, ``& ; , ) ] } < >``, a backslash escape such as ``\\n``, a control character or non-ASCII
punctuation such as ``，。」``; it never starts with an opening bracket), and takes time linear in the text on the
adversarial runs of ``tests/engine/test_scrub_linear_time.py`` (a pattern that would backtrack over a run from
each of its positions is anchored by a lookbehind, bounded, or only matched at one position).
"""

from __future__ import annotations

import re
import string
import unicodedata
from bisect import bisect_right
from collections.abc import Callable
from functools import lru_cache
from typing import Final
from urllib.parse import unquote

from .scrub_clients import (ECHO_COMMAND, PRINTF_FORMAT, client_hints, find_client_passwords, find_keyword_pairs,
                            find_login_tokens, find_positional_passwords, find_printed_secrets, find_sql_identified)
from .scrub_names import (MAX_NAME_CHARS, NAME_HINTS, STRONG, WEAK, call_extent, camel_name, credential_name,
                          credential_word, drawn_letters, english_word, kept_value, open_call, parameter_default,
                          password_name, phrase_name, human_password, placeholder, query_credential, secret_looking,
                          spaced_passphrase, wide_word)

__all__ = ["find_shape_spans", "is_sensitive_pair", "unemphasized"]

Span = tuple[int, int]

_NAME_CHARS: Final = frozenset(string.ascii_letters + string.digits + "_.-")
_QUERY_LEADERS: Final = frozenset("?&;#")
_SCHEME_WORDS: Final = frozenset({"bearer", "basic", "token", "digest", "negotiate", "ntlm", "apikey", "api-key",
                                  "sso-key", "hmac", "aws4-hmac-sha256", "key"})
_ASCII_HINTS: Final = tuple(h for h in NAME_HINTS if h.isascii())
_WIDE_HINTS: Final = tuple(h for h in NAME_HINTS if not h.isascii())

# What ends an unquoted value: whitespace, quotes, a backtick, ``& ; , ) ] } < >``, a backslash, control characters,
# Latin-1 quotes and marks (``« » ¿ ·``), general and CJK punctuation (``…``, zero-width spaces, ``，。「」``), arrows
# (``→ ⇒ ⟶``) and full-width punctuation: no password is typed with them.
_END: Final = (r"\s\"'`&;,)\]}<>\\\x00-\x1f\x7f\u00a1\u00ab\u00b7\u00bb\u00bf\u2000-\u206f\u2190-\u21ff"
               r"\u27f0-\u27ff\u2900-\u297f\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65\ufeff")
_SYMBOL_TAIL: Final = re.compile(r"[\u2190-\u2bff\ufe00-\ufe0f\u200d\U0001f000-\U0001faff]+\Z")
"""Symbols, dingbats and emoji at a value's end (``P✓``, ``P🔑``): the text's decoration. Inside a value they are
its characters (``Xk9😀mQ2``)."""
_ESC: Final = r"\\(?![nrt\"'\\/]|u[0-9A-Fa-f]{4}|[bf](?![A-Za-z0-9]))"
"""A backslash inside an unquoted value: any but the escapes of JSON-encoded text (``\\n``, ``\\"``, ``\\u00e9``;
``\\b`` and ``\\f`` only before a blank or a symbol), which end it. ``\\fb`` in ``kE{b\\fb9`` is a password's."""
_QUOTE_PAIRS: Final = {"\u201c": "\u201d", "\u2018": "\u2019", "\u300c": "\u300d", "\u300e": "\u300f", "\u3010": "\u3011",
                  "\u300a": "\u300b", "\u3008": "\u3009", "\u00ab": "\u00bb", "\u2039": "\u203a", "\uff02": "\uff02",
                  "\uff07": "\uff07"}
"""Typographic and CJK quotes and brackets around a value (``“P”``, ``‘P’``, ``「P」``, ``【P】``, ``«P»``, ``＂P＂``):
each opener and its closer."""
_TYPOGRAPHIC: Final = "".join(sorted(set(_QUOTE_PAIRS) | set(_QUOTE_PAIRS.values())))
_PARAM: Final = r"\$\{[^{}\n\"'`\\]{1,256}\}"
# A value: quoted (triple, double, single, backtick; backslash escapes inside; a string prefix such as ``b``, ``r``,
# ``f``), a template (``{{ x }}``), or a run of characters that cannot end it, not starting with an opening bracket
# (``${...}`` aside). A backslash followed by an escape letter ends an unquoted value (JSON-escaped text); one
# followed by a blank and more of the value is the shell's escaped blank (``password=Xk9m\\ Q2``). In single
# quotes ``''`` is a quote (YAML's and SQL's escape: ``'it''s-P'``).
_VALUE_RE: Final = re.compile(
    r"[ \t]*(?:(?P<p>[bBrRuU]{1,2}|[fF][rR]?|[rR][fF])(?=[\"']))?(?:"
    r"\"\"\"(?P<tdq>(?:[^\"\\]|\\.|\"(?!\"\")){0,4096}?)\"\"\"|'''(?P<tsq>(?:[^'\\]|\\.|'(?!'')){0,4096}?)'''"
    r"|\"(?P<dq>(?:[^\"\\\n]|\\.)*)\"|'(?P<sq>(?:[^'\\\n]|\\.|'')*)'|`(?P<bq>[^`\n]*)`"
    r"|(?P<tpl>\$?\{\{[^\n]{0,1024}?\}\}|\{%[^\n]{0,1024}?%\})"
    r"|(?P<to>[\u201c\u2018\u300c\u300e\u3010\u300a\u3008\u00ab\u2039\uff02\uff07])(?P<tq>[^" + _TYPOGRAPHIC
    + r"\n]{1,512})(?=[" + _TYPOGRAPHIC + r"])"
    r"|(?P<v>(?:" + _PARAM + r"|[^" + _END + r"(\[{]|" + _ESC + r")(?:" + _PARAM + r"|[^" + _END + r"]"
    + r"|\\ (?=[^\s\"'`&;,)\]}<>])|" + _ESC + r")*)"
    r"|(?P<s>[<>\[\](){};,&]{1,4}[^\s\"'`\\]{1,255}))"
)
_SYMBOL_LED_PLACEHOLDER: Final = re.compile(r"[<\[({][ \t]*[A-Za-z][A-Za-z _.-]*[>\])}]|\$[({].*|<%[=#-]?(?:\s.*)?|"
                                            r"<%.*%>|\{[{%].*")
"""A symbol-led value that is a placeholder, a note or code (``<your-password>``, ``[REDACTED]``, ``(none)``,
``{password}``, ``$(cat pw)``, ``${PW}``, ``<%= pw %>`` (cut at its blank too: ``<%=``), ``{{ pw }}``), not a
password; ``<%@Xl:CYO…`` opens no template."""
_NOT_VALUE_START: Final = frozenset(" \t)]},;+.")
_CODE_BETWEEN: Final = re.compile(r"[^\"']*\s|[.)\]},;+]+$|\+[\w.]+\+$|\.[a-z_]{3,}\([^()]*\)")
"""Code between two strings (``.join(x) + ``, ``+pw+``, ``), ``, ``.format(x)``), not a quoted value."""
_FLAG_RE: Final = re.compile(
    r"(?<![A-Za-z0-9_-])--?(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]{0,127})"
    r"(?:[ \t]+(?!-)|(?P<aq>[\"'])[ \t]*,[ \t]*(?=[\"']))")
"""``--name value``, ``["--name", "value"]``, and the single-dash long options of Go-style tools (``-token X``; a
one-letter option such as ``-p`` is no credential name). Not after a word's character (``a-b``, ``x--y``) and at most
:data:`MAX_NAME_CHARS` long, so a run of ``-a`` is matched from its start only."""
_PAIR_SEP: Final = r"[ \t]*(?::|：|=>|\][ \t]*=(?!=))"
_QUOTED_KEY_RE: Final = re.compile(r"(?P<kq>[\"'])(?P<key>[^\"'\\\n]{1,128})(?P=kq)" + _PAIR_SEP)
"""A quoted key and what joins it to its value (``:``, ``=>``, ``] =``): the reference the fast finder equals."""
_PAIR_END_RE: Final = re.compile(r"[\"']" + _PAIR_SEP)
_SINGLE_DASH_NAME_RE: Final = re.compile(r"[a-z]{2,}(?:[-_][a-z]+)*")  # ``-token``, not ``-pS3cret``
_ELEMENT_RE: Final = re.compile(
    r"<(?P<n>[A-Za-z_][A-Za-z0-9_.:-]{0,63})(?P<a>(?:[ \t\r\n]+[A-Za-z_][\w.:-]{0,63}[ \t]*=[ \t]*"
    r"(?:\"[^\"<>\n]{0,256}\"|'[^'<>\n]{0,256}'))*)[ \t\r\n]*(?:/>|>[ \t\r\n]{0,64}(?:<!\[CDATA\[(?P<c>[^\]\n]{1,1024})"
    r"\]\]>|(?P<v>[^<>\s\\][^<\n\\]{0,1023}?))[ \t\r\n]{0,64}</(?P=n)[ \t]*>)")
_HTML_TEXT_ELEMENTS: Final = frozenset({"code", "kbd", "samp", "var", "tt", "pre"})
"""HTML elements whose names only look like a credential's (``<code>`` is no ``code=`` parameter)."""
_ATTR_RE: Final = re.compile(r"(?P<k>[A-Za-z_][\w.:-]*)[ \t]*=[ \t]*(?:\"(?P<d>[^\"]*)\"|'(?P<s>[^']*)')")
_SETTING_RE: Final = re.compile(
    r"(?<![A-Za-z0-9_-])(?:key|name)=(?P<q>[\"'])(?P<n>[^\"'\\\n]{1,128})(?P=q)[ \t]+value=(?P<r>[\"'])"
    r"(?P<v>[^\"'\\\n]*)(?P=r)")
_VALUE_KEY_RE: Final = re.compile(r"(?:value|Value)(?P<vq>[\"']?)[ \t]*[:=]")
_NAME_KEY_RE: Final = re.compile(
    r"(?P<kq>[\"']?)(?:[Pp]arameter|[Oo]ption)?(?:name|key|Name|Key)(?P=kq)[ \t]*[:=][ \t]*(?P<nq>[\"']?)"
    r"(?P<n>[A-Za-z_][A-Za-z0-9_.-]{0,127})(?P=nq)[ \t]*(?:,[ \t]*|\r?\n[ \t]*(?:-[ \t]+)?)"
    r"(?P<vq>[\"']?)(?:[Pp]arameter|[Oo]ption)?\Z")
"""``{"name": "API_KEY", "value": "P"}``, ``- name: DB_PASSWORD\\n  value: P``, ``{"key": "password", "value": "P"}``:
the value is named by its sibling (found from the ``value`` key, the sibling read backwards)."""
_CALL_OPEN_RE: Final = re.compile(r"\([ \t]*(?P<q>[\"'])(?P<n>[^\"'\\\n]{1,128})(?P=q)[ \t]*,")
_CALL_NAME_RE: Final = re.compile(
    r"(?<!\w)(?:define|SetEnvironmentVariable|setdefault|(?i:getenv|putenv|setenv|env)|get|fetch)\Z")
"""``define('DB_PASSWORD', 'P')``, ``os.environ.setdefault("API_KEY", "P")``, ``os.getenv("TOKEN", "P")``, Go's
``os.Setenv("API_TOKEN", "P")``, Laravel's ``env('DB_PASSWORD', 'P')``: a value (or a default) given with its name."""
_DEFAULT_RE: Final = re.compile(r"\$\{(?P<n>[A-Za-z_][A-Za-z0-9_]{0,127}):?[-=](?P<d>[^{}\s\"'`\\]+)\}")
_USERINFO_END: Final = re.compile(r"[\s\"'<>\\`\x00-\x1f]")
_USERINFO_HARD_END: Final = re.compile(r"[\s\"'\\`\x00-\x1f]")
_HOST_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]*(?::\d{1,5})?(?=[/?#\s\"'<>\\`]|$)")
_TOKEN_USER: Final = re.compile(r"[A-Za-z0-9_~+=-]{12,}")
_SCHEME_CHARS: Final = frozenset(string.ascii_letters + string.digits + "+.-")
# The scheme word in any ASCII case (``(?ai:``: no Unicode case folding, so that where ``str.lower`` finds the word
# is where the pattern can match).
_AUTH_SCHEME_RE: Final = re.compile(
    r"(?<![A-Za-z0-9_-])(?P<w>(?ai:bearer|basic))[ \t]+(?P<c>(?:[^\s\"'`\\“”‘’«»「」『』，。、；：！？（）]|\\(?![nrtbfu\"'\\/]))+)")
_CRED_RE: Final = re.compile(r"[ \t]*(?P<c>(?:[^\s\"'`\\“”‘’«»「」『』，。、；：！？（）]|" + _ESC + r")+)")
"""A scheme's credential: no blank, no quote (typographic and CJK quotes too: ``“Authorization: Bearer P”``), no
full-width punctuation (``Bearer P，然后重启``)."""
_AUTH_PARAM_RE: Final = re.compile(
    r"[ \t]*(?:,[ \t]*)?(?P<n>[A-Za-z][A-Za-z0-9_-]{0,63})[ \t]*=[ \t]*(?:\"(?P<q>[^\"\\\n]*)\"|(?P<v>[^\s,\"\\]+))")
_PARAM_NAME_RE: Final = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}[ \t]*=(?=[\"']|[^=\s\"'])")
_SCHEME_WORD_RE: Final = re.compile(r"[A-Za-z]+(?:-[A-Za-z0-9]+){0,3}")
"""A scheme word, hyphenated too (``DeepL-Auth-Key``, ``Klaviyo-API-Key``, ``Api-Token``, ``AWS4-HMAC-SHA256``)."""
_PARAM_WORD_RE: Final = re.compile(r"[A-Z]?[a-z]{2,}(?:[A-Z][a-z]{1,}){0,3}")
"""An authentication parameter's name written as one word or lowerCamelCase (``Credential``, ``Signature``,
``keyId``, ``SignedHeaders``); a base64 credential starts with none of them followed by ``=`` and more."""
_WIDE_SCRIPT: Final = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]")
"""Kana, CJK ideographs, Hangul and full-width forms: the script of a sentence an ASCII value is glued into."""
_HUMP_RE: Final = re.compile(r"[A-Z]?[a-z]+")
_ALGORITHM_PREFIX: Final = re.compile(r"(?:(?i:sha-?(?:1|224|256|384|512)|md5|hmac-sha(?:1|256|512))|v[01])=")
"""A digest's algorithm written before it (``X-Hub-Signature-256: sha256=<hex>``, Slack's ``v0=<hex>``): it stays
when a digest follows (:data:`_DIGEST`); ``V0=/yOU0IxfQ]5<`` is a password."""
_DIGEST: Final = re.compile(r"(?:[0-9a-fA-F]{16,}|[A-Za-z0-9+/_-]{20,}={0,2})(?:[,;\s]|\Z)")
"""A digest as webhooks sign with: hex, or base64 of 20 characters or more."""
_SECRET_PARAMS: Final = frozenset({"response", "signature", "sig", "oauth_signature", "password", "passwd"})
_TAG_START: Final = re.compile(r"<[/!A-Za-z]")
_CLOSERS: Final = {"(": ")", "[": "]", "{": "}"}
_YAML_PROPS: Final = re.compile(r"(?:[ \t]+(?:&[A-Za-z0-9_-]+|!!?[A-Za-z0-9_:/.-]*))+(?=[ \t]|\r?\n|\Z)")
_BLOCK_RE: Final = re.compile(r"[ \t]*(?:(?P<b>[|>][-+0-9]{0,2})[ \t]*)?(?:#[^\n]*)?(?=\r?\n)")
_MAPPING_RE: Final = re.compile(r"(?:[\"'][^\"'\n]*[\"']|[^\s:#\"'-](?:[^:\n]*[^ \t:\n])?)[ \t]*:(?:[ \t]|\r?$)", re.M)
_ITEM_RE: Final = re.compile(
    r"[ \t]*(?:(?P<p>[bBrRuU])?\"(?P<dq>(?:[^\"\\\n]|\\.)*)\"|(?P<sp>[bBrRuU])?'(?P<sq>(?:[^'\\\n]|\\.)*)'"
    r"|(?P<v>[^\s,\[\](){}\"'`]+))[ \t]*(?P<sep>[,\])])")
_LINE_END: Final = re.compile(r"[\n\r\"'`\\]")
_COOKIE_PAIR_RE: Final = re.compile(r"[ \t]*(?P<n>[^=;,\s\"'\\]{1,128})=(?P<v>[^;\s\"'\\]*)")
_COOKIE_ATTRIBUTES: Final = frozenset({"path", "domain", "expires", "max-age", "samesite", "priority", "version",
                                       "comment", "partitioned"})
_SOURCE_RE: Final = re.compile(r"pass:|env:[A-Za-z_][A-Za-z0-9_]*$|file:|fd:\d+$")
"""An OpenSSL passphrase argument: ``pass:`` is followed by the password; ``env:``, ``file:``, ``fd:`` name where
it is."""
_MAX_BLOCK_LINES: Final = 64
_CODE_AFTER: Final = re.compile(r"[ \t]*(?:[|+*/%^][ \t]|\[|\(|=(?!=)|\)|,[ \t]*(?:\n|$|[A-Za-z_]+[ \t]*:))")
"""What follows a type, a class or a constant in code (``credentials: ChannelCredentials | None``, ``Optional[...]``,
``Token = Ignore + PlainToken``, a parameter's type before the line's end or the next parameter)."""
_NUMBERED_WORD: Final = re.compile(r"(?P<w>[A-Z][a-z]+)[0-9]{1,4}|[0-9][0-9.]*")
"""``Example2``, ``6``, ``2.0``: a heading's numbered word, a version."""
_JOINED_WORDS: Final = re.compile(r"[-/]")
_LINE_LEAD: Final = re.compile(r"[ \t]*(?:#+|[-*+>•→]|=>|->|\d+[.)])?[ \t]*")
_URL_START: Final = re.compile(r"(?<![A-Za-z0-9+.-])([a-z][a-z0-9+.-]{0,31})://")
_SCHEME_SPLIT: Final = re.compile(r"[^a-z]+")
_SCHEME_RUNS: Final = frozenset({"http", "https", "ftp", "ftps", "sftp", "s", "gs", "ws", "wss", "smb", "nfs", "hdfs",
                                 "jdbc", "ldap", "ldaps", "mqtt", "mqtts", "rtsp", "rtmp", "tcp", "udp", "ssh", "svn",
                                 "git", "sql", "xmpp", "dns", "tls", "ssl", "srv", "grpc", "grpcs", "wasb", "wasbs",
                                 "abfs", "abfss", "nntp", "imap", "imaps", "pop", "smtp", "smtps", "sqlite", "mssql",
                                 "pyodbc", "pymssql", "psycopg", "cx", "op", "gcp", "aws", "az", "kv", "sm"})
"""Runs of the schemes people write that no English word test accepts (``s3``, ``mongodb+srv``, ``sftp``, a 1Password
reference ``op://``)."""
"""A URL's scheme in a value (a password holding ``://`` after a symbol or a capital letter holds no URL)."""
_INNER_NAME: Final = re.compile(r"(?:export[ \t]+)?(?P<n>[A-Za-z_][A-Za-z0-9_.-]{0,127})=")
_CALL_LOOKAHEAD: Final = 2048
_VALUE_ENDS: Final = frozenset(" \t\r\n\"'`&;,)]}<>\\")
_USER_SPLIT: Final = re.compile(r"[^a-z]+")
_DOMAIN: Final = re.compile(r"[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}")
_PASSWORD_TAIL: Final = re.compile(r"[^/=&@\s]+")
"""What follows a ``/ ? #`` inside a password written unencoded (``app:1000/0000A@db``), not a path, a query or a
fragment (``localhost:8080/@types``, ``…:8080?email=a@b.c``, ``…:8080#/users/@alice``)."""
_USER_PAIR: Final = re.compile(r"(?P<u>[A-Za-z0-9._@+-]{1,64})[:/](?P<p>.+)", re.S)
_PERCENT_ESCAPE: Final = re.compile(r"%[0-9A-Fa-f]{2}")
_MARKER: Final = re.compile(r"<redacted(?::[0-9a-f]{8})?>")
_PAIR_NAME_ENDS: Final = ("credentials", "credential", "creds", "cred", "userpass", "usrpass", "basicauth",
                          "httpauth", "proxyauth")
"""How the names of a user and a password written together end (``DB_CREDENTIALS``, ``basicAuth``)."""
_CJK_USER_WORDS: Final = ("用户名", "用户", "账号", "帐号", "账户", "帐户", "帳號", "帳戶", "使用者", "登录名", "ユーザー名",
                          "ユーザー", "ユーザ名", "ユーザ", "アカウント", "ログインID", "ログイン名", "사용자명", "사용자", "아이디",
                          "계정")
"""The word for user or account in languages that write no space (``用户名/密码：admin/P``, ``账号密码：admin/P``)."""
_CJK_PASSWORD_WORDS: Final = ("密码", "密碼", "口令", "パスワード", "비밀번호", "패스워드", "비번")
_CJK_PAIR_WORDS: Final = ("凭据", "憑據", "認証情報", "資格情報")
"""The word for *credentials* (a user and a password together: ``凭据：admin/P``)."""
_USER_WORDS: Final = frozenset({"user", "username", "usr", "login", "u", "id", *_CJK_USER_WORDS})


def _value_span(m: re.Match[str], strict: bool = True, name_start: int = -1) -> Span | None:
    """The value's span (inside its quotes). A quoted value is refused when its opening quote rather closes the
    string the name stands in: the quoted text starts with a space, or it is code between two strings (it starts with
    what ends an expression, ``print("password: ".join(x) + "!")``, and the name is inside a string opened with that
    quote on its line: :func:`_between_strings`), or it runs over an escaped line break (a value never spans lines;
    ``\\n`` in JSON-escaped text); not so after a quoted key (``strict`` false: ``"password": " x"`` is JSON's own
    string). Otherwise a quoted value is a literal, whatever it starts with (``DB_PASSWORD=".YYZ^n9"``). An f-string
    holding a replacement field, and a template, are code: no value."""
    text = m.string
    for group in ("tdq", "tsq"):
        if m.group(group) is not None:
            start, end = m.span(group)
            while start < end and text[start] in " \t\r\n":
                start += 1
            while end > start and text[end - 1] in " \t\r\n":
                end -= 1
            return (start, end) if "{" not in m.group(group) or "f" not in (m.group("p") or "").lower() else None
    for group in ("dq", "sq", "bq"):
        if m.group(group) is not None:
            start, end = m.span(group)
            value = m.group(group)
            if strict and start < end and (text[start] in " \t" or "\\n" in value or "\\r" in value or (
                    text[start] in _NOT_VALUE_START and _between_strings(text, name_start, start - 1, value))):
                return None
            if "{" in value and "f" in (m.group("p") or "").lower():
                return None  # f"Bearer {api_key}": code
            return start, end
    if m.group("tq") is not None:
        start, end = m.span("tq")
        if text[end] != _QUOTE_PAIRS[m.group("to")] or text[start] in " \t" or text[end - 1] in " \t":
            return None
        return start, end
    if m.group("s") is not None:
        return _symbol_led(text, *m.span("s")) if name_start >= 0 else None
    if m.group("v") is not None:
        start, end = _glued_tail(text, *m.span("v"), strong=name_start >= 0)
        tail = _SYMBOL_TAIL.search(text, start, end)
        return unemphasized(text, start, tail.start() if tail is not None and tail.start() > start else end)
    return None


def _symbol_led(text: str, start: int, end: int) -> Span | None:
    """After a strong name, an unquoted value that starts with what ends or opens one (``<2onfZq7``, ``}6BlOHlU{Ud``,
    ``(iw<jM/B``, ``&XR>yEbcj``): a generated password's first symbols, the value its whole blank-separated run, less a
    next pair (``;Database=x``), a sentence's end and a bracket that closes one opened before it; ``None`` for a
    placeholder, a note, code or a redaction marker, and for a run that does not look generated (letters of both
    cases, or letters and digits, four of them at least)."""
    for k in range(start + 1, end):
        if text[k] in ";&" and _NEXT_PAIR_RE.match(text, k + 1) is not None:
            end = k  # ;Database=app: the next pair of a connection string or a query
            break
    while end > start and text[end - 1] in ".,;:!?":
        end -= 1
    while end > start and text[end - 1] in _OPENER_OF and _opened(text, start, end - 1, _OPENER_OF[text[end - 1]]):
        end -= 1
    value = text[start:end]
    if sum(c.isalnum() for c in value) < 4 or _SYMBOL_LED_PLACEHOLDER.fullmatch(value) is not None \
            or _MARKER.search(value) is not None \
            or _CODE_OR_PLACEHOLDER.search(value) is not None or not (_mixed(value) or _cased(value)):
        return None
    closer = value[-1]
    if closer in ")]" and value[0] == _OPENER_OF[closer] and len(value) > 2 and value[0] not in value[1:-1] \
            and closer not in value[1:-1]:
        return start + 1, end - 1  # password: (P), token: [P]: the brackets around the whole value are the text's
    return start, end


def unemphasized(text: str, start: int, end: int) -> Span:
    """A value's span without the Markdown emphasis around it (``**P**``, ``__P__``, ``***P***``): the marks are the
    text's formatting, not the secret's characters, so the same secret gets the same marker however it is shown."""
    for mark in ("***", "**", "__"):
        k = len(mark)
        if end - start > 2 * k and text.startswith(mark, start) and text.startswith(mark, end - k) \
                and text[start + k] not in "*_ \t" and text[end - k - 1] not in "*_ \t":
            return start + k, end - k
    return start, end


def emphasis_opened(text: str, mark: str, line: int, start: int) -> bool:
    """Whether the emphasis run ``mark`` (``*``, ``**``, ``~~``) is open at ``start`` on the line beginning at ``line``:
    the line holds an odd number of ``mark`` before ``start`` and one of them opens an emphasis (glued to the text
    after it, not to a word or another mark before it: a list's ``* `` and ``snake_case``'s ``_`` open none)."""
    if text.count(mark, line, start) % 2 == 0:
        return False
    width = len(mark)
    at = text.rfind(mark, line, start)
    while at >= 0:
        after = text[at + width:at + width + 1]
        before = text[at - 1:at] if at > line else ""
        if after and not after.isspace() and after not in EMPHASIS_MARKS and not before.isalnum() \
                and before != mark[0]:
            return True
        at = text.rfind(mark, line, at)
    return False


EMPHASIS_MARKS: Final = "*_~"
"""The characters of a Markdown emphasis run."""


_MARKUP_END_RE: Final = re.compile(
    r"</(?P<n>[A-Za-z][A-Za-z0-9]{0,15})[ \t]*>|<(?:br|hr|wbr)(?:[ \t]+[^<>\n]{0,256})?[ \t]*/?>", re.IGNORECASE)
"""Markup that ends whatever value it follows: the closing tag of an element (``</td>``, ``</p>``, ``</li>``), and a
line break or rule (``<br>``, ``<br/>``, ``<hr>``)."""


def markup_cut(text: str, start: int, end: int) -> int:
    """Where a value read at ``[start, end)`` ends before markup (:data:`_MARKUP_END_RE`) inside it or starting in it: a
    closing tag of an element opened before the value (``<td>password: P</td>``: the ``</td>`` is the table's, however
    the value was read), or a line break tag; ``end`` when there is none. The value's own ``<`` stays (``nNd<8t``,
    ``P</x>`` with no ``<x`` opened before it)."""
    k = text.find("<", start, end)
    while k >= 0:
        m = _MARKUP_END_RE.match(text, k)
        if m is not None:
            name = m.group("n")
            if name is None or _element_opened(text, start, name.lower()):
                return k
        k = text.find("<", k + 1, end)
    return end


def _element_opened(text: str, before: int, name: str) -> bool:
    """Whether an element ``name`` (lower case) is opened before ``before`` (within 4,096 characters): ``<name>``,
    ``<name attr=…>``."""
    tag = f"<{name}"
    low = text[max(0, before - 4096):before].lower()
    at = low.rfind(tag)
    while at >= 0:
        after = low[at + len(tag):at + len(tag) + 1]
        if after in (">", " ", "\t", "\n", "/"):
            return True
        at = low.rfind(tag, 0, at)
    return False


_GLUED_STOPS: Final = ")]}>;,&<"
"""What ends an unquoted value (:data:`_END`) and may rather be a symbol of a generated password glued to more of it
(``password=Xk9m&Q2vL``, ``DB_PASSWORD=aB3)dE6^gH``)."""
_GLUED_SYMBOLS: Final = _GLUED_STOPS + "!#$%*+/?@^~|([{-_:=."
_QUOTES: Final = "\"'`"
_STRONG_STOPS: Final = _GLUED_STOPS + _QUOTES
_STRONG_SYMBOLS: Final = _GLUED_SYMBOLS + _QUOTES
_GLUED_RUN_RE: Final = re.compile(r"(?:[A-Za-z0-9!#$%*+/?@^_~|:.=([{-]|" + _ESC + r"){1,256}")
_NEXT_PAIR_RE: Final = re.compile(r"[A-Za-z_$][A-Za-z_.$\[\]-]{0,127}[0-9]{0,3}=")
"""A next pair's name (``user=``, ``Path=``, ``page2=``): letters, digits only at its end (``Xy4rbIzX=`` is more of a
password)."""


def _inner_quote(text: str, start: int, at: int) -> bool:
    """Whether the quote or backtick at ``at``, glued inside the unquoted value starting at ``start``, is one of its
    characters: it closes no string opened before the value on its line (``echo "PASSWORD=P"``, ``Bob's password:
    P'``: an even number of that quote there; ``["API_KEY=P",0]``: the same quote right before the name) and opens
    none in code (after ``( [ { = ,``: ``environ["PW"]``). A line
    that starts more than :data:`_LOOK_BACK` characters before the value (a JSON document on one line) cannot be
    counted: there the quote ends the value."""
    if text[at - 1] in "([{=,":
        return False
    floor = _line_floor(text, start)
    if floor > 0 and floor == start - _LOOK_BACK:  # no line start within the look-back
        return False
    name = start
    while name > floor and text[name - 1] in "=:： \t":
        name -= 1
    while name > floor and (text[name - 1].isalnum() or text[name - 1] in "_-."):
        name -= 1
    if name > 0 and name < start and text[name - 1] == text[at]:
        return False  # ["API_KEY=P",0]: the quote closes the string the pair starts (a decoded line may not show it)
    return text.count(text[at], floor, start) % 2 == 0


def _next_pair(text: str, stop: int) -> bool:
    """Whether a next pair starts after the stop character at ``stop``: a name and ``=`` after ``&`` (a query's
    ``&u=bob``), or after ``;`` or ``,`` with a name settings are named by (:func:`_word_name`: ``;Database=app``,
    ``,user=bob``, ``;UID=sa``; ``;V=1k``, ``,M=Bsw``, ``,uB=1`` and ``;BT=K3z3`` are a password's runs). After a
    closing bracket or ``<``, ``>`` no pair starts."""
    sep = text[stop]
    if sep not in ";&,":
        return False
    pair = _NEXT_PAIR_RE.match(text, stop + 1)
    return pair is not None and (sep == "&" or (pair.end() - stop > 3 and _word_name(text[stop + 1:pair.end() - 1])))


_LINE_LEAD_PAIR: Final = re.compile(r"[ \t]*(?:[-*][ \t]+|export[ \t]+)?(?:[A-Za-z]+[ \t]+){0,3}")
"""What may stand before a setting's name at its line's start: indentation, a list's dash, ``export``, and the words
of a label (``New password:``, ``Staging admin password:``)."""
_UPPER_PAIR_NAMES: Final = frozenset({"UID", "PWD", "DSN", "DB", "SV", "SP", "SE", "SR", "SIG", "SS", "SRT", "SPR"})
"""Short names of connection strings' and SAS tokens' pairs, in any case (``UID=sa;PWD=…``, ``;Pwd=…``, ``;sv=…``)."""


_NAME_PIECES: Final = re.compile(r"[_.-]")


def _word_name(name: str) -> bool:
    """A next pair's name as settings are named (``Database``, ``uid``, ``user_id``, ``AccountKey``, ``SERVER``,
    ``UID``), not a password's run (``BT``, ``PsPj``, ``hFhyA``, ``QczuOhGHoz``, ``ELT``: three capitals are a
    connection string's name only when it is one of :data:`_UPPER_PAIR_NAMES`)."""
    pieces = _NAME_PIECES.split(name)
    return all(piece.isalpha() and (
        (piece.islower() and len(piece) >= 3 and english_word(piece)) or (piece.istitle() and english_word(piece))
        or camel_name(piece) or piece.upper() in _UPPER_PAIR_NAMES or (piece.isupper() and len(piece) >= 4
                                                                       and english_word(piece))) for piece in pieces)


def _line_run(text: str, name_start: int, span: Span, level: int) -> Span:
    """The value of a setting that starts its line (``pw: …``, ``DB_PASSWORD=…``, ``- password: …``) under a strong
    name, when one run with no blank runs from it to the line's end: all of that run (``G711%n}?tOE=>8WqcE``,
    ``w,J$Qt=Dnjx9``), less a next pair (a query's ``&x=1``; after ``;`` or ``,`` one whose name is a word:
    ``;Database=app``, ``,uid=1000``), a command after ``;`` or ``&``, a closing bracket opened before the value and
    a last ``,`` or ``;``; else ``span`` (a quote or a backslash in the run, code or a placeholder: the value's own
    reading stands)."""
    start, end = span
    if level != STRONG:
        return span
    line = _line_start(text, name_start)
    lead = _LINE_LEAD_PAIR.match(text, line, name_start)
    if lead is None or lead.end() != name_start:
        return span
    run = _LINE_RUN_RE.match(text, end, min(len(text), start + 256))
    k = run.end() if run is not None else end
    if k == end or (_LINE_REST_RE.match(text, k) is None and _JSON_STRING_END.match(text, k) is None) or (
            _RUN_CODE.search(text, start, k) is not None):
        return span  # the value ends there already; more follows on its line (prose, another argument); code
    k = max(markup_cut(text, start, k), end)  # pw: P<br>: the line's markup
    for at in range(end, k):
        if text[at] in ";&," and _next_pair(text, at):
            pair = _NEXT_PAIR_RE.match(text, at + 1)
            if pair is not None and (text[at] == "&" or _word_name(text[at + 1:pair.end() - 1])):
                k = at  # ;Database=app, ,uid=1000: a connection string's or an option list's next pair
                break
        if text[at] in ";&" and _COMMAND_RE.match(text, at + 1) is not None:
            k = at  # PASSWORD=P;ls -la: a command after it
            break
    while k > end and (text[k - 1] in ",;" or (text[k - 1] in _OPENER_OF and _opened(
            text, start, k - 1, _OPENER_OF[text[k - 1]]))):
        k -= 1  # password=self._pw2,: a call's argument over lines; f(\n  token=P): the call's own bracket
    tail = _SYMBOL_TAIL.search(text, end, k)
    if tail is not None and tail.start() >= end:
        k = tail.start()  # P✓, P🔑: the text's decoration
    for mark in ("***", "**", "__"):
        if text.startswith(mark, start - len(mark)) and text.startswith(mark, k - len(mark)) and k - len(mark) >= end:
            k -= len(mark)  # **P**: the value's emphasis, read without it
            break
    value = text[start:k]
    if k <= end or not (_mixed(value) or _cased(value) or _drawn_one_case(value)) or kept_value(
            value, "password", STRONG, bare=True):
        return span
    return start, k


def _drawn_one_case(value: str) -> bool:
    """Letters of one case drawn with a generator's symbols among them, eight letters at least, none a name's joiner
    (``A=CX]EXWAMSKD``, ``ln}wzzdctnjsgh``; not ``CHANGE_ME``)."""
    marks = sum(1 for c in value if not c.isalnum())
    return (marks >= 1 and len(value) - marks >= 8 and value.isascii() and not any(c in "_-." for c in value)
            and value[0].isalnum() and value[-1].isalnum())


def _line_start(text: str, at: int) -> int:
    """Where the line holding ``at`` starts (within :data:`_LOOK_BACK`): after its line break, or after the opening
    quote of the JSON string ``at`` stands in (``{"content": "pw: P"}``: a JSON string's text is a line too)."""
    line = text.rfind("\n", max(0, at - _LOOK_BACK), at) + 1
    opening = text.rfind('"', line, at)
    if opening > 0 and _JSON_STRING_OPENING.match(text, opening - 1, opening + 1) is not None:
        return opening + 1
    return line


_JSON_STRING_OPENING: Final = re.compile(r'[:\[,{ ]"')
_LINE_REST_RE: Final = re.compile(r"(?:[ \t]+#[^\r\n]*|[ \t]*)(?:\r?\n|\r|\Z)")
"""What may follow a setting's value on its line: blanks, a comment after a blank (``# prod``)."""
_JSON_STRING_END: Final = re.compile(r'"[ \t]*(?:[,}\]]|\Z)')
"""A JSON string's quotes around a line's text (``"content": "pw: P"``): its opening quote after ``:``, ``[``, ``,``,
``{`` or a blank, its closing quote before ``,``, ``}`` or ``]``."""
_LINE_RUN_RE: Final = re.compile(r"(?:[" + re.escape(_GLUED_STOPS) + r"]|[^" + _END + r"])+")
"""The rest of an unquoted value's run: what no value holds ends it (:data:`_END`: a blank, a quote, a backslash,
CJK punctuation), but not the stop characters a generated password may hold (:data:`_GLUED_STOPS`)."""
_RUN_CODE: Final = re.compile(r"\(\)|\)\.[A-Za-z_]|<[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*>")
"""Code or a placeholder in a run (``getValue).toString()``, ``<base64-hmac>``)."""


_COMMAND_RE: Final = re.compile(
    r"&?[ \t]*(?:ls|cd|echo|export|unset|source|exec|env|set|make|python3?|pip3?|npm|npx|node|yarn|git|docker|kubectl|"
    r"helm|cat|rm|cp|mv|curl|wget|ssh|scp|sudo|exit|then|fi|do|done|true|false|sleep|test|printf|read|mysql|psql|"
    r"bash|sh|zsh|go|cargo|java|mvn|gradle|terraform|aws|gcloud|az|systemctl|service|chmod|chown|mkdir|touch|grep|"
    r"sed|awk|tail|head|less|vim|nano|code|open|start|run|uv|poetry|pytest|tox)(?=[ \t\r\n;&|]|\Z)")
"""A shell command after ``;`` or ``&`` (``PASSWORD=P;ls -la``, ``TOKEN=P&& make``): a generated password's lower-case
run after a symbol is rarely one of these words."""
_ENTITY_RE: Final = re.compile(r"&(?:amp|lt|gt|quot|apos|nbsp|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});")


def _glued_tail(text: str, start: int, end: int, strong: bool = False) -> Span:
    """An unquoted value's span, carried over stop characters (``& ; , ) ] } < >``) glued between runs of a generated
    password: each run after a stop starts with a letter or a digit and is no next pair (``&user=``, ``;Path=``) nor
    an HTML entity (``&amp;``), and the whole reads as generated (:func:`.scrub_names.secret_looking`, letters and
    digits: ``abc)def`` and code such as ``token).strip()`` stay where they end). After a ``strong`` name, whose
    value before the stop is a password already, letters and digits or both cases are enough (``Zq9w}KX``,
    ``btmV)EBEs``), or symbols besides the stop (``ocn;vv>|t``), when no run after the stop is a word
    (:func:`_strong_tail_word`: ``Secret;then``, ``Xk9;toString``). After a strong name a quote or a backtick
    inside the run is the password's too (``9m"Q2``, ``kQ!('@7G``) unless it closes a string opened before the value
    or opens one in code (:func:`_inner_quote`)."""
    n = len(text)
    reach = end
    stops, symbols = (_STRONG_STOPS, _STRONG_SYMBOLS) if strong else (_GLUED_STOPS, _GLUED_SYMBOLS)
    for _ in range(12 if strong else 8):
        if reach + 1 >= n or text[reach] not in stops or (text[reach] == "<" and markup_cut(text, start, reach + 1)
                                                             == reach):
            break  # </td> after <td>password: P: the markup ends the value
        opener = _OPENER_OF.get(text[reach])
        if opener is not None and _opened(text, start, reach, opener) and not _in_string_after(text, start, opener):
            break  # f(password=P),g(x): the bracket closes one opened before the value
        k = reach
        while k < n and k - reach <= 4 and text[k] in symbols:
            if text[k] in _QUOTES and not _inner_quote(text, start, k):
                break
            k += 1  # symbols in a row: aB3&<dE6
        if k == reach or k >= n or not text[k].isalnum():
            break
        run = _GLUED_RUN_RE.match(text, k)
        if run is None or _next_pair(text, reach) or (
                text[reach] == "&" and _ENTITY_RE.match(text, reach) is not None) or (
                text[reach] in ";&" and _COMMAND_RE.match(text, reach + 1) is not None):
            break
        reach = run.end()
    if reach == end:
        return start, end
    whole = text[start:reach].rstrip(",")
    if text[reach:reach + 1] in (" ", "\t") and text[reach + 1:reach + 2].strip() and not _mark_goes_on(
            whole[-1:], text[reach + 1]):
        whole = whole.rstrip(".,:!?")  # P. Next: a sentence's end stays (at a line's or a string's end, it is P's)
    tail = whole[end - start:]
    if len(whole) == end - start or _CODE_OR_PLACEHOLDER.search(text, end, reach + 1) is not None:
        return start, end
    if strong:
        glued = (_mixed(whole) or _cased(whole) or _symbols(tail) >= 2) and not _strong_tail_word(tail)
    else:
        glued = secret_looking(whole) and _mixed(whole) and not any(_word_piece(p) for p in _PIECES_RE.split(tail))
    return (start, start + len(whole)) if glued else (start, end)


_CODE_OR_PLACEHOLDER: Final = re.compile(r"\(\)|\|\||&&|==|=>|\}[,)]|\)[,;(]|<[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*>")
"""What a glued run holds in code (``e()``, ``||``, ``&&``, ``===``, ``=>``, ``}),``, ``)(``) or a placeholder
(``<base64-hmac>``), not in a password."""


_PIECES_RE: Final = re.compile(r"[^A-Za-z0-9]+")
_CODE_WORDS: Final = frozenset({"this", "self", "true", "false", "null", "none", "void", "case", "else", "func", "args",
                                "type", "next", "from", "with", "new", "let", "var", "def", "get", "set", "len"})
"""Short words of code (minified JavaScript is full of them)."""


def _word_piece(piece: str, cased: bool = False) -> bool:
    """A piece of code or prose (``location``, ``ctrlKey``, ``return``, ``fastapi``): a word of five letters or more
    cased as words are, or a name of words (a generated password's runs of letters are rarely either). ``cased``
    (after a strong name): a word in lower case or title case only (``IDWCEP`` is a password's run), a name of
    words one of which is English (``toString``, not ``VmGPGV``), and any run of lower-case letters is a word or a
    command (``ls``)."""
    if piece in _CODE_WORDS:
        return True
    if cased:
        return piece.isalpha() and (piece.islower() or (len(piece) >= 5 and piece.istitle() and english_word(piece))
                                    or (camel_name(piece) and any(len(w) >= 4 and english_word(w.lower())
                                                                  for w in _CAMEL_PARTS.findall(piece))))
    return len(piece) >= 4 and piece.isalpha() and ((len(piece) >= 5 and (
        piece.islower() or piece.istitle() or piece.isupper()) and english_word(piece)) or camel_name(piece))


_ALNUM_RUN_RE: Final = re.compile(r"[A-Za-z0-9]+")


def _strong_tail_word(tail: str) -> bool:
    """Whether a run glued after a strong name's value (``tail``, from its first stop character) holds a word, so that
    it is prose or code going on (``Secret;then``, ``P,and``, ``Xk9;toString``) rather than more of the password. The
    run right after a stop is where a word or a command starts: a lower-case run there is one when English looks so
    (:func:`.scrub_names.english_word`; ``ls`` and the other commands are told at the stop) and the run ends there or
    goes on as code does (``(``, ``.``); so is a cased word of :func:`_word_piece` (``Then``, ``toString``) ending so
    anywhere. Elsewhere only a lower-case word of five letters or more is one. A generated password's runs between
    its symbols (``r``, ``vv``, ``faus:``, ``Rumae?``) are no words."""
    last = 0
    for run in _ALNUM_RUN_RE.finditer(tail):
        piece = run.group(0)
        after_stop = any(c in _STRONG_STOPS for c in tail[last:run.start()])
        last = run.end()
        if piece in _CODE_WORDS:
            return True
        if not piece.isalpha():
            continue
        ends = tail[last:last + 1] in ("", "(", ".")
        if piece.islower():
            if english_word(piece) and (len(piece) >= 5 or (after_stop and ends)):
                return True
        elif ends and _word_piece(piece, cased=True):
            return True
    return False


def _symbols(text: str) -> int:
    """How many characters of ``text`` are neither letters nor digits."""
    return sum(not c.isalnum() for c in text)


_CAMEL_PARTS: Final = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
"""The words of a CamelCase name (``toString``: ``to``, ``String``; ``VmGPGV``: ``Vm``, ``GPGV``)."""
_OPENER_OF: Final = {")": "(", "]": "[", "}": "{", ">": "<"}
_LOOK_BACK: Final = 256


def _line_floor(text: str, start: int) -> int:
    """Where the line holding ``start`` starts, or :data:`_LOOK_BACK` characters before ``start`` when it starts
    further back: what the value's look-backs read."""
    return max(text.rfind("\n", max(0, start - _LOOK_BACK), start) + 1, start - _LOOK_BACK, 0)


def _opened(text: str, start: int, at: int, opener: str) -> bool:
    """Whether the closing bracket at ``at`` closes one opened before the value (on its line, within
    :data:`_LOOK_BACK` characters) rather than one inside the value."""
    closer = text[at]
    inside = text.count(opener, start, at) - text.count(closer, start, at)
    if inside > 0:
        return False
    floor = _line_floor(text, start)
    return text.count(opener, floor, start) > text.count(closer, floor, start)


def _in_string_after(text: str, start: int, opener: str) -> bool:
    """Whether the value at ``start`` stands in a string opened after the last ``opener`` before it on its line
    (``{"cmd": "export API_TOKEN=P}x"}``): a bracket inside the string closes none outside it."""
    floor = _line_floor(text, start)
    k = text.rfind(opener, floor, start)
    return k >= 0 and (text.count('"', k + 1, start) % 2 == 1 or text.count("'", k + 1, start) % 2 == 1)


def _cased(piece: str) -> bool:
    """Upper- and lower-case letters both (``btmV)EBEs``)."""
    return any(c.isupper() for c in piece) and any(c.islower() for c in piece)


def _mixed(piece: str) -> bool:
    """Letters and digits both (one side of a glued stop character)."""
    return any(c.isdigit() for c in piece) and any(c.isalpha() for c in piece)


def _between_strings(text: str, name_start: int, quote: int, value: str) -> bool:
    """Whether a quoted "value" starting with what ends an expression (``. ) ] } , ; +``) is rather the code between
    two strings. After a strong name (its place ``name_start`` known) only when it reads as code (a space in it,
    ``.join(x)``, ``+x+``, only punctuation) and the name stands inside a string its opening quote closes (an odd
    number of that quote before the name on its line); after a weak one (``name_start`` negative: ``auth``, ``code``,
    names minified code is full of) always."""
    if name_start < 0:
        return True
    if _CODE_BETWEEN.match(value) is None or (value[0] == "+" and secret_looking(value[1:-1])):
        return False  # +GqhmCgEHvxOby1+ is a password, +pw+ a name between two strings
    floor = max(0, name_start - 4096)
    line_start = max(text.rfind("\n", floor, name_start) + 1, floor)
    return text.count(text[quote], line_start, name_start) % 2 == 1


def _strong_at(start: int, level: int) -> int:
    """``start`` for a strong name (its quoted value is a literal, :func:`_between_strings`), ``-1`` for a weak one."""
    return start if level == STRONG else -1


def _bare(m: re.Match[str]) -> bool:
    return m.group("v") is not None


_ECHOED_RE: Final = re.compile(
    r"(?:\$\(|`)" + ECHO_COMMAND + r"(?:[ \t]+(?:" + PRINTF_FORMAT + r"|%s))?[ \t]+"
    r"(?P<q>[\"']?)(?P<a>[^\s\"'`$()|;&<>\\]{1,256})(?P=q)[ \t]*[|)`]")
"""A command substitution that prints one literal (``$(echo P)``, ``$(echo -n 'P' | base64)``, ``$(printf %s P)``):
the literal is the value (``$(echo $TOKEN)`` prints a variable, a command's output is no literal)."""


_SECRET_WRAPPER_RE: Final = re.compile(
    r"(?:[A-Za-z_][\w]*\.)?(?:Secret(?:Str|Bytes|Value|String)?|SensitiveStr|Sensitive|str|bytes|bytearray|Password"
    r"|Token)\([ \t]*[bBrRuU]?(?P<q>['\"])(?P<v>[^'\"\\\n]{1,512})(?P=q)[ \t]*\)")
"""A value wrapped in a call that only holds it (pydantic's ``SecretStr('P')``, ``bytes("P")``, ``Password('P')``):
the literal is the value (``os.getenv('X')`` and other calls read it from elsewhere, and stay code)."""


def _judge(text: str, name: str, span: Span, level: int, spans: list[Span], *, bare: bool = False,
           user: bool = False, literal: bool | None = None, encoded: bool = False) -> None:
    """Append ``span`` unless its value is one a credential name does not hide. An ``Authorization`` value keeps
    its scheme word (and the names of its parameters) and loses the credential; a ``Cookie`` header loses the
    value of each pair that is a credential; a parameter expansion loses its default; a URL keeps what its own
    finders do not take.

    An unquoted value that is a name's own pair (``# Key: session_key=…``) is left to that name; one that opens a
    call or a subscript is code when the call closes as code does (``get_token(a, b)``), and a credential up to its
    closing bracket when not (``Hunter2(xyz)``); the end of a sentence after it stays (``token=P. Next``,
    ``password=P... done``). A URL's query value (``encoded``) is judged as it reads percent-decoded
    (``%24%7BTOKEN%7D`` is ``${TOKEN}``); elsewhere ``%XX`` is part of a literal. Under a name that holds a user and
    a password (``credentials``, ``user/pass``: ``user``), a user name before ``:`` or ``/`` stays."""
    start, end = span
    value = text[start:end]
    tick = start > 0 and text[start - 1] == "`" and value.startswith(("echo ", "printf "))  # `echo P`, quoted
    if tick or value.startswith(("$(echo", "$(printf", "`echo", "`printf")):
        echoed = _ECHOED_RE.match(text, start - 1 if tick else start)
        if echoed is not None:  # TOKEN="$(echo P)", $(printf %s P | base64): the literal the command prints
            _judge(text, name, echoed.span("a"), level, spans)
        return
    lname = name.lower()
    if "authoriz" in lname or lname in ("auth", "x-auth", "proxy-authorization"):
        if _authorization(text, lname, start, end, spans):
            return
    elif lname in ("cookie", "cookies", "set-cookie", "setcookie", "set_cookie") and "=" in value:
        _cookie_header(text, start, end, spans)
        return
    elif "=" in value and _CONNECTION_PAIR.match(value) is not None and "connectionstring" in _SEPARATORS.sub("", lname):
        _connection_pairs(text, start, end, spans)  # ConnectionString: "Server=db;User Id=sa;Password=P"
        return
    if bare and not value.isascii() and value[0].isascii():
        end, value = _before_wide(start, end, value)  # 密碼：P です。: the sentence's own script resumes after it
    algorithm = _ALGORITHM_PREFIX.match(value) if "=" in value else None
    if algorithm is not None and (algorithm.end() == len(value) or _DIGEST.match(value, algorithm.end())):
        if algorithm.end() == len(value):
            return  # sha256= and nothing, or a marker: no digest to hide
        start += algorithm.end()  # sha256=<hex>: the digest goes, its algorithm stays
        value = value[algorithm.end():]
    source = _SOURCE_RE.match(value) if ":" in value else None
    if source is not None:
        if source.group(0) != "pass:":
            return
        start += 5
        value = value[5:]
    default = parameter_default(value) if "${" in value else None
    if default is not None:
        start, end = start + default[0], start + default[1]
        value = text[start:end]
    elif "://" in value and _url_scheme(value):
        if not _url_secret(value):
            return  # dsn: postgres://localhost/app: its userinfo and its query have their own finders
    if literal is None:
        literal = start > 0 and text[start - 1] in "\"'`"  # a quoted value is a string, whatever it holds
    if (bare or (start > 0 and text[start - 1] == "`")) and _inner_pair(value):
        return  # # Key: session_key=…, token: `export GITHUB_TOKEN=…`: the inner name judges its own value
    if user and bare and "=" in value and _inner_user(value):
        return  # creds: user=alice pass=P: pairs, each judged by its own name (the user's stays)
    if not literal and "(" in value and value[0].isalpha():
        wrapped = _SECRET_WRAPPER_RE.match(text, start)
        if wrapped is not None:  # client_secret=SecretStr('P'), password=bytes("P"): the literal it wraps
            _judge(text, name, wrapped.span("v"), level, spans, literal=True)
            return
    if not literal and ("(" in value or "[" in value):
        end = _bare_call(text, start, end)
        if end < 0:
            return  # get_token(a, b), os.environ["X"]: code
        value = text[start:end]
        if not value.isascii() and value[0].isascii():
            end, value = _before_wide(start, end, value)  # 密码 P(k)别忘了: the sentence resumes after the bracket
    if text.startswith("<redacted", end):
        marker = _MARKER.match(text, end)
        if marker is not None:  # admin:<redacted:…>: a value running into a marker holds it (a marker is opaque)
            end = marker.end()
            value = text[start:end]
    typed = bare and _CODE_AFTER.match(text, end) is not None
    decode = _percent_decoded if encoded else _as_written
    if kept_value(value if not encoded else _percent_decoded(value), name, level, bare=bare, typed=typed,
                  literal=literal):
        return
    if not literal:
        cut = _sentence_end(text, start, end)  # token=P. Next: the sentence's full stop is no part of the value
        if cut < end:
            end = cut
            value = text[start:end]
            if kept_value(decode(value), name, level, bare=bare, typed=typed):
                return
        elif value[-1] in ".,;:!?" and kept_value(value.rstrip(".,;:!?"), name, level, bare=bare, typed=typed):
            return  # password: your-password-here.
    if user and bare:
        pair = _USER_PAIR.fullmatch(value)
        if pair is not None and _user_name(pair.group("u")):
            start += pair.start("p")  # credentials: admin:P: the user name stays
            if kept_value(decode(pair.group("p")), name, level):
                return
    spans.append((start, end))


_CONNECTION_PAIR: Final = re.compile(r"[ \t]*(?P<n>[A-Za-z][A-Za-z0-9 _.-]{0,40}?)[ \t]*=[ \t]*(?P<v>[^;\n]*)")
"""One ``name=value`` pair of a connection string (ADO.NET, ODBC, Azure), ``;`` between pairs."""
_SEPARATORS: Final = re.compile(r"[ _.-]")


def _connection_pairs(text: str, start: int, end: int, spans: list[Span]) -> None:
    """The value of a connection string's name at ``[start, end)``, read as its pairs: each pair named as a credential
    (``Password``, ``Pwd``, ``AccountKey``, ``SharedAccessKey``) is judged by its own name; the server, the user and
    the database stay. A value that is no pair goes on to the next ``;``, as its reader would have judged it."""
    at = start
    while at < end:
        stop = text.find(";", at, end)
        stop = end if stop < 0 else stop
        pair = _CONNECTION_PAIR.match(text, at, stop)
        if pair is not None and pair.end() == stop:
            name = pair.group("n")
            level = credential_name(name)
            if level and pair.end("v") > pair.start("v"):
                _judge(text, name, pair.span("v"), level, spans, bare=True)
        at = stop + 1


def _before_wide(start: int, end: int, value: str) -> tuple[int, str]:
    """``(end, value)`` of an ASCII value at ``start`` cut where a wide script (a sentence's own) resumes in it."""
    wide = _WIDE_SCRIPT.search(value)
    return (end, value) if wide is None else (start + wide.start(), value[:wide.start()])


def _as_written(value: str) -> str:
    return value


def _user_name(user: str) -> bool:
    """A user name as people write one before a password (``admin``, ``deploy_bot``, ``bob@example.com``): lower
    case, its words English-looking (a generated password's first characters are not)."""
    local, at, domain = user.partition("@")
    if user != user.lower() or not any(c.isalpha() for c in local) or secret_looking(local) or (
            at and _DOMAIN.fullmatch(domain) is None):
        return False
    return all(len(word) <= 3 or english_word(word) for word in _USER_SPLIT.split(local) if word)


def _bare_call(text: str, start: int, end: int) -> int:
    """For an unquoted value at ``[start, end)`` that opens a bracket: ``-1`` when it is code, else where the value
    ends once the brackets it opened are closed (``Hunter2(xyz)``, ``abc(XY)Z``).

    Code is a call or a subscript of a name code gives a function that goes on past the value (``get_token(a, b)``,
    ``os.environ["X"]``, ``Callable[[str], X] | None``) and closes on the value's line, or on a later one when the
    value ends at its bracket, a comma or a string (``get_token(`` and the arguments on the next lines); or, when the
    value is a token of its own once its brackets close, a call of such a name with the arguments code writes
    (``f(x)``, not ``Hunter2(xyz)``)."""
    close, callee, arguments = call_extent(text, start, min(len(text), start + _CALL_LOOKAHEAD))
    token = _closing_brackets(text, start, end)
    if close < 0 and open_call(text, start):
        return -1  # creds = resolve_credentials(  (its arguments on lines the text does not hold)
    if close < 0 or not callee:
        return token
    if close < token and _glued_after_call(text, start, close):
        return token  # L[-7p-WZ]#smiJy08, QR4P(R*)]tKhg: what code never glues to a closed call goes on a password
    if close == token or (close < token and not (text[close].isalnum() or text[close] == "_")):
        if close < token and _CODE_GLUE.fullmatch(text, close, token) is None:
            return token  # idnoYuhHM[wY]<5w!g9JSz, x(KkXw);?uIEvTI: no code glues that to a call or a subscript
        return -1 if arguments else token  # m.group(1): is code, abc(XY)Z a password
    if close > token and (text[token - 1] in "([{" or text[token:token + 1] in (",", "'", '"')
                          or text.find("\n", end, close) < 0):
        return -1
    return token


_CODE_GLUE: Final = re.compile(r"[;,:!]|\?\.[A-Za-z_]\w{0,63}|(?:[-+*/%<>]|[<>=!]=|==)[\w.]{1,64}[;,]?")
"""What code glues right after a call or a subscript inside one token: a statement's or a list's end, a slice's or
a dict's colon, TypeScript's ``!``, optional chaining (``?.x``), an operator and one operand (``x[0]+1``,
``f(x)<5``)."""


def _glued_after_call(text: str, start: int, close: int) -> bool:
    """Whether what follows a call or a subscript closing at ``close`` (inside an unquoted value at ``start``) is what
    code never glues there: ``# $ % ^ ~ @``, a ``?`` or ``!`` before more of a value (``x[0]?.y`` and ``d[k]!`` are
    code's), or a closing bracket that closes none opened before the value (a JSON string's text opens its own)."""
    c = text[close]
    if c in "#$%^~@":
        return True
    if c in "?!":
        return text[close + 1:close + 2] not in (".", ")", ",", ";", "", " ", "\n", "]")
    if c in ")]}":
        opener = _OPENER_OF[c]
        return not _opened(text, start, close, opener) or _in_string_after(text, start, opener)
    return False


def _closing_brackets(text: str, start: int, end: int) -> int:
    """Where an unquoted value at ``[start, end)`` ends once the brackets it opened are closed by what follows it,
    and what follows them read on as the value (``Hunter2(xyz`` and ``)``, ``abc(XY`` and ``)Z``): a bracket closing
    one the value did not open, or anything that ends a value, ends it."""
    expected: list[str] = []
    for c in text[start:end]:
        if c in "([{":
            expected.append(")]}"["([{".index(c)])
        elif c in ")]}" and expected and expected[-1] == c:
            expected.pop()
    if not expected or text[end:end + 1] != expected[-1]:
        return end
    n = min(len(text), end + _CALL_LOOKAHEAD)
    while end < n:
        c = text[end]
        if expected and c == expected[-1]:
            expected.pop()
        elif c in "([{":
            expected.append(")]}"["([{".index(c)])
        elif c in _VALUE_ENDS:
            break
        end += 1
    return end


_LINE_ENDS: Final = frozenset({"", "\n", "\r", '"'})
"""What ends a line after an unquoted value: the text's end, a line break, the close of the JSON string it is in."""
_ESCAPED_END_RE: Final = re.compile(r"\\+[nr\"]")
"""A line break escaped inside a JSON string, or the escaped quote that closes a string inside one."""
_AFTER_BLANK: Final = frozenset({" ", "\t", "："})
"""What stands before a value written as a sentence's or a label's (``password: P.``), not an assignment's
(``DB_PASSWORD=P.``, whose file keeps the dot in the value)."""


_SHELL_LEAD_RE: Final = re.compile(r"[ \t]*(?:export|set|setx|declare|local|readonly|ENV|ARG|\$env:)[ \t]")
"""A line that assigns a variable in a shell or a build file: what follows ``=`` is the variable's value whole."""
_PROSE_REACH: Final = 512
"""How far back :func:`_in_prose` looks for the start of a value's line."""


def _in_prose(text: str, start: int) -> bool:
    """Whether the pair whose value starts at ``start`` (right after its ``=`` or ``:``) stands in a sentence: words
    before its name on the line (``the new vault token=P.``, ``Note: PAT=P.``), not a shell's assignment
    (``export API_TOKEN=P.``) or a line of a settings file (``DB_PASSWORD=P.``)."""
    floor = max(0, start - _PROSE_REACH)  # bounded: a text of one long line is not scanned back again per value
    line = max(text.rfind("\n", floor, start) + 1, floor)
    escaped = text.rfind("\\n", line, start)  # a line break escaped inside a JSON string
    if escaped >= 0:
        line = escaped + 2
    head = text[line:start - 1].strip()
    return " " in head and _SHELL_LEAD_RE.match(text, line) is None


_MODULAR_CRYPT_RE: Final = re.compile(r"\$(?:1|2[abxy]?|5|6|7|y|gy|md5|sha1|pbkdf2[\w-]*|argon2(?:id|i|d)|scrypt)\$")
"""A password's hash in modular crypt form, whose alphabet holds ``.`` (``$2b$12$…Cd.``): its last dot is its own."""


def _mark_goes_on(mark: str, after: str) -> bool:
    """Whether a ``!`` or ``?`` that ends a value, a blank and then ``after`` is the value's own last character rather
    than a sentence's end: no sentence goes on in lower case, in a script without case, with a digit or with an option
    or a path after them (``--password Passw0rd! --verbose``, ``password=P@ss! user=bob``, ``비밀번호는 P! 입니다``;
    ``is P! Use it`` ends one)."""
    return mark in ("!", "?") and (after.islower() or after.isdigit() or after in _GOES_ON or (
        after.isalpha() and not after.isascii() and not after.isupper()))


_GOES_ON: Final = frozenset("-./$~")


def _sentence_end(text: str, start: int, end: int) -> int:
    """``end`` less the end of a sentence written right after an unquoted value: an ellipsis (``P...``, ``P…``), or
    one of ``. ! ? :`` followed by a space and more text on the line (``token=P. Next``), or a full stop ending the
    line after a value that a blank or a full-width colon opens (``new db password: P.``; ``DB_PASSWORD=P.`` keeps
    it)."""
    value = text[start:end]
    if value.endswith("..."):
        cut = end - 3
        while cut > start and text[cut - 1] == ".":
            cut -= 1
        return cut if cut > start else end
    if value.endswith("…") and end - 1 > start:
        return end - 1
    if end - 1 > start and value[-1] in ".!?:" and text[end:end + 1] in (" ", "\t") and (
            text[end + 1:end + 2].strip()) and not _mark_goes_on(value[-1], text[end + 1]):
        return end - 1
    if end - 1 > start and value[-1] == "." and value[-2] != "." and (
            text[end:end + 1] in _LINE_ENDS or _ESCAPED_END_RE.match(text, end) is not None) and (
            text[start - 1:start] in _AFTER_BLANK or _in_prose(text, start)) and _MODULAR_CRYPT_RE.match(value) is None:
        return end - 1  # new db password: P. (a line's last sentence): its full stop; a ! stays P's (P@ssw0rd!)
    return end


def _percent_decoded(value: str) -> str:
    """``value`` with its ``%XX`` escapes decoded (as UTF-8; an invalid sequence stays as it is written)."""
    if "%" not in value or _PERCENT_ESCAPE.search(value) is None:
        return value
    return unquote(value, errors="surrogateescape")


def _authorization(text: str, lname: str, start: int, end: int, spans: list[Span]) -> bool:
    """An authorization value: the scheme word stays, the credential after it goes (Digest, AWS and OAuth
    parameters: only those that are credentials). Whether the value was one with a scheme word."""
    value = text[start:end]
    first = value.split(" ", 1)[0]
    low = first.lower()
    if first == value:  # the scheme word alone: the credential follows it
        if low.rstrip(".,;:!?") in _SCHEME_WORDS or (  # requires Authorization: Bearer.
                "authoriz" in lname and _SCHEME_WORD_RE.fullmatch(value) is not None and len(value) <= 32
                and text[end:end + 1] in (" ", "\t")):
            _scheme_credential(text, start, end, len(text), spans, False)
            return True
        return False
    if "authoriz" in lname and (low in _SCHEME_WORDS or (_SCHEME_WORD_RE.fullmatch(first) and len(first) <= 32)):
        _scheme_credential(text, start, start + len(first), end, spans, False)
        return True
    return False


def _scheme_credential(text: str, scheme_start: int, pos: int, limit: int, spans: list[Span], free: bool) -> None:
    """The credential after a scheme word at ``pos`` (up to ``limit``): a token68, or the parameters of Digest,
    AWS4 or OAuth (only the values of ``response=``, ``signature=`` and of credential names go)."""
    if text[pos:pos + 1] not in (" ", "\t"):
        return
    m = _CRED_RE.match(text, pos, limit)
    if m is None:
        return
    start, end = m.span("c")
    if _PARAM_NAME_RE.match(text, start, limit) and _param_name(text, start):
        at = start
        for _ in range(32):
            p = _AUTH_PARAM_RE.match(text, at, limit)
            if p is None:
                break
            group = "q" if p.group("q") is not None else "v"
            name = p.group("n").lower()
            if name in _SECRET_PARAMS or credential_name(name) == STRONG:
                s, e = p.span(group)
                if name == "credential":  # AKIA…/20240101/us-east-1/s3/aws4_request: the key id, not the scope
                    slash = text.find("/", s, e)
                    e = slash if slash >= 0 else e
                if e > s and not kept_value(text[s:e], name, STRONG):
                    spans.append((s, e))
            at = p.end()
        return
    span = _credential(text, scheme_start, start, end, free)
    if span is not None:
        spans.append(span)


def _param_name(text: str, start: int) -> bool:
    """Whether the ``name=`` at ``start`` names an authentication parameter (``realm=``, ``username=``,
    ``Credential=``): a lower-case word or a CamelCase name, not the start of a base64 credential."""
    name = text[start:text.index("=", start)].strip()
    return name.replace("_", "").replace("-", "").islower() or camel_name(name) or (
        _PARAM_WORD_RE.fullmatch(name) is not None and all(
            len(hump) <= 2 or english_word(hump) for hump in _HUMP_RE.findall(name)))


def _credential(text: str, scheme_start: int, start: int, end: int, free: bool) -> Span | None:
    """The span of the credential written at ``[start, end)`` after a scheme word (OBS-57: the run of characters
    that are not whitespace or quotes), or ``None`` when it is none: markup that closes an element, and a bracket
    closing one opened before the scheme word, are not part of it; a placeholder or, in free text, a word of a
    sentence is no credential."""
    if free and text[scheme_start].islower() and _word(text[start:end].rstrip(".,;:!?")):
        return None  # "a basic idea", "the bearer of": prose (decided before anything costlier)
    end = _closing_cut(text, scheme_start, start, end)
    cred = text[start:end]
    stripped = cred.rstrip(".,;:!?")
    while stripped.endswith(")") and stripped.count(")") > stripped.count("("):
        stripped = stripped[:-1].rstrip(".,;:!?")
    if not stripped or not (stripped[0].isalnum() or stripped[0] in "._~+/-") or not any(
            c.isalnum() for c in stripped):
        return None  # a credential is a token68 (RFC 7235): "basic | 37 |", "Token: basic (NUMBER)" hold none
    if free and (len(stripped) < 3 or _numbered_word(stripped)
                 or _prose_scheme(text, scheme_start, start, stripped, cred)):
        return None  # "the bearer of", "## Basic Usage", "Visual Basic 6", "Basic Example2": prose, a heading
    if placeholder(stripped) or placeholder(cred):
        return None  # Bearer $TOKEN, Bearer ${VAR}, Bearer sk-..., Bearer YOUR_API_KEY
    return start, start + len(stripped)


def _numbered_word(word: str) -> bool:
    """A heading's numbered word or a version (``Example2``, ``Step3``, ``6``, ``2.0``); not a generated token that
    starts so (``Qdwevqpiuxw89``: its letters spell no English word)."""
    m = _NUMBERED_WORD.fullmatch(word)
    return m is not None and (m.group("w") is None or english_word(m.group("w")))


def _prose_scheme(text: str, scheme_start: int, start: int, word: str, cred: str) -> bool:
    """Whether the scheme word at ``scheme_start`` and the ``word`` after it are prose, not a header
    (``Bearer abc``): the scheme word in lower case, a capitalised word after it (``Basic Usage``, ``Bearer JWT``),
    a sentence going on (``Bearer tokens are ...``, ``Basic setup.``), a lower-case word before it on its line
    (``the Bearer scheme``, ``use Basic auth``), or a heading or a list item it starts (``# Basic setup``)."""
    line_start = max(text.rfind("\n", max(0, scheme_start - 256), scheme_start) + 1, scheme_start - 256)
    before = text[line_start:scheme_start]
    previous = before.rstrip().rsplit(None, 1)[-1].strip("([{\"'`,;") if before.strip() else ""
    after_word = previous.isalpha() and previous.islower()
    if text[scheme_start].islower() and after_word:
        return True  # "perform a basic username/password"
    lead = _LINE_LEAD.match(before)
    heading = bool(before.strip()) and lead is not None and lead.end() == len(before)
    if not _word(word):
        # "## Basic Node-API data types", "# Basic HTTP/HTTPS URL check": words joined in a heading or a sentence
        parts = _JOINED_WORDS.split(word)
        going_on = text[start + len(cred):start + len(cred) + 2].strip(" ")[:1].isalpha()
        return len(parts) > 1 and (heading or going_on) and all(map(_word, parts))
    if text[scheme_start].islower() or not word.islower() or word != cred or len(word) >= 6:
        return True
    end = start + len(cred)
    if text[end:end + 1] == " " and (text[end + 1:end + 2].isalpha() or (
            english_word(word) and text[end + 1:end + 2] not in ("", "\n", "\r"))):
        return True  # "Bearer tokens are ...", "→ Bearer auth + beta header": a sentence going on
    if heading:
        return True  # "# Basic setup", "- Bearer tokens", "→ Bearer auth + beta header"
    return after_word


def _closing_cut(text: str, scheme_start: int, start: int, end: int) -> int:
    """Where a credential written at ``[start, end)`` ends: before a tag (``</Authorization>``), and before a ``)``,
    ``]`` or ``}`` that closes a bracket opened before the scheme word on its line (not one opened in the
    credential itself)."""
    tag = _TAG_START.search(text, start, end)
    if tag is not None:
        end = tag.start()
    if not any(c in ")]}" for c in text[start:end]):
        return end
    line_start = max(text.rfind("\n", max(0, scheme_start - 512), scheme_start) + 1, scheme_start - 512)
    before = text[line_start:scheme_start]
    opened = {closer: before.count(opener) - before.count(closer) for opener, closer in _CLOSERS.items()}
    depth = dict.fromkeys(opened, 0)
    for i in range(start, end):
        c = text[i]
        if c in _CLOSERS:
            depth[_CLOSERS[c]] += 1
        elif c in depth:
            if depth[c]:
                depth[c] -= 1
            elif opened[c] > 0:
                return i
    return end


def _cookie_header(text: str, start: int, end: int, spans: list[Span]) -> None:
    """A ``Cookie`` / ``Set-Cookie`` value: each ``name=value`` pair to the end of the line (or of the quoted
    string) judged by its own name; a cookie's value is a credential when its name is one (``PHPSESSID``,
    ``session``, ``auth_token``) or it looks generated. The names and the attributes (``Path=/``) stay."""
    limit = end
    if text[end:end + 1] not in ('"', "'", "`"):  # unquoted: the header runs to the end of its line
        stop = _LINE_END.search(text, end, end + 4096)
        limit = stop.start() if stop is not None else min(len(text), end + 4096)
    at = start
    for _ in range(64):
        m = _COOKIE_PAIR_RE.match(text, at, limit)
        if m is not None:
            name = m.group("n")
            s, e = m.span("v")
            if e > s and name.lower() not in _COOKIE_ATTRIBUTES:
                level = STRONG if query_credential(name) else WEAK
                if not kept_value(text[s:e], name, level):
                    spans.append((s, e))
        nxt = text.find(";", m.end() if m is not None else at, limit)
        if nxt < 0:
            return
        at = nxt + 1


def _url_scheme(value: str) -> bool:
    """Whether ``value`` holds a URL: a scheme written as schemes are (``postgres://``, ``mongodb+srv://``,
    ``s3://``), not letters a password mixes before ``://`` (``rrk+://``)."""
    m = _URL_START.search(value)
    if m is None:
        return False
    runs = [run for run in _SCHEME_SPLIT.split(m.group(1)) if run]
    return (runs[0] in _SCHEME_RUNS or (len(runs[0]) >= 3 and english_word(runs[0]))) and all(
        run in _SCHEME_RUNS or english_word(run) or len(run) <= 2 for run in runs[1:])


def _url_secret(value: str) -> bool:
    """Whether a URL written as a credential name's value holds a generated path segment (a webhook's secret path);
    its userinfo and query parameters are judged by their own finders."""
    rest = value.split("://", 1)[1]
    path = rest.split("/", 1)[1] if "/" in rest else ""
    path = path.split("?", 1)[0].split("#", 1)[0]
    return any(secret_looking(segment) for segment in path.split("/"))


def _letter(c: str) -> bool:
    """A letter of any script, or a mark written on one (Thai ``รหัสผ่าน`` and Devanagari ``पासवर्ड`` hold vowel signs
    and a virama that are no letters)."""
    return c.isalpha() or unicodedata.category(c)[0] == "M"


def _name_before(text: str, pos: int) -> tuple[int, int]:
    """The ``[start, end)`` of the name ending (spaces and tabs aside) just before ``pos``: ASCII name characters,
    or letters of any script (``Пароль``, ``密码``, ``contraseña``)."""
    if pos == 0:
        return pos, pos
    last = text[pos - 1]
    if last not in _NAME_CHARS and last not in " \t" and not (last > "\x7f" and _letter(last)):
        return pos, pos  # the common case in JSON and code (``": "``, ``): ``)
    end = pos
    blank_floor = max(0, pos - MAX_NAME_CHARS)
    while end > blank_floor and text[end - 1] in " \t":
        end -= 1
    if end == blank_floor and end > 0 and text[end - 1] in " \t":
        return pos, pos  # longer blanks than any name is followed by: no name (and each blank of a run costs O(1))
    start = end
    floor = max(0, end - MAX_NAME_CHARS - 1)
    while start > floor:
        c = text[start - 1]
        if c not in _NAME_CHARS and not (c > "\x7f" and _letter(c)):
            break
        start -= 1
    if start == floor and start > 0 and (text[start - 1] in _NAME_CHARS or _letter(text[start - 1])):
        return end, end  # longer than any credential name
    if start > 0 and text[start - 1] == "\\" and start < end:
        # JSON-escaped text (any level: ``\\n``, ``\\\\n``): an escape's letters (``\\neos_token=``,
        # ``\\u00e9``) are not part of the name
        if text[start] in "nrtbf":
            start += 1
        elif text[start] == "u" and end - start >= 5 and all(c in string.hexdigits for c in text[start + 1:start + 5]):
            start += 5
    return start, end


def _next(text: str, char: str, wide: str | None, pos: int) -> int:
    """The next ``char`` (or its full-width form ``wide``) at or after ``pos``."""
    at = text.find(char, pos)
    if wide is not None:
        other = text.find(wide, pos)
        if other >= 0 and (at < 0 or other < at):
            return other
    return at


_WORD_BEFORE_RE: Final = re.compile(r"(?<![\w-])[A-Za-z]{2,20}\Z")
_RUN_AFTER_RE: Final = re.compile(r"[ \t]*[\"']?([^\s\"']{1,256})")
"""The word right before a name and its blank (``API`` of ``API key=P``)."""


def _with_word_before(text: str, start: int, name: str, level: int, value_at: int) -> tuple[str, int]:
    """A weak name (``key``) with the word before it and a blank, when the two make a strong one and the value (at
    ``value_at``) looks like a credential, letters alone as drawn too (``API key=P``, ``our API key: P``, ``your API
    key: fPXqndYCAMrXlUV``; not ``API key = Honcho not configured``); else ``(name, level)`` as they were."""
    if text[start - 1:start] != " ":
        return name, level
    run = _RUN_AFTER_RE.match(text, value_at)
    value = run.group(1).rstrip(".,;:") if run is not None else ""
    if not (secret_looking(value) or human_password(value.rstrip("!?")) or drawn_letters(value)):
        return name, level
    before = _WORD_BEFORE_RE.search(text, max(0, start - 24), start - 1)
    if before is None:
        return name, level
    joined = f"{before.group(0)} {name}"
    return (joined, STRONG) if credential_name(joined) == STRONG else (name, level)


def _assignments(text: str, spans: list[Span]) -> None:
    """``NAME=value``, ``NAME => value``, ``NAME := value``, ``NAME ?= value`` and ``?name=value`` (a URL parameter's
    weak and session names count as strong)."""
    wide = "＝" if "＝" in text else None
    find = text.find
    eq = find("=") if wide is None else _next(text, "=", wide, 0)
    while eq >= 0:
        nxt = text[eq + 1:eq + 2]
        prev = text[eq - 1] if eq > 0 else ""
        name_end, value_at = eq, eq + 1
        if text[eq] == "=":
            if nxt == "=" or (nxt == "~" and _match_operator(text, eq)) or (nxt == ">" and prev in "=!<>-"):
                eq = find("=", eq + 1) if wide is None else _next(text, "=", wide, eq + 1)
                continue  # ==, =~ (but ?password=~K…, DB_PASSWORD=~K…: a value), =>
            if nxt == ">":
                value_at = eq + 2
            elif prev in (":", "?"):
                name_end = eq - 2 if text[eq - 2:eq] == "::" else eq - 1
            elif prev in "!<>=+-*/%|&^":
                eq = find("=", eq + 1) if wide is None else _next(text, "=", wide, eq + 1)
                continue
        last = text[name_end - 1] if name_end > 0 else ""
        resume = eq + 1
        if last in _NAME_CHARS or last in " \t" or (last > "\x7f" and last.isalpha()):
            start, end = _name_before(text, name_end)
            if start < end:
                if text.startswith("-D", start) and end - start > 2 and (start == 0 or text[start - 1] in " \t\"'\n"):
                    start += 2  # -Dapi_key=P: Java's system property, the C compiler's define: the name after -D
                query = start > 0 and text[start - 1] in _QUERY_LEADERS and end == name_end
                name = text[start:end]
                level = query_credential(name) if query else credential_name(name)
                if level == WEAK and not query:
                    name, level = _with_word_before(text, start, name, level, value_at)  # API key=P
                if level and not (start >= 2 and text[start - 2:start] in ("//", "${")):
                    resume = max(resume, _assignment(text, start, name, level, query, value_at, spans))
        eq = find("=", resume) if wide is None else _next(text, "=", wide, resume)


def _sed_delimiter(text: str, at: int) -> str:
    """The delimiter of the sed substitution (``s/…/…/``, ``s|…|…|``, ``s#…#…#``) whose pattern or replacement holds
    the name at ``at``, or ``""``: its word, back to a blank or a quote, starts with ``s`` and the delimiter (the
    ``-e`` or ``-i`` before it is sed's; an agent edits a ``.env`` file so:
    ``sed -i 's/API_KEY=.*/API_KEY=P/' .env``)."""
    k = at
    while k > 0 and text[k - 1] not in " \t\n\"'`" and at - k < _LOOK_BACK:
        k -= 1
    if text[k:k + 1] == "s" and k + 2 <= at and text[k + 1] in _SED_DELIMITERS:
        return text[k + 1]
    return ""


_SED_DELIMITERS: Final = frozenset("/|#,@!")


def _in_url(text: str, at: int) -> bool:
    """Whether the ``;name=`` at ``at`` is a URL's path parameter (``/app;jsessionid=X#top``): its run holds a ``/``.
    In a connection string (``Server=db;Password=0QZ#1zw;``) a ``#`` is a password's character, not a fragment."""
    k = at
    while k > 0 and not text[k - 1].isspace() and at - k < _LOOK_BACK:
        k -= 1
    return "/" in text[k:at]


def _match_operator(text: str, eq: int) -> bool:
    """Whether the ``=~`` at ``eq`` is Perl's or Bash's match operator (``$pw =~ /x/``, ``[[ $TOKEN =~ ^ghp_ ]]``,
    ``$pw=~/x/``) rather than a value starting with ``~`` glued to its name (``DB_PASSWORD=~K…``, ``?token=~K…``):
    a blank before it or after it, a pattern's slash after it, or a ``$`` variable before it."""
    if _query_name(text, eq):
        return False
    after = text[eq + 2:eq + 3]
    if eq == 0 or text[eq - 1] in " \t" or after in ("", " ", "\t", "/", "\n"):
        return True
    start, _ = _name_before(text, eq)
    return start > 0 and text[start - 1] in "$@%{"


def _query_name(text: str, eq: int) -> bool:
    """Whether the name before the ``=`` at ``eq`` is a URL query parameter's (``?name=``, ``&name=``)."""
    start, end = _name_before(text, eq)
    return start < end == eq and start > 0 and text[start - 1] in _QUERY_LEADERS


def _blank_end(text: str, at: int) -> int:
    """The first position at or after ``at`` that is no space or tab."""
    while text[at:at + 1] in (" ", "\t"):
        at += 1
    return at


def _assignment(text: str, start: int, name: str, level: int, query: bool, value_at: int, spans: list[Span]) -> int:
    """The value of the credential name ``name`` (at ``start``; ``query``: a URL's parameter) starting at
    ``value_at``; where to go on."""
    at = _blank_end(text, value_at)
    opener = text[at:at + 1]
    if opener in ("(", "["):
        done = _flow_items(text, at, WEAK if opener == "(" else level, name, spans)
        if done != at + 1:
            return done  # a list or a tuple that closes on its line; otherwise a value that starts with it
    elif opener == "{":
        close = text.find("}", at, at + 256)
        if close > at + 1 and not any(c in text[at + 1:close] for c in " \t\n\"'{:"):
            value = text[at:close + 1]
            if not kept_value(value, name, level):
                _judge(text, name, (at + 1, close), level, spans)
            return close + 1
    if opener in ("\n", "\r") and not query:
        _next_line_string(text, at, name, level, spans)  # api_key=\n    "P",
        return at
    m = _VALUE_RE.match(text, value_at)
    if m is None:
        return value_at
    words = spaced_passphrase(name, text, value_at) if m.group("v") is not None and not query else None
    if words is not None:
        _judge(text, name, words, level, spans)  # passphrase = correct horse battery staple
        return words[1]
    span = _value_span(m, name_start=_strong_at(start, level))
    if span is not None and not query and (m.group("v") is not None or m.group("s") is not None):
        span = _line_run(text, start, span, level)
    if span is not None and query and m.group("v") is not None and (text[start - 1] != ";" or _in_url(text, start)):
        # A URL's fragment ends its parameter, but not a password's: a database URL's password is not encoded
        # (jdbc:…?user=app&password=Xk9#mQ2$vL), and no fragment follows a password
        cut = -1 if password_name(name) else text.find("#", span[0], span[1])
        if text[start - 1] == ";" and not credential_name(name):
            quest = text.find("?", span[0], span[1])  # ;jsessionid=X?a=1: a path parameter ends at the query
            cut = quest if quest >= 0 and (cut < 0 or quest < cut) else cut
        span = (span[0], cut) if cut >= 0 else span
    if span is not None and m.group("v") is not None:
        delimiter = _sed_delimiter(text, start)
        cut = text.find(delimiter, span[0], span[1]) if delimiter else -1
        if cut >= 0:
            span = (span[0], cut)  # sed 's/API_KEY=.*/API_KEY=P/': each part ends at the delimiter
    if span is None or span[1] <= span[0]:
        return value_at
    # A long option's value (``--password=root``) is a command's argument, never an identifier of code: a word there
    # is the password
    bare = _bare(m)
    flag = start if name.startswith("--") else start - 2 if text[max(0, start - 2):start] == "--" else -1
    option = flag >= 0
    if option and bare and _metavariable(text, flag, span):
        return span[1]
    env = bare and level == STRONG and text[span[0]:span[1]].isalnum() and _env_line(text, start, value_at)
    _judge(text, name, span, level, spans, bare=bare and not query and not option and not env, encoded=query,
           user=bare and not query and holds_user(text, start, name))
    # an inner NAME=… judges its own value (scanned again from the value's start): only in a value of ordinary
    # length, so a run of names repeated for kilobytes is read once, not once per name
    inner = bare and span[1] - span[0] <= _INNER_PAIR_MAX and _inner_pair(text[span[0]:span[1]])
    return span[0] if inner else span[1]


_ENV_LINE_RE: Final = re.compile(r"[ \t]*(?:export[ \t]+)?[A-Z][A-Z0-9_]*=")


def _env_line(text: str, start: int, value_at: int) -> bool:
    """Whether the name at ``start`` is an environment variable's set on its own line, ``=`` glued to it
    (``DB_PASSWORD=postgres``, ``export API_TOKEN=…``): an env file's or a shell's assignment, whose unquoted word
    is a literal, never an identifier of code (``password = lines`` is code). A JSON string's text is a line too
    (``{"content": "DB_PASSWORD=postgres"}``)."""
    return _ENV_LINE_RE.fullmatch(text, _line_start(text, start), value_at) is not None


def _capital_word(value: str) -> bool:
    """Whether ``value`` is a word in capitals, in any script (``TEXT``, ``COMMAND``, ``HESLO``, ``PALAVRA-PASSE``,
    ``BEGRÄNSNINGS_NYCKEL``; a script without case too: ``მეთოდი``): how a help text writes an option's
    metavariable."""
    return not any(c.islower() for c in value) and any(c.isalpha() for c in value) and all(
        c.isalpha() or c in "-_" for c in value)


def _help_column(text: str, option: int, end: int) -> bool:
    """Whether the option at ``option``, whose name or value ends at ``end``, is a help text's entry: it starts its line
    (after the indentation and a short form, ``  -p, --password``) and its description follows after a column of
    blanks (two or more, or a tab), words to the line's end (``--keep-session-cookies      munkamenet (nem állandó)
    sütik …``, ``--password         パスワード入力要求を強制``); a command's argument has none."""
    line = text.rfind("\n", 0, option) + 1
    if _HELP_LEAD_RE.fullmatch(text, line, option) is None:
        return False
    column = _blank_end(text, end)
    if not (column - end >= 2 or text[end:end + 1] == "\t"):
        return False
    stop = text.find("\n", column)
    description = text[column:stop if stop >= 0 else len(text)]
    return _HELP_DESCRIPTION_RE.match(description) is not None


_HELP_OPTION_RE: Final = re.compile(r"[ \t]*(?:-[A-Za-z0-9],[ \t]*)?--?[A-Za-z0-9][\w.-]*[ =]")
"""A help entry's option before its metavariable (``  --password PASSWORD<tab>…``): the metavariable names no pair."""
_HELP_LEAD_RE: Final = re.compile(r"[ \t]*(?:-[A-Za-z0-9],[ \t]*)?")
"""What stands before a help text's long option on its line: indentation, a short form (``-p, ``)."""
_HELP_DESCRIPTION_RE: Final = re.compile(
    r"[^\W\d_]+(?:['’-][^\W\d_]+)*[,.;:]?[ \t]+[(\[«„\"']?[^\W\d_]|[^\x00-\x7f]{2}")
"""A help entry's description: a word of letters and another (``force password prompt``, ``munkamenet (nem``), or a
text in a script beyond ASCII (``パスワード入力要求を強制``); a value, then the line's continuation (``P \\``), is none."""


def _metavariable(text: str, option: int, span: Span) -> bool:
    """Whether the value at ``span`` of the option at ``option`` (its dashes) is a help text's metavariable
    (``--use-askpass=COMMAND       specify …``, ``--ftp-password=HESLO        nastaví …``): a word in capitals with the
    help's column and description after it, or alone at the end of an indented help entry's line
    (``--restrict-key=BEGRÄNSNINGS_NYCKEL``, described on the next lines). A password in capitals alone has neither."""
    if not _capital_word(text[span[0]:span[1]]):
        return False
    line = text.rfind("\n", 0, option) + 1
    if text[span[1]:span[1] + 1] in ("\n", "") and text[line:line + 1] in (" ", "\t") and _HELP_LEAD_RE.fullmatch(
            text, line, option) is not None:
        return True  # an indented entry, described on the next lines
    return _help_column(text, option, span[1]) or (
        _blank_end(text, span[1]) - span[1] >= 2 and text[_blank_end(text, span[1]):][:1].isalpha())


_INNER_PAIR_MAX: Final = 512
"""The longest bare value searched for an inner pair (see :func:`_assignment`)."""


@lru_cache(maxsize=4096)
def _pair_name(name: str) -> bool:
    """Whether ``name`` names a user and a password together (``DB_CREDENTIALS``, ``basicAuth``, ``账号密码``)."""
    if name.isascii():
        return "".join([c for c in name.lower() if c.isalpha()]).endswith(_PAIR_NAME_ENDS)
    return any(w in name for w in _CJK_USER_WORDS) and any(w in name for w in _CJK_PASSWORD_WORDS) or any(
        w in name for w in _CJK_PAIR_WORDS)


def _inner_pair(value: str) -> bool:
    """Whether an unquoted value (or a code span's) is itself a strong name's pair (``Key = session_key=…``,
    ``token: `export GITHUB_TOKEN=…```): that name judges it. The inner name is one settings are named by
    (:func:`_word_name`, ``SESSION_KEY``); a generated password's first run is not (``SMTP_SECRET=PW=…``, ``pw:
    OtpVx_1Ea=…``: the whole value is the password)."""
    inner = _INNER_NAME.match(value) if "=" in value else None
    return inner is not None and credential_name(inner.group("n")) == STRONG and _word_name(inner.group("n"))


def _inner_user(value: str) -> bool:
    """Whether an unquoted value under a name of a user and a password together starts as the user's own pair
    (``user=alice``, ``login=bob``): no password, its name says what it holds."""
    inner = _INNER_NAME.match(value)
    return inner is not None and inner.group("n").lower() in _USER_WORDS


def holds_user(text: str, start: int, name: str) -> bool:
    """Whether the name ``name`` (at ``start``) stands for a user and a password together: ``credentials``,
    ``creds``, ``userpass``, ``basic_auth``, ``账号密码``, or a password name after a user name and a slash
    (``user/pass``, ``用户名/密码``)."""
    if _pair_name(name):
        return True
    if start < 2 or text[start - 1] != "/":
        return False
    at = start - 1
    while at > 0 and text[at - 1].isalpha():
        at -= 1
    return text[at:start - 1].lower() in _USER_WORDS


def _colon_pairs(text: str, spans: list[Span]) -> None:
    """``NAME: value`` (not ``://``, not ``::``, not a segment of ``a:b:c``), also with ``：``; a value on the next
    line, a block scalar and a list."""
    wide = "：" if "：" in text else None
    find = text.find
    colon = find(":") if wide is None else _next(text, ":", wide, 0)
    while colon >= 0:
        last = text[colon - 1] if colon > 0 else ""
        resume = colon + 1
        if (last in _NAME_CHARS or last in " \t" or (last > "\x7f" and last.isalpha())) and not (
                text[colon] == ":" and (text[colon + 1:colon + 2] in (":", "/", "\\", "=") or last == ":")):
            start, end = _name_before(text, colon)
            if start < end:
                name = text[start:end]
                level = credential_name(name)
                if level == WEAK:
                    name, level = _with_word_before(text, start, name, level, colon + 1)  # our API key: P
                glued = start > 0 and text[start - 1] == ":" and text[colon + 1:colon + 2] not in (" ", "\t")
                if level and not (glued or (start >= 2 and text[start - 2:start] in ("//", "${"))):
                    # not arn:aws:…:secret:x; scheme://token:P@host (the userinfo's own finder); ${PASSWORD:-P}
                    resume = max(resume, _colon_pair(text, colon, start, name, level, spans))
        colon = find(":", resume) if wide is None else _next(text, ":", wide, resume)


def _colon_pair(text: str, colon: int, start: int, name: str, level: int, spans: list[Span]) -> int:
    """The value after the colon of the credential name ``name`` (at ``start``); where to go on."""
    at = colon + 1
    props = _YAML_PROPS.match(text, at)
    if props is not None and any(secret_looking(prop.lstrip("!")) for prop in props.group(0).split()):
        props = None  # password: !Gq7OjJ0GISJ4pHb: no tag is written so, a password is
    if props is not None:
        if "!vault" in props.group(0):
            return props.end()  # Ansible vault: encrypted
        at = props.end()
    block = _BLOCK_RE.match(text, at)
    if block is not None:
        return _next_lines(text, start, block.end(), name, level, spans, block.group("b") is not None)
    while text[at:at + 1] in (" ", "\t"):
        at += 1
    if text[at:at + 1] == "[":
        done = _flow_items(text, at, level, name, spans)
        if done != at + 1:
            return done  # a list that closes on its line; otherwise a value that starts with ``[``
    m = _VALUE_RE.match(text, at)
    if m is None:
        return colon + 1
    if not _bare(m) and at == colon + 1 and not (start == 0 or text[start - 1] in "{,; \t\n"):
        return colon + 1  # a quote glued to the colon (``cookie:" --x="``) closes a string the name stood in
    words = spaced_passphrase(name, text, at) if _bare(m) else None  # passphrase: correct horse battery staple
    if words is not None:
        _judge(text, name, words, level, spans)
        return words[1]
    span = _value_span(m, name_start=_strong_at(start, level))
    if span is not None and (_bare(m) or m.group("s") is not None):
        span = _line_run(text, start, span, level)
    if span is None or span[1] <= span[0] or (_bare(m) and _prose_value(text, *span)
                                              and "authoriz" not in name.lower()):
        return colon + 1
    bare = _bare(m)
    _judge(text, name, span, level, spans, bare=bare, user=bare and holds_user(text, start, name))
    return span[1]


def _next_lines(text: str, key_start: int, pos: int, name: str, level: int, spans: list[Span], block: bool) -> int:
    """The value of a key whose line ends at ``pos``: a block scalar's lines (``|``, ``>-``), the items of a list
    (``- P``), or one more-indented line (``password:\\n  P``), more indented than the key's line; a nested mapping
    holds no value of its own."""
    line_start = text.rfind("\n", max(0, key_start - 256), key_start) + 1
    if line_start == 0 and key_start > 256:
        return pos  # a key indented further than any YAML is
    key_col = line_start
    while key_col < key_start and text[key_col] in " \t":
        key_col += 1
    key_col -= line_start  # the key's line's indentation (a quote or a list's "- " before the key aside)
    i = text.find("\n", pos) + 1
    n = len(text)
    item_col = -1
    for _ in range(_MAX_BLOCK_LINES):
        if i <= 0 or i >= n:
            break
        j = text.find("\n", i)
        j = n if j < 0 else j
        line_end = j - 1 if j > i and text[j - 1] == "\r" else j
        k = i
        while k < line_end and text[k] in " \t":
            k += 1
        if k == line_end:
            i = j + 1
            continue
        col = k - i
        if block:
            if col <= key_col:
                break
            e = line_end
            while e > k and text[e - 1] in " \t":
                e -= 1
            if not kept_value(text[k:e], name, level):
                spans.append((k, e))
        elif text.startswith("- ", k) or text[k:line_end] == "-":
            if col < key_col or (item_col >= 0 and col != item_col):
                break
            item_col = col
            _line_value(text, k + 1, line_end, name, level, spans)
        else:
            if item_col < 0 and col > key_col:
                _line_value(text, k, line_end, name, level, spans)
            break
        i = j + 1
    return i if i > 0 else n


_NEXT_LINE_STRING: Final = re.compile(r"(?:[ \t]{0,64}\r?\n){1,3}[ \t]{0,64}(?P<q>[\"'])(?P<v>[^\"'\\\n]{1,4096})(?P=q)"
                                      r"[ \t]*(?:[,;)}\]]|\r?\n|\Z)")
"""A string that is all its line holds (but a comma or a closing bracket), on the line after a name and its
separator: the name's value written on the next line (``"password":`` / ``api_key=`` and ``"P",`` below)."""


def _next_line_string(text: str, at: int, name: str, level: int, spans: list[Span]) -> None:
    """The quoted value on the line after a name whose separator ends its line (at ``at``): a formatter's wrap of
    ``"password": "P"`` or ``api_key="P",``. Only a quoted value (an unquoted word on the next line is the next
    statement or key)."""
    m = _NEXT_LINE_STRING.match(text, at)
    if m is not None:
        _judge(text, name, m.span("v"), level, spans, literal=True)


def _line_value(text: str, at: int, line_end: int, name: str, level: int, spans: list[Span]) -> None:
    """A scalar that is all its line holds (a list item, a value on the next line): none when the line holds a
    mapping, a sentence or code."""
    while text[at:at + 1] in (" ", "\t"):
        at += 1
    m = _VALUE_RE.match(text, at, line_end)
    if m is None or _MAPPING_RE.match(text, at, line_end):
        return
    rest = text[m.end():line_end].strip()
    if rest and not rest.startswith("#"):
        return  # more than one word: a sentence, a statement
    span = _value_span(m, name_start=_strong_at(at, level))
    if span is not None and span[1] > span[0]:
        _judge(text, name, span, level, spans, bare=_bare(m))


def _flow_items(text: str, at: int, level: int, name: str, spans: list[Span], quote: int = -1,
                wraps: dict[Span, int] | None = None) -> int:
    """The items of a list or tuple written on one line (``[P, "Q"]``, ``("user", "P")``) under a credential name;
    nothing unless it closes before the line ends and holds only scalars. After a quoted key (its closing quote at
    ``quote``) a bare item's marker is to be quoted as that key is (``wraps``)."""
    close = "]" if text[at] == "[" else ")"
    items: list[tuple[Span, bool]] = []
    i = at + 1
    for _ in range(64):
        m = _ITEM_RE.match(text, i)
        if m is None:
            while text[i:i + 1] in (" ", "\t"):
                i += 1
            if text[i:i + 1] != close or not items:
                return at + 1
            i += 1
            break
        group = "dq" if m.group("dq") is not None else "sq" if m.group("sq") is not None else "v"
        items.append((m.span(group), group == "v"))
        i = m.end()
        if m.group("sep") == close:
            break
        if m.group("sep") != ",":
            return at + 1
    else:
        return at + 1
    for (s, e), bare in items:
        if "://" in text[s:e] and _url_scheme(text[s:e]) and not _url_secret(text[s:e]):
            continue  # ("https://openrouter.ai/api/v1/key", "bearer"): where the key is used, not the key
        if e > s and not kept_value(text[s:e], name, level, bare=bare, literal=not bare):
            spans.append((s, e))
            if bare and wraps is not None and quote >= 0:
                wraps[(s, e)] = quote
    return i


def is_sensitive_pair(key: str, value: object) -> bool:
    """Whether a quoted ``"key": value`` pair hides its value: the sensitive-key rule of §8.2.4, or a strong
    credential name (``secret_key_base``); never a phrase (``"Forgot password?"``), and never a key without a
    name hint (the pre-check stays exact)."""
    cls = _pair_class(key)
    if cls == 2:
        return True
    return cls == 1 and _SENSITIVE_KEY is not None and _SENSITIVE_KEY(key, value)


@lru_cache(maxsize=8192)
def _pair_class(key: str) -> int:
    """0: never sensitive; 1: as §8.2.4 says for the value (the plural-token rule); 2: whatever the value."""
    global _SENSITIVE_KEY
    if _SENSITIVE_KEY is None:
        from .scrub import is_sensitive_key  # the §8.2.4 rule lives with the public API (which imports this module)

        _SENSITIVE_KEY = is_sensitive_key
    low = key.lower()
    if not any(h in low for h in _ASCII_HINTS) and (low.isascii() or not any(h in low for h in _WIDE_HINTS)):
        return 0
    if phrase_name(key):
        return 0
    if credential_name(key) == STRONG or _SENSITIVE_KEY(key, 0):
        return 2
    return 1 if _SENSITIVE_KEY(key, "") else 0


_SENSITIVE_KEY: Callable[[str, object], bool] | None = None


def _quoted_pairs(text: str, spans: list[Span], wraps: dict[Span, int] | None = None) -> None:
    """Quoted ``"key": value`` pairs (JSON, Python reprs, ``'key' => value``, ``["key"] = value``). After a pair
    whose key is not sensitive the search resumes after its separator, so a pair that starts inside its value is
    still found.

    Driven by the separators that end keys (found at C speed), each key read backwards to its opening quote: the
    same pairs as a search of :data:`_QUOTED_KEY_RE` from left to right (a key holds no quote, so its opening
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
        if not _pair_class(key):
            pos = end.end()
            if credential_name(key) == WEAK:
                _weak_pair_value(text, key, pos, spans)
            continue
        pos = _pair_value(text, key, end.end(), spans, close, wraps)


def _weak_pair_value(text: str, key: str, at: int, spans: list[Span]) -> None:
    """The string after a weak name's quoted key (``{"key": "P"}``, ``{"session": "P"}``, ``{"jwt": "P"}``): a
    credential when it looks generated, as after ``key=`` (a word, a sentence, an identifier or a path stays)."""
    m = _VALUE_RE.match(text, at)
    if m is None or _bare(m):
        return
    span = _value_span(m, strict=False)
    if span is None or span[1] <= span[0] or _UUID.fullmatch(text, *span):
        return
    head = text[span[0]:span[1]].lower()
    low = key.lower()
    if head.startswith(low) and not head[len(low):len(low) + 1].isalnum():
        return  # "sid_et": "sid_ET.UTF-8": a value named after its key
    _judge(text, key, span, WEAK, spans)


_UUID: Final = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
"""A UUID: what a JSON document's ``"session"`` or ``"key"`` holds as an identifier of a record."""


def _pair_value(text: str, key: str, at: int, spans: list[Span], quote: int = -1,
                wraps: dict[Span, int] | None = None) -> int:
    """Judge the value after a sensitive quoted key's separator (ending at ``at``; the key's closing quote at
    ``quote``); where the next key may start. A bare scalar's span (a number: ``{"pin": 483920}``) is recorded in
    ``wraps`` with the quote: its marker is written between two of them, so JSON stays JSON."""
    i = _blank_end(text, at)
    opener = text[i:i + 1]
    if opener in ("[", "("):
        return _flow_items(text, i, STRONG if opener == "[" else WEAK, key, spans, quote, wraps)
    if opener in ("\n", "\r"):
        _next_line_string(text, i, key, STRONG, spans)  # "password":\n    "P"
        return i
    m = _VALUE_RE.match(text, at)
    if m is None:
        return at
    if _bare(m):
        scalar = m.group("v")
        if scalar in ("null", "None", "true", "false", "True", "False"):
            return m.end()
        value: object = 0 if scalar.lstrip("+-").isdigit() else scalar
        if is_sensitive_pair(key, value):
            start, end = m.span("v")
            wrapped = _SECRET_WRAPPER_RE.match(text, start) if "(" in scalar else None
            if wrapped is not None:  # {'api_key': SecretStr('P')}: the literal it wraps
                _judge(text, key, wrapped.span("v"), STRONG, spans, literal=True)
                return wrapped.end()
            if "(" in scalar or "[" in scalar:
                end = _bare_call(text, start, end)
                if end < 0:
                    return m.end()  # "api_key": os.environ["API_KEY"]: code
            if not kept_value(text[start:end], key, STRONG, bare=True):
                spans.append((start, end))
                if wraps is not None and quote >= 0:
                    wraps[(start, end)] = quote
        return m.end()
    span = _value_span(m, strict=False)
    if span is None:
        return m.end()
    if span[1] > span[0]:
        _judge(text, key, span, STRONG, spans)
        return m.end()
    return span[0] - 1


def _call_pairs(text: str, spans: list[Span]) -> None:
    """``define('NAME', 'P')``, ``os.environ.setdefault("NAME", "P")``, ``getenv("NAME", "P")``."""
    for m in _CALL_OPEN_RE.finditer(text):
        name = m.group("n")
        level = credential_name(name)
        if level and _CALL_NAME_RE.search(text, max(0, m.start() - 24), m.start()) is not None:
            v = _VALUE_RE.match(text, m.end())
            if v is not None and not _bare(v):
                span = _value_span(v, name_start=_strong_at(m.start(), level))
                if span is not None and span[1] > span[0]:
                    _judge(text, name, span, level, spans)


def _named_values(text: str, spans: list[Span]) -> None:
    """``{"name": "API_KEY", "value": "P"}`` and ``- name: DB_PASSWORD\\n  value: P``: the value named by its
    sibling; ``DB_PASSWORD:\\n  value: P``: by the YAML key that holds it."""
    at = text.find("alue")
    while at > 0:
        m = _VALUE_KEY_RE.match(text, at - 1)
        at = text.find("alue", at + 4)
        if m is None:
            continue
        s = j = m.start()
        if text.endswith(("Parameter", "parameter"), 0, j):
            j -= 9
        elif text.endswith(("Option", "option"), 0, j):
            j -= 6
        if j > 0 and text[j - 1] in "\"'":
            j -= 1
        while j > 0 and text[j - 1] in " \t-":
            j -= 1
        if j == 0 or text[j - 1] not in ",\n":
            continue  # a sibling ends with a comma or a line before the value's key
        named = _sibling(text, max(0, j - 200), j, s)
        if named is not None and named.group("vq") == m.group("vq"):
            name = named.group("n")
        elif named is None and not m.group("vq") and text[j - 1] == "\n":
            parent = _parent_key(text, j, s)  # password:\n  value: P
            if parent is None:
                continue
            name = parent
        else:
            continue
        level = credential_name(name)
        if not level and named is not None and text[j - 1] == "\n":
            holder = _list_holder(text, named.start())  # secrets:\n  - name: api\n    value: P
            if holder is not None and credential_name(holder) == STRONG:
                name, level = holder, STRONG
        if level:
            v = _VALUE_RE.match(text, m.end())
            if v is not None:
                span = _value_span(v, name_start=_strong_at(s, level))
                if span is not None and span[1] > span[0]:
                    _judge(text, name, span, level, spans, bare=_bare(v))


_PARENT_KEY_RE: Final = re.compile(
    r"(?:^|(?<=[\"']))(?:>[ \t]?)*(?P<i>[ \t]*)(?P<n>[A-Za-z_][A-Za-z0-9_.-]{0,127})[ \t]*:[ \t]*\r?\Z", re.M)


def _parent_key(text: str, j: int, s: int) -> str | None:
    """The YAML key that holds the ``value`` key at ``s`` (its line starting at ``j``): the line before it is the key
    alone (``DB_PASSWORD:``; in a string's text, ``{"output": "DB_PASSWORD:``), indented less than the ``value``
    key."""
    start = text.rfind("\n", 0, j - 1) + 1
    m = _PARENT_KEY_RE.search(text, start, j - 1)
    return m.group("n") if m is not None and len(m.group("i")) < s - j else None


_LIST_ITEM_RE: Final = re.compile(r"(?P<i>[ \t]*)-[ \t]+\Z")
_HOLDER_LINES: Final = 40
"""The most lines read upwards for the key that holds a YAML list."""


def _list_holder(text: str, at: int) -> str | None:
    """The YAML key whose list holds the item whose ``name`` key is at ``at`` (``- name: api``): the first line above
    it that is neither blank, a comment, a line of an item before it nor that item's ``-``, when that line is a key
    alone (``secrets:``); ``None`` otherwise."""
    line = text.rfind("\n", 0, at) + 1
    item = _LIST_ITEM_RE.match(text, line, at)
    if item is None:
        return None
    indent = len(item.group("i"))
    end = line - 1
    for _ in range(_HOLDER_LINES):
        if end <= 0:
            return None
        start = text.rfind("\n", 0, end) + 1
        row = text[start:end]
        body = row.lstrip(" \t")
        end = start - 1
        depth = len(row) - len(body)
        if not body or body.startswith("#") or depth > indent or depth == indent and body.startswith("-"):
            continue  # a blank or a comment, a line of an item before, that item's own "-"
        m = _PARENT_KEY_RE.fullmatch(row)  # less indented, or a key at the item's own (YAML lets a list start there)
        return m.group("n") if m is not None else None
    return None


def _sibling(text: str, lo: int, j: int, s: int) -> re.Match[str] | None:
    """The ``name``/``key`` pair that ends at the separator ``j`` before a value's key (at ``s``), read backwards
    from its own ``:`` or ``=`` (the name it gives holds neither)."""
    k = max(text.rfind(":", lo, j), text.rfind("=", lo, j))
    if k < 0:
        return None
    e = k
    while e > lo and text[e - 1] in " \t":
        e -= 1
    if e > lo and text[e - 1] in "\"'":
        e -= 1
    for word in ("name", "key", "Name", "Key"):
        if text.endswith(word, lo, e):
            b = e - len(word)
            for prefix in (0, 6, 9):  # Option, Parameter
                for quote in (0, 1):
                    named = _NAME_KEY_RE.match(text, b - prefix - quote, s) if b - prefix - quote >= lo else None
                    if named is not None:
                        return named
    return None


def _attr_text(attr: re.Match[str]) -> str:
    """The text of an attribute :data:`_ATTR_RE` read, double- or single-quoted."""
    return attr.group("d") if attr.group("d") is not None else attr.group("s")


def _attr_span(attr: re.Match[str]) -> Span:
    """Where the text of an attribute :data:`_ATTR_RE` read stands in the attributes it was read from."""
    return attr.span("d") if attr.group("d") is not None else attr.span("s")


def _markup(text: str, spans: list[Span]) -> None:
    """``<password>value</password>`` (Maven, Tomcat, XML configs; CDATA; the value on its own line),
    ``<password value="..."/>``, ``<entry key="password">...</entry>`` / ``<string name="api_key">`` and ``<add
    key="ApiKey" value="..."/>`` (.NET application settings): the element's text or the ``value`` attribute, judged
    by the name."""
    for m in _ELEMENT_RE.finditer(text):
        name = m.group("n")
        attrs = {a.group("k").lower(): a for a in _ATTR_RE.finditer(m.group("a"))} if m.group("a") else {}
        if name.lower() in _HTML_TEXT_ELEMENTS:
            continue  # <code>SSL_OP_NO_SSLv2</code>: HTML's element for code, not a credential's name
        if not credential_name(name):
            named = attrs.get("key") or attrs.get("name")
            if named is None:
                continue
            name = _attr_text(named)
        level = credential_name(name)
        if not level:
            continue
        group = "c" if m.group("c") is not None else "v"
        if m.group(group) is not None:
            _judge(text, name, m.span(group), level, spans, literal=True)
        elif "value" in attrs:
            offset = m.start("a")
            s, e = _attr_span(attrs["value"])
            if e > s:
                _judge(text, name, (offset + s, offset + e), level, spans)
    for m in _SETTING_RE.finditer(text):
        name = m.group("n")
        level = credential_name(name)
        if level and m.end("v") > m.start("v"):
            _judge(text, name, m.span("v"), level, spans)
    if "<" in text:
        _html_fields(text, spans)


_HTML_VOID_RE: Final = re.compile(r"<(?i:meta|input|param)(?P<a>(?:[ \t\r\n]+[^<>]{0,512})?)/?>")
"""A void HTML element holding a value in an attribute: ``<meta name="api-key" content="P">``, ``<input
type="password" value="P">``, ``<param name="token" value="P">``."""
_HTML_CELLS_RE: Final = re.compile(
    r"<(?P<t>(?i:td|th|dt|label|b|strong))(?:[ \t][^<>]{0,200})?>[ \t]*(?P<n>[^<>\n]{1,64}?)[ \t]*:?[ \t]*</(?P=t)>"
    r"[ \t\r\n]{0,64}<(?P<u>(?i:td|dd))(?:[ \t][^<>]{0,200})?>[ \t\r\n]*(?P<v>[^<>\s][^<>\n]{0,255}?)"
    r"[ \t\r\n]*</(?P=u)>")
"""An HTML table's or definition list's pair: a cell or a term naming a credential, then the next cell or the
definition (``<td>DB_PASSWORD</td><td>P</td>``, ``<th>password</th><td>P</td>``, ``<dt>API key</dt><dd>P</dd>``)."""


def _html_fields(text: str, spans: list[Span]) -> None:
    """The value an HTML page gives a credential: an attribute of a void element named by its ``name``, ``id`` or
    ``property`` (or an input of type password), and the cell or definition after one naming a credential; each
    judged by that name, as a string's text."""
    for m in _HTML_VOID_RE.finditer(text):
        attrs = {a.group("k").lower(): a for a in _ATTR_RE.finditer(m.group("a"))}
        value = attrs.get("content") or attrs.get("value")
        if value is None:
            continue
        kind = attrs.get("type")
        named = attrs.get("name") or attrs.get("id") or attrs.get("property")
        name = "password" if kind is not None and _attr_text(kind).lower() == "password" \
            else _attr_text(named) if named is not None else ""
        level = credential_name(name) if name else 0
        s, e = _attr_span(value)
        if level and e > s:
            offset = m.start("a")
            _judge(text, name, (offset + s, offset + e), level, spans, literal=True)
    if "</" not in text:
        return
    for m in _HTML_CELLS_RE.finditer(text):
        name = m.group("n").strip("*_` ")
        level = credential_name(name) if not secret_looking(name) else 0
        if level and not phrase_name(name):
            _judge(text, name, m.span("v"), level, spans, literal=True)


def _flags(text: str, spans: list[Span]) -> None:
    """``--name value`` whose name is a credential name, after any character that is not part of a word, and
    ``["--name", "value"]``; an option's metavar in a help text (``--password TEXT``) is none."""
    for m in _FLAG_RE.finditer(text):
        s = m.start()
        if m.group("aq") is not None and text[s - 1:s] != m.group("aq"):
            continue
        name = m.group("name")
        if name.endswith("."):
            continue  # "… --ask-password. Êtes-vous …": the option ends a sentence
        if text[s + 1] != "-" and not (_SINGLE_DASH_NAME_RE.fullmatch(name)
                                       and credential_word(name.replace("_", "-").rsplit("-", 1)[-1])):
            continue  # ``-pS3cret app``: a value glued to a one-letter option, not an option named for a credential
        level = credential_name(name)
        if not level:
            continue
        v = _VALUE_RE.match(text, m.end())
        if v is not None and (m.group("aq") is None or not _bare(v)):
            span = _value_span(v, name_start=_strong_at(s, level))
            if span is not None and span[1] > span[0]:
                value = text[span[0]:span[1]]
                if _bare(v) and _capital_word(value) and (len(value) <= 16 or _help_column(text, s, span[1])):
                    continue  # --password TEXT: the metavar of a help text
                if _bare(v) and _help_column(text, s, m.start("name") + len(name)):
                    continue  # --password         force password prompt: the entry's description
                if _bare(v) and (_prose_value(text, *span) or len(value) <= 3 and value.isalpha()
                                 or wide_word(value)):
                    continue  # "Run --client-secret first.", "requires --api-key in Hermes", "--jobserver-auth
                    # inválida": a sentence (a word of letters beyond ASCII is a language's, which no generator draws)
                _judge(text, name, span, level, spans)


def _tab_pairs(text: str, spans: list[Span]) -> None:
    """``NAME<tab>value`` (a table of names and values): the name starts its line or follows a space. An option
    (``--password<tab>P``) is :func:`_flags`'s, which tells a help entry's description from a value."""
    tab = text.find("\t")
    while tab >= 0:
        if tab == 0 or text[tab - 1] in " \t":  # the name must end at the tab: no walk back over a run of blanks
            tab = text.find("\t", tab + 1)
            continue
        start, end = _name_before(text, tab)
        if start < end and end == tab and (start == 0 or text[start - 1] in "\n \r|\"'") and credential_name(
                text[start:end]) == STRONG and text[start] != "-" and _HELP_OPTION_RE.fullmatch(
                    text, text.rfind("\n", 0, start) + 1, start) is None:
            at = tab
            while text[at:at + 1] == "\t":
                at += 1
            if text[at:at + 1] == ":":  # passord-endring\t\t\t:%ld: the colon is the pair's separator
                at = _blank_end(text, at + 1)
            m = _VALUE_RE.match(text, at)
            if m is not None and text[at:at + 1] not in (" ", ""):
                span = _value_span(m, name_start=start)
                if span is not None and span[1] > span[0] and not (_bare(m) and _prose_value(text, *span)):
                    _judge(text, text[start:end], span, STRONG, spans, bare=_bare(m))
        tab = text.find("\t", tab + 1)


_FALLBACK_RE: Final = re.compile(
    r"(?<![\w$.])(?:(?P<n>[A-Za-z_$][\w$]{0,127}(?:\.[A-Za-z_$][\w$]{0,127}){0,4})"
    r"|[A-Za-z_$][\w$.]{0,127}\([ \t]*(?P<cq>[\"'])(?P<c>[A-Za-z_][\w.-]{0,127})(?P=cq)[ \t]*\)"
    r"|[A-Za-z_$][\w$.]{0,127}\[[ \t]*(?P<sq>[\"'])(?P<s>[A-Za-z_][\w.-]{0,127})(?P=sq)[ \t]*\])"
    r"[ \t]*(?:\|\||\?\?|[ \t]or)[ \t]*(?P<q>[\"'`])(?P<v>[^\"'`\\\n]{1,512})(?P=q)")
"""A credential read from the environment, then the literal used when it is not set: JavaScript's
``process.env.API_KEY || 'P'`` and ``?? 'P'``, Python's ``os.environ.get("API_KEY") or "P"``, Ruby's
``ENV["DB_PASSWORD"] || "P"``, C#'s ``config["Secret"] ?? "P"``."""
_TARGET_RE: Final = re.compile(r"(?P<t>[A-Za-z_$][\w$]{0,127})[\"']?[ \t]*(?::=|=|:)[ \t]*(?:await[ \t]+)?\Z")
"""What a fallback is assigned to, read backwards from the expression: ``refresh_token: process.env.X || "P"``,
``const secret = cfg.get("x") || "P"``."""


def _fallback_defaults(text: str, spans: list[Span]) -> None:
    """The literal after ``||``, ``??`` or ``or`` that stands in for a variable, a call or a subscript naming a
    credential (the last part of a dotted name decides: ``process.env.API_KEY``, ``config.token``), or for what names
    none but is assigned to a name that does (``refresh_token: process.env.X || "P"``)."""
    for m in _FALLBACK_RE.finditer(text):
        name = m.group("n") or m.group("c") or m.group("s")
        level = credential_name(name.rsplit(".", 1)[-1])
        if not level:  # what the expression reads names nothing: what it is assigned to may
            line = text.rfind("\n", max(0, m.start() - 160), m.start()) + 1
            target = _TARGET_RE.search(text, max(line, m.start() - 160), m.start())
            if target is None:
                continue
            name = target.group("t")
            level = credential_name(name)
        if level:
            _judge(text, name, m.span("v"), level, spans, literal=True)


_ARROW_ASSIGN_RE: Final = re.compile(
    r"(?<![\w$.])(?P<n>[A-Za-z][\w.]{0,127})[ \t]*<<?-[ \t]*(?P<q>[\"'])(?P<v>[^\"'\\\n]{1,512})(?P=q)")
"""R's assignment of a string (``api_key <- "P"``, ``TOKEN <<- 'P'``)."""


def _arrow_assignments(text: str, spans: list[Span]) -> None:
    """The string an R assignment gives a name that names a credential."""
    for m in _ARROW_ASSIGN_RE.finditer(text):
        name = m.group("n")
        level = credential_name(name.rsplit(".", 1)[-1])
        if level:
            _judge(text, name, m.span("v"), level, spans, literal=True)


def _param_defaults(text: str, spans: list[Span]) -> None:
    """``${DB_PASSWORD:-P}``, ``${API_KEY:=P}``: the default of a parameter named for a credential."""
    for m in _DEFAULT_RE.finditer(text):
        name = m.group("n")
        level = credential_name(name)
        if level and not kept_value(m.group("d"), name, level):
            spans.append(m.span("d"))


def _userinfo(text: str, spans: list[Span]) -> None:
    """The password of every ``scheme://user:password@`` and ``//user:password@host``, a token written as the
    user (``https://TOKEN@github.com``, ``https://TOKEN:x-oauth-basic@``). The userinfo ends at the last ``@`` of
    the authority; a password holding ``/``, ``#`` or ``?`` (which RFC 3986 wants encoded, but people write) ends
    at an ``@`` followed by a host, when what follows the ``:`` is no port."""
    find = text.find
    sep = find("//")
    while sep >= 0:
        if sep > 0 and text[sep - 1] == ":":
            start = sep - 1
            while start > 0 and text[start - 1] in _SCHEME_CHARS:
                start -= 1
            while start < sep - 1 and not text[start].isalpha():
                start += 1
            ok = start < sep - 1
        else:
            ok = sep == 0 or not (text[sep - 1] in _NAME_CHARS or text[sep - 1] in "/:\\")
        sep = _authority(text, sep + 2, ok and sep > 0 and text[sep - 1] == ":", spans) if ok else sep + 2
        sep = find("//", sep)


def _bracket_in_password(text: str, at: int, bracket: int) -> int:
    """Where the authority starting at ``at`` ends when a ``<`` or ``>`` stops it at ``bracket``: past it when the
    bracket is a character of a password written unencoded (``postgres://app:ZEmdei>lAy8X@db``: after the user's
    ``:``, then an ``@`` and a host, with no blank, quote or path between), else at it (``<https://a@b>``)."""
    colon = text.find(":", at, bracket)
    if colon < 0 or "/" in text[at:bracket]:
        return bracket
    hard = _USERINFO_HARD_END.search(text, bracket, at + 512)
    end = hard.start() if hard is not None else min(len(text), at + 512)
    sign = text.find("@", bracket, end)
    if sign < 0 or "/" in text[bracket:sign] or _HOST_RE.match(text, sign + 1) is None:
        return bracket
    after = _USERINFO_END.search(text, sign + 1, end)
    return after.start() if after is not None else end


def _authority(text: str, at: int, scheme: bool, spans: list[Span]) -> int:
    """Judge the userinfo of the authority starting at ``at``; where to look for the next ``//``."""
    stop = _USERINFO_END.search(text, at, at + 512)
    token_end = stop.start() if stop is not None else min(len(text), at + 512)
    if stop is not None and text[token_end] in "<>":
        token_end = _bracket_in_password(text, at, token_end)
    auth_end = token_end
    for c in "/?#":
        k = text.find(c, at, auth_end)
        if k >= 0:
            auth_end = k
    sign = text.rfind("@", at, auth_end)
    if sign >= 0 and _HOST_RE.match(text, sign + 1) is None:
        later = _host_sign(text, text.find("@", auth_end, token_end), token_end)
        if later >= 0 and "//" not in text[auth_end:later] and text.find(":", at, sign) >= 0:
            sign, auth_end = later, token_end  # u:6+DIgg_@sO6~t^I/_W@h/d: no host after the first "@", one after this
    elif sign >= 0 and auth_end < token_end and text[auth_end] in "?#" and _bare_host(text[sign + 1:auth_end]) \
            and text.find(":", at, sign) >= 0:
        later = _host_sign(text, text.find("@", auth_end, token_end), token_end)
        if later >= 0 and not any(c in text[auth_end:later] for c in "/=&") and "." in text[later:token_end]:
            sign, auth_end = later, token_end  # bob:p@ss#w0rd99@github.com: "ss" is the password's, not a host
    colon = text.find(":", at, sign if sign >= 0 else auth_end)
    if sign < 0:
        if colon < 0 or auth_end == token_end:
            return auth_end
        port = text[colon + 1:auth_end]
        sign = _host_sign(text, text.find("@", auth_end, token_end), token_end)
        is_port = port.isdigit() and (port[0] != "0" or port == "0")  # 0000 is no port
        if sign < 0:
            return auth_end
        if is_port and not _PASSWORD_TAIL.fullmatch(text, auth_end + 1, sign) and not _BASE64_PASSWORD.fullmatch(
                text, colon + 1, sign):
            return auth_end  # host:port/path@x: the '@' is in a path, a query or a fragment (``localhost:8080/@types``)
        if (not port or "//" in text[auth_end:sign]) and not _slashed_password(text[colon + 1:sign]):
            return auth_end  # host:/path@x, host:x//path@y; not root:/yvZk…=@db, :yYBg6+…//oGnK…=@cache
    if colon >= 0:
        user = (at, colon)
        s, e = colon + 1, sign
        decoded = _percent_decoded(text[s:e])
        if e > s and (not kept_value(decoded, "password", STRONG) or (" " in decoded and any(
                secret_looking(word) for word in decoded.split()))):
            spans.append((s, e))  # Of%20q%20pwd%20%3AXIoli…: a password whose words read as a note
    else:
        user = (at, sign)
        if not scheme:
            return sign + 1
    if _TOKEN_USER.fullmatch(text, *user) and secret_looking(text[user[0]:user[1]]):
        spans.append(user)  # a token as the user: https://TOKEN@github.com, https://TOKEN:x-oauth-basic@
    return sign + 1


_BASE64_PASSWORD: Final = re.compile(r"(?=(?:[^A-Z]*[A-Z]){2})(?=(?:[^a-z]*[a-z]){2})(?=(?:[^0-9]*[0-9]){2})"
                                     r"[A-Za-z0-9+/]{20,}={0,2}")
"""A password as ``openssl rand -base64`` makes one (20 or more characters of base64, both cases and digits, ``=`` at
its end): after a userinfo's ``:`` it goes whole though it starts as a port does (``root:5/sfiC0…Pq+=@db``)."""


def _slashed_password(value: str) -> bool:
    """Whether ``value``, between a userinfo's ``:`` and the ``@`` before its host, is a password that starts with
    ``/`` or holds ``//`` (base64 draws either in one value of twenty): generated, and no scheme's ``://`` inside."""
    return "://" not in value and secret_looking(value)


def _bare_host(host: str) -> bool:
    """Whether ``host`` (what an ``@`` and a ``?`` or ``#`` enclose in an authority) is a host by its letters alone: no
    dot, no port, not ``localhost`` (``p@ss#w0rd@github.com``: the password's, when a real host follows)."""
    return "." not in host and ":" not in host and host.lower() != "localhost"


def _host_sign(text: str, sign: int, end: int) -> int:
    """The first ``@`` from ``sign`` on (before ``end``) that a host follows (:data:`_HOST_RE`), or -1: a password
    written unencoded may hold ``@`` (``5jT%#?Dy@%pgy@db.internal:3306``)."""
    while 0 <= sign < end:
        if _HOST_RE.match(text, sign + 1) is not None:
            return sign
        sign = text.find("@", sign + 1, end)
    return -1


def _auth_schemes(text: str, spans: list[Span]) -> None:
    """``Bearer X`` / ``Basic X`` (OBS-57: the scheme word stays, the credential goes). A word of a sentence or a
    heading ("the bearer of", "## Basic Usage"), a placeholder, and the parameters of a challenge
    (``WWW-Authenticate: Bearer realm="x"``) are none."""
    if "+" in text:
        for concat in _SCHEME_CONCAT_RE.finditer(text):  # "Basic " + "P": the credential is the next string
            found = None if _word(concat.group("c")) else _credential(text, concat.start("w"), *concat.span("c"), False)
            if found is not None:
                spans.append(found)
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
        word = cred.rstrip(".,;:!?")
        if word.isalpha() and len(word) <= 24 and word.islower() and (text[m.start("w")].islower() or word != cred):
            continue  # "a basic idea", "the bearer of", "Bearer tokens.": prose (the common case, decided first)
        if _labelled_word(cred):
            continue  # "**bearer token**: P", "bearer token:P": the scheme names a label, whose value is read as one
        if "=" in cred and _PARAM_NAME_RE.match(text, start, end + 1) and _param_name(text, start):
            continue  # Bearer realm="x", error="invalid_token": a challenge's parameters
        span = _credential(text, m.start("w"), start, end, True)
        if span is not None:
            spans.append(span)


_SCHEME_CONCAT_RE: Final = re.compile(
    r"(?<![A-Za-z0-9_-])(?P<w>(?ai:bearer|basic))[ ]([\"'])[ \t]*\+[ \t]*([\"'])(?P<c>[^\"'\s\\]{8,1024})\3")
"""A scheme's string, then ``+`` and the credential's own string literal (``"Basic " + "P"``)."""


_LABEL_MARKUP: Final = "*_`'\"’”」』】]):=."
"""What may close a label's word: emphasis, quotes and brackets around it, then its colon or equals sign."""


def _labelled_word(cred: str) -> bool:
    """Whether the text after a scheme word is a label's word, not a token68 credential (RFC 7235: letters, digits
    and ``-._~+/``, then ``=``): a word closed by markup (``**bearer token**: P``), or a word then a colon or an equals
    sign and its value (``bearer token:P``), which the name's reader takes."""
    head, sep, rest = cred.partition(":")
    if not sep:
        head, sep, rest = cred.partition("=")
        if sep and not rest.strip("="):  # "Basic dXNlcg==": base64's padding
            return False
    core = head.rstrip(_LABEL_MARKUP)
    return core != "" and _word(core) and (sep != "" or core != head)


def _word(text: str) -> bool:
    """A word as prose writes it (``tokens``, ``Setup``, ``TODO``): letters only, lower or title case (capitals
    only when short), no longer than a word gets; a generated credential mixes cases or holds a digit or a
    symbol."""
    return (len(text) <= 24 and text.isalpha()
            and (text.islower() or text.istitle() or (text.isupper() and len(text) <= 6)))


def _prose_value(text: str, start: int, end: int) -> bool:
    """``password: it must be ...``, ``api_key: The API key to use.``, ``Set-Cookie: header.``: a word after the colon
    that a sentence goes on from (a space and another word) or ends (``.``), so the colon ends a phrase, not a name."""
    value = text[start:end]
    word = value.rstrip(".,;:!?")
    if not _word(word):
        return False
    return (word != value and text[end:end + 1] in (" ", "\n", "", '"', "'", ")")) or (
        text[end:end + 1] == " " and text[end + 1:end + 2].isalpha())


def find_shape_spans(text: str, low: str, spans: list[Span], gated: bool = True,
                     wraps: dict[Span, int] | None = None, userinfo: list[Span] | None = None) -> None:
    """Append the span of every value a name, a flag, a scheme or a client option marks as a credential.

    ``gated=False`` runs every finder without its pre-check (the tests' reference: the pre-checks are exact: each is
    a substring no text the finder finds anything in lacks). ``wraps`` receives the spans whose marker must be written
    between quotes (a bare scalar after a quoted key: ``{"pin": 483920}``), each with the position of the key's closing
    quote. ``userinfo`` receives the spans of the URLs' userinfo passwords, sorted (:func:`userinfo_end`).
    """
    if userinfo is None:
        userinfo = []
    if "//" in text and "@" in text:
        _userinfo(text, userinfo)
        userinfo.sort()
        spans.extend(userinfo)
    if not gated:
        _quoted_pairs(text, spans, wraps)
        for finder in (_auth_schemes, _colon_pairs, _assignments, _flags, _markup,
                       _call_pairs, _named_values, _tab_pairs, _param_defaults, _fallback_defaults, find_keyword_pairs,
                       find_client_passwords, find_login_tokens, find_sql_identified):
            finder(text, spans)
        find_positional_passwords(text, low, spans)
        find_printed_secrets(text, low, spans)
    else:
        _gated_shapes(text, low, spans, wraps)
    if userinfo:
        _end_at_userinfo(spans, userinfo)


def _end_at_userinfo(spans: list[Span], userinfo: list[Span]) -> None:
    """End at its ``@`` every value that starts inside a URL's userinfo password (``bob:w8pw:ygNq…@db``): the host,
    port and path after it are no part of it."""
    starts = [us for us, _ in userinfo]
    for i, (s, e) in enumerate(spans):
        end = userinfo_end(userinfo, starts, s, e)
        if end != e:
            spans[i] = (s, end)


def userinfo_end(userinfo: list[Span], starts: list[int], start: int, end: int) -> int:
    """Where a value found at ``start:end`` ends: at the end of the userinfo password it starts in (``userinfo``
    sorted, ``starts`` their starts), when it runs past it; else at ``end``."""
    k = bisect_right(starts, start) - 1
    return userinfo[k][1] if k >= 0 and start < userinfo[k][1] < end else end


def _gated_shapes(text: str, low: str, spans: list[Span], wraps: dict[Span, int] | None) -> None:
    """The finders of :func:`find_shape_spans` behind their pre-checks."""
    if "bearer" in low or "basic" in low:
        _auth_schemes(text, spans)
    if any(h in low for h in _ASCII_HINTS) or (not low.isascii() and any(h in low for h in _WIDE_HINTS)):
        quoted = '"' in text or "'" in text
        has_colon = ":" in text or "：" in text
        if quoted:
            _quoted_pairs(text, spans, wraps)
            if "(" in text:
                _call_pairs(text, spans)
        if has_colon:
            _colon_pairs(text, spans)
        if "=" in text or "＝" in text:
            _assignments(text, spans)
        if "${" in text:
            _param_defaults(text, spans)
        if "-" in text:
            _flags(text, spans)
        if "</" in text or "value=" in low or "content=" in low:
            _markup(text, spans)
        if "value" in low:
            _named_values(text, spans)
        if "\t" in text:
            _tab_pairs(text, spans)
        if quoted and ("||" in text or "??" in text or " or " in text):
            _fallback_defaults(text, spans)
        if quoted and "<-" in text:
            _arrow_assignments(text, spans)
        find_keyword_pairs(text, spans, low)
    if " login" in low and ("vault" in low or "cargo" in low):
        find_login_tokens(text, spans)
    if "identified" in low:
        find_sql_identified(text, spans)
    find_positional_passwords(text, low, spans)
    find_printed_secrets(text, low, spans)
    if "-" in text or "/" in text or "echo" in low or "printf" in low or "<<<" in text:
        hints = client_hints(low)
        if hints:
            find_client_passwords(text, spans, hints)


"""Credentials laid out as documents and code lay them out: labels, tables, sentences, setters (OBS-57..59).

:mod:`.scrub_shapes` reads a value after a name that touches its separator (``NAME=value``, ``NAME: value``). What
people and models write around a credential is often looser; this module reads those layouts and judges each value
with the same judgement (:func:`.scrub_shapes._judge`, names by :mod:`.scrub_names`), appending the span of the
value only:

* **labels** that start a line, decorated or worded (:func:`_labels`): Markdown emphasis and list bullets
  (``- **Password:** P``, ``**API key**: P``, ``§ **Staging DB password:** P``), a name in backticks
  (`` `password`: P``), a parenthesis or a qualifying phrase between the name and the colon (``Password (prod): P``,
  ``Password for the staging db: P``, ``Пароль от базы: P``, ``clé API : P``) and an arrow or a dash as the
  separator (``API key -> P``, ``password — P``, ``token => P``);
* **tables** (:func:`_pipe_tables`, :func:`_column_tables`): a cell holding a credential name and the cell after it
  (``| password | P |``, ``| `DB_PASSWORD` | `P` | prod |``, box tables ``│ API_KEY │ P │``), and column tables
  whose columns an underline of dashes or a ``Name  Value`` header marks (PowerShell's ``Name  Value`` / ``----
  -----``);
* **sentences without a separator** in languages that write none (:func:`_glued_sentences`): ``密码是P``, ``密码 P``,
  ``パスワードはP``, ``비밀번호는 P``; and English sentences that give a credential's value (:func:`_english_sentences`):
  ``the password is P``, ``the API key was: P``, ``the token has been rotated to P``, ``I set the admin password to
  P``, ``use the token P``, ``log in with password P``, ``the password for the staging db: P`` (the value must look
  generated: ``the password is incorrect`` stays);
* **code** (:func:`_setter_calls`, :func:`_typed_declarations`, :func:`_hcl_defaults`): a setter or builder call
  whose name holds a credential name and whose only argument is a string (``ds.setPassword("P")``,
  ``client.set_api_key('P')``, ``.password("P")``, ``withToken("P")``), a declaration with its type between the name
  and ``=`` (Go ``const token string = "P"``, Rust ``const API_KEY: &str = "P";``, TypeScript / Kotlin / Swift
  ``apiKey: string = "P"``) and a Terraform variable's default (``variable "db_password" { default = "P" }``).

Over 400 lines on purpose: each layout's reader sits beside the patterns it reads with, and all share one bounded
window and the value judgement; split, each would import the others' windows.

Every reader is driven by the places where a credential name's hint occurs (:data:`.scrub_names.NAME_HINTS`) or by a
pattern anchored at a word's start, reads a bounded window around it (a label of at most :data:`_LABEL_MAX`
characters, a line of a table of at most :data:`_ROW_MAX`), and reads each line once, so its work is linear in the
text.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from heapq import merge
from collections.abc import Iterable, Iterator
from itertools import pairwise
from typing import Final, NamedTuple

from .scrub_names import (FOREIGN_CODE_WORDS, FOREIGN_NOT_NAMES, FOREIGN_WORDS, NAME_HINTS, NOT_GLUED, STRONG,
                          camel_name, credential_name, dashed_passphrase, dashed_words, drawn_letters, drawn_token,
                          english_word, grouped_password, human_password, password_name, phrase_name, secret_looking,
                          spaced_passphrase, without_mark)
from .scrub_shapes import (_QUOTE_PAIRS, _VALUE_RE, _bare, _judge, _mark_goes_on, _prose_value, _value_span,
                           emphasis_opened, holds_user, markup_cut, unemphasized)

__all__ = ["find_layout_spans"]

Span = tuple[int, int]

_LABEL_MAX: Final = 80
"""The longest label read before a separator (a name and a few words qualifying it)."""
_ROW_MAX: Final = 2000
"""The longest table row read."""
_HINT_RE: Final = re.compile("|".join(re.escape(h) for h in sorted(NAME_HINTS, key=len, reverse=True)))
_ASCII_HINT_RE: Final = re.compile("|".join(re.escape(h) for h in sorted((h for h in NAME_HINTS if h.isascii()),
                                                                          key=len, reverse=True)))
"""The hints an ASCII text may hold (the foreign words' alternatives slow the search of every text)."""
_DECORATION: Final = (r"[ \t]*(?:(?:[-*+>§•#|│┃║・●◦◆◇■□▪▸▶►※★☆]|//|<!--|/\*|\d{1,3}[.)]|\[[ xX]\]"
                      r"|[\u2600-\u27bf\U0001f300-\U0001faff]\ufe0f?)[ \t]*){0,6}")
_LABEL_RE: Final = re.compile(
    _DECORATION + r"(?P<o>\*\*|__|[*_`])?(?P<label>(?:[^\n\r:：*`|│┃║→—–<>=\"'{}\[\];,]|(?<=[^\W\d_])['’](?=[^\W\d_]))"
    r"{1,80}?)(?P<c>\*\*|__|[*_`])?"
    r"(?P<tail>[ \t][^\n\r:：*`|│┃║→—–<>=\"'{}\[\];,]{0,60}?)?[ \t]*"
    r"(?P<sep>:(?!//|:[A-Za-z_])|：|->|→|=>|—|–|=(?!=)|(?<=[ \t])--?(?=[ \t]))"
    r"(?P<c2>\*\*|__|[*_])?[ \t]*")
"""A line's label: decoration (bullets, numbering, quote marks, ``§``), emphasis or backticks, the label (an
apostrophe inside a word too: ``jeton d'accès``), and its
separator (a colon, not a URL's ``://`` nor a scope's ``::`` (``GDBusAuthObserver::authorize``), an
arrow, a dash, one or two hyphens between blanks, ``=`` after a parenthesis:
``Password (prod) = P``); the value follows, on the line or alone on the next one (in a code fence too)."""
_SEPARATOR_CHARS: Final = re.compile(r"[:：=→—–>-]")
"""The characters a label's separator holds (:data:`_LABEL_RE`'s ``sep``)."""
_PAREN_TAIL: Final = re.compile(r"[ \t]+\([^()]{0,40}\)[ \t]*\Z")
_ADDRESS: Final = r"[\w.+-]{1,64}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"
_ADDRESS_RE: Final = re.compile(_ADDRESS)
_LABEL_WORD: Final = re.compile(r"[^\W_]+(?:[-'’/][^\W_]+)*|[A-Za-z0-9_$.-]+|" + _ADDRESS)
"""A word of a label of several words (``Staging``, ``API-Schlüssel``, ``DB``, the account's address in ``Password for
bob@example.com``): no code (``def get_token(self)``)."""
_QUALIFYING: Final = frozenset({"for", "of", "on", "to", "in", "at", "from", "used", "de", "du", "für", "от", "для",
                                "del", "para", "per", "van", "voor"})
"""Words that start a phrase qualifying the credential a label names (``Password for the staging db``)."""
_RUN_TRAILER: Final = "*_`.,;"
"""What may end a label's line after its value: closing emphasis and a full stop."""
_LINE_REST: Final = re.compile(r"[ \t]*[" + re.escape(_RUN_TRAILER) + r"]{0,3}[ \t]*\r?\Z")
"""What may follow a label's value on its line: closing emphasis and a full stop (``- **Password:** P.``)."""
_LABEL_RUN_RE: Final = re.compile(r"(?P<run>[!#-&(-\[\]-_a-~]+)[ \t]*\r?\Z")
"""A label's value as the one run of printable ASCII left on its line, without a quote, a backtick or a backslash
(which close or escape the string the line stands in: ``"...\\n密码：P"``)."""
_PIECE_SPLIT: Final = re.compile(r"[^A-Za-z0-9]+")
_SHORT_NUMBERED: Final = re.compile(r"(?:[a-z]{1,3}|[A-Z][a-z]{0,2}|[A-Z]{1,3}|IPv)[0-9]{1,3}")
"""A short word with a number (``v2``, ``db3``, ``Win10``, ``SHA256``, ``IPv6``), its letters in one case or
capitalised: not ``fHb3`` or ``SYi9``, whose case changes inside."""
_SHORT_NAMES: Final = frozenset({"db", "ns", "pg", "tx", "rx", "px", "vm", "ws", "js", "ts", "md", "sh", "ssh",
                                 "gpg", "pgp", "aws", "gcp", "dsn", "npm", "smtp", "sftp", "ftp", "llm", "jwt", "hf",
                                 "sk", "pk", "rk", "ghp", "nyc", "sfo", "lhr", "fra", "dc", "az", "rg", "tls", "ssl",
                                 "dns", "cdn", "k8s", "gke", "eks", "aks", "sql", "xml", "svc", "ctl", "cfg", "pkg",
                                 "lb", "kv", "kms", "hsm", "iam", "vpn", "gpt", "lts", "ml", "ci", "cd", "gh", "gl",
                                 "env", "api", "url", "uri", "id", "ip", "ipv", "os", "ui", "ux", "sdk", "cli",
                                 "gui", "cpu", "gpu", "ram", "ssd", "json", "yaml", "csv", "pdf", "png", "jpg",
                                 "html", "css", "http", "https", "eu", "us", "uk", "qa", "prod", "dev", "test",
                                 "stage", "main", "readme", "todo", "app", "web", "old", "new", "tmp", "usr", "etc",
                                 "var", "bin", "lib", "mb", "kb", "gb", "utf", "sha", "rsa", "aes", "hmac", "pkcs",
                                 "xl"})
"""Names a host, a region, a version or a path is written with, in capitals too (``db``, ``nyc``, ``AWS``, ``README``)
where an English word would not do."""
_CELL_BARS: Final = "|│┃║"
_CELL_TRIM: Final = " \t`*_"
_UNDERLINE_RE: Final = re.compile(r"^[ \t]*(?:-{2,}|={2,})(?:[ \t]+(?:-{2,}|={2,}))+[ \t]*\r?$", re.MULTILINE)
_HEADER_RE: Final = re.compile(r"^[ \t]*(?i:name|key|variable|setting|parameter)[ \t]{2,}(?i:value)[ \t]*\r?$",
                               re.MULTILINE)
_RUN_RE: Final = re.compile(r"\S+")
_RUN_MORE: Final = re.compile(r"[A-Za-z0-9]")
_SENTENCE_RUN_RE: Final = re.compile(r"[^\s\\]+")
"""A word of a sentence: to a blank or a backslash (the escape of a line break in JSON-encoded text)."""
class _WordSet(NamedTuple):
    """The words a pre-check seeks (lower case), those of ASCII apart: a text of ASCII cannot hold the others."""

    ascii: tuple[str, ...]
    wide: tuple[str, ...]


def _word_set(*words: str) -> _WordSet:
    return _WordSet(tuple(w for w in words if w.isascii()), tuple(w for w in words if not w.isascii()))


_OPENERS: Final = "".join(_QUOTE_PAIRS)
"""Typographic and CJK openers a value may stand in (``“P”``, ``「P」``)."""
_CJK_WORDS: Final = tuple(w for w in FOREIGN_WORDS if all("\u3040" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af"
                                                          or "\u0e00" <= c <= "\u0e7f" or c == " " for c in w))
_CJK_KEY: Final = (r"(?:(?<![A-Za-z0-9])(?i:api|access|secret|private|app|client|license|licence|ssh|deploy|master|"
                   r"admin)[ \t\u3000]?|アクセス|シークレット|秘密|プライベート|暗号化?|ライセンス|マスター|"
                   r"(?:액세스|비밀|시크릿|개인|암호화)[ \t\u3000]?)(?:キー|키)")
"""The word for *key* after a qualifier, in a language that writes no space (``APIキー``, ``アクセスキー``, ``API 키``)."""
_CJK_COPULA: Final = (r"(?:改成|改为|改為|设为|設為|设置为|設置為|设成|設成|换成|換成|更改为|更改為|变更为|變更為)了?|是|为|為|"
                      r"は、?|が|を|는|은|이|가|를|을|(?:ของ(?:ฉัน|ผม|คุณ|เรา)[ \t]*)?คือ")
_CJK_IS: Final = (r"(?:[ \t\u3000]*(?:（[^（）\n]{1,20}）|\([^()\n]{1,20}\)))?[ \t\u3000]*(?:" + _CJK_COPULA
                  + r"|：|:|=|＝|】|——|—|－|→|->|=>|…+)[ \t\u3000]*")
"""``is``, ``set to``, ``changed to`` and the particles that put a value after its name (``是``, ``改成了``, ``は``,
``を``, ``는``, ``를``), a colon, a dash, an arrow or a closing ``】`` (``【密码】P``), after a note in parentheses
(``APIキー（本番）は``)."""
_CJK_VALUE_START: Final = r"(?=[\"'`!-~" + _OPENERS + "])"
_CJK_NAME: Final = "|".join(re.escape(w) + "".join("(?!" + re.escape(n[len(w):]) + ")" for n in FOREIGN_NOT_NAMES
                                                   if n.startswith(w)) for w in _CJK_WORDS) + "|" + _CJK_KEY
"""A credential word of a language that writes no space, or the word for *key* after its qualifier."""
_BLANK: Final = r"[ \t\u3000]"
"""A blank of such a sentence (an ideographic space too)."""
_GLUED_RE: Final = re.compile(
    "(?P<n>" + _CJK_NAME + r")(?:(?:\*\*|__)?" + _CJK_IS
    + r"|[ \t\u3000]+|(?=[" + _OPENERS + r"A-Za-z0-9]))" + _CJK_VALUE_START)
"""A credential word of a language that writes no space and ``is`` (``密码是``, ``パスワードは``, ``비밀번호는``,
``APIキーは``, ``把密码改成``), a colon, a blank or nothing (``账号admin，密码P``), before an ASCII value."""
_CJK_VALUE_FIRST_RE: Final = re.compile(
    r"(?:用|使用|以|把|将|將)" + _BLANK + r"*(?P<v>[!-~]{6,256}?)" + _BLANK + r"*(?:作为|作為|当作|當作|当做|做为)"
    + _BLANK + r"*(?:新的?|我的|你的|的)?" + _BLANK + r"*(?:[A-Za-z]{2,12}" + _BLANK + r"?)?(?:" + _CJK_NAME
    + r")|(?<![!-~])(?P<j>[!-~]{6,256}?)" + _BLANK + r"*を" + _BLANK + r"*(?:新しい)?(?:" + _CJK_NAME
    + r")(?:として|に)")
"""The value first: ``用 P 作为密码``, ``P をパスワードとして``, ``P を新しいパスワードに``."""
_CJK_VALUE_INTO_RE: Final = re.compile(
    r"(?:(?:把|将|將)" + _BLANK + r"*[「『“‘]?(?P<v>[!-~]{6,256}?)[」』”’]?" + _BLANK + r"*(?:填到|填入|填进|填進|填写到|填寫到|写到|写入|寫到|寫入|"
    r"写进|寫進|放到|放入|放进|放進|加到|添加到|粘贴到|粘貼到|贴到|貼到|复制到|複製到|配置到|保存到|存到|存入|设为|設為|设置为|設置為|"
    r"设成|設成|作为|作為|配置为|配置成)(?P<rest>[^\n。；;！!？?]{0,80})"
    r"|(?<![!-~])(?P<jv>[!-~]{6,256}?)" + _BLANK + r"*を(?P<jrest>[^\n。]{1,80})(?:に|へ)" + _BLANK
    + r"*(?:設定|入れ|入力|書き|書く|貼り|貼る|保存|追加|記入|登録|セット)"
    r"|(?<![!-~])(?P<kv>[!-~]{6,256}?)" + _BLANK + r"*(?:를|을)(?P<krest>(?:[^\n.]|\.(?=\S)){1,80})(?:에|으로|로)" + _BLANK
    + r"*(?:넣|설정|입력|저장|추가|붙여|등록))")
"""The value first, then where it goes, naming the setting after it: ``把 P 填到 config.yaml 的 api_key 字段``, ``将 P
填入 .env 的 OPENAI_API_KEY``, ``把 P 设为 API 密钥``, ``P を .env の OPENAI_API_KEY に設定``, ``P를 .env의 API_KEY에
넣으세요`` (a credential's name in the rest of the sentence)."""
_CJK_REST_NAME_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{1,63}|(?:" + _CJK_NAME + ")")
"""A setting's name, or a credential word, in the rest of such a sentence."""
_CJK_COPULA_CHAR_RE: Final = re.compile("[改设設换換更变變是为為はがを는은이가를을に]")
"""The first characters of :data:`_CJK_COPULA` and ``に``."""
_CJK_FIRST: Final = frozenset(w[0] for w in _CJK_WORDS) | {"キ", "키"}
"""A text holding none of these characters holds no word :data:`_GLUED_RE` reads."""
_CJK_PAREN_RE: Final = re.compile("(?:" + _CJK_NAME + r")[ \t\u3000]*(?:[:：][ \t\u3000]*)?"
                                   r"(?:\((?=[!-~]{6,256}\))|（(?=[!-~]{6,256}）))")
"""A credential word, then a value in parentheses, half or full width (``密码（P）``, ``パスワード (P)``, ``密码：（P）``):
a value only when it looks generated (a note, ``密码（prod）``, stays)."""
_ASCII_NAME_GLUED_RE: Final = re.compile(
    r"(?<![A-Za-z0-9_.-])(?P<n>(?i:(?:api|access|secret|private|client|app)[ \t_-]?key)|[A-Za-z_][A-Za-z0-9_.-]{2,63})"
    r"(?:码|碼)?"
    + r"[ \t]*(?:" + _CJK_COPULA + r"|に)[ \t]*" + _CJK_VALUE_START)
"""An English credential name or a setting's name in a sentence of a language that writes no space, with that
language's ``is`` or ``to`` (``API Key是P``, ``token是P``, ``API key は P``, ``OPENAI_API_KEY に P を設定``): a colon
after it is a label's (read by :func:`_labels`)."""
_SENTENCE_NAME: Final = (
    r"(?:pass(?:word|phrase|code)?|passwd|pwd|pw|pat|(?:(?:api|secret|access|private|license|licence|signing|"
    r"encryption|master|auth|app|client|consumer|deploy|service|unseal|recovery|root|admin|webhook|ssh|gpg|pgp|backup|product|"
    r"activation|pre-?shared|shared|wpa2?|wi-?fi|network|vpn)[ \t_-]?key)|"
    r"(?:(?:access|auth|api|bearer|bot|refresh|session|personal[ \t]access)[ \t_-]?)?token|"
    r"(?:(?:client|api|app|shared|webhook)[ \t_-]?)?secret)")
"""A credential named in an English sentence (``pass``, ``pw`` and ``pwd`` alone too: ``my pass is P``; the value must
look generated)."""
_COPULA: Final = (r"(?:(?:is|was|will[ \t]+be|has[ \t]+been|should[ \t]+be)(?:[ \t]+(?:now|still|(?:set|changed|reset|"
                  r"updated|rotated)[ \t]+to|equal[ \t]+to|(?:stored|saved|kept|recorded)[ \t]+as))?"
                  r"|(?:set|changed|reset|updated|rotated)[ \t]+to|equals|became|becomes)")
_SENTENCE_NAME_RE: Final = re.compile(r"(?<![\w-])" + _SENTENCE_NAME + r"(?!\w)")
"""Where a sentence names a credential, read in the lower-cased text near a hint: each reader of what follows the name
(the ``_TAIL_RE`` patterns below) is matched there, so the names are sought once."""
_COPULA_TAIL_RE: Final = re.compile(
    r"(?:(?:['’](?i:s))?[ \t]+(?i:value|contents?)(?=[ \t]+(?i:is|was|will|has|should|equals)[ \t]))?"
    r"(?:[ \t]+(?i:for|of|on|at|in|de|del|du|do|da|di|della|van|von|für|zum|zur|od)"
    r"(?:[ \t]+(?:[\w.@/-]{1,40}|\"[^\"\n]{1,40}\"|'[^'\n]{1,40}'|“[^”\n]{1,40}”)){1,5}?)?"
    r"(?:(?:[ \t]+(?i:that|which))?[ \t]+(?:I|[Ww]e|[Yy]ou|[Tt]hey|[Hh]e|[Ss]he)(?:['’](?:ve|d|ll))?"
    r"(?:[ \t]+[a-z]{2,12}){1,3}"
    r"(?:[ \t]+(?i:for|on|in|at|to|with)(?:[ \t]+[\w.@/-]{1,40}){1,3})?)?"
    r"(?:[ \t]+\([^()\n]{1,60}\))?(?:[ \t]+(?i:" + _COPULA + r"|es|est|é|è|ist|lautet|sind|jest|är|era|será|était|"
    r"war)|['’](?i:s)|,[ \t]*(?i:which|that)[ \t]+(?i:is|was))[ \t]*:?[ \t]+(?=[\"'`!-~" + _OPENERS + "])")
"""An English sentence giving a credential's value after its name: ``the password is P``, ``API key was: P``, ``the
token has been set to P``, ``password changed to P``, with a phrase naming what it is for (``The API token for Jira
is P``), a clause saying whose it is (``The passphrase I chose is P``, ``the token you need for CI is P``), a note
in parentheses (``The API token (expires 2027) is P``), its value named (``the key's value is P``), the copula
contracted (``my password's P``) or in a clause (``the token, which is P, goes in the vault``)."""
_CLAUSE_END_RE: Final = re.compile(r"[ \t]*(?:[.,;:!?)]|\r?$)", re.M)
"""Where a clause ends right after a credential's name (``use P as the access token.``)."""
_SENTENCE_IS_RE: Final = re.compile(
    r"(?<![^\s(\"'“‘>])(?P<v>[^\s\"'“”‘’(<][^\s\"'“”‘’]{5,255})[ \t]+(?i:is|was|will[ \t]+be)[ \t]+"
    r"(?i:the|my|your|our|their|its|his|her|a|an)[ \t]+"
    r"(?:(?i:new|current|old|actual|real|default|temporary|temp|initial)[ \t]+)?(?:[\w-]{1,20}[ \t]+){0,2}"
    r"(?i:" + _SENTENCE_NAME + r")(?![\w-])")
"""The value first, then the credential it is: ``P is my password``, ``P is the new API key``; a query's value too
(``?q=P is my password``, a search decoded)."""
_PAREN_TAIL_RE: Final = re.compile(
    r"(?:[ \t]+(?:I|I['’]ve|I['’]d|you|you['’]ve|we|they|he|she|that|which|given|sent|shared|used|from)"
    r"(?:[ \t]+[a-z]{1,12}){0,4}(?![\w'’-]))?[ \t]*"
    r"(?:\((?=[^()\s]{6,256}\))|（(?=[^（）\s]{6,256}）)|\[(?=[^\[\]\s]{6,256}\](?!\()))")
"""A value in parentheses (full-width too) or square brackets after the credential's name, or after the clause that
says which it is: ``he told me the password (P) over the phone``, ``the password I gave you earlier (P) is wrong``,
``the API key [P]`` (not ``password manager (…)``, nor a Markdown link ``token [docs](…)``)."""
_FROM_TAIL_RE: Final = re.compile(
    r"[ \t]+(?:(?i:was|has[ \t]+been|is|got)[ \t]+)?(?i:changed|rotated|updated|reset|switched|moved)[ \t]+(?i:from)"
    r"[ \t]+(?P<v>\S{1,256}?)[ \t]+(?i:to)[ \t]+(?=[\"'`!-~" + _OPENERS + "])")
"""Both values of a change: ``password was changed from P to Q``."""
_BARE_NAMES: Final = frozenset({"password", "passwd", "passphrase", "token", "pwd", "pw", "secret"})
"""The last words of a name whose value may follow with only blanks between (``signing secret P``)."""
_BARE_TAIL_RE: Final = re.compile(r" +(?=(?:\*\*)?[A-Za-z0-9]|/[A-Za-z0-9+]{16}|\+[A-Za-z0-9+/]{16})")
"""``password P``: the name and its value with only blanks between (the value must look generated; a base64 value may
start with ``/`` or ``+``, a path's ``/usr/…`` not: sixteen characters before the next ``/``); a setting's
dotted name and a tab (``db.password<TAB>P``) are the pairs :mod:`.scrub_shapes` reads."""
_BARE_FOR_TAIL_RE: Final = re.compile(r"[ \t]+(?i:for|on|at|of)(?=[ \t])")
"""``password for gmail P``: what it is for between the name and its value (:func:`_value_after_phrase`)."""
_PHRASE_WORD_RE: Final = re.compile(r"[ \t]+(\S{1,256})")
_PHRASE_WORDS: Final = 3
"""The most words a phrase saying what a password is for holds before a bare value (``für den Server``)."""
_CLAUSE_START_RE: Final = re.compile(r"(?:^|[:(\-–—*•>#;]|//)[ \t]*\Z", re.M)
"""Where ``pass`` then a value starts a clause (``Remember: pass P``, ``Note to self - pass P``, a comment's ``# pass
P``): the verb (``pass the test``) takes no random value there; the value must look random."""
_USER_BEFORE_RE: Final = re.compile(r"(?<![\w-])(?i:user|username|login)[ \t]+[^\s,;/]{1,64}(?:,|[ \t]+/)?[ \t]+\Z")
"""``user bob pass P``, ``user bob / pass P``: ``pass`` after a user named before it."""
_NAME_WORD_SPLIT: Final = re.compile(r"[ \t_-]")
_BRACKET_LABEL_RE: Final = re.compile(r"\[(?P<n>[A-Za-z][\w .-]{0,38})\][ \t]+(?=[!-~])")
_BRACKET_LEAD_RE: Final = re.compile(r"(?:^|(?<=[\"']))" + _DECORATION + r"\Z", re.M)
"""A line's (or a string's) label in square brackets, after a bullet or a quote block's mark too (``> [API token]
P``); its value must look generated (``[token] see vault`` stays)."""
_PIN_RE: Final = re.compile(r"PIN(?![\w-])(?<![\w-]PIN)")
"""A PIN named in a sentence, in capitals (``pin`` is also a connector's: ``the pin is D13``): its value may be digits
(``My PIN is 4821``, ``PIN 004821``)."""
_PIN_TO_RE: Final = re.compile(r"[ \t]+(?i:to)[ \t]+(?=[0-9A-Za-z\"'`])")
_PIN_VERB_RE: Final = re.compile(
    r"(?<![\w-])(?i:set|changed|reset|updated|change)[ \t]+(?i:the|my|your|its|our|their|his|her)[ \t]+"
    r"(?:(?i:new|card|sim|phone|bank)[ \t]+)?\Z")
_PIN_AS_RE: Final = re.compile(
    r"(?<![\w-])(?i:use|using|set|try|enter|pick|chose|choose|picked)[ \t]+(?P<v>\S{4,64})[ \t]+(?i:as)[ \t]+"
    r"(?:(?i:the|my|your|a|our|its|their|new)[ \t]+){0,2}\Z")
"""``I changed my PIN to 4821``, ``use 4821 as the new PIN``: the verb before the PIN, read back from it."""
_PIN_END_RE: Final = re.compile(
    r"(?:[ \t]+(?i:for|on|of|to|and|at|in|from|now|please)(?![\w-])|[ \t]*(?:[^\w\s-]|\Z|\n))")
"""What may follow the PIN a value is used as (``as the PIN.``, ``as the PIN for the card``; not ``as the PIN
year``)."""
_NAME_BEFORE_HINT: Final = 24
_NAME_AFTER_HINT: Final = 16
"""How far a sentence's credential name reaches before and after the hint it holds (``personal access token``)."""
_FOREIGN_NAMES: Final = (
    r"passwort|kennwort|contraseña|contrasena|contrasenya|clave|senha|mot[ \t]de[ \t]passe|wachtwoord|hasło|haslo|"
    r"lösenord(?:et)?|losenord(?:et)?|passord(?:et)?|adgangskode(?:n)?|salasana|salasõna|parool|parola(?:sı|m)?|"
    r"parole|пароль|парола(?:та)?|лозинка(?:та)?|lozinka|geslo|heslo|jelszó|jelszo|jelszava(?:m|d)?|"
    r"şifre(?:si|m|n|niz)?|sifre(?:si|m|n|niz)?|slaptažodis|slaptazodis|lykilorð(?:ið)?|lykilord(?:id)?|nenosiri|"
    r"mật[ \t]khẩu|mat[ \t]khau|κωδικός(?:[ \t]πρόσβασης)?|συνθηματικό|kata[ \t](?:sandi(?:nya)?|laluan)|"
    r"و?كلمة[ \t](?:ال)?(?:مرور|سر)|رمز[ \t]عبور|ו?ה?סיסמ[הא]|токен|zugangsdaten|schlüssel|"
    r"(?:clé|clave|chiave|chave)[ \t](?:(?:de|da|do|del|della)[ \t](?:la[ \t])?)?api|token api|jeton|"
    r"(?:api[ \t])?(?:sleutel|klucz|anahtar[ıi]?|nyckel(?:n)?|avain|khóa|kunci|klíč|nøgle(?:n)?|nøkkel(?:en)?|kulcs|"
    r"cheie(?:a)?)(?:[ \t]api)?|secret[ \t]client|clé[ \t]secrète")
"""The word for password (and a few for key or token) in other languages, as a sentence giving its value names it:
German, Spanish, Catalan, Portuguese, French, Dutch, Polish, the Nordic languages, Finnish, Estonian, Italian,
Romanian, Turkish, Russian, Ukrainian, Bulgarian, Serbian, Croatian, Slovenian, Czech, Slovak, Hungarian,
Lithuanian, Latvian, Icelandic, Swahili, Vietnamese, Greek, Indonesian, Malay, Arabic, Persian, Hebrew (with the
article or ``and`` glued on: ``הסיסמה``, ``وكلمة``)."""
_FOREIGN_FOR: Final = (r"de|del|de[ \t]la|des|du|do|da|di|della|dello|van|von|für|fur|zum|zur|od|dla|от|для|від|до|"
                       r"на|за|of|for|k|ke|pro|pre|na|za|pentru|của|cho|untuk|dari|για|του|της|של")
"""A word saying what the password is for or whose it is (``de``, ``für``, ``do``, ``від``, ``za``, ``của``)."""
_FOREIGN_OWNERS: Final = (r"μου|σου|мой|моя|мій|моја|moje|mé|tôi|của[ \t]tôi|của[ \t]bạn|saya|שלי|שלך|الخاصة[ \t]بي|"
                          r"من|شما")
"""``my`` or ``your`` after the name (``ο κωδικός μου``, ``mật khẩu của tôi``, ``הסיסמה שלי``, ``رمز عبور من``)."""
_FOREIGN_COPULAS: Final = (r"lautet|ist|war|es|será|é|era|est|était|is|jest|to|är|er|on|è|sind|je|је|е|este|e|és|"
                           r"yra|ir|là|είναι|adalah|ialah|yaitu|yakni|iaitu|это|є|является|هي|هو|היא|הוא|ni|ay|"
                           r"—|–|-")
"""The verbs (or the dash) by which a sentence states the value: ``lautet``, ``es``, ``je``, ``este``, ``là``,
``είναι``, ``adalah``, ``это``, ``هي``, ``היא``, ``ni``."""
_FOREIGN_OWN_COPULAS: Final = r"là|είναι|adalah|ialah|yaitu|yakni|iaitu|lautet|هي|היא"
"""The verbs no other word of a sentence is read as: a name's plain qualifiers may stand before them (``mật khẩu wifi
mới là P``, ``kata sandi wifi kantor adalah P``), where a language puts them after the noun without a preposition.
Vietnamese written without its marks (``mat khau wifi la P``) has its ``la`` after its own name only: in French,
Spanish and Italian ``la`` is an article."""
_FOREIGN_SENTENCE_RE: Final = re.compile(
    r"(?<![\w-])(?:[A-Za-z0-9]{2,12}-)?(?i:" + _FOREIGN_NAMES + r")"
    r"(?:(?:[ \t]+(?i:" + _FOREIGN_FOR + r")(?:[ \t]+[\w.@/-]{1,40}){1,3}?)?(?:[ \t]+(?i:" + _FOREIGN_OWNERS + r"))?"
    r"(?:[ \t]+(?!(?i:" + _FOREIGN_COPULAS + r")[ \t])[\w.@-]{2,20})?"
    r"(?:[ \t]+(?i:" + _FOREIGN_COPULAS + r")[ \t]*:?|[ \t]*[:：])"
    r"|(?:[ \t]+[\w.@/-]{1,20}){1,3}?[ \t]+(?i:" + _FOREIGN_OWN_COPULAS + r")[ \t]*:?"
    r"|(?<=[Kk][Hh][Aa][Uu])(?:[ \t]+[\w.@/-]{1,20}){0,3}?[ \t]+(?i:la)[ \t]*:?)"
    r"[ \t]+(?=[\"'`!-~" + _OPENERS + "])")
"""A sentence in another language giving a password's value: ``Das Passwort lautet P``, ``la contraseña es P``, ``a
senha é P``, ``le mot de passe est P``, ``het wachtwoord is P``, ``hasło jest P``, ``пароль — P``, ``Heslo je P``,
``Parola este P``, ``Mật khẩu là P``, ``Ο κωδικός είναι P``, ``Kata sandi adalah P``, ``كلمة المرور هي P``,
``הסיסמה היא P``, the word for key beside API (``de API-sleutel is P``, ``klucz API: P``, ``API anahtarı: P``),
with what it is for (``la contraseña de la base de datos es P``, ``Hasło do bazy to P``, ``Lozinka
za Wi-Fi je P``, ``La password di wifi è P``) or whose (``ο κωδικός μου είναι P``), a qualifier after the name
(``a senha AWS é P``, ``le mot de passe wifi est P``), in a compound (``Das WLAN-Passwort lautet P``, ``Der
API-Schlüssel ist P``), the key or token of an API (``la clé API est P``, ``il token API è P``), a Nordic name's
definite form (``Lösenordet är P``), or a colon after a blank (``mot de passe : P``)."""
_FOREIGN_WORDS: Final = _word_set(
    "passwort", "kennwort", "contrase", "clave", "senha", "mot", "wachtwoord", "hasło", "haslo", "senord", "passord",
    "adgangskode", "salas", "parool", "parol", "пароль", "парола", "лозинка", "lozinka", "geslo", "heslo", "jelsz",
    "şifre", "sifre", "slapta", "lykilor", "nenosiri", "khẩu", "khau", "κωδικός", "συνθηματικό", "kata", "كلمة",
    "عبور", "סיסמ", "токен", "zugangsdaten", "schlüssel", "clé", "chiave", "chave", "token api", "jeton", "sleutel",
    "klucz", "anahtar", "nyckel", "avain", "khóa", "kunci", "klíč", "nøgle", "nøkkel", "kulcs", "cheie",
    "secret client")
"""What each name :data:`_FOREIGN_SENTENCE_RE` reads holds, lower-cased: a text without one of them holds no such
sentence (a pre-check: the alternation of names ignoring case is slow to search for)."""
_SENTENCE_VERB_RE: Final = re.compile(
    r"(?<![\w-])(?i:set|setting|change|changed|changing|reset|resetting|update|updated|updating|rotate|rotated"
    r"|rotating)[ \t]+(?:(?i:the|your|my|its|their|our|his|her)[ \t]+)?"
    r"(?P<n>(?:[\w-]{1,20}[ \t]+){0,3}(?i:" + _SENTENCE_NAME + r"|key))[ \t]+(?i:to)[ \t]+"
    r"(?=[\"'`!-~" + _OPENERS + "])")
"""``set the (admin) password to P``, ``I changed the new admin password to P``, ``I changed my API key to P``,
``Change your password to P``, ``rotated the key to P`` (after a weak ``key``, a value that looks random), and as
a command or a log line writes it, with no article (``set password to P``, ``updating API key to P``)."""
_SENTENCE_USE_RE: Final = re.compile(
    r"(?<![\w-])(?i:use|using|with|and|enter|type|try)[ \t]+(?:(?i:the|your|my|our|their|this|that|a|an)[ \t]+"
    r"(?:[\w-]{1,20}[ \t]+){0,3}|(?:[\w-]{1,20}[ \t]+)?)(?i:" + _SENTENCE_NAME + r")[ \t]+"
    r"(?=[\"'`!-~" + _OPENERS + "])")
"""``use the token P``, ``log in with password P``, ``user admin and password P``, ``enter the admin password P``,
``use our new staging API key P`` (more words after an owner only: ``and CLI-style surfaces pass x=True`` is no
sentence giving a password)."""
_SENTENCE_AS_RE: Final = re.compile(
    r"(?<![\w-])(?i:(?:re)?(?:use[sd]?|using)|set|sets|try|enter|type|pick|choose|with|stored?|saved?|added|add|kept|"
    r"keep|recorded|record|put|gave|give|giving|sent|send|got|received|generated|created|chose|picked|has|had)"
    r"(?:[ \t]+(?i:me|you|us|him|her|them))?[ \t]+(?P<v>\S{6,256})[ \t]+(?i:as)[ \t]+"
    r"(?:(?i:the|your|my|a|an|our|its|their|his|her|new)[ \t]+){0,2}(?:[\w-]{1,20}[ \t]+)?(?i:" + _SENTENCE_NAME
    + r")(?![\w-])")
"""The value before the credential it is used as: ``Use P as the password.``, ``set P as your new API key``, ``I stored
P as your GitHub token``, ``he gave me P as the password``, ``Bob reuses P as his password``."""
_PUT_BEFORE_RE: Final = re.compile(
    r"(?<![\w-])(?i:added|add|adding|set|setting|put|putting|copied|copy|copying|pasted|paste|pasting|saved|save|"
    r"saving|stored|store|wrote|write|placed|place|entered|inserted|insert|dropped)(?:\*\*|__|[*_])?[ \t]+"
    r"(?:(?i:the|my|your|our|this|that|a|an|new|old)[ \t]+){0,2}(?P<q>[\w-]{1,20}[ \t]+)?\Z")
_INTO_TAIL_RE: Final = re.compile(r"(?:[ \t]*:)?[ \t]+(?P<v>\S{6,256})[ \t]+(?i:to|in|into|inside|under)[ \t]+(?=\S)")
"""A verb that puts the credential somewhere before its name (sought back from the name), then after it the value and
where it went: ``Added the key P to ~/.hermes/.env``, ``pasted the API key P into config.yaml`` (after a weak ``key``,
a value that looks random)."""
_KEY_CONTEXT_RE: Final = re.compile(
    r"(?<![\w-])(?:wi-?fi|wlan|ssid|wpa2?|wpa3|router|hotspot|network|rotate[ds]?|rotating|rotation|new|old|revoked?|"
    r"replaced?|leaked|compromised|your|here(?:['’]s|[ \t]+is))(?![\w-])")
"""Words that make a weak ``key`` on their line a credential's (lower-cased): a network's, a rotated one, one handed
over (``Remember the Wi-Fi: SSID "HomeNet", key P``, ``rotate key (new: P)``, ``Here is your key - P``)."""
_ONE_TAIL_RE: Final = re.compile(
    r"[,;]?[ \t]+(?i:the[ \t]+)?(?i:new|old|current|next)[ \t]+one[ \t]+(?i:is|was)[ \t]*:?[ \t]+")
"""``rotate key, new one is P``: the key named again as *one*."""
_KEY_OWNERS: Final = frozenset({
    "staging", "stage", "prod", "production", "dev", "development", "test", "testing", "live", "sandbox", "personal",
    "my", "our", "their", "team", "project", "org", "account", "with", "using"})
"""The word right before a weak ``key`` that makes it a credential's, as its context does: the environment or the
owner it is for, or what is done with it (``the staging key P``, ``my key P``, ``signed with key P``)."""
_KEY_TAIL_RE: Final = re.compile(r"(?:[ \t]*\((?i:new|old|current|next|now|was)[ \t]*[:=][ \t]*"
                                 r"|(?:[ \t]*(?::|->|→|=>|=|—|–|--|-))?[ \t]+)(?=[\"'`!-~" + _OPENERS + "])")
"""What follows a weak ``key`` given its value in a credential's context: a blank, a colon, an arrow or a note
(``(new: P)``)."""
_KEY_CHORD_RE: Final = re.compile(
    r"(?:(?i:ctrl|control|shift|alt|option|opt|cmd|command|meta|super|win|fn)[+-])+[A-Za-z0-9]{1,9}\Z")
"""A keyboard's key chord (``shift+F10``, ``Ctrl+Alt+Del``): the key a sentence names is a key of a keyboard; a long
drawn run after a modifier's name is a value (``Cmd-zDD6CfMuhpLMqifMaQGEnlaD``)."""
_KEY_NOTE_RE: Final = re.compile(r"(?<![\w-])(?i:new|old|current|next|now|was)[ \t]*[:=][ \t]*")
"""Each value of a note after a weak ``key`` (``(old: P, new: Q)``)."""
_POINTING: Final = r"(?i:it'?s|it’s|this[ \t]+is|that'?s|that’s|which[ \t]+is|which[ \t]+was|aka|i\.e\.,?|=)[ \t]+"
_NAMED_TAIL_RE: Final = re.compile(r"[ \t]*(?P<p>" + _POINTING + r")?(?:(?i:the|my|our|your|their|its|a)[ \t]+)?"
                                   r"(?:[\w.-]{1,20}[ \t]+){0,3}")
"""What stands between a separator after a value and the value's name: ``(it's the prod DB password)``, ``— the DB
password``, ``, which is the admin password``."""
_REPLACE_BEFORE_RE: Final = re.compile(
    r"(?<![\w-])(?i:replace|replacing|swap|swapping|rotate|revoke|remove|move|hardcoded|hard-coded)[ \t]+"
    r"(?:(?i:out|the|this|that|hardcoded|hard-coded|old)[ \t]+){0,2}(?P<r>\S{6,127})"
    r"[ \t]+(?i:with|by|for|into|to|from|in)[ \t]+(?:[^\n.;!?()\"=]|\.(?=\S)){0,60}?[ \t]*\Z")
"""``replace P with an env var`` before a separator that goes on to name the value (sought back from it)."""
_NAMED_SEPARATORS: Final = ("(", ",", "—", "–", " - ")
_NAMED_SEP_REACH: Final = 80
"""How far a value's separator stands before its name (a pointing phrase, an article and three words)."""
_NAMED_AFTER_REACH: Final = 240
_VALUE_STOPS: Final = frozenset("\"'“”‘’()=[],<")
_LABEL_TAIL_RE: Final = re.compile(
    r"(?:[ \t]+(?i:for|of|on|to|in|at|from)[ \t]+[^\n\r:：=.\\]{1,48}?|[ \t]*\([^()\n\r]{1,160}\))[ \t]*[:：][ \t]+"
    r"(?=[\"'`!-~" + _OPENERS + "])")
"""``the password for the staging db: P`` in the middle of a line (a label that starts one is :func:`_labels`'), and
a name with a note in parentheses (``your new API key (copy it now, it won't be shown again): P``)."""
_ONE_STRING_RE: Final = re.compile(r"\([ \t]*(?P<q>[\"'])(?P<v>[^\"'\\\s]{1,512})(?P=q)[ \t]*\)")
_CALLEE_RE: Final = re.compile(r"(?:(?P<dot>\.)[ \t]*)?(?<![\w$])(?P<f>[A-Za-z_][A-Za-z0-9_]{0,63})[ \t]*\Z")
"""A call with one string argument (``setPassword("P")``, ``.password("P")``): the argument, then the callee's name
written right before it (after a dot: a builder's method)."""
_SETTER_VERBS: Final = ("set", "with", "use", "put", "update", "store", "save", "configure", "add")
_CALLEE_WORDS: Final = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_HELD_WORDS: Final = frozenset({"password", "passwd", "pwd", "pass", "passphrase", "token", "secret", "key", "apikey",
                                "credential", "credentials", "creds"})
"""The last word of a builder's method that sets a credential (``.password``, ``.apiKey``, ``.clientSecret``)."""
_NOT_SETTER_VERBS: Final = frozenset({"get", "fetch", "load", "read", "find", "has", "is", "check", "validate",
                                      "verify", "require", "parse", "refresh", "revoke", "delete", "remove", "generate",
                                      "create", "make", "new", "to", "from", "hash", "encode", "decode", "encrypt",
                                      "decrypt", "lookup", "resolve", "ensure", "clear", "reset", "rotate", "list"})
_TYPE_ASSIGNED: Final = (r"(?:&(?:'static[ \t]+)?str|\[\]byte|(?i:string)|str|SecretStr|SecretString|Option<String>"
                         r"|String\?|string\?)[ \t]*:?=(?!=)")
_TYPED_RE: Final = re.compile(
    r"(?<![\w$.])(?P<n>[A-Za-z_][A-Za-z0-9_]{0,127})(?:[ \t]*:[ \t]*|[ \t]+)" + _TYPE_ASSIGNED + r"\Z")
"""A declaration with its type after the name (``token string =``, ``API_KEY: &str =``, ``apiKey: String =``), read
backwards from its type and ``=`` (:data:`_TYPE_ASSIGNED_RE`, which a literal leads)."""
_TYPE_ASSIGNED_RE: Final = re.compile(_TYPE_ASSIGNED)
_CODE_VALUE: Final = r"[A-Za-z0-9][A-Za-z0-9-]{3,63}"
_CODE_NAME_RE: Final = re.compile(
    r"(?:(?<![\w-])(?i:(?:recovery|backup|one[- ]?time|2fa|mfa|otp|totp|scratch|emergency|verification|security|"
    r"login|sign[- ]?in|authentication|confirmation)[ \t]+codes?)(?:[ \t]+\([^()\n]{1,40}\))?(?:\*\*|__)?"
    r"(?:[ \t]*(?:[:：=]|->|→)|[ \t]+(?:[-–—]|(?i:is|are|was|were)(?:[ \t]*:)?))|(?:"
    + "|".join(re.escape(w) for w in FOREIGN_CODE_WORDS) + r")(?:\*\*|__)?" + _BLANK
    + r"*(?:[:：]|是|为|為|は、?|는|은|이|가))(?:\*\*|__)?")
"""The name of one or several one-time, recovery or backup codes and what puts them after it (``Recovery codes:``,
``Backup codes -``, ``Your verification code is``, ``恢复码：``, ``验证码是``)."""
_CODE_NAMES: Final = frozenset({"otp", "totp", "mfa", "2fa", "passcode", "pin"})
"""English names of a one-time code or a PIN: digits alone are their value."""
_CODE_TOKEN_RE: Final = re.compile(r"[^\s,;、，。]+")
_CODE_TRIM: Final = "`*_\"'.!"
_CODE_LEAD_RE: Final = re.compile(r"[ \t\u3000]*(?:(?:[-*+•]|\d{1,2}[.)])[ \t]+)?")
_SIBLING_CODE_RE: Final = re.compile(r"(?=[A-Za-z]*[0-9])(?=[0-9]*[A-Za-z])[A-Za-z0-9]{8,32}")
"""A token of letters and digits that may be one of a list's codes (:func:`_code_runs`)."""
_CODE_LINES: Final = 32
_CODE_QUALIFIERS: Final = ("recovery", "backup", "one", "2fa", "mfa", "otp", "scratch", "emergency", "verification",
                            "security", "login", "sign", "authentication", "confirmation")
"""The first words of :data:`_CODE_NAME_RE`'s English names, lower-cased: a text holding none holds no such list."""
_CODE_RUN_RE: Final = re.compile(_CODE_VALUE)
_DATE_RE: Final = re.compile(r"\d{4}-\d\d-\d\d|\d\d-\d\d-\d{4}")
_DIGIT_CODE_RE: Final = re.compile(r"[0-9]{4,10}|[0-9A-Za-z]{3,8}(?:-[0-9A-Za-z]{3,8}){1,3}")
"""A one-time or recovery code that looks generated only by its digits (``482913``, ``4821-9932``, ``a8f2-k9d1``)."""
_CRYPT_HASH_RE: Final = re.compile(
    r":(?P<h>\$(?:apr1|1|2[abxy]?|5|6|7|y|gy|md5|sha1|P|H|pbkdf2(?:-sha(?:256|512))?|argon2(?:id|i|d)|scrypt)\$"
    r"[^\s:\"'`|<>]{8,255}|\{(?:S?SHA(?:256|384|512)?|S?MD5|CRYPT|PBKDF2(?:-SHA(?:256|512))?|ARGON2)\}"
    r"[A-Za-z0-9+/=.$]{8,255})(?=[\s:\"'`|<>]|\Z)")
"""A password's hash after a user's name and a colon, as ``.htpasswd`` and ``/etc/shadow`` write them
(``alice:$apr1$…``, ``bob:{SHA}…``, ``carol:$2y$10$…``): the user stays."""
_NAMED_HASH_RE: Final = re.compile(
    r"(?<![\w.-])[\"']?(?P<n>[A-Za-z_][\w.-]{0,63}(?i:hash|hashed|digest))[\"']?[ \t]*(?:[:=]|=>)[ \t]*[\"']?"
    r"(?P<h>\$(?:1|2[abxy]?|5|6|7|y|gy|md5|sha1|pbkdf2(?:-sha(?:256|512))?|argon2(?:id|i|d)|scrypt)\$"
    r"[^\s:\"'`|<>]{8,255})")
"""A password's hash in modular crypt form under a name that says it is one (``password_hash: $2b$12$…``,
``"pw_digest": "$argon2id$…"``); a name that holds no password's word (``file_hash``) is not read."""
_CRYPT_USER_RE: Final = re.compile(r"(?:^|(?<=[\s|,\"'`>]))[A-Za-z0-9._@+-]{1,64}\Z", re.MULTILINE)
"""The user's name before a hash's colon (sought back from it)."""
_HCL_RE: Final = re.compile(r"(?<![\w-])variable[ \t]+\"(?P<n>[^\"\n]{1,128})\"[ \t]*\{")
_HCL_DEFAULT_RE: Final = re.compile(r"(?:\n|\{)[ \t]*default[ \t]*=[ \t]*")
_HCL_BLOCK: Final = 1024


def find_layout_spans(text: str, low: str, spans: list[Span], gated: bool = True) -> None:
    """Append the span of every value a label, a table cell, a sentence or a code layout names as a credential.

    ``gated=False`` runs every reader without its pre-check (the pre-checks are exact: each is a substring without
    which the reader finds nothing)."""
    hint = _ASCII_HINT_RE if text.isascii() else _HINT_RE
    hits = [m.start() for m in hint.finditer(low)] if len(low) == len(text) else []
    bars = not gated or any(bar in text for bar in _CELL_BARS)
    if hits:
        _labels(text, hits, spans)
        if bars:
            _pipe_tables(text, hits, spans)
        if not gated or "--" in text or "==" in text or "alue" in low:
            _column_tables(text, spans)
    rows = not gated or "\n" in text and ("," in text or "\t" in text or ";" in text)
    logins = [m.start() for m in _LOGIN_COLUMN_HINT_RE.finditer(low)] if (bars or rows) and len(low) == len(text) and (
        not gated or any(word in low for word in _LOGIN_COLUMN_WORDS)) else []  # each a literal: fast
    if bars and logins:  # | host | login |: no hint in the header
        _pipe_tables(text, logins, spans)
    if rows and (hits or logins):
        _delimited_tables(text, sorted(hits + logins), spans)
    if not gated or not text.isascii():
        _glued_sentences(text, spans, bool(hits))
    if hits and (not gated or " " in text):
        _english_sentences(text, low, hits, spans)
    foreign = not gated or ((" " in text or "\t" in text) and _holds(text, low, _ANY_FOREIGN_WORDS))
    if foreign and (not gated or _holds(text, low, _FOREIGN_WORDS)):
        for m in _FOREIGN_SENTENCE_RE.finditer(text):  # la clave es P: a name no hint is part of
            _sentence_value(text, m.end(), spans, ascii_only=False, stated=True)
    if foreign and (not gated or _holds(text, low, _FOREIGN_BARE_WORDS)):
        for m in _FOREIGN_BARE_RE.finditer(text):
            if m.group("q") is None:
                if not _own_script(text, m.end()):
                    _sentence_value(text, m.end(), spans, ascii_only=False)
            else:
                _value_after_phrase(text, m.end(), spans, own_script=True)
    if hits and (not gated or " " in text or "\t" in text):
        _spaced_settings(text, hits, spans)
    if hits and (not gated or "]" in text):
        for m in _BRACKET_LABEL_RE.finditer(text):  # [API token] P
            line = max(text.rfind("\n", 0, m.start()), text.rfind('"', 0, m.start()), text.rfind("'", 0, m.start()))
            if _BRACKET_LEAD_RE.search(text, line + 1, m.start()) is None:
                continue  # the label starts its line (or a string), after decoration at most
            level = credential_name(m.group("n"))
            if level == STRONG and not phrase_name(m.group("n")):
                _sentence_value(text, m.end(), spans, ascii_only=False)
    if not gated or ("code" in low and any(word in low for word in _CODE_QUALIFIERS)) or (
            not text.isascii() and any(word in low for word in FOREIGN_CODE_WORDS)):
        _code_lists(text, spans)
    if not gated or "seed" in low or "mnemonic" in low or "recovery phrase" in low or "backup phrase" in low:
        _seed_phrases(text, spans)
    if not gated or (":" in text and "." in text):
        _relay_lines(text, spans)
    if not gated or ((":" in text or "：" in text) and _holds(text, low, _ADMIN_WORDS)):
        _admin_lines(text, low, spans)
    if not gated or "cod" in low or "comb" in low:
        _access_codes(text, low, spans)
    if not gated or "insert" in low and "values" in low:
        _sql_inserts(text, low, spans)
    spaced = not gated or " / " in text or "\t/" in text or "/\t" in text
    words = [word for word in _TIGHT_LOGIN_WORDS.ascii if word in low] if "/" in text else []
    if "/" in text and not text.isascii():
        words += [word for word in _TIGHT_LOGIN_WORDS.wide if word in low]
    if spaced or (words and len(low) == len(text)):
        _login_lines(text, low, spans, spaced, words)
    if not gated or "p:" in low or "p=" in low:
        _short_logins(text, spans)
    if not gated or "@" in text:
        _account_lines(text, spans)
    if hits and (not gated or "\n" in text):
        _bare_label_lines(text, hits, spans)
    if not gated or (":\n" in text or ":\r\n" in text) and len(low) == len(text) and any(
            word in low for word in _PURPOSE_WORDS):
        _purpose_lines(text, low, spans)
    _login_sentences(text, low, gated, spans)
    if (not gated or "use" in low or "using" in low) and len(low) == len(text):
        _use_for_sentences(text, low, spans)
    if not gated or "(" in text:
        _setter_calls(text, spans)
        _login_calls(text, spans)
    if not gated or "str" in low or "byte" in low:
        _typed_declarations(text, spans)
    if hits and (not gated or " " in text or "-" in text):
        _grouped_passwords(text, low, hits, spans)
    if not gated or "variable" in text:
        _hcl_defaults(text, spans)
    if not gated or ":$" in text or ":{" in text:
        _crypt_hashes(text, spans)
    if not gated or "$" in text and ("hash" in low or "digest" in low):
        for m in _NAMED_HASH_RE.finditer(text):  # password_hash: $2b$12$…
            if password_name(m.group("n")):
                _judge(text, "password", m.span("h"), STRONG, spans, literal=True)
    if not gated or "input_value=" in text:
        _validation_messages(text, spans)
    if not gated or "loc\":" in text or "loc':" in text:
        _validation_records(text, spans)


def _holds(text: str, low: str, words: _WordSet | tuple[str, ...]) -> bool:
    """Whether the text may hold one of ``words`` (lower case) as a pattern ignoring case reads it: its lower-cased
    ``low`` holds one, or it holds a letter such a pattern folds to an ASCII one (``ſ``, ``K``, ``İ``, ``ı``) that
    lower-casing does not. The words of a :class:`_WordSet` beyond ASCII are sought in a text beyond ASCII only."""
    if not isinstance(words, _WordSet):
        return any(word in low for word in words) or (not text.isascii() and any(c in text for c in _ODD_FOLDS))
    if any(word in low for word in words.ascii):
        return True
    return not text.isascii() and (any(word in low for word in words.wide) or any(c in text for c in _ODD_FOLDS))


_ODD_FOLDS: Final = "ſKİı"
"""The letters beyond ASCII that a pattern ignoring case matches to an ASCII letter."""


def _line_of(text: str, at: int, reach: int) -> tuple[int, int]:
    """The ``[start, end)`` of the line holding ``at`` (a JSON string's text bounds it too); ``start`` is ``-1`` when
    the line starts more than ``reach`` characters before ``at`` (no label or row is that long). Every later hint
    before ``end`` is on the same line, so each line is read once."""
    floor = max(0, at - reach)
    start = text.rfind("\n", floor, at) + 1
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    # A JSON string's text is a line too: {"content": "- **Password:** P"}, "…\n- **Token:** P"} (each search is
    # bounded by the line and by the look-back, and a caller reads each line once: linear in the text)
    colon = text.rfind('":', max(start, floor), at)
    while colon >= 0:  # the last ``":`` before ``at`` that opens a string
        opening = _JSON_OPENING.match(text, colon)
        if opening is not None and opening.end() <= at:
            start = opening.end()
            break
        colon = text.rfind('":', max(start, floor), colon)
    else:  # a JSON array's string: ["a", "Password - P"]
        quote = text.rfind('"', max(start, floor), at)
        if quote > 0 and _ARRAY_OPENING.search(text, max(0, quote - 4), quote + 1) is not None:
            start = quote + 1
    closing = _JSON_CLOSING.search(text, at, end)
    if closing is not None:
        end = closing.start()
    if start == 0 and floor > 0:
        start = -1
    return start, end


_JSON_OPENING: Final = re.compile(r'":[ \t]*"')
_JSON_CLOSING: Final = re.compile(r'(?<!\\)"[ \t]*[,}\]]')
_ARRAY_OPENING: Final = re.compile(r'[\[,][ \t]*"\Z')


def _labels(text: str, hits: list[int], spans: list[Span]) -> None:
    """Each line (a table's cell: :func:`_anchored_lines`) whose label (starting the line) holds a credential name's
    hint: its value."""
    for at, start, end in _anchored_lines(text, hits, _LABEL_MAX + 16):
        _label_line(text, at, start, end, spans)


def _row_bars(text: str, start: int, end: int, open_rows: bool = False) -> list[int]:
    """Where the cell bars of the line ``[start, end)`` stand when it is a table's row (its first bar after blanks or
    a quote block's marks: :data:`_ROW_LEAD`); none when it is not. With ``open_rows``, a row without its outer bars
    (``password | P``, what ``psql`` prints; a list item's too: ``- password | P``) too: its bars have a blank on each
    side, and its edges stand for the outer bars (``start - 1`` and ``end``: the cells are what lies between two of
    them)."""
    lead = start
    while lead < end and text[lead] in _ROW_LEAD:
        lead += 1
    if lead >= end:
        return []
    if text[lead] in _CELL_BARS:
        return [i for i in range(lead, end) if text[i] in _CELL_BARS]
    if not open_rows:
        return []
    if text[lead] in _BULLETS and text[lead + 1:lead + 2] in (" ", "\t"):
        lead += 1  # - refresh_token | P: a list item's row
        while lead < end and text[lead] in " \t":
            lead += 1
    first = _OPEN_BAR_RE.search(text, lead, end)
    if first is None:
        return []
    escape = _LINE_ESCAPE.search(text, lead, end)
    if escape is not None:  # a JSON string's text: an escaped line break ends the row
        end = escape.start()
    inner = [m.start() for m in _OPEN_BAR_RE.finditer(text, first.start(), end)]
    return [lead - 1, *inner, end] if inner else []


_OPEN_BAR_RE: Final = re.compile(r"(?<=[ \t])[|│┃║](?=[ \t])")
_BULLETS: Final = frozenset("-*•+")
"""A bar between two cells of a row without outer bars (:data:`_CELL_BARS` with a blank on each side)."""
_LINE_ESCAPE: Final = re.compile(r"\\+[nr]")


def _label_line(text: str, at: int, start: int, end: int, spans: list[Span]) -> None:
    """The value of the line ``[start, end)`` whose label holds the hint at ``at``."""
    if _SEPARATOR_CHARS.search(text, at, end) is None:
        return  # a label's separator follows its name (a JSON description naming "tokens" has none)
    m, end = _line_label(text, start, end, at)
    if m is None:
        return
    label = m.group("label")
    if any(_generated(word) and _ADDRESS_RE.fullmatch(word) is None  # an account's address is a label's word
           for word in (label + (m.group("tail") or "")).split()):
        return  # --db-password QyeOqIcBHW2EC sha256:<hex>: a generated word in it, no label but a command
    sep = m.group("sep")
    arrow = sep not in (":", "：", "=")
    decorated = bool(m.group("o") or m.group("c") or m.group("c2"))
    level, relaxed = _label_level(label + (m.group("tail") or ""), decorated or arrow)
    if sep == "=" and not relaxed:
        return  # NAME = P: an assignment, read by .scrub_shapes
    if m.end() >= end and sep in (":", "："):
        _next_line_value(text, label + (m.group("tail") or ""), end, spans)
    elif level:
        _label_value(text, label + (m.group("tail") or ""), m.end(), end, level, spans, relaxed or arrow)


_ENCLOSURE: Final = (
    r"(?:\[[^\]\n]{1,40}\][ \t]+|\d{4}-\d\d-\d\d[T ][\d:.,]{5,15}Z?(?:[ \t]+\[?[A-Z]{3,8}\]?)?:?[ \t]+)?"
    r"(?:(?:\*\*|__)?[A-Za-z][\w-]{0,30}(?:[ \t][\w-]{1,30}){0,2}:(?:\*\*|__)?[ \t]+)?"
    r"(?:[ \t]*+(?P<lc>[A-Za-z_][\w.]{0,63}\([ \t]*+(?:[bBrRuU]{0,2}|[fF][rR]?(?=(?P<lf>[\"'])[^\"'{}\n]*(?P=lf)))"
    r"(?=[\"'“‘`])))?"
    r"(?:(?P<lq>[\"'“‘`])|(?P<lp>\()|<(?P<lt>[A-Za-z][A-Za-z0-9]{0,9})(?:[ \t][^<>\n]{0,200})?>"
    r"|(?P<le>~~|\*{1,3}|_{1,2})(?=[^\s*_~]))?")
"""What may stand before a line's own text (see :data:`_LINE_CLOSE`): a call whose one argument is the string
(``print("client_secret P")``) too."""
_ENCLOSURE_RE: Final = re.compile(_ENCLOSURE)
_LINE_OPEN: Final = r"(?:^|(?<=\": \")|(?<=\":\")|(?<=\[\")|(?<=, \")|(?<=,\")|(?<=[|│┃║]))" + _ENCLOSURE
_NOTE: Final = (r"(?:#[ \t][^\n]*|//[ \t][^\n]*|\([^()\n]{1,80}\)|\[\d{1,3}\]|[—–][ \t][^\n]*|<br[ \t]*/?>"
                r"|[\u2600-\u27bf\U0001f300-\U0001faff]\ufe0f?)")
_NOTE_AFTER: Final = r"[ \t]+" + _NOTE
"""A note after a line's value, apart from it by a blank: a comment (``# prod``, ``// prod``), a note in parentheses
(``(guest network)``), a footnote (``[1]``), a dash and a phrase (``— rotate it monthly``), a line break tag, an
emoji (``✅``, ``🔑``)."""
_WIDE_AFTER_RE: Final = re.compile(r"[!#-&(-\[\]-_a-~]+(?=[\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef])")
"""A value's run of ASCII, then a sentence in a script written without blanks (kana, CJK, Hangul, full-width forms)."""
_NOTE_AFTER_RE: Final = re.compile(r"(?<=[ \t])" + _NOTE + r"[ \t]*\r?\Z")
"""A note ending a line, sought from its first character (after a blank: no blank run is scanned again)."""
_LINE_CLOSE: Final = (r"(?:" + _NOTE_AFTER + r")?[ \t]*(?:(?:-->|\*/)[ \t]*)?"
                      r"(?(lq)[\"'”’`]?)(?(lc)[ \t]*+\)[ \t]*;?)(?(lp)\))(?(lt)</(?P=lt)>)(?(le)(?P=le))"
                      r"(?(lq)[.!?]?|)(?(lp)[.!?]?|)"
                      r"(?<!\\n)(?<!\\r)(?<!\\t)(?:\r?$|(?=\"[ \t]*[,}\]]))")
"""Where a line starts and ends, also as a JSON string's whole text (``{"content": "client_secret P"}``): the line
readers below hold no quote in what they read. A JSON string whose text ends with an escaped line break
(``"client_secret P\\n"``) is read where that escape is a line break (its decoded view): the escape is no value's.
A line's text may stand after a log line's stamp (``[2026-12-06 10:00]``) and a short label (``Note:``, ``**Note:**``,
``User said:``), and inside quotes, parentheses or an element (``"client_secret P"``, ``(…)``, ``<p>…</p>``) that
closes at the line's end: what encloses it is no value's."""
_RELAY_LINE_RE: Final = re.compile(
    _LINE_OPEN + _DECORATION + r"(?:\[[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\](?::\d{1,5})?"
    r"|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+:\d{1,5})[ \t]+"
    r"(?P<u>[^\s:@\"]{1,64}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|[A-Za-z][\w.-]{0,63}):"
    r"(?P<p>(?:(?(lq)[^\s\"'”’`]|[^\s\"])){1,256})"
    + _LINE_CLOSE, re.MULTILINE)
"""A mail relay's login line (Postfix's ``sasl_passwd``): a host (in brackets, or with its port), a blank, a user (an
e-mail address or a name), ``:`` and the password."""


_LOGIN_LINE_RE: Final = re.compile(
    _LINE_OPEN + _DECORATION + r"(?:\*\*|__|[*_`])?(?P<label>[^\n\r:：/*`\"]{0,60}?(?<![\w-])"
    r"(?i:log(?:-|[ \t])?in|sign(?:-|[ \t])?in|credentials|creds|account|wi-?fi|wlan|wireless"
    r"|(?:user(?:name)?|u|login)[ \t]*/[ \t]*(?:pass(?:word)?|p|pw|pwd)|ssid[ \t]*/[ \t]*(?:pass(?:word)?|key|psk|pw))"
    r"(?![\w-])[^\n\r:：/*`\"]{0,40}?|[^\n\r:：/*`\"]{0,60}?(?:(?:用户名?|账号|帐号|账户|帳號|ユーザー?名?|アカウント|사용자명?|"
    r"아이디|계정|ID)[ \t]*/[ \t]*(?:密码|密碼|口令|パスワード|비밀번호|패스워드|PW)|登录|登入|登錄|ログイン|로그인|账号密码|凭据|憑據|認証情報|資格情報)"
    r"[^\n\r:：/*`\"]{0,40}?)(?:\*\*|__|[*_`])?"
    r"[ \t]*[:：](?:\*\*|__|[*_])?[ \t]*(?P<u>[^\s/\"]{1,64})(?:[ \t]+/[ \t]+|/)(?P<p>[^\s\"]{1,256}?)[ \t]*[.;]?"
    + _LINE_CLOSE, re.MULTILINE)
"""A label naming a login (``Login for grafana:``, ``Credentials:``, ``user / password:``, ``u/p:``, ``账号/密码：``,
``ログイン：``) or a wireless network (``Wi-Fi:``, ``SSID / password:``), then a user (or the network's name) and a
password written with a blank around the slash or none, ending the line (``admin / P``, ``HomeNet / P``, ``NAS login:
admin/P``): the user stays, the password is judged."""
_SERVICE_LOGIN_RE: Final = re.compile(
    _LINE_OPEN + _DECORATION + r"(?:\*\*|__|[*_`])?(?P<label>[^\n\r:：/*`\"]{1,40}?)(?:\*\*|__|[*_`])?[ \t]*[:：]"
    r"(?:\*\*|__|[*_])?[ \t]*(?:(?:\d{1,3}(?:\.\d{1,3}){3}|[\w-]{1,63}(?:\.[\w-]{1,63})+)(?::\d{1,5})?,[ \t]*)?"
    r"(?P<u>(?i:admin|administrator|root|sa|postgres|ubuntu|ec2-user|pi)"
    r"|[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+)[ \t]+/[ \t]+(?P<p>[^\s\"]{1,256}?)[ \t]*[.;]?"
    + _LINE_CLOSE, re.MULTILINE)
"""A service's login noted as its name, an administrator's account or an address, and a password, a blank around the
slash (``router: admin / P``, ``staging db: bob@example.com / P``), its address first perhaps (``NAS: 192.168.1.20,
admin / P``): the label, the address and the user stay."""


def _anchored_lines(text: str, anchors: Iterable[int], reach: int,
                    cells: bool = True) -> Iterator[tuple[int, int, int]]:
    """The first anchor, the start and the end (:func:`_line_of`) of each line holding one of ``anchors`` (ascending
    positions of a hint, a slash, a port), each line once; a line starting more than ``reach`` before it is none.
    With ``cells``, each cell of a table's row is a line of its own (``| db | Password - P |``)."""
    done = -1
    for at in anchors:
        if at < done:
            continue
        start, done = _line_of(text, at, reach)
        if start < 0:
            continue
        if cells:
            bars = _row_bars(text, start, done)
            if len(bars) > 2 and bars[0] < at < bars[-1]:
                k = bisect_left(bars, at)
                start, done = bars[k - 1] + 1, bars[k]
        yield at, start, done


_ACCESS_WORD_RE: Final = re.compile(r"cod|comb")
_ACCESS_BEFORE_RE: Final = re.compile(
    r"(?<![\w-])(?i:door|gate|alarm|garage|safe|lock|keypad|entry|building|lockbox|key[ \t]?box|padlock|locker"
    r"|intercom|front[ \t]door|back[ \t]door)[ \t-]?\Z")
_ACCESS_TAIL_RE: Final = re.compile(
    r"(?i:code|combination|combo)(?:[ \t]+(?i:for|to|of|on|at|in)[ \t]+(?:(?i:the|my|our|their)[ \t]+)?[\w'-]{1,24})?"
    r"(?:[ \t]*[:：=]|[ \t]+(?i:is|was|is[ \t]+now|now)(?:[ \t]*:)?|[ \t]+(?i:changed|set)[ \t]+(?i:to))?[ \t]*"
    r"(?:\*\*|__|[`\"'])?(?P<v>[0-9]{3,10}|[0-9]{2}(?:-[0-9]{2}){1,3})(?![\w.,:/-]?[0-9A-Za-z])")
"""A code that opens a door, a gate, an alarm, a safe or a lock, then its digits (``door code: 2580``, ``the gate code
is 4471``, ``safe combination 12-34-56``, ``keypad code for the garage is 5519``, ``the door code at the office is
4471``): as secret as a PIN. A year, a price or a version is no such value (digits then a letter or a decimal point
stay: ``lock code v2.1``)."""


def _access_codes(text: str, low: str, spans: list[Span]) -> None:
    """The digits of each code :data:`_ACCESS_TAIL_RE` reads after a word of :data:`_ACCESS_BEFORE_RE` (sought from
    the literals ``cod`` and ``comb`` in the lower-cased text)."""
    if len(low) != len(text):
        return
    for hit in _ACCESS_WORD_RE.finditer(low):
        at = hit.start()
        if _ACCESS_BEFORE_RE.search(text, max(0, at - 16), at) is None:
            continue
        m = _ACCESS_TAIL_RE.match(text, at)
        if m is not None:
            _judge(text, "pin", m.span("v"), STRONG, spans, bare=True)


_INSERT_WORD_RE: Final = re.compile(r"insert")
_INSERT_HEAD_RE: Final = re.compile(
    r"(?i:insert)[ \t\r\n]+(?:(?i:ignore|or[ \t]+(?:replace|ignore))[ \t\r\n]+)?(?i:into)[ \t\r\n]+"
    r"[\w.\"`\[\]]{1,128}[ \t\r\n]*\((?P<cols>[^()\n]{1,1024})\)[ \t\r\n]*(?i:values)[ \t\r\n]*(?=\()")
"""An SQL ``INSERT INTO t (col, …) VALUES`` with its column list: each value goes to the column at its position."""
_SQL_VALUE_RE: Final = re.compile(
    r"[ \t\r\n]*(?:'(?P<q>(?:[^'\\]|''|\\.){0,4096})'|(?P<o>[^,()'\s]{1,256}(?:\([^()]{0,256}\))?))"
    r"[ \t\r\n]*(?P<sep>[,)])")
"""One value of a row: a quoted string (``''`` and backslash escapes inside), or a literal or a call (``NOW()``)."""
_SQL_ROWS_MAX: Final = 64
_SQL_COLUMN_TRIM: Final = " \t\r\n\"`[]"


def _sql_inserts(text: str, low: str, spans: list[Span]) -> None:
    """The value of each column named as a credential in an SQL ``INSERT`` (``INSERT INTO users (name, password)
    VALUES ('alice', 'P')``): a quoted string at that column's position, in each row (at most :data:`_SQL_ROWS_MAX`),
    judged under the column's name (a hash, a placeholder or ``NULL`` as the name's other values are)."""
    if len(low) != len(text):
        return
    for hit in _INSERT_WORD_RE.finditer(low):
        head = _INSERT_HEAD_RE.match(text, hit.start())
        if head is None:
            continue
        columns = [(k, name, credential_name(name)) for k, name in enumerate(
            column.strip(_SQL_COLUMN_TRIM) for column in head.group("cols").split(","))]
        named = [(k, name, level) for k, name, level in columns if level]
        if not named:
            continue
        at = head.end()
        for _ in range(_SQL_ROWS_MAX):
            if text[at:at + 1] != "(":
                break
            values: list[tuple[int, int] | None] = []
            at += 1
            while True:
                m = _SQL_VALUE_RE.match(text, at)
                if m is None:
                    values = []
                    break
                values.append(m.span("q") if m.group("q") is not None else None)
                at = m.end()
                if m.group("sep") == ")":
                    break
            if len(values) != len(columns):
                break  # not this statement's shape: nothing is read by position
            for k, name, level in named:
                span = values[k]
                if span is not None and span[1] > span[0]:
                    _judge(text, name, span, level, spans, literal=True)
            row_end = _SQL_NEXT_ROW_RE.match(text, at)
            if row_end is None:
                break
            at = row_end.end()


def _validation_messages(text: str, spans: list[Span]) -> None:
    """The input a validation error repeats (pydantic's message, as a traceback or a log shows it: a field's location
    on its own line, then ``  Input should be … [type=…, input_value='P', input_type=str]``), judged under the
    location's last name (``db.password``, ``api_key``): what a model refused is the credential it was given."""
    at = text.find("input_value=")
    while at >= 0:
        value_at = at + len("input_value=")
        line_end = text.find("\n", value_at)
        line_end = len(text) if line_end < 0 else line_end
        close = text.rfind(", input_type=", value_at, line_end)
        message = text.rfind("\n", 0, at)  # the message's line starts after it, the location's line ends there
        head = _VALIDATION_LOCATION_RE.fullmatch(text, text.rfind("\n", max(0, message - _LABEL_MAX), message) + 1,
                                                 message) if message > 0 else None
        if close > value_at and head is not None and _VALIDATION_TYPE_RE.search(text, message, at) is not None:
            _validation_input(text, head.group("loc"), value_at, close, spans)
        at = text.find("input_value=", line_end)


_VALIDATION_LOCATION_RE: Final = re.compile(r"(?P<loc>[A-Za-z_][\w.-]{0,79})[ \t]*\r?")
"""A validation error's location line (``db.password``), the line right before the message's."""
_VALIDATION_TYPE_RE: Final = re.compile(r"\[type=[\w.]{1,64}, \Z|\[type=[\w.]{1,64}, (?=input_value=)")


def _validation_records(text: str, spans: list[Span]) -> None:
    """The input of each validation error a program prints as a record (pydantic's ``errors()``, FastAPI's 422 body:
    ``{"type": …, "loc": ["body", "password"], "msg": …, "input": "P"}``, as JSON or as Python writes it), judged
    under the location's last name."""
    for m in _VALIDATION_RECORD_RE.finditer(text):
        names = _LOCATION_NAME_RE.findall(m.group("loc"))
        if names:
            _validation_input(text, names[-1][1], m.end(), -1, spans)


_VALIDATION_RECORD_RE: Final = re.compile(
    r"(?P<q>[\"'])loc(?P=q):[ \t]*[\[(](?P<loc>[^\])]{0,512})[\])],\s{0,64}(?P=q)msg(?P=q):[ \t]*"
    r"(?:\"(?:[^\"\\\n]|\\.){0,512}\"|'(?:[^'\\\n]|\\.){0,512}'),\s{0,64}(?P=q)input(?P=q):[ \t]*")
"""A validation error's record up to its input: its location, its message (the order pydantic and FastAPI write)."""
_LOCATION_NAME_RE: Final = re.compile(r"([\"'])([A-Za-z_][\w.-]{0,79})\1")


def _validation_input(text: str, location: str, at: int, end: int, spans: list[Span]) -> None:
    """Judge the input written at ``at`` (up to ``end``, or as its quotes or its run close when ``end`` is ``-1``)
    under the last name of ``location``."""
    name = location.rsplit(".", 1)[-1]
    level = credential_name(name)
    if not level:
        return
    quote = text[at:at + 1]
    if end < 0:
        m = _VALUE_RE.match(text, at)
        span = _value_span(m, strict=False) if m is not None and quote in ("\"", "'") else None
    elif end - at > 2 and quote in ("\"", "'") and text[end - 1] == quote:
        span = (at + 1, end - 1)  # the repr of a string
    else:
        span = (at, end) if end > at and text[at] not in "[{(" else None  # a number, or a list left to its items
    if span is not None and span[1] > span[0]:
        _judge(text, name, span, level, spans, literal=True)


_SQL_NEXT_ROW_RE: Final = re.compile(r"[ \t\r\n]*,[ \t\r\n]*(?=\()")


def _login_lines(text: str, low: str, spans: list[Span], spaced: bool, words: list[str]) -> None:
    """The password of each line :data:`_LOGIN_LINE_RE` reads, sought from the lines that hold a slash between blanks
    (``spaced``) and from those where a label's value holds one with none (:data:`_LABEL_TIGHT_SLASH_RE`), after one
    of the login ``words`` the text holds (:data:`_TIGHT_LOGIN_WORDS`, each found with ``str.find``), each line
    once."""
    tight: Iterable[int] = ()
    if words and len(low) == len(text):
        found = set()
        for word in words:
            at = low.find(word)
            while at >= 0:
                line_end = low.find("\n", at)
                m = _LABEL_TIGHT_SLASH_RE.search(text, at, min(len(text) if line_end < 0 else line_end,
                                                                 at + _LOGIN_LINE_MAX))
                if m is not None:
                    found.add(m.end())
                at = low.find(word, at + len(word))
        tight = sorted(found)
    slashes = merge((m.start() for m in _SPACED_SLASH_RE.finditer(text)) if spaced else (), tight)
    for _, start, end in _anchored_lines(text, slashes, _LOGIN_LINE_MAX):
        m = _LOGIN_LINE_RE.match(text, start, end) or _SERVICE_LOGIN_RE.match(text, start, end)
        if m is None:
            continue
        password = m.group("p")
        if text[m.end("u")] == "/" and (password.islower() or password.isupper() or password.isalpha()):
            continue  # login: api/v1beta2, account: settings/profile2024: a path (a glued slash, one case)
        if _generated(password) or _made_password(password) or _dashed_made(password):
            _judge(text, "password", m.span("p"), STRONG, spans, bare=True)


def _short_logins(text: str, spans: list[Span]) -> None:
    """A user and a password named by their initials on one line (``u: bob p: P``, ``user=bob, p=P``): the user stays,
    the value goes when it looks generated."""
    for m in _SHORT_PASSWORD_RE.finditer(text):
        if _SHORT_USER_RE.search(text, max(0, m.start() - _SHORT_USER_MAX), m.start()) is None:
            continue
        run = _SHORT_VALUE_RE.match(text, m.end())
        if run is None:
            continue
        end = run.end()
        while end > run.start() + 1 and text[end - 1] in ".,;)":
            end -= 1
        if _generated(text[run.start():end]):
            _judge(text, "password", (run.start(), end), STRONG, spans, bare=True)


_SHORT_PASSWORD_RE: Final = re.compile(r"[ \t,;|]p[:=][ \t]*(?=[^\s\"'`])", re.IGNORECASE)
_SHORT_USER_RE: Final = re.compile(r"(?<![\w-])(?i:u|usr|user|username|login)[ \t]*[:=][ \t]*[^\s:=,;|\"'`]{1,64}"
                                   r"[ \t]*[,;|]?[ \t]*\Z")
"""What stands before ``p:``: a user named by its initial or its name, and its value (``u: bob``, ``user=bob,``)."""
_SHORT_USER_MAX: Final = 90
_SHORT_VALUE_RE: Final = re.compile(r"[^\s\"'`]{1,256}")


def _account_lines(text: str, spans: list[Span]) -> None:
    """An e-mail address and a password after it (``bob@example.com:P``, ``Gmail: bob@example.com / P``): the
    address stays, the value goes when it looks drawn at random and holds no ``/`` (``git@github.com:Org/Repo2.git``,
    a port, a path, a phone number stay)."""
    at = text.find("@")
    while at >= 0:
        start = _address_start(text, at)
        m = _ACCOUNT_RE.match(text, start)
        at = text.find("@", at + 1)
        if m is None or not _random(m.group("v")) or any(c in m.group("v") for c in "/\\") or (
                _HOLDS_ADDRESS_RE.match(m.group("v")) is not None):
            continue
        _judge(text, "password", m.span("v"), STRONG, spans, bare=True)


def _address_start(text: str, at: int) -> int:
    """Where the local part of the e-mail address whose ``@`` is at ``at`` starts."""
    start = at
    while start > 0 and at - start < 64 and (text[start - 1].isalnum() or text[start - 1] in "._+-") \
            and text[start - 1].isascii():
        start -= 1
    return start


_ACCOUNT_RE: Final = re.compile(
    r"(?<![\w.+/-])(?P<a>[A-Za-z0-9._+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24})"
    r"(?::|[ \t]+/[ \t]+|[ \t]+\|[ \t]+)(?P<v>[^\s\"'`<>|,;]{8,128}?)"
    r"(?:[.,;)]?(?=[ \t]*(?:\r?\n|\Z)|[ \t]+\()|(?=[,;\t])|(?=</[A-Za-z])"
    r"|(?=[\"'](?:[ \t]*[,;)\]}]|[ \t]*(?:\r?\n|\Z)|[ \t])))")
"""An address then ``:``, ``/`` or ``|`` and one value ending its line (before a note in parentheses), its cell of a
delimited row (``,``, ``;``, a tab) or the string that holds the two (a quote then what closes a string:
``"bob@x.com:P",``; not ``bob@x.com:P'and``). A slash stands between blanks and the address after no ``/``:
``bug-make@gnu.org/msg01658.html`` and ``…/archives/dev@example.org:Msg2024`` are a URL's path. An element's closing
tag ends the value too (``<pre>bob@x.com:P</pre>``); a value may hold an ``@`` (``P@ss…``), and is not an address
itself (``bob@x.com:alice@example.org``)."""
_HOLDS_ADDRESS_RE: Final = re.compile(r"[A-Za-z0-9._+-]{1,64}@[a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63})*\.[a-z]{2,24}\Z")
_SPACED_SLASH_RE: Final = re.compile(r"[ \t]/[ \t]")
_TIGHT_LOGIN_WORDS: Final = _word_set(
    "login", "cred", "wifi", "wi-fi", "用户", "用戶", "账号", "帐号", "账户", "帳號", "ユーザ", "アカウント", "사용자", "아이디", "계정",
    "登录", "登入", "登錄", "ログイン", "로그인", "凭据", "憑據", "認証情報", "資格情報")
"""What the label of a login line with no blank around its slash holds (``login``, ``credentials``, ``Wi-Fi``, their
words in languages written without blanks; the other labels of :data:`_LOGIN_LINE_RE` with a blank around the slash
only): where its anchors are sought from. Few words: each is a search of the whole text."""
_LABEL_TIGHT_SLASH_RE: Final = re.compile(r"[:：](?:\*\*|__|[*_])?[ \t]+[\w.+@-]{1,64}(?=/[^\s/])")
"""A label's value that holds a slash with no blank around it (``login: admin/P``, ``**Login:** admin/P``): the anchor
of such a login line; a blank after the label's colon (a port, ``host:8080/path``, or a time, ``10:30/11:00``, has
none). Its first character is a class, which the regular expression engine scans for fast."""
_LOGIN_LINE_MAX: Final = 200
"""The longest stretch from a login line's start to its slash (decoration, a label of 100 characters, a user)."""


_NEXT_LINE_RE: Final = re.compile(
    r"\r?\n(?:[ \t]*\r?\n){0,2}(?:[ \t]*```[A-Za-z]{0,16}[ \t]*\r?\n)?[ \t]*(?P<v>[^\s`]{8,4096})[ \t]*\r?"
    r"(?=\n|\Z|\"[,}\]])")
"""The line after a label that ends with its colon, holding only the value (``Password:\\nP``), after up to two blank
lines or a code fence too (``Here is your token:\\n```\\nP``, ``Your new API key is:\\n\\n    P``); the line may end a JSON
string (a tool's output)."""
_PURPOSE_LINE_RE: Final = re.compile(
    r"^(?:[^\n]{0,200}?(?<![\w-])(?:following|this|your|the[ \t]+new|new|generated|temporary|initial|one-time)"
    r"[ \t]+(?:[\w-]{1,20}[ \t]+){0,2}?(?:password|passphrase|token|secret|api[ \t]key)(?![\w-])"
    r"|[^A-Za-z0-9_\n]{0,12}(?:password|passphrase|token)[ \t]+for[ \t]|[^\n]{0,200}?\"[^A-Za-z0-9_\n\"]{0,12}"
    r"(?:password|passphrase|token)[ \t]+for[ \t])[^\n]{0,200}:[ \t]*\r?$", re.MULTILINE)
"""A line that names the credential among other words and ends with a colon, its value on a line below (sought in the
lower-cased text): Jenkins' ``Please use the following password to proceed to installation:``, Elasticsearch's
``Password for the elastic user (reset with `bin/elasticsearch-reset-password -u elastic`):`` and ``Copy the following
enrollment token and paste it into Kibana in your browser (valid for the next 30 minutes):``, ``Use this token to log
in:``; a line of a tool output's JSON string too (after its opening quote). Too long, or holding what a label may not,
for :data:`_LABEL_RE`."""
_PURPOSE_WORDS: Final = ("following", "password for", "token for", "passphrase for", "this ", "your ", "new ",
                         "generated", "temporary", "initial", "one-time")
_LABEL_TAIL_WORDS: Final = frozenset({"is", "was", "are", "below", "follows", "as"})
"""Words after the credential's noun that still put its value on the next line (``Your new API key is:``, ``Your
token is as follows:``, ``API key below:``)."""


def _purpose_lines(text: str, low: str, spans: list[Span]) -> None:
    """The value alone on a line below each line :data:`_PURPOSE_LINE_RE` reads, when it looks drawn at random."""
    for m in _PURPOSE_LINE_RE.finditer(low):
        v = _NEXT_LINE_RE.match(text, m.end())
        if v is not None and (_random(v.group("v")) or drawn_token(v.group("v"))) and _PAIR_START.match(
                v.group("v")) is None:
            _judge(text, "password", v.span("v"), STRONG, spans, bare=True)


def _next_line_value(text: str, label: str, line_end: int, spans: list[Span]) -> None:
    """The value alone on the line after a label that ends with its colon and names a credential with its last
    words (``Password:``, ``Here is your token:``), when it looks generated (a list or a paragraph under a heading
    stays)."""
    m = _NEXT_LINE_RE.match(text, line_end)
    if m is None or not _generated(m.group("v")) or _PAIR_START.match(m.group("v")) is not None:
        return  # TIMEOUT_SECONDS=184, url: x: a line of its own, not the label's value
    words = label.strip().strip("*_`").split()
    for _ in range(3):
        if len(words) > 1 and words[-1].lower() in _LABEL_TAIL_WORDS:
            words.pop()  # Your new API key is:, Your token is as follows:
    if words and _CJK_LABEL_END_RE.search(words[-1]) is not None:
        _judge(text, "password", m.span("v"), STRONG, spans, bare=True)  # 你的新密码是：\nP, 密码如下：
        return
    if not words or len(words) > 8 or words[-1].lower().strip("*_`") not in _LABEL_NOUNS:
        return  # ``… standard auth receive:``: a label ends with the credential's noun
    for name in (" ".join(words[-2:]), words[-1]):
        level = credential_name(name) if _LABEL_WORD.fullmatch(name.replace(" ", "_")) else 0
        if level:
            _judge(text, name, m.span("v"), level, spans, bare=True)
            return


_BARE_LABEL_LINE_RE: Final = re.compile(
    r"[ \t]*(?:#{1,6}|//|--|[-*•>])?[ \t]*(?:\*\*|__)?(?P<l>[A-Za-z][A-Za-z _-]{0,40}?)(?:\*\*|__)?[ \t]*\r?\Z")
_BARE_LABEL_NOUNS: Final = frozenset({"password", "passwd", "passphrase", "token", "secret"})
_BARE_LABEL_MAX: Final = 64
"""The longest label line read around a hint (and the reach of the search for its start and end)."""
_LABEL_LINE_END_RE: Final = re.compile(r"[A-Za-z]{0,16}(?:\*\*|__)?[ \t]*\r?\n")


def _bare_label_lines(text: str, hits: list[int], spans: list[Span]) -> None:
    """A line holding a credential's name and nothing else, no colon (``password``, ``# secret``, ``**API token**``),
    then a line holding only a value that looks drawn at random (:func:`_random`): notes written as a heading and
    its value."""
    done = -1
    for hit in hits:
        if hit < done or text.find("\n", hit, hit + 24) < 0 or _LABEL_LINE_END_RE.match(text, hit) is None:
            continue  # the hint's word does not end its line: no heading of its own
        lo = max(0, hit - _BARE_LABEL_MAX)
        line = text.rfind("\n", lo, hit) + 1
        if line == 0 and lo > 0:
            line = lo  # a long line: its label, if any, follows a quote within reach
        quote = max(text.rfind('"', line, hit), text.rfind("'", line, hit))
        start = quote + 1 if quote >= 0 else line  # {"output": "# secret\nP"}: the label starts the string's text
        if start == lo and lo > 0 and text[lo - 1] != "\n":
            continue
        end = text.find("\n", hit, hit + _BARE_LABEL_MAX)
        if end < 0 or end - start > _BARE_LABEL_MAX:
            continue
        done = end
        m = _BARE_LABEL_LINE_RE.fullmatch(text, start, end)
        if m is None:
            continue
        words = m.group("l").lower().replace("-", " ").replace("_", " ").split()
        if not words or len(words) > 4 or words[-1] not in _BARE_LABEL_NOUNS:
            continue
        v = _NEXT_LINE_RE.match(text, end)
        if v is None:
            continue
        s, e = v.span("v")
        if quote >= 0 and text[quote] in text[s:e]:
            cut = text.index(text[quote], s, e)  # the string's closing quote ends the value
            if _STRING_CLOSE_RE.fullmatch(text, cut, e) is None:
                continue
            e = cut
        value = text[s:e]
        if _random(value) and _PAIR_START.match(value) is None:
            _judge(text, "password", (s, e), STRONG, spans, bare=True)


_STRING_CLOSE_RE: Final = re.compile(r"[\"'][)\]},;]{0,4}")


_CJK_LABEL_END_RE: Final = re.compile(
    "(?:" + "|".join(re.escape(w) for w in (*_CJK_WORDS, "キー", "키")) + r")(?:是|为|為|如下|は|は以下の通りです|は次の通りです"
    r"|는|은)?\Z")
"""A label in a language that writes no space ending with a credential word (and ``is``, ``as follows``) before its
colon: ``你的新密码是：``, ``密码如下：``, ``APIキーは次の通りです：``."""
_PAIR_START: Final = re.compile(r"[A-Za-z_$][\w.$-]{0,127}[ \t]*(?:[=:]|=>|->)")
_PAIR_NAME: Final = re.compile(r"(?:(?:export|set|setx|\$env:)[ \t]+)?(?P<n>[A-Za-z_$][\w.$-]{0,127})(?:=>|->|[=:])")
"""A value that starts as a setting does (``DB_PW=``, ``export GITHUB_TOKEN=``): a name glued to its separator."""
_LABEL_NOUNS: Final = frozenset({"password", "passwd", "passphrase", "pass", "pin", "token", "key", "secret",
                                 "credentials", "credential", "passcode", "otp", "pat", "apikey"})
"""The nouns a label that puts its value on the next line ends with (``Password:``, ``Here is your API key:``)."""


def _label_level(label: str, decorated: bool) -> tuple[int, bool]:
    """How surely a label names a credential (0 for a name :mod:`.scrub_shapes` reads itself, a bare name before a
    colon; a phrase, ``Reset password``; code or a sentence), and whether words stand between the name and the
    separator (a parenthesis, a qualifying phrase: the value must then look generated)."""
    name = label.strip().strip("*_`").strip()
    relaxed = False
    paren = _PAREN_TAIL.search(name)
    if paren is not None:
        name = name[:paren.start()]
        relaxed = True
    words = name.split()
    if not words or len(words) > 8 or not all(_LABEL_WORD.fullmatch(w) for w in words):
        return 0, False
    if len(words) > 1 or not name.isascii():
        decorated = True
    for i, word in enumerate(words[1:], 1):
        if word.lower() in _QUALIFYING and not credential_name(name):
            name = " ".join(words[:i])
            relaxed = True
            break
    if not (decorated or relaxed) or phrase_name(name):
        return 0, False
    return credential_name(name), relaxed


def _generated(value: str) -> bool:
    """A value that looks generated (:func:`.scrub_names.secret_looking`): a symbol names, hosts and paths are not
    written with, a piece that is no word, number or short numbered word (``Xk9mQ2vLp7Rt``, ``aB3$dE6^gH``; not
    ``api.moonshot.ai/v1``, ``SessionToken``), or letters of both cases with a piece that is no short name
    (:data:`_SHORT_NAMES`) and no English word, or in capitals beside a piece in lower case (``Cmu/R1:Azb9``,
    ``ID0:YML/Row8``, ``EQE:SCO-ufw5``: letters drawn at random in short runs; not ``us-east-1``, ``IPv6-Win10``,
    ``Vault:kv/v2``, ``AWS/us-east-1``); letters alone as drawn (:func:`~.scrub_names.drawn_letters`:
    ``MwdPPOBvKAnIiTr``; not ``HelloWorld``)."""
    if not secret_looking(value):
        return drawn_letters(value)
    if any(not c.isalnum() and c not in "./:_-" for c in value):
        return True
    pieces = [p for p in _PIECE_SPLIT.split(value) if p]
    if any(not (p.isdigit() or _SHORT_NUMBERED.fullmatch(p) or (p.isalpha() and (
            p.islower() or p.istitle() or p.isupper()) and (len(p) <= 3 or english_word(p)))) for p in pieces):
        return True
    if value.islower() or value.isupper():
        return False
    runs = [letters for letters in (piece.rstrip("0123456789") for piece in pieces) if len(letters) > 1]
    lower = any(letters.islower() for letters in runs)
    return any(letters.lower() not in _SHORT_NAMES and (not english_word(letters) or (lower and letters.isupper()))
               for letters in runs)


def _label_value(text: str, name: str, at: int, line_end: int, level: int, spans: list[Span], relaxed: bool) -> None:
    """The value after a label's separator: one value (quoted, in backticks, or a run) that ends the line (a value a
    sentence goes on from is prose). After a loose label (an arrow, a parenthesis, a qualifying phrase) only a value
    that looks generated."""
    if at >= line_end:
        return
    words = spaced_passphrase(name, text, at, line_end)  # passphrase: correct horse battery staple
    if words is not None:
        _judge(text, "passphrase", words, STRONG, spans)
        return
    m = _VALUE_RE.match(text, at, line_end)
    if m is None:
        return
    group = "v" if m.group("v") is not None else "s" if m.group("s") is not None else ""
    run = _LABEL_RUN_RE.match(text, m.start(group), line_end) if level == STRONG and group else None
    if run is None and level == STRONG and group:
        note = _NOTE_AFTER_RE.search(text, m.start(group), line_end)  # Password - P (guest network)
        if note is not None:
            line_end = note.start()
        else:  # - **Password:** P，然后重启: a sentence in a wide script goes on after the value
            wide = _WIDE_AFTER_RE.match(text, m.start(group), line_end)
            if wide is not None and wide.end() < line_end:
                line_end = wide.end()
        run = _LABEL_RUN_RE.match(text, m.start(group), line_end)
    if run is not None:
        # After a strong name the value is the line's one remaining run of ASCII, whatever symbols it holds
        # (``- **Password:** 2]NS@Cf?BG``): the label's value ends its line by definition
        span = _run_value(text, *run.span("run"))
    else:
        quoted = level == STRONG and (m.group("dq") is not None or m.group("sq") is not None) \
            and text[m.end():m.end() + 1] in (" ", "\t", ",", ";")  # API key: 'P' btw: the quotes end the value
        if not _LINE_REST.match(text, m.end(), line_end) and not quoted:
            note = _NOTE_AFTER_RE.search(text, m.end(), line_end) if group else None
            if note is None or not _LINE_REST.match(text, m.end(), note.start()):
                return  # OpenAI key for the side project: P (billing capped): a note after it stays
        found = _value_span(m, strict=False)
        if found is None:
            return
        span = found
        if quoted and not _LINE_REST.match(text, m.end(), line_end):
            value = text[span[0]:span[1]]
            if not (_generated(value) or _made_password(value)):
                return  # Token: "abc" is the header's name: a sentence goes on about a word
    if span[1] <= span[0]:
        return
    bare = bool(group)
    if (bare and _prose_value(text, *span)) or (relaxed and not _generated(text[span[0]:span[1]])):
        return
    label = name.strip().strip("*_`")
    slash = label.rfind("/") + 1  # user/password: admin/P, 用户名/密码：admin/P: the user stays
    _judge(text, label, span, level, spans, bare=bare, user=bare and holds_user(label, slash, label[slash:]))


def _line_label(text: str, start: int, end: int, hint: int) -> tuple[re.Match[str] | None, int]:
    """The label of the line ``[start, end)`` whose separator follows ``hint``, and where the line's own text ends:
    read inside what encloses the whole line first (``"Password - P"``, ``(Password - P)``, ``<li>…</li>``), then
    from the line's start, then after a log stamp or a short label before it (``[10:00] Password - P``,
    ``**Note:** Password - P``)."""
    comment = _COMMENT_END_RE.search(text, start, end)
    if comment is not None:  # <!-- Password - P -->, /* … */
        end = comment.start()
        while end > start and text[end - 1] in " \t":
            end -= 1
    enclosure = _ENCLOSURE_RE.match(text, start, end)
    assert enclosure is not None  # every part of it is optional
    inner = _enclosed_end(text, enclosure, end)
    if inner != end:  # emphasis around a label's line is read as the label's own (**API key:**) first
        m = _LABEL_RE.match(text, start, end) if enclosure.group("le") else None
        if m is not None and m.start("sep") > hint and (m.group("o") or m.group("c") or m.group("c2")):
            return m, end
        m = _LABEL_RE.match(text, enclosure.end(), inner)
        if m is not None and m.start("sep") > hint:
            return m, inner
    m = _LABEL_RE.match(text, start, end)
    if (m is None or m.start("sep") <= hint) and enclosure.end() > start:
        m = _LABEL_RE.match(text, enclosure.end(), end)
    return (m, end) if m is not None and m.start("sep") > hint else (None, end)


_COMMENT_END_RE: Final = re.compile(r"(?:-->|\*/)[ \t]*\r?$", re.MULTILINE)
"""The end of an HTML or C comment that ends a line."""
_CLOSER_OF: Final = {'"': '"', "'": "'", "“": "”", "‘": "’", "`": "`"}


def _enclosed_end(text: str, enclosure: re.Match[str], end: int) -> int:
    """Where the text of a line enclosed in quotes, parentheses or an element (:data:`_ENCLOSURE`) ends: before the
    closer that ends the line ``[…, end)`` (a sentence's ``.``, ``!`` or ``?`` after it too); ``end`` when no opener
    was read or the line does not end with its closer."""
    quote, tag = enclosure.group("lq"), enclosure.group("lt")
    closer = _CLOSER_OF[quote] if quote else ")" if enclosure.group("lp") else f"</{tag}>" if tag else \
        enclosure.group("le") or ""
    if not closer:
        return end
    k = end
    while k > enclosure.end() and text[k - 1] in " \t\r":
        k -= 1
    if enclosure.group("lc"):  # print("Password - P");
        if text[k - 1] == ";":
            k -= 1
        if text[k - 1] != ")":
            return end
        k -= 1
        while k > enclosure.end() and text[k - 1] in " \t":
            k -= 1
    if k > enclosure.end() and text[k - 1] in ".!?" and text.endswith(closer, 0, k - 1):
        k -= 1
    return k - len(closer) if text.endswith(closer, enclosure.end(), k) else end


def _run_value(text: str, start: int, end: int) -> Span:
    """The value of a label's run ``[start, end)``: without the Markdown emphasis around it (``**P**``, ``**P**.``),
    else without up to three characters of :data:`_RUN_TRAILER` at its end (``P.``, ``P**``)."""
    floor = end
    while floor > start and end - floor < 3 and text[floor - 1] in _RUN_TRAILER:
        floor -= 1
    for cut in range(end, floor - 1, -1):
        inner = unemphasized(text, start, cut)
        if inner != (start, cut):
            return inner
    return start, floor


def _pipe_tables(text: str, hits: list[int], spans: list[Span]) -> None:
    """A table row (``| name | value |``, ``│ NAME │ value │``): a cell naming a credential, and the cell after it; a
    header row (a separator row below it) naming a credential in a column: that column's cells below."""
    for _, start, end in _anchored_lines(text, hits, _ROW_MAX, cells=False):
        if end - start > _ROW_MAX:
            continue
        bars = _row_bars(text, start, end, open_rows=True)
        if not bars:
            _glued_row(text, start, end, spans)
            continue
        if len(bars) > 2 and _LINE_ESCAPE.search(text, bars[0], bars[-1]) is not None:
            continue  # rows joined by a JSON string's escaped line breaks: read in its decoded view, row by row
        open_row = not (start <= bars[0] and text[bars[0]] in _CELL_BARS)
        header = _SEPARATOR_ROW_RE.match(text, end + 1)
        columns: list[tuple[int, str, int]] = []
        for k, (a, b) in enumerate(pairwise(bars)):
            name = text[a + 1:b].strip(_CELL_TRIM)
            if not name or len(name) > 64 or " " in name.strip() and not _PHRASE_CHARS.sub("", name).isalpha():
                continue  # a phrase is words (``Wi-Fi password``), not a sentence or a value
            if header is not None and _LOGIN_COLUMN_RE.fullmatch(name):
                columns.append((k, name, _LOGIN))  # | host | login |: its cells may hold admin:P
                continue
            level = credential_name(name)
            if not level or phrase_name(name) or (secret_looking(name) and not name.isupper()):
                continue  # ZXfOzhAZS6rZfGmxPW ends with ``PW`` but is a value, not a name (DB_PASSWORD2 is one)
            if open_row and (level != STRONG or "." in name):
                continue  # winreg.KEY_READ | flag: code's bitwise or, not a row a name opens
            if header is not None:
                columns.append((k, name, level))  # a header's cells name columns: their values are in the rows below
            elif k + 2 < len(bars):
                cell = text[b + 1:bars[k + 2]].strip(_CELL_TRIM)
                if not open_row or _generated(cell):
                    _cell_value(text, name, b + 1, bars[k + 2], level, spans)
        if columns and header is not None:
            _column_cells(text, header.end(), columns, spans)  # its rows are read for their own names too


def _glued_row(text: str, start: int, end: int, spans: list[Span]) -> None:
    """A line of two cells split by a bar without blanks (``Password|P``, an export's row): the value of a strong
    name when it looks generated (``FLAG_PASSWORD|FLAG_OTHER``, code's bitwise or, stays)."""
    m = _GLUED_ROW_RE.match(text, start, end)
    if m is not None and credential_name(m.group("n")) == STRONG and not phrase_name(m.group("n")) \
            and _generated(m.group("v")):
        _judge(text, m.group("n"), m.span("v"), STRONG, spans, bare=True)


_GLUED_ROW_RE: Final = re.compile(
    r"[ \t>]*(?P<n>[A-Za-z][A-Za-z0-9 _.-]{0,62}[A-Za-z0-9])[|│](?P<v>[^\s|│]{1,256})[|│]?[ \t]*\r?\Z")
"""A row of two cells split by a bar without blanks (``Password|P``), on a line of its own."""


_PHRASE_CHARS: Final = re.compile("[ -]")
_ROW_LEAD: Final = " \t>"
"""What may stand before a table row's first bar: blanks, and a quote block's marks (``> | password | P |``)."""
_SEPARATOR_ROW_RE: Final = re.compile(
    r"[ \t>]*[|+├╞┡┝┠╟╠]?(?:[ \t]*:?[-─━═]{3,}:?[ \t]*[|+┼╪╇┿╂╫╬┤╡┩┥┨╢╣])+(?:[ \t]*:?[-─━═]{3,}:?[ \t]*)?"
    r"\r?(?:\n|\Z)")
"""A table's separator row (Markdown's ``|---|:---:|``, ``psql``'s ``----+----``, a box drawn with lines:
``├───┼───┤``, ``┡━━━╇━━━┩``): the row above it is a header."""


def _column_cells(text: str, at: int, columns: list[tuple[int, str, int]], spans: list[Span]) -> None:
    """Under a header row whose cells name credentials (``| service | password |``), the cells of those columns in
    each row that follows (at most :data:`_ROW_MAX` characters a row, 256 rows), each judged as the header's value
    when it looks generated."""
    for _ in range(256):
        line_end = _row_end(text, at)
        bars = _row_bars(text, at, line_end, open_rows=True) if line_end - at <= _ROW_MAX else []
        if not bars:
            return
        cells = list(pairwise(bars))
        for k, name, level in columns:
            cell = text[cells[k][0] + 1:cells[k][1]].strip(_CELL_TRIM) if k < len(cells) else ""
            if level == _LOGIN:
                if cell:
                    _login_cell(text, cells[k][0] + 1, cells[k][1], spans)
            elif cell and (_generated(cell) or " / " in cell or (  # a password column states its cells' values
                    level == STRONG and _made_password(cell))):
                _cell_value(text, name, cells[k][0] + 1, cells[k][1], level, spans)
        at = line_end + 1


def _row_end(text: str, at: int) -> int:
    """Where the table row starting at ``at`` ends: its line's end, or the closing quote of the JSON string whose
    text the table is, when the row is that string's last (``…\\ndb,bob,P"}``: a tool's result)."""
    line_end = text.find("\n", at)
    line_end = len(text) if line_end < 0 else line_end
    close = _JSON_CLOSE_RE.search(text, at, line_end) if text.find('"', at, line_end) >= 0 else None
    return close.start() if close is not None else line_end


_JSON_CLOSE_RE: Final = re.compile(r'(?<!\\)"[ \t]*[,}\]][,}\] \t]*\r?\Z')
"""A JSON string's closing quote and the brackets after it, ending a line (``…P"}``)."""


def _cell_value(text: str, name: str, start: int, end: int, level: int, spans: list[Span]) -> None:
    """The value a table cell ``[start, end)`` holds: one run of characters (in backticks, quotes or emphasis or
    not); a cell of words is a description."""
    while start < end and text[start] in " \t":
        start += 1
    while end > start and text[end - 1] in " \t":
        end -= 1
    if _LINE_ESCAPE.search(text, start, end) is not None:
        return  # │ password │\n├───┤\n│: a JSON string's escaped line break, two rows and no cell
    quoted = False
    while end - start >= 2 and text[start] == text[end - 1] and text[start] in "`\"'*_":
        start, end = start + 1, end - 1
        quoted = True
    user = holds_user(name, 0, name)
    if end <= start:
        return
    if any(c.isspace() for c in text[start:end]):
        login = _SPACED_LOGIN_RE.fullmatch(text, start, end) if user else None
        if login is not None and _generated(login.group("p")):
            _judge(text, "password", login.span("p"), STRONG, spans, bare=True)  # | creds | admin / P |
        return
    _judge(text, name, (start, end), level, spans, bare=not quoted, literal=quoted, user=user)


def _delimited_tables(text: str, anchors: list[int], spans: list[Span]) -> None:
    """A CSV or TSV table (``host,user,password``): a header line of names split by commas, tabs or semicolons, one
    naming a credential or a login; that column's cell in each line below holding as many separators (at most 256
    lines), judged as the header's value when it looks generated (a login's: :func:`_login_cell`), or, under a strong
    name, when it is a password as people make one (:func:`_made_password`: ``Bluebird-77``, ``hunter2``)."""
    read = 0
    for _, start, end in _anchored_lines(text, anchors, _ROW_MAX, cells=False):
        if start < read:
            continue  # a row of a table read already
        header = text[start:end].rstrip("\r")
        sep = next((c for c in ",\t;" if c in header), "")
        if not sep or end - start > _ROW_MAX or text.startswith(("|", " "), start) or any(
                c in header for c in "()=[]{}<>") or text[end:end + 1] != "\n":
            continue  # code, a sentence, a pipe table, a string's text that a line does not end: no header of a CSV
        names = header.split(sep)
        if not all(_COLUMN_NAME_RE.fullmatch(n) for n in names):
            continue
        columns = []
        for k, name in enumerate(names):
            name = name.strip(" \"'")
            level = _LOGIN if _LOGIN_COLUMN_RE.fullmatch(name) else credential_name(name)
            if level and not phrase_name(name):
                columns.append((k, name, level))
        at = end + 1
        for _ in range(256 if columns else 0):
            line_end = _row_end(text, at)
            if at >= len(text) or line_end - at > _ROW_MAX or text.count(sep, at, line_end) != len(names) - 1:
                break
            cuts = [at - 1] + [i for i in range(at, line_end) if text[i] == sep] + [line_end]
            for k, name, level in columns:
                cs, ce = cuts[k] + 1, cuts[k + 1]
                if ce > cs and text[ce - 1] == "\r":
                    ce -= 1
                if level == _LOGIN:
                    _login_cell(text, cs, ce, spans)
                elif _generated(cell := text[cs:ce].strip(" \"'")) or (level == STRONG and _made_password(cell)):
                    _cell_value(text, name, cs, ce, level, spans)  # a password column: Bluebird-77, hunter2 too
            at = line_end + 1
        read = at


_COLUMN_NAME_RE: Final = re.compile(r"[ \"']*[^\W\d][\w .:/-]{0,40}[ \"']*")
"""A CSV header's cell: a column's name."""


def _login_cell(text: str, start: int, end: int, spans: list[Span]) -> None:
    """The password of a login column's cell ``[start, end)`` holding a user and a password (``admin:P``, ``admin /
    P``), when it looks generated; the user stays (a cell of a user alone is no credential)."""
    while start < end and text[start] in _LOGIN_TRIM:
        start += 1
    while end > start and text[end - 1] in _LOGIN_TRIM:
        end -= 1
    m = _LOGIN_CELL_RE.fullmatch(text, start, end)
    if m is not None and _generated(m.group("p")):
        _judge(text, "password", m.span("p"), STRONG, spans, bare=True)


_LOGIN_TRIM: Final = _CELL_TRIM + "\"'\r"
_LOGIN: Final = -1
"""The level of a table's column that names a login (a user and a password, ``admin:P``), not a credential alone."""
_LOGIN_COLUMN_RE: Final = re.compile(
    r"(?i:logins?|log-?ins?|sign-?ins?|user(?:name)?[ \t]*[:/][ \t]*pass(?:word)?|auth)"
    r"|登录|登入|登錄|登录信息|账号密码|帳號密碼|ログイン|ログイン情報|로그인|로그인 정보")
"""A table's header cell naming a column of logins (``| host | login |``)."""
_LOGIN_COLUMN_WORDS: Final = ("login", "log-in", "signin", "sign-in", "登录", "登入", "登錄", "ログイン", "로그인")
"""What a login column's name holds when it holds no credential name's hint (lower-cased: ``user:pass`` holds
``pass``, ``auth`` itself is one)."""
_LOGIN_COLUMN_HINT_RE: Final = re.compile("|".join(_LOGIN_COLUMN_WORDS))
_LOGIN_CELL_RE: Final = re.compile(r"(?P<u>[^\s:/|]{1,64})(?::|[ \t]*/[ \t]*)(?P<p>[^\s/][^\s]{0,255})")
"""A user and a password in one cell: ``admin:P``, ``admin/P``, ``admin / P``."""
_SPACED_LOGIN_RE: Final = re.compile(r"(?P<u>[^\s/]{1,64})[ \t]+/[ \t]+(?P<p>[^\s]{1,256})")
"""A user and a password in one cell of a column that names both (``| credentials | admin / P |``)."""


def _column_tables(text: str, spans: list[Span]) -> None:
    """A table of columns aligned by blanks, its columns marked by an underline of dashes (``----   -----``) or a
    ``Name  Value`` header: a first column naming a credential, and the second column's value."""
    for marker in (_UNDERLINE_RE, _HEADER_RE):
        for m in marker.finditer(text):
            columns = [r.start() - m.start() for r in _RUN_RE.finditer(m.group(0))]
            if marker is _HEADER_RE:
                columns = [columns[0], columns[-1]]
            if len(columns) < 2:
                continue
            at = m.end() + 1
            for _ in range(64):
                if at >= len(text):
                    break
                nl = text.find("\n", at)
                row_end = len(text) if nl < 0 else nl
                row = text[at:row_end].rstrip("\r")
                if not row.strip() or _UNDERLINE_RE.fullmatch(row):
                    if row.strip() or marker is _HEADER_RE:
                        at = row_end + 1
                        continue
                    break
                _column_row(text, at, row, columns, spans)
                at = row_end + 1


def _column_row(text: str, at: int, row: str, columns: list[int], spans: list[Span]) -> None:
    first, second = columns[0], columns[1]
    stop = columns[2] if len(columns) > 2 else len(row)
    name = row[first:second].strip()
    if not name or " " in name or len(row) <= second or row[second - 1] not in " \t":
        return
    level = credential_name(name)
    if not level:
        return
    cell = row[second:stop]
    value = cell.strip()
    if not value or " " in value or "\t" in value:
        return
    s = at + second + cell.index(value)
    if _generated(value):
        _judge(text, name, (s, s + len(value)), level, spans, bare=True)


def code_value(value: str) -> bool:
    """Whether a value given as a one-time, recovery or backup code is one: it looks generated, or it is digits in one
    or a few groups (``482913``, ``4821-9932``), no date."""
    return _generated(value) or (_DIGIT_CODE_RE.fullmatch(value) is not None and any(c.isdigit() for c in value)
                                 and _DATE_RE.fullmatch(value) is None)


def _seed_phrases(text: str, spans: list[Span]) -> None:
    """A wallet's seed phrase (BIP-39) after its name and a colon, ``=`` or a quote: 12, 15, 18, 21 or 24 lower-case
    words of three to eight letters, hidden as one value (the words stay a sentence's when one of them is a word
    sentences are made of and no seed phrase holds: ``seed phrase: the words are kept in the vault …``)."""
    for m in _SEED_PHRASE_RE.finditer(text):
        words = m.group("v").split()
        if len(words) in (12, 15, 18, 21, 24) and not any(word in _NOT_SEED_WORDS for word in words):
            spans.append(m.span("v"))


_SEED_PHRASE_RE: Final = re.compile(
    r"(?<![\w-])(?i:(?:(?:secret|wallet)[ \t]+)?(?:seed|recovery|backup|mnemonic)[ \t]+(?:phrase|words)|mnemonic)"
    r"(?:[ \t]*[:：=][ \t]*[\"'`]?|[ \t]+(?i:is|was)[ \t]+[\"'`])"
    r"(?P<v>[a-z]{3,8}(?:[ \t]+[a-z]{3,8}){11,23})(?![ \t]*[a-z])")
"""A seed phrase's name (``seed phrase``, ``recovery phrase``, ``mnemonic``), a colon or ``=`` (or a copula and a
quote), then its words."""
_NOT_SEED_WORDS: Final = frozenset({"the", "and", "for", "with", "that", "this", "are", "was", "were", "must", "should",
                                    "will", "from", "they", "them", "its"})
"""Words sentences are made of that no BIP-39 word list holds."""


def _code_lists(text: str, spans: list[Span]) -> None:
    """The codes after each name :data:`_CODE_NAME_RE` reads: on its line (``Recovery codes: P1 P2 P3``, ``Backup
    codes: P1, P2``, ``验证码是P，5分钟内有效``) or, when the line ends with the name, on the lines below it, one list
    of codes a line (a bullet before them too; at most :data:`_CODE_LINES`)."""
    for m in _CODE_NAME_RE.finditer(text):
        end = text.find("\n", m.end())
        end = len(text) if end < 0 else end
        found: list[Span] = []
        if text[m.end():end].strip(" \t\u3000\r"):
            found = _code_runs(text, m.end(), end) or []
        else:  # Recovery codes:\nP1\nP2
            for _ in range(_CODE_LINES):
                start, end = end + 1, text.find("\n", end + 1)
                end = len(text) if end < 0 else end
                runs = _code_runs(text, start, end) if start < end else None
                if not runs:
                    break
                found += runs
        for span in found:
            _judge(text, "otp", span, STRONG, spans, bare=True)


def _code_runs(text: str, start: int, end: int) -> list[Span] | None:
    """The codes of a list on ``[start, end)`` (:func:`code_value`; in backticks or quotes too), up to where a sentence
    goes on after a comma, a full stop or in a script written without blanks (``，5分钟内有效``, ``です``); ``None``
    when a word stands between them or first (``Backup codes: 8 remaining``, ``Recovery codes: see 1Password``). A
    token of letters and digits that does not look generated alone is a code beside at least as many codes of about
    its length (``8s60AokXKg TCf4L6Aggtr DB46HoleSanv``: a draw holding words)."""
    runs: list[Span] = []
    siblings: list[Span] = []
    at = _CODE_LEAD_RE.match(text, start, end).end()  # type: ignore[union-attr]
    for token in _CODE_TOKEN_RE.finditer(text, at, end):
        s, e = token.span()
        gap = text[at:s]
        at = e
        k = s
        while k < e and text[k] <= "\x7f":
            k += 1
        while s < k and text[s] in _CODE_TRIM:
            s += 1
        trimmed = k
        while trimmed > s and text[trimmed - 1] in _CODE_TRIM:
            trimmed -= 1
        value = text[s:trimmed]
        if value and _CODE_RUN_RE.fullmatch(value) is not None and code_value(value):
            runs.append((s, trimmed))
            if k < e:
                break  # 482913です: the sentence's own script resumes
            continue
        if _SIBLING_CODE_RE.fullmatch(value) is not None and k == e and not gap.strip(" \t,;、，"):
            siblings.append((s, trimmed))
            continue
        if runs and (gap.strip() or not text[token.start()].isascii() or text[token.start()] == "("):
            break  # P1 P2, then a sentence: the codes end there
        return None
    if siblings:
        lengths = [e - s for s, e in runs]
        if len(siblings) > len(runs) or any(not min(lengths) - 2 <= e - s <= max(lengths) + 2 for s, e in siblings):
            return None  # names or words beside codes of other lengths, or more of them: no list of codes
        runs = sorted(runs + siblings)
    return runs
def _glued_sentences(text: str, spans: list[Span], named: bool) -> None:
    """``密码是P``, ``密码 P``, ``パスワードはP``, ``비밀번호는 P``, ``APIキーを「P」に``, ``API Key是P``: a credential word (or an
    English credential name with the sentence's ``is``), ``is``, ``changed to``, a colon, a blank or nothing, an ASCII
    value (``named``: the text holds a credential name's hint)."""
    if any(c in text for c in _CJK_FIRST):
        if "作" in text or "を" in text:
            for m in _CJK_VALUE_FIRST_RE.finditer(text):
                _sentence_value(text, m.start("v" if m.group("v") is not None else "j"), spans, ascii_only=True)
        for m in _GLUED_RE.finditer(text):
            at = m.start()
            while at > 0 and text[at - 1] > "\x7f" and text[at - 1].isalpha():
                at -= 1  # 账号密码：admin/P: the name holds a user and a password (the user stays)
            user = holds_user(text, at, text[at:m.end("n")])
            _sentence_value(text, m.end(), spans, ascii_only=True, user=user, stated=True)
        if "(" in text or "（" in text:
            for m in _CJK_PAREN_RE.finditer(text):
                _sentence_value(text, m.end(), spans, ascii_only=True)
    if any(c in text for c in "把将將をを를을"):
        for m in _CJK_VALUE_INTO_RE.finditer(text):
            group = "v" if m.group("v") is not None else "jv" if m.group("jv") is not None else "kv"
            names = _CJK_REST_NAME_RE.findall(m.group({"v": "rest", "jv": "jrest", "kv": "krest"}[group]))
            if any(not n.isascii() or credential_name(n.rstrip(".")) == STRONG for n in names):
                _sentence_value(text, m.start(group), spans, ascii_only=True)
    if not named:
        return
    done = 0
    for copula in _CJK_COPULA_CHAR_RE.finditer(text):  # sought from the copulas: a text has few, names many
        at = copula.start()
        if at < done:
            continue
        named_at = _ASCII_NAME_GLUED_RE.search(text, max(done, at - 72), at + 40)
        if named_at is None:
            continue
        done = named_at.end()
        name = named_at.group("n")
        if credential_name(name) == STRONG or name.lower() == "key":  # OpenAI的key是P: a value that looks generated
            _sentence_value(text, named_at.end(), spans, ascii_only=True, stated=True,
                            code=name.lower() in _CODE_NAMES)  # OTP是482913: a code of digits too


_SPACED_SETTING_RE: Final = re.compile(
    _LINE_OPEN + _DECORATION + r"(?P<n>[A-Za-z][A-Za-z0-9]*(?:[_.-][A-Za-z0-9]+)+|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]+)+)"
    r"[ \t]+"
    r"(?![a-z_]{2,}=[^=\s])(?P<v>[^\s\"'`”’]{5,255}[^\s\"'`;,”’])" + _LINE_CLOSE, re.MULTILINE)
"""A setting written ``name value`` on a line of its own (``client_secret P``, ``auth_token P``, a Gradle signing
config's ``storePassword P``), as configuration files without a separator write them; a value ending with ``;`` or
``,`` (a statement's, a list's), or starting as a pair does (``key=value``: a lower-case word), is no such setting's;
code is told by the value's judge (``get_key(x)`` stays), and a generated value's brackets, ``=``, ``,`` and ``;``
are its own (``tL@ER1_otJH=+@gLJC``, ``nNddauLsEp2<8t``, ``6g^?kQNjdpeM+3kz0d5,uw``)."""


def _spaced_settings(text: str, hits: list[int], spans: list[Span]) -> None:
    """The value of each ``name value`` line whose name is a strong credential name (``client_secret``, ``api_key``;
    a compound: a single word is a sentence's), when it looks generated. Read on the lines that hold a hint (a strong
    name holds one), each once."""
    for _, start, end in _anchored_lines(text, hits, _SETTING_REACH):
        m = _SPACED_SETTING_RE.match(text, start, end)
        if m is None:
            continue
        name = m.group("n")
        if credential_name(name) == STRONG and _generated(m.group("v")):
            _judge(text, name, m.span("v"), STRONG, spans, bare=True)


_SETTING_REACH: Final = 512
"""The longest stretch from a ``name value`` line's start to its name's hint (what encloses the line, its marks)."""


def _admin_lines(text: str, low: str, spans: list[Span]) -> None:
    """The password of each line :data:`_ADMIN_LINE_RE` reads (``root:P``, ``admin: P``): an administrator's login
    on a line of its own, when the password looks generated (``root:x:0:0:root:/root:/bin/bash`` stays). Read from
    each user's name before a colon, found as a literal in the lower-cased text (a search ignoring case is slow)."""
    if len(low) == len(text):
        anchors: Iterable[int] = sorted(at for word in _ADMIN_WORDS for colon in (":", "：", " :")
                                        for at in _found(low, word + colon)
                                        if not low.startswith("//", at + len(word) + len(colon)))  # postgres://
    else:
        anchors = (m.start() for m in _ADMIN_WORD_RE.finditer(text))
    for _, start, end in _anchored_lines(text, anchors, _SETTING_REACH):
        m = _ADMIN_LINE_RE.match(text, start, end)
        if m is not None and _generated(m.group("p")):
            _judge(text, "password", m.span("p"), STRONG, spans, bare=True)


def _found(low: str, word: str) -> Iterator[int]:
    """Where ``word`` stands in ``low``, each place once."""
    at = low.find(word)
    while at >= 0:
        yield at
        at = low.find(word, at + 1)


_ADMIN_WORDS: Final = ("root", "admin", "administrator", "postgres", "ubuntu", "ec2-user", "elastic", "oracle")
"""The users of an administrator's login line, as literals."""
_ADMIN_USER: Final = "(?i:" + "|".join(_ADMIN_WORDS) + ")"
_ADMIN_WORD_RE: Final = re.compile(_ADMIN_USER + r"[ \t]*[:：]")
"""Where an administrator's login line may be: its user and the colon (each line is read from its start once)."""
_ADMIN_LINE_RE: Final = re.compile(
    _LINE_OPEN + r"[ \t>*+-]*" + _ADMIN_USER + r"[ \t]*[:：][ \t]*"
    r"(?P<p>[^\s:\"'`\\]{6,256})" + _LINE_CLOSE, re.MULTILINE)
"""A login of an administrator's account written ``user:password`` on a line of its own (``root:P``), also as a JSON
string's whole text."""


def _relay_lines(text: str, spans: list[Span]) -> None:
    """The password of each line :data:`_RELAY_LINE_RE` reads, sought from the host's port (each line once)."""
    for _, start, end in _anchored_lines(text, (m.start() for m in _HOST_PORT_RE.finditer(text)), _SETTING_REACH):
        m = _RELAY_LINE_RE.match(text, start, end)
        if m is not None:
            _judge(text, "password", m.span("p"), STRONG, spans, bare=True)  # [smtp.gmail.com]:587 me@gmail.com:P


_HOST_PORT_RE: Final = re.compile(r"[\]A-Za-z0-9-]:\d{1,5}[ \t]")
"""A host's port then a blank, as a relay's login line writes them (``[smtp.gmail.com]:587 me@…``)."""


def _english_sentences(text: str, low: str, hits: list[int], spans: list[Span]) -> None:
    """``the password is P``, ``API key was: P``, ``I set the admin password to P``: a credential named in an English
    sentence, then its value, one run that looks generated (a word, a placeholder or a sentence stays); and ``use P as
    the password``, the value first."""
    done = -1
    names: list[int] = []
    for hit in hits:  # every name holds a hint (pass, key, token, secret): searched around the hints only
        if hit < done:
            continue
        name = _SENTENCE_NAME_RE.search(low, max(0, done, hit - _NAME_BEFORE_HINT), hit + _NAME_AFTER_HINT)
        if name is not None and name.start() > hit:
            name = None  # the key pw@BShZ…: a name after this hint's word is the value's start, read at its own hint
        if name is None:
            if low.startswith("key", hit) and _whole_word(low, hit, hit + 3):
                names.append(hit)  # rotated the key to P: a weak key's sentences are read around it too
                done = _weak_key(text, low, hit, spans)
                _value_named_after(text, hit, spans, random=True)  # swap P for a vault ref (it's the Stripe key)
                _put_into(text, hit, hit + 3, spans)
            continue
        names.append(name.start())
        done = at = name.end()
        if low.endswith("key", 0, at):  # the Wi-Fi key P: a network's key in its context
            _weak_key(text, low, at - 3, spans)
        _value_named_after(text, name.start(), spans)  # P (the DB password), replace P with … (it's the prod password)
        _put_into(text, name.start(), at, spans)  # Added the API key P to .env
        for tail in (_COPULA_TAIL_RE, _LABEL_TAIL_RE, _PAREN_TAIL_RE, _ARROW_TAIL_RE, _ISSUED_TAIL_RE, _DASH_TAIL_RE):
            m = tail.match(text, at)
            if m is None or (tail is _DASH_TAIL_RE and text[name.start() - 1:name.start()] == "."):
                continue  # endDelim.token - 1: an attribute minus a number is code
            # a dash of prose (— or –) states the value as a colon does; a hyphen only gives one that looks generated
            stated = tail is not _PAREN_TAIL_RE and (tail is not _DASH_TAIL_RE or "-" not in m.group(0))
            _sentence_value(text, m.end(), spans, ascii_only=False, stated=stated)
        change = _FROM_TAIL_RE.match(text, at)
        if change is not None:
            _sentence_value(text, change.start("v"), spans, ascii_only=False, stated=True)
            _sentence_value(text, change.end(), spans, ascii_only=False, stated=True)
        last = _NAME_WORD_SPLIT.split(name.group(0))[-1]
        compound = last.endswith("key") and len(name.group(0)) > 3  # deploy key P, signing key P, apikey P
        clause = last == "pass" and (
            _CLAUSE_START_RE.search(text, max(0, name.start() - 8), name.start()) is not None
            or _USER_BEFORE_RE.search(text, max(0, name.start() - 80), name.start()) is not None)
        if (last in _BARE_NAMES or compound or clause) and text[name.start() - 1:name.start()] != ".":
            bare = _BARE_TAIL_RE.match(text, at)  # password P; Remember: pass P
            if bare is not None:
                _sentence_value(text, bare.end(), spans, ascii_only=False, random=last == "pass" or compound)
            bare = _BARE_FOR_TAIL_RE.match(text, at)  # password for gmail P: the value must look random
            if bare is not None:
                _value_after_phrase(text, bare.end(), spans)
        quoted = _QUOTED_TAIL_RE.match(text, at) if name.group(0) != "pass" else None  # invalid token 'P'
        if quoted is not None:
            _sentence_value(text, quoted.end(), spans, ascii_only=False)
    _settings_in_sentences(text, hits, spans)
    if "PIN" in text:
        for name in _PIN_RE.finditer(text):  # my PIN is 4821: a PIN is digits
            for tail in (_COPULA_TAIL_RE, _LABEL_TAIL_RE, _BARE_TAIL_RE, _PIN_TO_RE, _PAREN_TAIL_RE, _ARROW_TAIL_RE,
                         _DASH_TAIL_RE, _PIN_PAREN_RE):  # the NAS PIN — 393721, PIN -> 4821, my PIN (31245)
                m = tail.match(text, name.end())
                if m is not None and (tail is not _PIN_TO_RE or _PIN_VERB_RE.search(
                        text, max(0, name.start() - 40), name.start()) is not None):
                    _sentence_value(text, m.end(), spans, ascii_only=False, code=True)
            given = _PIN_AS_RE.search(text, max(0, name.start() - 120), name.start())
            if given is not None and _PIN_END_RE.match(text, name.end()) is not None:  # use 4821 as the PIN
                _sentence_value(text, given.start("v"), spans, ascii_only=False, code=True)
    seen: set[tuple[int, int]] = set()
    for lo, hi in _around(names, len(text)):  # each pattern names a credential: read around the names found
        for regex in (_SENTENCE_VERB_RE, _SENTENCE_USE_RE, _SENTENCE_AS_RE, _SENTENCE_IS_RE, _NOUN_VALUE_RE):
            for m in regex.finditer(text, lo, hi):
                if m.span() in seen:
                    continue
                seen.add(m.span())
                if regex is _NOUN_VALUE_RE:
                    _noun_value(text, m.end(), spans)
                elif regex is _SENTENCE_VERB_RE:  # after a weak key (rotated the key to P) a value that looks random
                    _sentence_value(text, m.end(), spans, ascii_only=False, random=_weak_name(m.group("n")),
                                    stated=True)
                else:
                    at = m.start("v") if "v" in regex.groupindex else m.end()
                    if regex is _SENTENCE_IS_RE and _URL_VALUE_RE.match(m.group("v")):
                        eq = text.rfind("=", at, m.end("v"))  # ?q=P is my password: the query's value
                        at = eq + 1 if eq >= 0 else at
                    # use our password P, P is my password, use P as the access token. (not: as the token's name)
                    stated = regex is _SENTENCE_IS_RE or regex is _SENTENCE_USE_RE or (
                        regex is _SENTENCE_AS_RE and _CLAUSE_END_RE.match(text, m.end()) is not None)
                    _sentence_value(text, at, spans, ascii_only=False, stated=stated)
    if "pass " in low or "pass\t" in low:
        for m in _PASS_RE.finditer(low):
            at = m.start()
            before = low[max(0, at - 12):at]
            word = before.rstrip(" \t")
            if len(word) < len(before) and (word.endswith(",") or word.rsplit(None, 1)[-1:] and
                                            word.rsplit(None, 1)[-1] in _PASS_BEFORE):
                _noun_value(text, m.end(), spans)  # keystore pass P, user app, pass P


_BEFORE_NAME: Final = 400
_AFTER_NAME: Final = 200
"""How far a sentence reaches before and after its credential's name (a value before it, ``use P as the password``,
is at most 256 characters)."""


def _around(starts: list[int], size: int) -> list[tuple[int, int]]:
    """The ranges of the text that reach :data:`_BEFORE_NAME` before and :data:`_AFTER_NAME` after each of ``starts``
    (in order), overlapping ranges joined."""
    out: list[tuple[int, int]] = []
    for start in starts:
        lo, hi = max(0, start - _BEFORE_NAME), min(size, start + _AFTER_NAME)
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def _settings_in_sentences(text: str, hits: list[int], spans: list[Span]) -> None:
    """A setting's name in a sentence (``the DB_PASSWORD is P``, ``invalid auth_token 'P'``, ``my apiKey was P``,
    ``github-password is P``): a name joined by ``_`` or ``-``, in camel case or glued in capitals (``PGPASSWORD``)
    that holds a hint and names a credential (an option's ``--db-password`` is none; a weak name, ``slack_key``, gives
    a value that looks random), then the sentence's copula or a quoted value (``DB_PASSWORD=P`` is an assignment, read
    by :mod:`.scrub_shapes`); after a verb of setting, ``to`` and the value the sentence states (``Set PGPASSWORD to
    hunter22``: a word and a number as people make passwords too)."""
    done = -1
    for hit in hits:
        if hit < done or hit == 0:
            continue
        before = text[hit - 1]
        glued = before.isupper() and text[hit].isupper()  # PGPASSWORD: an environment variable's name in capitals
        if not (before.isalnum() or before in "_-"):
            continue  # the hint starts a word: a plain word is _SENTENCE_NAME's
        start = hit
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_-") and hit - start < 64:
            start -= 1
        if text[start] == "-":
            continue  # --db-password is required: an option's name, not a setting's
        run = _IDENT_RUN.match(text, hit)
        end = run.end() if run is not None else hit
        done = end
        name = text[start:end]
        if not name.isascii() or (start > 0 and text[start - 1] in ".-$") or not (
                "_" in name.strip("_") or "-" in name.strip("-") or _CAMEL_HUMP.search(name) is not None or (
                    glued and name.isupper())):
            continue  # a plain word is _SENTENCE_NAME's; a dotted name or a variable is code's
        level = credential_name(name)
        if not level:
            continue
        for tail in (_COPULA_TAIL_RE, _QUOTED_TAIL_RE, _ARROW_TAIL_RE):
            m = tail.match(text, end)
            if m is not None:  # db_token is Blue-Falcon-77: the copula or the arrow states the value
                _sentence_value(text, m.end(), spans, ascii_only=False, random=level != STRONG,
                                stated=level == STRONG and tail is not _QUOTED_TAIL_RE)  # slack_key is P: random
        to = _TO_TAIL_RE.match(text, end) if level == STRONG else None
        if to is not None and _SET_BEFORE_RE.search(text, max(0, start - 24), start) is not None:
            _sentence_value(text, to.end(), spans, ascii_only=False, stated=True)  # Set PGPASSWORD to P


_ARROW_TAIL_RE: Final = re.compile(
    r"(?:(?: (?i:updated|changed|rotated|reset|renewed|now|is[ \t]+now|new))?(?: [ \t]*(?:->|→|=>|⇒|⟶)[ \t]*|"
    r"[ \t]*(?:->|→|=>|⇒|⟶)[ \t]* )|[?？][ \t]* [ \t]*(?:(?i:it['’]s|it[ \t]+is|that['’]s|its)[ \t]+)?)"
    r"(?=[\"'`!-~" + _OPENERS + "])")
"""A name, perhaps the verb that changed it, then an arrow: ``Password updated -> P``, ``DB_PASSWORD → P``; or a
question and its answer: ``the wifi password? P``, ``the API key? it's P``. A space stands beside the arrow or after the question (the
sentence readers' pre-check: a text without one holds no sentence)."""
_PIN_PAREN_RE: Final = re.compile(r"[ \t]*[(（](?=[0-9]{4,8}[)）])")
"""A PIN's digits in parentheses after its name (``my PIN (31245)``): shorter than what :data:`_PAREN_TAIL_RE`
reads."""
_DASH_TAIL_RE: Final = re.compile(r"[ \t]+(?:—|–|--?)[ \t]+(?=[\"'`!-~" + _OPENERS + "])")
"""A name, a dash between blanks, then a value that looks generated, in the middle of a sentence too: ``my session
token — P ok?``, ``the staging password - P`` (a label that starts its line is :func:`_labels`')."""
_ISSUED_TAIL_RE: Final = re.compile(
    r"(?: (?i:has[ \t]+been|have[ \t]+been|was|were|is|got))? (?i:re)?(?i:generated|created|issued|rotated|reset|"
    r"changed|updated|renewed)(?:[ \t]*[:：]|[ \t]*[;,.][ \t]+(?i:the[ \t]+)?(?i:new)[ \t]+(?i:value|one)"
    r"(?:[ \t]+(?i:is))?[ \t]*[:：]?)[ \t]+(?=[\"'`!-~" + _OPENERS + "])")
"""``Your API token has been regenerated: P``, ``password reset: P``: the verb that made the value, then a colon; or
a clause naming the new value (``Token rotated; new value P``, ``password changed, the new one is P``)."""
_TO_TAIL_RE: Final = re.compile(r" (?i:to) (?=[\"'`!-~" + _OPENERS + "])")
_SET_BEFORE_RE: Final = re.compile(r"(?<![\w-])(?i:set|change|changed|update|updated|reset)[ \t]+(?:(?i:the|my|your|"
                                   r"our)[ \t]+)?\Z")
"""``Set OPENAI_API_KEY to P``: a verb of setting before a setting's name, then ``to`` and the value."""
_CAMEL_HUMP: Final = re.compile(r"[a-z0-9][A-Z]")
_IDENT_RUN: Final = re.compile(r"[A-Za-z0-9_]{0,64}")
_QUOTED_TAIL_RE: Final = re.compile(r" +(?=[\"'`‘“])")
"""A quoted value right after a credential's name in a sentence (``Error: invalid api_key 'P'``), a space between (a
tab is a pair's, :mod:`.scrub_shapes`'); it must look generated (not after ``pass``, a verb as often: ``pass
`dtype=x```)."""


def _whole_word(low: str, start: int, end: int) -> bool:
    """Whether ``low[start:end]`` is a word of its own (``key``, not ``Keyhan``, ``hotkey`` or ``key_id``)."""
    return not ((start and (low[start - 1].isalnum() or low[start - 1] in "_-.")) or (end < len(low) and (
        low[end].isalnum() or low[end] in "_-")))


def _weak_key(text: str, low: str, hit: int, spans: list[Span]) -> int:
    """A weak ``key`` (the hint at ``hit``) in a sentence: its value after a copula (``the key is P``), or, in a
    credential's context on its line (:data:`_KEY_CONTEXT_RE`), after a blank, a colon or a note (``SSID "HomeNet",
    key P``, ``rotate key (new: P)``), when it looks random (:func:`_random`). Returns where the name ends."""
    end = hit + 3
    if not _whole_word(low, hit, end):
        return end
    qualifier = low[max(0, hit - 24):hit].split()[-1:]
    if qualifier and qualifier[0].isalpha() and not credential_name(qualifier[0] + "_key"):
        return end  # the sort key is createdAt2: a lookup's key
    m = _COPULA_TAIL_RE.match(text, end) or _ONE_TAIL_RE.match(text, end)
    if m is not None:
        _sentence_value(text, m.end(), spans, ascii_only=False, random=True)
        return end
    line = low.rfind("\n", max(0, hit - _LABEL_MAX), hit) + 1
    if (qualifier and qualifier[0] in _KEY_OWNERS) or _KEY_CONTEXT_RE.search(low, max(line, hit - _LABEL_MAX), hit) \
            is not None or (_KEY_CONTEXT_RE.match(low, end + 2) is not None and text[end:end + 2] == " ("):
        m = _KEY_TAIL_RE.match(text, end)
        if m is not None:
            _sentence_value(text, m.end(), spans, ascii_only=False, random=True)
            close = text.find(")", m.end(), m.end() + _LABEL_MAX * 4) if "(" in text[end:m.end()] else -1
            for note in _KEY_NOTE_RE.finditer(text, m.end(), close) if close > 0 else ():
                _sentence_value(text, note.end(), spans, ascii_only=False, random=True)  # (old: P, new: Q)
    return end


def _put_into(text: str, start: int, end: int, spans: list[Span]) -> None:
    """The value after a credential's name ``[start, end)`` that a verb before it puts somewhere
    (:data:`_PUT_BEFORE_RE`, :data:`_INTO_TAIL_RE`): ``Added the key P to ~/.hermes/.env``."""
    tail = _INTO_TAIL_RE.match(text, end)
    if tail is None:
        return
    verb = _PUT_BEFORE_RE.search(text, max(0, start - 64), start)
    if verb is not None:
        name = (verb.group("q") or "") + text[start:end]
        _sentence_value(text, tail.start("v"), spans, ascii_only=False, random=_weak_name(name))


_LABELLED_NAME_RE: Final = re.compile(r"(?:[\w-]{1,32}[ \t]){0,3}[\w-]{1,32}[ \t]*[:=][ \t]*[^\s)\]]")
"""A name followed by its own separator and value (``password: P``, ``pw=P``): a label, not a name of what precedes."""


def _value_named_after(text: str, name: int, spans: list[Span], random: bool = False) -> None:
    """The value that a sentence gives before naming it at ``name``, found from the separator between them (the last
    of :data:`_NAMED_SEPARATORS` before the name, then only :data:`_NAMED_TAIL_RE`): the run right before it (``P (the
    DB password)``, ``P — the DB password``, ``P, which is the admin password``) or the value a replacing verb
    names before it (``replace P with an env var (it's the prod DB password)``); after a weak name (``random``) only
    one that looks random."""
    if _LABELLED_NAME_RE.match(text, name) is not None:
        return  # ssh pi@host (password: P): the name labels a value of its own, not the one before it
    line = text.rfind("\n", max(0, name - _NAMED_AFTER_REACH), name) + 1
    floor = max(line, name - _NAMED_SEP_REACH)
    sep, width = max((text.rfind(mark, floor, name), len(mark)) for mark in _NAMED_SEPARATORS)
    if sep < 0:
        return
    tail = _NAMED_TAIL_RE.match(text, sep + width, name)
    if tail is None or tail.end() != name:
        return
    mark = text[sep:sep + width]
    end = sep
    while end > line and text[end - 1] in " \t":
        end -= 1
    start = end
    while start > line and not text[start - 1].isspace() and text[start - 1] not in _VALUE_STOPS:
        start -= 1
    if 6 <= end - start <= 128 and (start == line or text[start - 1].isspace() or text[start - 1] in "(\"'“‘>") and (
            (mark == "," and tail.group("p") and end == sep) or (mark != "," and end < sep)):
        _sentence_value(text, start, spans, ascii_only=False, random=random)  # P (the DB password)
    m = _REPLACE_BEFORE_RE.search(text, max(line, sep - _NAMED_AFTER_REACH), sep)
    if m is not None:
        _sentence_value(text, m.start("r"), spans, ascii_only=False, random=random)


def _weak_name(name: str) -> bool:
    """Whether a credential named in a sentence (``the OpenAI key``, ``API key``) is no strong name: its value must then
    look random. The words before a strong name do not weaken it (``new token``, ``staging app password``)."""
    words = name.split()
    return all(credential_name("_".join(words[i:])) != STRONG for i in range(len(words)))


def _random(value: str) -> bool:
    """A value that looks drawn at random, not only generated (after a weak ``key`` in a sentence): eight characters
    at least, of three classes of lower case, upper case, digits and symbols (``Xk9mQ2vLp7Rt``, ``hunter2!x``), or
    twenty letters and digits of two, or letters alone as drawn (:func:`~.scrub_names.drawn_letters`:
    ``fUzTYQOaNFvp``); no path (``~/.ssh/authorized_keys``) or variable."""
    if drawn_letters(value):
        return True
    classes = (any(c.islower() for c in value) + any(c.isupper() for c in value) + any(c.isdigit() for c in value))
    symbols = not value.isalnum()
    return len(value) >= 8 and (classes + symbols >= 3 or (len(value) >= 20 and classes >= 2 and not symbols)) and \
        not camel_name(value) and not value.startswith(("~/", "/", "./", "../", "$", "%")) and \
        _KEY_CHORD_RE.match(value) is None and _KEYWORD_ARGUMENT_RE.match(value) is None


_KEYWORD_ARGUMENT_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=(?:[A-Za-z_][\w.]*|\d+)[,)]?\Z")
"""``cross_profile=True``, ``retries=3``: an argument of code, not a value drawn at random."""


def _noun_value(text: str, at: int, spans: list[Span]) -> None:
    """The value at ``at`` after a credential's name with no verb, when it is long enough (:data:`_NOUN_VALUE_MIN`)
    and looks generated."""
    run = _SENTENCE_RUN_RE.match(text, at)
    if run is not None and len(run.group(0).rstrip(".,;:!?)")) >= _NOUN_VALUE_MIN:
        _sentence_value(text, at, spans, ascii_only=False)


_MARKED_USER: Final = r"(?:\*\*|__|[*_`])?[\w.@+-]{1,64}(?:\*\*|__|[*_`])?"
"""A user's name in a login sentence, perhaps in emphasis or backticks (``Log in with **admin** / **P**``)."""
_LOGIN_SENTENCES: Final = (
    (("to log", "to sign"), re.compile(
        r"(?<![\w-])(?i:use|using|with)[ \t]+(?P<v>[^\s\"'`]{6,256}?)[ \t]+(?i:to log|to sign)[ \t-]?(?i:in|on)"
        r"(?:(?i:to))?(?![\w-])"), True),
    (("in is ", "in was ", "login for ", "login to ", "login on ", "in for "), re.compile(
        r"(?i:log(?:-|[ \t])?in|sign(?:-|[ \t])?in)(?:[ \t]+(?i:for|to|on|at)(?:[ \t]+[\w.-]{1,40}){1,3}?)?"
        r" (?i:is|was) [\w.@+-]{1,64}[ \t]+(?i:with|and|/)[ \t]+"
        r"(?:(?i:password|pass|pw)[ \t]+)?(?=[!-~])"), True),
    (("in with ", "in as ", "in using "), re.compile(
        r"(?<![\w-])(?i:log(?:-|[ \t])?in|sign(?:-|[ \t])?in)[ \t]+(?i:with|as|using)[ \t]+" + _MARKED_USER
        + r"[ \t]*/[ \t]*(?=[!-~])"), True),
    (("log in", "login", "log into", "sign in", "sign into"), re.compile(
        r"(?<![\w-])(?i:log(?:-|[ \t])?in|sign(?:-|[ \t])?in)(?:(?i:to)|[ \t]+(?i:to|on))?[ \t]+(?:(?i:the)[ \t]+)?"
        r"[\w.:/-]{1,64}"
        r"[ \t]+(?:(?i:as|with|using)[ \t]+|\([ \t]*)" + _MARKED_USER + r"[ \t]*/[ \t]*(?=[!-~])"), True),
    (("cred", "zugangsdaten", "identifiants"), re.compile(
        r"(?i:credentials|creds|zugangsdaten|identifiants|credenciales|credenziali|credenciais)"
        r"(?:[ \t]+(?i:for|of|on|to|at|für|pour|para|per)(?:[ \t]+[\w.@-]{1,40}){1,4}?)?[ \t]+"
        r"(?i:are|were|is|sind|sont|son|sono|são)[ \t]*:?[ \t]+[\w.@+-]{1,64}[ \t]*/[ \t]*(?=[!-~])"), True),
    (("login", "log in", "log\tin"), re.compile(
        r"(?<![\w-])(?i:login|log[ \t]in)[ \t]+(?!(?i:to|for|on|at|as|with|using|via|into|in|from|by|and|or|the|a|an|"
        r"my|your|our|is|was|page|screen|form|failed|succeeded)(?![\w.@+-]))[\w.@+-]{1,64}[ \t]+(?=[!-~])"), False))
"""A login in a sentence: ``Use P to log into the NAS``, ``NAS login is admin with P``, ``Login for GitHub is
bob@example.com with P``, ``Log in as admin / P``, ``Log into grafana (admin / P)``, ``sign in to the NAS as admin /
P``, ``the credentials are admin / P`` (``Credentials for staging are admin / P``), ``Die Zugangsdaten sind admin /
P`` (the user stays), a note's ``Jira login bob P`` (a value that looks generated only: ``login bob server01``
stays); each after what a text it reads holds, lower-cased (an alternation of words ignoring case is slow to search
for: the words are sought first)."""
_FOREIGN_BARE_RE: Final = re.compile(
    r"(?<![\w-])(?i:пароль|парола(?:та)?|лозинка(?:та)?|hasło|contraseña|contrasenya|lösenord|passwort|kennwort|senha|"
    r"wachtwoord|heslo|geslo|lozinka|jelszó|jelszava(?:m|d)?|şifre(?:si|m|n|niz)?|parolam|parolası|slaptažodis|"
    r"parool|salasana|lykilorð(?:ið)?|nenosiri|mật[ \t]khẩu|κωδικός(?:[ \t]πρόσβασης)?|و?كلمة[ \t](?:ال)?(?:مرور|سر)|"
    r"رمز[ \t]عبور|ו?ה?סיסמ[הא]|पासवर्ड)(?:[ \t]+(?i:" + _FOREIGN_OWNERS + r"))?"
    r"(?:[ \t]+(?P<q>(?i:от|для|від|до|de|del|do|da|für|von|van|voor|dla|od|för|till|za|k|ke|pro|pre|pentru|của|cho|"
    r"για|של))(?=[ \t])|[ \t]+(?=[A-Za-z0-9]))")
"""A password's name in another language then its value with no verb (``Мой пароль P``, ``A jelszó P``, ``Şifrem P``,
``मेरा पासवर्ड P है``, ``رمز عبور من P است``, where a language needs none or puts it last), what it is for between
them too (``пароль от почты P``, ``Пароль від пошти P``, :func:`_value_after_phrase`); the value must look
generated (``Passwort vergessen`` stays)."""
_FOREIGN_BARE_WORDS: Final = _word_set(
    "пароль", "парола", "лозинка", "hasło", "contrase", "senord", "passwort", "kennwort", "senha", "wachtwoord",
    "heslo", "geslo", "lozinka", "jelsz", "şifre", "parol", "slapta", "parool", "salasana", "lykilor", "nenosiri",
    "khẩu", "κωδικός", "كلمة", "عبور", "סיסמ", "पासवर्ड")
_ANY_FOREIGN_WORDS: Final = _word_set(*sorted({*_FOREIGN_WORDS.ascii, *_FOREIGN_WORDS.wide, *_FOREIGN_BARE_WORDS.ascii,
                                               *_FOREIGN_BARE_WORDS.wide}))
"""The words of either pre-check: most texts hold none, and are read for them once."""


_USE_FOR_RE: Final = re.compile(
    r"(?:use(?<![\w-]use)|using(?<![\w-]using))[ \t]+(?P<v>[\"'`*]{0,2}[!-~]{12,256}?)[ \t]+"
    r"(?:for|on|with|to|in)[ \t]+(?=\S)")
"""``Use P for Jira``, ``using P on the NAS``: a value used for something, with no credential's name (sought in the
lower-cased text from its literal verb, the word's start checked behind it: a pattern that starts with a literal is
searched fast)."""


_USED_TRIM: Final = "\"'`*.,;:!?)"
"""What stands around a used value, or ends its sentence (a drawn token holds none of ``"'`*.:``)."""


def _use_for_sentences(text: str, low: str, spans: list[Span]) -> None:
    """The value of each sentence :data:`_USE_FOR_RE` reads, when it is a token drawn at random
    (:func:`~.scrub_names.drawn_token`): nothing else in the sentence says it is a credential (``Use utf8mb4 for
    MySQL``, ``use iPhone15ProMax for testing`` stay)."""
    for m in _USE_FOR_RE.finditer(low):
        start, end = m.span("v")
        while end > start and text[end - 1] in _USED_TRIM:
            end -= 1
        while start < end and text[start] in _USED_TRIM:
            start += 1
        if drawn_token(text[start:end]):
            _judge(text, "password", (start, end), STRONG, spans, bare=True)


def _login_sentences(text: str, low: str, gated: bool, spans: list[Span]) -> None:
    """The password of each sentence :data:`_LOGIN_SENTENCES` reads, when it looks generated or made as people make
    passwords (the sentence states it: ``Log into grafana (admin / IcgGwUprCXeZ)``, ``… as admin / River52``)."""
    for words, regex, stated in _LOGIN_SENTENCES:
        if gated and not _holds(text, low, words):
            continue
        for m in regex.finditer(text):
            _sentence_value(text, m.start("v") if "v" in regex.groupindex and m.group("v") is not None else m.end(),
                            spans, ascii_only=False, stated=stated)


_PASSWORD_ENDS: Final = ("password", "passwd", "passwords", "pass", "pwd", "pw")
"""How a name that names a password ends (``app_password``, ``SMTP_PASS``, ``Gmail app password``)."""
_FOREIGN_PASSWORDS: Final = ("пароль", "密码", "密碼", "口令", "パスワード", "비밀번호", "패스워드", "비번", "contraseña",
                             "contrasena", "hasło", "haslo", "lösenord", "losenord", "kennwort", "wachtwoord", "senha",
                             "salasana", "heslo", "adgangskode", "şifre", "sifre")
_GROUPED_AFTER_RE: Final = re.compile(
    r"(?:(?:\*\*|__|[*_`])?(?:[ \t]*\([^()\n]{1,40}\)|[ \t]+(?:for|of|on|to|from|at)[ \t][^\n:：=]{1,40}?)?"
    r"(?:\*\*|__|[*_`])?(?:[ \t]*[:=：＝][ \t]*|[ \t]+(?:(?:is|was)[ \t]+)?)|[ \t]*(?:是|为|為|は|는|은)[ \t]*)"
    r"(?:\*\*|__|[\"'`*_])?"
    r"(?P<v>[a-z]{4}(?P<sep>[ -])[a-z]{4}(?P=sep)[a-z]{4}(?P=sep)[a-z]{4})(?![\w-]|[ -][a-z]{4}\b)")
"""What may stand between a password's name and an app password (:func:`.scrub_names.grouped_password`), then the
value: a separator after the name's emphasis or a phrase qualifying it (``**App password**:``, ``app password for
smtp:``, ``password (gmail) =``), a copula, a particle or nothing but a space (``app password ofsn jxeg ihtt
qwza``); the value may open a quote or emphasis."""


def _grouped_passwords(text: str, low: str, hits: list[int], spans: list[Span]) -> None:
    """An app password of four groups of four letters after a password's name (``Gmail app password: ofsn jxeg
    ihtt qwza``, ``SMTP_PASSWORD=ofsn jxeg ihtt qwza``, ``the password is ofsn-jxeg-ihtt-qwza``, ``密码：ofsn jxeg ihtt
    qwza``): the groups are one value, spaces and all; four words of a sentence stay (``password: this will work
    fine``)."""
    done = -1
    wide = not text.isascii()
    for hit in hits:
        if hit < done:
            continue
        if low[hit] == "p" and low.startswith(("pass", "pw"), hit):
            run = _NAME_RUN_RE.match(text, hit)
            end = done = run.end() if run is not None else hit
            before = low[max(0, hit - _NAME_MAX):end]  # the name's end, with what precedes it within reach
            word = _LAST_WORD_RE.search(before)
            if not before.endswith(_PASSWORD_ENDS) or (word is not None and word.group(0) in NOT_GLUED):
                continue  # bypass, compass, multipass: a word that ends as a password's name does
        elif wide and low.startswith(_FOREIGN_PASSWORDS, hit):
            end = done = hit + next(len(word) for word in _FOREIGN_PASSWORDS if low.startswith(word, hit))
        else:
            continue
        m = _GROUPED_AFTER_RE.match(text, end)
        if m is not None and grouped_password(m.group("v")):
            spans.append(m.span("v"))


_NAME_MAX: Final = 64
"""The most of a name read on either side of its hint."""
_NAME_RUN_RE: Final = re.compile(r"[A-Za-z0-9_]{0,64}")
_LAST_WORD_RE: Final = re.compile(r"[a-z]+\Z")


_NOUN_VALUE_RE: Final = re.compile(
    r"(?<![\w-])(?i:auth[ \t]token|access[ \t]token|api[ \t]key|secret[ \t]key|client[ \t]secret|app[ \t]password|"
    r"bot[ \t]token|refresh[ \t]token)[ \t]+(?=[A-Za-z0-9]|/[A-Za-z0-9+]{16}|\+[A-Za-z0-9+/]{16})")
_PASS_RE: Final = re.compile(r"pass[ \t]+(?=[a-z0-9])")
"""``pass`` then a value, sought in the lower-cased text (a literal: fast); :data:`_PASS_BEFORE` says which stand
for a password."""
_PASS_BEFORE: Final = frozenset({"keystore", "truststore", "store", "key", "db", "database", "admin", "root", "sudo",
                                 "ssh", "smtp", "mail", "wifi", "wi-fi", "vpn", "ftp", "sftp", "vnc", "rdp", "user"})
"""The words after which ``pass`` names a password (``keystore pass P``); after a comma too (``user app, pass P``)."""
_NOUN_VALUE_MIN: Final = 8
"""A credential's two-word name then its value with no verb (``twilio sid AC… auth token 9f86…``, ``app password
abcd…``, ``keystore pass …``, ``user app, pass …``): only a value of at least this many characters that looks
generated (``the API key expired`` stays)."""


def _value_after_phrase(text: str, at: int, spans: list[Span], own_script: bool = False) -> None:
    """The value after a phrase saying what a password is for, from ``at`` (after its first word: ``for``, ``от``): its
    second word to its fourth, the first of them that looks random (:func:`_sentence_value` with ``random``): ``password
    for gmail P``, ``Passwort für den Server P``; ``Passwort für den Server vergessen`` has none. With ``own_script``
    (a sentence of another language), a word holding a letter beyond ASCII is the sentence's (``heslo pro SSH
    klíč%%0A``)."""
    for index in range(_PHRASE_WORDS + 1):
        word = _PHRASE_WORD_RE.match(text, at)
        if word is None:
            return
        if index and not (own_script and _own_script(text, word.start(1))):
            before = len(spans)
            _sentence_value(text, word.start(1), spans, ascii_only=False, random=True)
            if len(spans) > before:
                return
        at = word.end()


def _own_script(text: str, at: int) -> bool:
    """Whether the word at ``at`` holds a letter beyond ASCII: after a password's name in a sentence of another language
    with no verb, a word of that language (``A jelszó hibás``, ``salasana SOCKSv5-yhteyskäytäntöön``, ``parolası
    girmediniz!%0ABoş``), not a generated value."""
    run = _SENTENCE_RUN_RE.match(text, at)
    return run is not None and any(c > "\x7f" and c.isalpha() for c in run.group())


def _sentence_value(text: str, at: int, spans: list[Span], ascii_only: bool, user: bool = False,
                    random: bool = False, code: bool = False, stated: bool = False) -> None:
    """The value a sentence gives at ``at``: quoted, or a run whose sentence end stays (and, ``ascii_only``, which
    ends where the sentence's own script resumes), hidden when it looks generated (``base64url``, ``utf8mb4``: a
    lower-case name with few digits stays); after a name of a user and a password (``user``), a user name before
    ``/`` or ``:`` stays; after a weak name (``random``) only a value that looks random (:func:`_random`); after a
    one-time code's name (``code``) digits too (:func:`code_value`); where the sentence states that this is the value
    (``stated``: ``the password is hunter2``, ``password changed to summer24``) a word and a number as people make
    passwords too, unless it names an encoding or a unit (:func:`_technical`), and words joined by dashes as password
    managers make passphrases (:func:`~.scrub_names.dashed_passphrase`)."""
    if text.startswith("<", at) and _ANGLED_RE.match(text, at) is not None:
        mailbox = _MAILBOX_RE.match(text, at)
        if mailbox is not None and not secret_looking(mailbox.group("local")):
            return  # 签署用金鑰 <ftpmaster@ubuntu.com>: a mailbox, the key's owner
        at += 1  # 密码是<P>: the brackets are the sentence's
    if stated:
        login = _STATED_LOGIN_RE.match(text, at)
        if login is not None:
            at = login.end()  # the router admin password is admin / P: the user stays
    grouped = _GROUPED_VALUE_RE.match(text, at)
    if grouped is not None and grouped_password(grouped.group(0)):
        _judge(text, "password", grouped.span(), STRONG, spans)  # the app password I made was ofsn jxeg ihtt qwza
        return
    v = _VALUE_RE.match(text, at)
    if v is None:
        return
    span = _value_span(v, strict=False)
    if span is None or span[1] <= span[0]:
        return
    s, e = span
    if _bare(v):
        run = _SENTENCE_RUN_RE.match(text, s)  # a sentence's words are blank-separated: the value is the whole run
        end = markup_cut(text, s, _closed_run(text, s, run.end())) if run is not None else e
        if end > e and _RUN_MORE.search(text, e, end) is not None and not any(q in text[e:end] for q in "\"'`"):
            e = end  # more of a password glued on (L4d);k[<:E), not code's closing punctuation (');)
        if ascii_only:
            k = s
            while k < e and text[k] <= "\x7f":
                k += 1
            if k < e and text[k - 1] in "([{":
                k -= 1  # 비밀번호를 P(으)로: the bracket opens the sentence's own text
            query = _QUERY_NEXT_RE.search(text, s, k)
            e = k if query is None else query.start()  # 密码P&lang=fr: a URL's next pair is no part of it
        elif "&" in text[s:e]:
            query = _QUERY_NEXT_RE.search(text, s, e)
            if query is not None:
                e = query.start()  # ?q=our API key btw&page=2 (a query decoded): the query's next pair is no part of it
        if text[e - 1] in "*_~":
            e = _closed_run(text, s, e)  # *… is P.*: the emphasis around the sentence
        while e > s and text[e - 1] in ".,;:!?)":
            if text[e:e + 1] in (" ", "\t") and _mark_goes_on(text[e - 1], text[e + 1:e + 2]):
                break  # the password is Xk9! now, 비밀번호는 P! 입니다: the value's own mark
            e -= 1
        s, e = unemphasized(text, s, e)
    value = text[s:e]
    pair = _PAIR_NAME.match(value)
    if pair is not None and credential_name(pair.group("n")):
        return  # Password DB_PW=P: a setting, whose reader hides its value (not its name)
    if _URL_VALUE_RE.match(value):
        return  # password https://host/app;jsessionid=P: a URL, whose own readers take what it holds
    if random and not _random(value):
        return
    joined = value.replace(" ", "-") if " " in value and not _bare(v) else value  # "blue whale 42 sunrise" quoted
    made = stated and (_word_and_number(value) or _dashed_made(joined))  # hunter2, correct-horse-battery
    made = made or (any(piece.isdigit() for piece in joined.split("-")) and _dashed_made(joined))  # pw (Maple-41)
    glued = without_mark(value)  # Bluebird-77 judged as Bluebird77
    made = made or (glued != value and sum(map(str.isdigit, glued)) >= 3 and _word_and_number(value))  # (river_9500)
    if e > s and (code and code_value(value) or made or (
            _generated(glued) and not (glued.islower() and glued.isalnum() and sum(map(str.isdigit, glued)) < 3
                                       and all(map(_word_run, _DIGIT_SPLIT.split(glued))))) or drawn_token(value)):
        _judge(text, "password", (s, e), STRONG, spans, bare=_bare(v) and not made, user=user)  # made: a literal


_GROUPED_VALUE_RE: Final = re.compile(r"[a-z]{4}(?P<sep>[ -])[a-z]{4}(?P=sep)[a-z]{4}(?P=sep)[a-z]{4}"
                                       r"(?![\w-]|[ -][a-z]{4}\b)")
"""An app password's four groups where a sentence gives a value (:func:`.scrub_names.grouped_password` judges them),
not four groups of a longer run."""
_STATED_LOGIN_RE: Final = re.compile(r"[\w.+-]{1,64}(?:@[\w-]{1,63}(?:\.[\w-]{1,63})+)?[ \t]+/[ \t]+(?=[!-~])")
"""A user and a blank around a slash where a sentence states a password (``the router password is admin / P``)."""


def _closed_run(text: str, start: int, end: int) -> int:
    """The end of a sentence's word ``text[start:end]`` less the quote that closes the string the sentence stands in
    (``User said: "my pass is N7N&Q5e+iujce"``, ``“… is P.”``: the word ends before the quote, which the line
    opened before the word), with only a sentence's closing punctuation after it; ``end`` otherwise."""
    line = text.rfind("\n", 0, start) + 1
    for k in range(start, end):
        quote = text[k]
        opener = _OPENING_QUOTE.get(quote)
        if opener is not None:
            if text[k + 1:end].strip(_CLOSING_MARKS):
                return end
            opened = text.count(quote, line, start) % 2 == 1 if opener == quote else \
                text.count(opener, line, start) > text.count(quote, line, start)
            return k if opened else end
    k = end
    while k > start and text[k - 1] in "*_~":
        k -= 1
    if start < k < end and emphasis_opened(text, text[k:end], line, start):
        return k  # *The API token for Jira is P.*: the emphasis opened before the word closes after it
    return end


_URL_VALUE_RE: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{1,15}://")
_MAILBOX_RE: Final = re.compile(
    r"<(?P<local>[\w.+-]{1,64})@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}>")
"""An e-mail address in angle brackets (a mailbox, ``Name <user@example.org>``): whose key it is, not the key."""
_ANGLED_RE: Final = re.compile(r"<(?![a-z][a-z0-9-]*>)[^\s<>]{4,256}>(?=[\s.,;:!?)\]}\"'`]|\Z)")
"""A value in angle brackets (``<P>``) that ends there; not an element's tag (``<code>…``) nor a placeholder's name in
lower case (``<your-password>``)."""
_QUERY_NEXT_RE: Final = re.compile(r"&[A-Za-z_][\w.-]{0,30}=")
"""A URL query's next pair, after a value a sentence in a language that writes no space gives."""
_OPENING_QUOTE: Final = {'"': '"', "'": "'", "`": "`", "”": "“", "’": "‘"}
"""The quotes that close a sentence's string, and what opened it."""


_CLOSING_MARKS: Final = ".,;:!?)]}"
"""What may follow the quote that closes a sentence's string (``"… is P".``, ``("… is P")``)."""
_DIGIT_SPLIT: Final = re.compile(r"[0-9]+")


def _word_and_number(value: str) -> bool:
    """A password as people make one, or letters and digits as a generator draws them, where a sentence states the
    value: lower-case letters (the first perhaps a capital) and one or two digits, five characters at least
    (``hunter2``, ``River52``, ``summer24``, ``scubzmkul66``; with a mark between the word and the number too:
    ``Bluebird-77``), or letters and digits of eight characters at least
    (``HSBN3Igdgkefmeh``, whose letters read as a CamelCase name's); neither names an encoding, an algorithm or a unit
    (:func:`_technical`). Letters alone of ten at least, of both cases, that break into no CamelCase name's words
    (``tGnOqgBuJRkn``; not ``HelloWorld``)."""
    if not value.isalnum():
        value = without_mark(value)  # Bluebird-77, summer_2020: read without the mark
        if not value.isalnum():
            return False
    if not (5 <= len(value) <= 64 and value.isascii() and value.isalnum()) or value.isdigit():
        return False
    if value.isalpha():
        return drawn_letters(value)
    if value.islower() or (value[0].isupper() and value[1:].islower()):  # hunter2, River52, tig3r20
        return (sum(map(str.isdigit, value)) < 3 or human_password(value)) and not _technical(value.lower())
    return len(value) >= 8 and not _technical(value.lower())


def _dashed_made(value: str) -> bool:
    """Words joined by dashes as password managers and people make them: a passphrase of lower-case words
    (``correct-horse-battery``, :func:`~.scrub_names.dashed_passphrase`) or words and a number
    (``Blue-Falcon-77``, :func:`~.scrub_names.dashed_words`), not an algorithm's name (``aes-256-gcm``)."""
    return dashed_passphrase(value) or (dashed_words(value) and not _technical(value.replace("-", "").lower()))


def _made_password(value: str) -> bool:
    """:func:`_word_and_number` of ``value`` less the marks people end such a password with (``River52!``,
    ``Winter1501#``): what a strong label's or a password column's value is when the label states it."""
    return _word_and_number(value.rstrip("!?#$"))


def _technical(value: str) -> bool:
    """Whether each run of letters of ``value`` is a piece of an encoding's, an algorithm's, a protocol's or a unit's
    name (``base64url``, ``sha256``, ``utf8mb4``, ``argon2id``, ``oauth2``, ``32bytes``, ``24h``, ``aes256gcm``):
    what a sentence about a credential says it is, not its value."""
    return all(not run or run in _TECHNICAL_RUNS for run in _DIGIT_SPLIT.split(value))


_TECHNICAL_RUNS: Final = frozenset({
    "base", "url", "sha", "md", "utf", "mb", "ucs", "argon", "id", "i", "d", "pbkdf", "bcrypt", "scrypt", "oauth",
    "http", "https", "tls", "ssl", "aes", "gcm", "cbc", "ctr", "rsa", "ecdsa", "ed", "x", "v", "des", "rc", "crc",
    "hmac", "blake", "b", "s", "keccak", "ripemd", "latin", "iso", "cp", "win", "hex", "int", "uint", "bit", "bits",
    "byte", "bytes", "char", "chars", "ipv", "sm", "k", "kb", "m", "h", "min", "mins", "days", "hours", "secs", "ms",
    "st", "nd", "rd", "th", "fa", "p", "t", "g", "w", "e", "digits", "letters", "words", "pem", "der", "pkcs", "jwt",
    "hs", "rs", "es", "ps", "totp", "hotp", "encoded", "hashed", "encrypted", "with", "withrsa", "rsassa", "pss", "ecdh",
    "curve", "secp", "long"})
"""The runs of letters :func:`_technical` reads as a name's pieces (``pkcs`` of ``pkcs12``, ``h`` of ``24h``): runs
between digits, so no entry holds one."""


def _word_run(letters: str) -> bool:
    """Whether a run of lower-case letters between a name's digits reads as a word or a short name (``postgres`` of
    ``postgres14``, ``db`` of ``db2``; not ``cgyrfekoulzh`` or ``tualkieqad``, drawn at random); an empty run (the
    name starts or ends with its digits) is none to judge."""
    return not letters or letters in _SHORT_NAMES or english_word(letters)


_LOGIN_CALL_RE: Final = re.compile(
    r"(?<![\w$])(?:(?P<callee>(?:HTTP|Http|aiohttp\.)?(?:Basic|Digest|Proxy)Auth|HTTPProxyAuth|NetworkCredential"
    r"|UsernamePasswordCredentials|PasswordCredential|(?:\w+\.)+(?:login|simple_bind_s?|bind_s|basic_auth|auth"
    r"|authenticate|set_credentials|setCredentials))[ \t]*\(|(?<![\w.])(?i:auth|credentials|basic_auth)[ \t]*[=:][ \t]*"
    r"[(\[])[ \t]*(?:(?P<uq>[\"'])[^\"'\n]{1,128}(?P=uq)|[A-Za-z_][\w.]{0,63})[ \t]*,[ \t]*(?P<pq>[\"'])"
    r"(?P<p>[^\"'\s]{1,256}|[a-z]{4}(?: [a-z]{4}){3})(?P=pq)[ \t]*[,)\]]")
"""A user (a string or a variable) and a password (a string without blanks, or an app password's four groups of four
letters: ``smtp.login("me@gmail.com", "qwer tyui opas dfgh")``) given by position:
``HTTPBasicAuth('admin', 'P')``, ``smtp.login("bot@x.io", "P")``, ``server.login(user, "P")``,
``conn.simple_bind_s("cn=admin", "P")``, ``new NetworkCredential("u", "P")``, ``auth=("user", "P")`` (and JDBC's
:data:`_GET_CONNECTION_RE`)."""


_LOGIN_CALL_WORDS: Final = ("auth", "credential", "login", "bind")
"""What each call or name :data:`_LOGIN_CALL_RE` reads holds, lower-cased (its pre-check)."""
_ARGUMENT: Final = r"(?:\"[^\"\n]{0,512}\"|'[^'\n]{0,512}'|[A-Za-z_][\w.]{0,63})"
_GET_CONNECTION_RE: Final = re.compile(
    r"(?<![\w$])getConnection[ \t]*\([ \t]*(?:" + _ARGUMENT + r"[ \t]*,[ \t]*)?" + _ARGUMENT
    + r"[ \t]*,[ \t]*(?P<pq>[\"'])(?P<p>[^\"'\s]{1,256})(?P=pq)[ \t]*\)")
"""JDBC's login by position: ``DriverManager.getConnection(url, "sa", "P")``, ``ds.getConnection("sa", "P")``."""


def _login_calls(text: str, spans: list[Span]) -> None:
    """The password of a login call or an ``auth`` pair that takes a user and a password by position (both string
    literals): judged as a password's value; and a pair written as a tuple, its name first (``("x-api-key", "P")``,
    gRPC metadata, a list of headers): judged by its name."""
    if _holds(text, text.lower(), _LOGIN_CALL_WORDS):
        for m in _LOGIN_CALL_RE.finditer(text):
            if " " not in m.group("p") or grouped_password(m.group("p")):  # an app password's four groups
                _judge(text, "password", m.span("p"), STRONG, spans)
    if "getConnection" in text:
        for m in _GET_CONNECTION_RE.finditer(text):
            _judge(text, "password", m.span("p"), STRONG, spans)
    for m in _NAME_TUPLE_RE.finditer(text):
        level = credential_name(m.group("n"))
        if level == STRONG and not phrase_name(m.group("n")) and secret_looking(m.group("v")):
            # ("x-api-key", "P"); not ("OPENAI_API_KEY", "openai"): code pairs names with labels as often
            _judge(text, m.group("n"), m.span("v"), level, spans)


_NAME_TUPLE_RE: Final = re.compile(
    r"\([ \t]*(?P<q>[\"'])(?P<n>[A-Za-z][\w.-]{0,63})(?P=q)[ \t]*,[ \t]*(?P<r>[\"'])(?P<v>[^\"'\s]{1,1024})(?P=r)[ \t]*\)")


def _setter_calls(text: str, spans: list[Span]) -> None:
    """``ds.setPassword("P")``, ``client.set_api_key('P')``, ``withToken("P")``, a builder's ``.password("P")``: a
    call whose name sets a credential, with that credential as its only argument, a string."""
    if "('" not in text and '("' not in text and "( " not in text:
        return
    for m in _ONE_STRING_RE.finditer(text):  # the argument first (a literal leads), then the callee before it
        callee = _CALLEE_RE.search(text, max(0, m.start() - 96), m.start())
        if callee is None:
            continue
        level = _setter_level(callee.group("f"), callee.group("dot") is not None)
        if level:
            _judge(text, callee.group("f"), m.span("v"), level, spans, literal=True)


def _setter_level(callee: str, dotted: bool) -> int:
    """A setter's name (``setPassword``, ``set_api_key``, ``withToken``): a verb that sets, then a strong credential
    name; a method named for a credential itself (``.password``) only after a dot (a builder)."""
    low = callee.lower().lstrip("_")
    for verb in _SETTER_VERBS:
        if low.startswith(verb) and len(low) > len(verb) + 2:
            rest = callee.lstrip("_")[len(verb):].lstrip("_")
            if rest[:1].isupper() or callee.lstrip("_")[len(verb):len(verb) + 1] == "_":
                return STRONG if credential_name(rest) == STRONG else 0
    words = _CALLEE_WORDS.findall(callee)
    if dotted and words and words[-1].lower() in _HELD_WORDS and words[0].lower() not in _NOT_SETTER_VERBS and (
            credential_name(callee) == STRONG):
        return STRONG  # .password("P"), .apiKey("P"), .clientSecret("P"): a builder's setter
    return 0


def _typed_declarations(text: str, spans: list[Span]) -> None:
    """``const token string = "P"`` (Go), ``const API_KEY: &str = "P";`` (Rust), ``apiKey: string = "P"``
    (TypeScript, Kotlin, Swift): the type between the name and ``=``. Only a string literal."""
    for typed in _TYPE_ASSIGNED_RE.finditer(text):
        m = _TYPED_RE.search(text, max(0, typed.start() - 160), typed.end())
        if m is None:
            continue
        name = m.group("n")
        level = credential_name(name)
        if not level:
            continue
        v = _VALUE_RE.match(text, m.end())
        if v is None or _bare(v):
            continue
        span = _value_span(v, name_start=m.start() if level == STRONG else -1)
        if span is not None and span[1] > span[0] and _generated(text[span[0]:span[1]]):
            _judge(text, name, span, level, spans)


def _hcl_defaults(text: str, spans: list[Span]) -> None:
    """``variable "db_password" { default = "P" }`` (Terraform, HCL): the default of a variable named for a
    credential."""
    for m in _HCL_RE.finditer(text):
        name = m.group("n")
        level = credential_name(name)
        if not level:
            continue
        close = text.find("\n}", m.end(), m.end() + _HCL_BLOCK)
        limit = close if close >= 0 else min(len(text), m.end() + _HCL_BLOCK)
        d = _HCL_DEFAULT_RE.search(text, m.end() - 1, limit)
        if d is None:
            continue
        v = _VALUE_RE.match(text, d.end(), limit)
        if v is None or _bare(v):
            continue
        span = _value_span(v, strict=False)
        if span is not None and span[1] > span[0]:
            _judge(text, name, span, level, spans)



def _crypt_hashes(text: str, spans: list[Span]) -> None:
    """The hash of each ``user:hash`` line :data:`_CRYPT_HASH_RE` reads (an ``.htpasswd`` or ``shadow`` entry): a
    password's hash is as good as the password to whoever can crack or replay it."""
    for m in _CRYPT_HASH_RE.finditer(text):
        if _CRYPT_USER_RE.search(text, max(0, m.start() - 64), m.start()) is not None:
            _judge(text, "password", m.span("h"), STRONG, spans, literal=True)

"""Credentials in the layouts documents and code give them: names built from pieces, labels, tables, setters,
typed declarations, next-line values, weak names in quotes, hyphenated schemes, other languages (OBS-55..OBS-59).

OBS-57 (authorization schemes), OBS-58 (credential classes) and OBS-59 (only the secret's span changes; every other
character stays byte for byte; scrubbing is idempotent; JSON stays JSON) are checked on generated texts: random
generated passwords (letters, digits and symbols), random names built from the vocabulary (a prefix glued to
``pass`` / ``pwd`` / ``pw`` / ``auth`` / ``key`` / ``token`` / ``secret``), random table widths, columns and
paddings, random call and declaration styles, and random prose around them. OBS-55 / OBS-56 (what the observer
emits is scrubbed, and what is not a credential is kept) by explicit lines of real code and prose that must stay
as they are.
"""

from __future__ import annotations

import base64
import json
import random
import string

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import redaction_marker, scrub_text

_SYMBOLS = "!#$%+-/:?@^~"  # no "=": "…PW=…" reads as an inner pair of its own (O7)
_PROSE = ("Deploy notes for the team.", "See the runbook before rotating.", "# Staging", "Ask ops if unsure.",
          "The service restarts nightly.", "")


def _password(r: random.Random) -> str:
    """A generated password: chunks of letters and digits joined by single symbols, starting and ending with a
    letter or a digit, holding an upper-case letter, a lower-case letter and a digit."""
    alnum = string.ascii_letters + string.digits
    chunks = ["".join(r.choice(alnum) for _ in range(r.randint(2, 5))) for _ in range(r.randint(3, 5))]
    body = chunks[0] + "".join(r.choice(_SYMBOLS) + c if r.random() < 0.4 else c for c in chunks[1:])
    return r.choice(string.ascii_uppercase) + body + r.choice(string.ascii_lowercase) + r.choice(string.digits)


def _expected(text: str, secret: str) -> str:
    assert text.count(secret) == 1
    return text.replace(secret, redaction_marker(secret))


def _check(text: str, secret: str) -> None:
    out = scrub_text(text)
    assert out == _expected(text, secret), (text, out)
    assert scrub_text(out) == out  # idempotent


# ------------------------------------------------------------------------------------------------------------------
# Names built from pieces (L8)
# ------------------------------------------------------------------------------------------------------------------

_PREFIXES = ("smtp", "db", "mysql", "redis", "root", "admin", "keystore", "store", "ldap", "bind", "proxy", "vault",
             "ci", "ftp", "mail", "pg", "mongo", "basic", "http")
_PIECES = ("pass", "pwd", "pw", "password", "passwd", "token", "secret", "apikey", "auth", "creds")
_KEY_PREFIXES = ("app", "license", "licence", "session", "signing", "master", "hmac", "client", "encryption", "api")


def _cased(r: random.Random, words: list[str]) -> str:
    style = r.choice(["upper", "lower", "snake", "SNAKE", "camel", "kebab"])
    if style == "upper":
        return "".join(words).upper()
    if style == "lower":
        return "".join(words)
    if style == "snake":
        return "_".join(words)
    if style == "SNAKE":
        return "_".join(words).upper()
    if style == "camel":
        return words[0] + "".join(w.title() for w in words[1:])
    return "-".join(words)


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_property_obs58_names_built_from_pieces(seed: int) -> None:
    """OBS-58 (L8): a credential word glued to any prefix (``SMTPPASS``, ``keystorepass``, ``DBPWD``, ``rootpw``,
    ``BASICAUTH``, ``APPKEY``, ``licensekey``) names a credential in ``NAME=P``, ``NAME: P`` and JSON."""
    r = random.Random(seed)
    if r.random() < 0.3:
        name = _cased(r, [r.choice(_KEY_PREFIXES), "key"])
    else:
        name = _cased(r, [r.choice(_PREFIXES), r.choice(_PIECES)])
    secret = _password(r)
    form = r.choice(["env", "colon", "json", "query"])
    if form == "env":
        text = f"{name}={secret}"
    elif form == "colon":
        text = f"{name}: {secret}"
    elif form == "json":
        text = json.dumps({"id": r.randint(1, 99), name: secret})
    else:
        text = f"https://api.example.com/v1?appid=abc&{name}={secret.replace('#', '').replace('?', '')}"
        secret = secret.replace("#", "").replace("?", "")
        text = text.replace("%", "")
        secret = secret.replace("%", "")
    _check(text, secret)
    if form == "json":
        json.loads(scrub_text(text))


def test_obs58_names_built_from_pieces_examples() -> None:
    """OBS-58 (L8): the reviewed names, and names that only end like one are none."""
    p = "Xk9mQ2vLp7Rt"
    for text in (f"SMTPPASS={p}", f"keystorepass={p}", f"DBPWD={p}", f"rootpw={p}", f"APPKEY={p}",
                 f"licensekey={p}", f"oauth={p}", f'{{"key_material": "{p}"}}', f'{{"secret_input": "{p}"}}',
                 f"https://api.example.com/v1?appid=abc&appkey={p}"):
        _check(text, p)
    for text in ("bypass=Xk9mQ2vLp7Rt", "compass=N0rthWest2024", "OLDPWD=/home/u/src", "hotkey=Ctrl2ShiftQ7x",
                 "monkey=Xk9mQ2vLp7Rt", "publickey=AAAAB3NzaC1yc2E", '"win32cred": "types-pywin32"',
                 "_oauth_interactive_forced: \"contextvars.ContextVar[bool]\" = contextvars.ContextVar(",
                 "var oauth2 = window.opener.swaggerUIRedirectOauth2;"):
        assert scrub_text(text) == text, text


# ------------------------------------------------------------------------------------------------------------------
# Labels (L3, L11)
# ------------------------------------------------------------------------------------------------------------------

_LABEL_NAMES = ("Password", "password", "API key", "API Key", "Staging DB password", "Secret token", "DB_PASSWORD",
                "Access token", "Root password", "Admin passphrase", "Client secret", "SMTP pass")


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32))
@example(seed=41036)  # `DB_PASSWORD` (staging): UVZJP:fHb3 (fHb3 read as a short numbered word)
def test_property_obs59_markdown_and_worded_labels(seed: int) -> None:
    """OBS-59 (L3): a label that starts its line, with list bullets, emphasis or backticks, a parenthesis or a
    qualifying phrase, and a colon, an arrow or a dash: only the value after it changes."""
    r = random.Random(seed)
    secret = _password(r)
    name = r.choice(_LABEL_NAMES)
    tail = r.choice(["", " (prod)", " (staging)", " for the staging db", " for user admin", " of the bot"])
    lead = r.choice(["", "- ", "* ", "§ ", "> ", "1. ", "  - "])
    form = r.choice(["bold-in", "bold-out", "code", "plain", "arrow"])
    if form == "bold-in":
        line = f"{lead}**{name}{tail}:** {secret}"
    elif form == "bold-out":
        line = f"{lead}**{name}{tail}**: {secret}"
    elif form == "code":
        line = f"{lead}`{name}`{tail}: {secret}"
    elif form == "plain":
        line = f"{lead}{name}{tail or ' (prod)'}: {secret}"
    else:
        line = f"{lead}{name}{tail} {r.choice(['->', '→', '—', '–', '=>'])} {secret}"
    text = "\n".join(x for x in (r.choice(_PROSE), line, r.choice(_PROSE)) if x)
    _check(text, secret)


def test_obs59_label_examples_and_prose_that_stays() -> None:
    """OBS-59 (L3, L11): the reviewed labels; labels of prose and code keep what follows them."""
    p = "Xk9mQ2vLp7Rt"
    for text in (f"- **Password:** {p}", f"**API key**: {p}", f"§ **Staging DB password:** {p}", f"`password`: {p}",
                 f"Password (prod): {p}", f"Password for the staging db: {p}", f"API key -> {p}", f"password — {p}",
                 f"Пароль от базы: {p}", f"API密钥: {p}", f"токен: {p}", f"API-Schlüssel: {p}", f"clé API : {p}",
                 f"Mot de passe : {p}"):
        _check(text, p)
    for text in ("    Direct credentials only — managed-Nous-gateway support lives on the",
                 "  BRV_API_KEY   — ByteRover API key (for cloud features, optional for local)",
                 "    :param storage_key: *(Optional)* Storage key.",
                 "            private_key (bytes): Base64 encoded PKCS#8 private key.",
                 "            encryptToken       (str)  — SessionToken",
                 "    - Other keys        → api.moonshot.ai/v1      (legacy Moonshot)",
                 "    def get_token(self) -> str:", "    (secret -> .env as MEM0_API_KEY).",
                 "- **Password:** must be at least 12 characters long", "**API key**: `sk-...`",
                 "Password for the staging db: see the vault", "- **Token usage:** 1234 tokens",
                 "Schlüssel: Wert"):
        assert scrub_text(text) == text, text


@pytest.mark.parametrize("value", ["UVZJP:fHb3", "Cmu/R1:Azb9", "IYSA/As:lfr5", "ID0:YML/Row8", "BRX/XA-rzx0",
                                   "Xbu38-ybp1", "OVSYVFB:kZf4", "KIF/Jjw7/YPq7", "TF0-Tn10:xFh6", "Hh5-Wge/lSa9",
                                   "EQE:SCO-ufw5", "EQESCO-ufw5", "Unrkeph-rOt5", "Ov0/En/SYi9"])
@pytest.mark.parametrize("label", ["`DB_PASSWORD` (staging):", "**Secret token of the bot:**", "API Key (prod) ->"])
def test_obs59_loose_labels_values_of_short_random_runs(label: str, value: str) -> None:
    """OBS-59 (L3): after a loose label (a parenthesis, a qualifying phrase, an arrow) the value must look generated:
    short runs of letters in both cases, no English word among them, are (``fHb3`` is no short numbered word like
    ``v2`` or ``Win10``: its case changes inside). Found by property draws: each was kept whole."""
    _check(f"Deploy notes.\n{label} {value}\nThe service restarts nightly.", value)


@pytest.mark.parametrize("value", ["us-east-1", "db01.internal", "api.moonshot.ai/v1", "IPv6-Win10", "AWS/us-east-1",
                                   "Win10-Py3", "Vault:kv/v2", "GPT4-Turbo", "vault:secret/db1", "Prod-DB-2",
                                   "Azure/Key-Vault-01", "README-v2.md", "PROD-db1"])
def test_obs59_loose_labels_keep_names_hosts_and_paths(value: str) -> None:
    """OBS-59 (L3): a loose label's value made of words, short names and numbers (a region, a host, a path, a version)
    stays, in one case or both."""
    text = f"- **Password (prod):** {value}"
    assert scrub_text(text) == text


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32))
@example(seed=8047651)  # 本番の密碼는 Ov0/En/SYi9。 (SYi9 read as a short numbered word)
def test_property_obs58_sentences_in_languages_without_separators(seed: int) -> None:
    """OBS-58 (L11): ``密码是P``, ``密码 P``, ``パスワードはP``, ``비밀번호는 P``, ``令牌：P``: the value only. (A value
    holding ``:`` or ``=`` glued to the sentence reads as a name of its own: left out.)"""
    r = random.Random(seed)
    secret = _password(r).replace(":", "").replace("=", "")
    word = r.choice(["密码", "密碼", "口令", "パスワード", "비밀번호", "令牌", "密钥", "トークン"])
    glue = r.choice(["是", "为", "は", "는 ", "：", ": ", " ", "是 "])
    before = r.choice(["", "数据库的", "本番の", "请注意，"])
    after = r.choice(["", "。", "，请妥善保管。", "です。", " "])
    _check(f"{before}{word}{glue}{secret}{after}", secret)


# ------------------------------------------------------------------------------------------------------------------
# Tables (L3)
# ------------------------------------------------------------------------------------------------------------------

_TABLE_NAMES = ("API_KEY", "password", "DB_PASSWORD", "token", "secret", "OPENAI_API_KEY", "SMTPPASS", "apiKey",
                "client_secret", "Password")
_FILLER = ("prod", "staging", "yes", "required", "string", "eu-west-1", "v2", "-")


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), box=st.booleans())
def test_property_obs59_pipe_and_box_tables(seed: int, box: bool) -> None:
    """OBS-59 (L3): a row of a Markdown or box table: the cell after a cell naming a credential is the value, in any
    column, with any padding, in backticks or not; the other cells stay."""
    r = random.Random(seed)
    secret = _password(r).replace("|", "")
    bar = "│" if box else "|"
    ncols = r.randint(2, 5)
    at = r.randrange(ncols - 1)
    tick = r.choice(["", "`"]) if not box else ""
    cells = [r.choice(_FILLER) for _ in range(ncols)]
    cells[at] = f"{tick}{r.choice(_TABLE_NAMES)}{tick}"
    cells[at + 1] = f"{tick}{secret}{tick}"
    pads = [(" " * r.randint(1, 3), " " * r.randint(1, 6)) for _ in cells]
    row = bar + bar.join(f"{a}{c}{b}" for c, (a, b) in zip(cells, pads, strict=True)) + bar
    header = bar + bar.join(f" {h} " for h in ["Name", "Value", "Env", "Note", "Kind"][:ncols]) + bar
    rule = bar + bar.join("---" for _ in range(ncols)) + bar
    text = "\n".join([r.choice(_PROSE), header, rule, row, r.choice(_PROSE)]).strip("\n")
    _check(text, secret)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), width=st.integers(8, 40), underline=st.booleans())
def test_property_obs59_column_tables(seed: int, width: int, underline: bool) -> None:
    """OBS-59 (L3): a table of columns aligned by blanks (PowerShell's ``Name  Value`` with its ``----  -----``
    underline): the second column of a row whose first names a credential."""
    r = random.Random(seed)
    secret = _password(r)
    name = r.choice(_TABLE_NAMES)
    width = max(width, len(name) + 2)
    rows = [("Name", "Value")] + ([("----", "-----")] if underline else [])
    rows += [("PATH", "/usr/bin"), (name, secret), ("HOME", "/home/u")]
    r.shuffle(rows[2 if underline else 1:])
    text = "\n".join(f"{a.ljust(width)}{b}" for a, b in rows)
    _check(text, secret)


def test_obs59_table_examples_and_cells_that_stay() -> None:
    """OBS-59 (L3): the reviewed tables; a description, a type, a note in parentheses stay."""
    p = "Xk9mQ2vLp7Rt"
    for text in (f"| Name | Value |\n|---|---|\n| API_KEY | {p} |", f"| password | {p} |",
                 f"| `DB_PASSWORD` | `{p}` | prod |", f"│ API_KEY  │ {p} │",
                 f"Name                           Value\n----                           -----\nAPI_KEY"
                 f"                        {p}"):
        _check(text, p)
    for text in ("| `OPENVIKING_API_KEY` | (none) | User/admin API key for authenticated servers |",
                 "| `RETAINDB_API_KEY` | (required) | API key |", "| api_key | string | Yes |",
                 "| token | TokenType | the lexer's token |", "| `API_KEY` | Your OpenAI API key | required |",
                 "| password | `<your-password>` |"):
        assert scrub_text(text) == text, text


# ------------------------------------------------------------------------------------------------------------------
# Code (L7)
# ------------------------------------------------------------------------------------------------------------------

_CODE_NAMES = (["password"], ["api", "key"], ["token"], ["secret"], ["client", "secret"], ["access", "token"],
               ["auth", "token"], ["db", "password"])


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_property_obs58_setter_and_builder_calls(seed: int) -> None:
    """OBS-58 (L7): a setter whose name holds a credential name (``setPassword``, ``set_api_key``, ``withToken``)
    or a builder's ``.password(...)``, with the credential as its only string argument."""
    r = random.Random(seed)
    secret = _password(r).replace("\\", "")
    words = r.choice(_CODE_NAMES)
    verb = r.choice(["set", "with", "use"])
    style = r.choice(["camel", "snake", "builder"])
    if style == "camel":
        callee = verb + "".join(w.title() for w in words)
    elif style == "snake":
        callee = "_".join([verb, *words])
    else:
        callee = words[0] + "".join(w.title() for w in words[1:])
    q = r.choice(['"', "'"])
    obj = r.choice(["ds", "client", "builder", "self.conn", "cfg"])
    dot = "." if style == "builder" and r.random() < 0.5 else f"{obj}."
    text = f"{' ' * r.randint(0, 8)}{dot}{callee}({q}{secret}{q}){r.choice(['', ';', ')', ' // prod'])}"
    _check(text, secret)


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_property_obs58_typed_declarations_and_env_calls(seed: int) -> None:
    """OBS-58 (L7): the type between a name and ``=`` (Go, Rust, TypeScript, Kotlin, Python annotations), a value
    given with its name to ``env`` / ``Setenv`` / ``getenv``, and a Terraform variable's default."""
    r = random.Random(seed)
    secret = _password(r).replace("\\", "")
    name = r.choice(["token", "API_KEY", "apiKey", "dbPassword", "client_secret", "AUTH_TOKEN"])
    q = '"'
    form = r.choice(["go", "rust", "ts", "kotlin", "python", "env", "setenv", "terraform"])
    if form == "go":
        text = f"{r.choice(['const', 'var'])} {name} string = {q}{secret}{q}"
    elif form == "rust":
        text = f"{r.choice(['const', 'static', 'pub const'])} {name}: &{r.choice(['', chr(39) + 'static '])}str = " \
               f"{q}{secret}{q};"
    elif form == "ts":
        text = f"{r.choice(['const', 'let', 'export const'])} {name}: string = {q}{secret}{q};"
    elif form == "kotlin":
        text = f"val {name}: String = {q}{secret}{q}"
    elif form == "python":
        text = f"{name}: str = {q}{secret}{q}"
    elif form == "env":
        text = f"'db' => env('{name}', '{secret}'),"
        q = "'"
    elif form == "setenv":
        text = f'os.{r.choice(["Setenv", "setenv", "putenv"])}("{name}", "{secret}")'
    else:
        text = f'variable "{name}" {{\n  type    = string\n  default = "{secret}"\n}}'
    _check(text, secret)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), indent=st.integers(0, 12))
def test_property_obs59_value_on_the_next_line(seed: int, indent: int) -> None:
    """OBS-59 (L7): a formatter's wrap puts the value on the line after its name (``"password":`` / ``api_key=``):
    the string there is the value; JSON stays JSON."""
    r = random.Random(seed)
    secret = _password(r).replace("\\", "")
    name = r.choice(["password", "api_key", "token", "client_secret"])
    if r.random() < 0.5:
        text = f'{{\n  "{name}":\n{" " * indent}"{secret}",\n  "n": 1\n}}'
        out = scrub_text(text)
        json.loads(out)
    else:
        text = f'client = OpenAI(\n    {name}=\n{" " * indent}"{secret}",\n)'
    _check(text, secret)


def test_obs58_code_examples_and_code_that_stays() -> None:
    """OBS-58 (L7): the reviewed code shapes; constants, types and calls of code stay."""
    p = "Xk9mQ2vLp7Rt"
    for text in (f'ds.setPassword("{p}");', f'.password("{p}")', f"client.set_api_key('{p}')",
                 f"'password' => env('DB_PASSWORD', '{p}'),", f'os.Setenv("API_TOKEN", "{p}")',
                 f'const token string = "{p}"', f'const API_KEY: &str = "{p}";',
                 f'variable "db_password" {{\n  default = "{p}"\n}}', f'{{\n  "password":\n    "{p}"\n}}',
                 f'client = OpenAI(\n    api_key=\n        "{p}",\n)'):
        _check(text, p)
    for text in ('    GET_ALL_COOKIES: str = "getCookies"', '        session_cookie: str = "session",',
                 'p.token("(")', 'form.password("Password")', 'setToken(token)', 'self.set_password("")',
                 'builder.setKey("enter")', 'API_KEY = os.getenv("API_KEY")',
                 'variable "db_password" {\n  sensitive = true\n}'):
        assert scrub_text(text) == text, text


# ------------------------------------------------------------------------------------------------------------------
# Weak names in quotes (L9), schemes and signatures (L5, O4, O9)
# ------------------------------------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(["key", "session", "jwt", "signature", "sig", "code", "pat"]))
def test_property_obs58_weak_names_in_quotes(seed: int, name: str) -> None:
    """OBS-58 (L9): under a weak name in quotes a generated value is a credential, as after ``name=``; a word, an
    identifier, a sentence, a UUID, a value named after its key stay."""
    r = random.Random(seed)
    secret = _password(r).replace("\\", "") + "Zq9"
    text = json.dumps({name: secret, "n": r.randint(0, 9)})
    _check(text, secret)
    json.loads(scrub_text(text))
    for value in ("account", "catalog:daily-briefing", "Not set!", "13e15580-5a60-4cee-9adc-47bbaed1cb8b",
                  "legacy.exceptions", f"{name}_ET.UTF-8", "the value of the thing"):
        kept = json.dumps({name: value})
        assert scrub_text(kept) == kept, kept


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_property_obs57_hyphenated_authorization_schemes(seed: int) -> None:
    """OBS-57 (L5): an ``Authorization`` value whose scheme word is hyphenated (``DeepL-Auth-Key``,
    ``Klaviyo-API-Key``, ``Api-Token``): the scheme stays, the credential goes."""
    r = random.Random(seed)
    secret = _password(r).replace("\\", "")
    parts = [r.choice(["DeepL", "Klaviyo", "Api", "Acme", "Vendor"]), r.choice(["Auth", "API", "Token", "Key"])]
    if r.random() < 0.5:
        parts.append(r.choice(["Key", "Token"]))
    scheme = "-".join(parts)
    _check(f"{r.choice(['Authorization', 'authorization'])}: {scheme} {secret}", secret)


def test_obs57_authorization_parameters_and_signatures() -> None:
    """OBS-57 (O4, O9): AWS4 ``Credential=`` (the key id, not its scope) and ``Signature=``, an HTTP Signature's
    ``signature="…"`` (``keyId`` stays), and a digest after its algorithm (``sha256=<hex>``)."""
    key, sig = "AKIAIOSFODNN7ABCDEF2", "Xk9mQ2vLp7Rtabc"
    text = (f"Authorization: AWS4-HMAC-SHA256 Credential={key}/20240101/us-east-1/s3/aws4_request, "
            f"SignedHeaders=host;x-amz-date, Signature={sig}")
    assert scrub_text(text) == text.replace(key, redaction_marker(key)).replace(sig, redaction_marker(sig))
    text = ('Authorization: Signature keyId="rsa-key-1",algorithm="rsa-sha256",headers="(request-target) date",'
            f'signature="{sig}="')
    _check(text, sig + "=")
    digest = "0123456789abcdef" * 4
    _check(f"X-Hub-Signature-256: sha256={digest}", digest)


# ------------------------------------------------------------------------------------------------------------------
# A login column, htpasswd lines, a name and a value in one string of a call (OBS-58, OBS-59)
# ------------------------------------------------------------------------------------------------------------------

_LOGIN_HEADERS = ("login", "Login", "logins", "user:pass", "username/password", "sign-in", "登录", "ログイン")
_LOGIN_USERS = ("admin", "root", "deploy", "alice@example.com", "svc_backup")


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), header=st.sampled_from(_LOGIN_HEADERS), user=st.sampled_from(_LOGIN_USERS),
       sep=st.sampled_from((":", "/", " / ")), layout=st.sampled_from(("pipe", "csv", "tsv", "semicolon")),
       wrap=st.sampled_from(("", "`")))
def test_property_obs59_a_login_column_holding_user_and_password(seed: int, header: str, user: str, sep: str,
                                                                 layout: str, wrap: str) -> None:
    """OBS-58, OBS-59: a table's or a CSV's ``login`` column holding ``user:P``: the password only, the user and the
    other cells stay (a login column's user alone stays: test_scrub_false_positives)."""
    secret = _password(random.Random(seed))
    cell = f"{user}{sep}{secret}"
    if layout == "pipe":
        text = f"| host | {header} | note |\n|---|---|---|\n| db1 | {wrap}{cell}{wrap} | prod |\n| web | admin | - |"
    else:
        if " " in sep:
            sep = ":"
            cell = f"{user}{sep}{secret}"
        d = {"csv": ",", "tsv": "\t", "semicolon": ";"}[layout]
        text = f"host{d}{header}{d}note\ndb1{d}{cell}{d}prod\nweb{d}admin{d}-"
    _check(text, secret)


def _apr1(r: random.Random) -> str:
    salt = "".join(r.choice(string.ascii_letters + string.digits) for _ in range(8))
    return f"$apr1${salt}$" + "".join(r.choice(string.ascii_letters + string.digits + "./") for _ in range(22))


def _bcrypt(r: random.Random) -> str:
    return f"$2{r.choice('aby')}${r.choice(('10', '12'))}$" + "".join(
        r.choice(string.ascii_letters + string.digits + "./") for _ in range(53))


def _sha(r: random.Random) -> str:
    return r.choice(("{SHA}", "{SSHA}")) + base64.b64encode(r.randbytes(20)).decode()


def _sha512_crypt(r: random.Random) -> str:
    return "$6$" + "".join(r.choice(string.ascii_letters) for _ in range(16)) + "$" + "".join(
        r.choice(string.ascii_letters + string.digits + "./") for _ in range(86))


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), user=st.sampled_from(("alice", "bob", "carol", "admin", "www-data", "j.doe")),
       kind=st.sampled_from((_apr1, _bcrypt, _sha, _sha512_crypt)),
       shape=st.sampled_from(("{u}:{h}", "{u}:{h}\n", "  {u}:{h}", "`{u}:{h}`",
                              '"{u}:{h}"', "echo '{u}:{h}' >> .htpasswd")))
def test_property_obs59_htpasswd_and_shadow_lines_keep_the_user(seed: int, user: str, kind: object, shape: str) -> None:
    """OBS-58, OBS-59: an ``.htpasswd`` or ``shadow`` line (``alice:$apr1$…``, ``bob:{SHA}…``, ``carol:$2y$10$…``):
    the hash only, the user and what encloses the line stay."""
    assert callable(kind)
    secret = kind(random.Random(seed))
    _check("other line\n" + shape.format(u=user, h=secret), secret)


_CALLS = ('print("{n} {p}")', "log.info('{n} {p}')", 'logger.debug("{n} {p}");', 'console.log("{n} {p}")',
          'print("{n}: {p}")', "self.log.warning('{n} - {p}')", 'puts("{n} {p}")', 'print( "{n} {p}" )')


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), call=st.sampled_from(_CALLS),
       name=st.sampled_from(("client_secret", "api_key", "auth_token", "DB_PASSWORD", "access_token", "password")))
def test_property_obs59_a_name_and_its_value_in_one_string_of_a_call(seed: int, call: str, name: str) -> None:
    """OBS-58, OBS-59: ``print("client_secret P")``, ``log.info("api_key P")``: the value only, the call and its
    quotes stay."""
    secret = _password(random.Random(seed))
    _check("    " + call.format(n=name, p=secret), secret)


_BOXES = {"box": ("│", "├", "┼", "┤", "─"), "heavy": ("┃", "┡", "╇", "┩", "━"), "double": ("║", "╠", "╬", "╣", "═")}
"""A drawn box's bar and the pieces of the line under its header: left edge, crossing, right edge, dash."""


def _table(kind: str, header: tuple[str, ...], rows: list[list[str]]) -> str:
    """``rows`` under ``header`` as a CSV, a TSV, ``psql``'s output or a box drawn with lines."""
    if kind == "csv":
        return ",".join(header) + "\n" + "\n".join(",".join(row) for row in rows)
    if kind == "tsv":
        return "\t".join(header) + "\n" + "\n".join("\t".join(row) for row in rows)
    widths = [max(len(c), *(len(row[i]) for row in rows)) for i, c in enumerate(header)]
    if kind == "psql":
        return (" " + " | ".join(c.ljust(widths[i]) for i, c in enumerate(header)) + "\n"
                + "-+-".join("-" * (w + 1) for w in widths) + "\n"
                + "\n".join(" " + " | ".join(row[i].ljust(widths[i]) for i in range(len(header))) for row in rows))
    bar, left, cross, right, dash = _BOXES[kind]
    line = left + cross.join(dash * (w + 2) for w in widths) + right
    return "\n".join([f"{bar} " + f" {bar} ".join(c.ljust(widths[i]) for i, c in enumerate(header)) + f" {bar}",
                      line] + [f"{bar} " + f" {bar} ".join(row[i].ljust(widths[i]) for i in range(len(header)))
                               + f" {bar}" for row in rows])


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), kind=st.sampled_from(["csv", "tsv", "psql", "box", "heavy", "double"]),
       header=st.sampled_from([("service", "user", "password"), ("host", "login", "pass"), ("name", "api_key"),
                               ("Service", "Username", "Password", "Notes")]),
       wrapped=st.booleans())
def test_property_obs58_a_password_column_loses_every_rows_value_in_a_tool_result_and_a_drawn_box(
        seed: int, kind: str, header: tuple[str, ...], wrapped: bool) -> None:
    """OBS-58: under a header naming a password column, every row's cell goes: the last row's too when the table is
    a JSON string's text (a tool's result: the row ends at the string's closing quote), and in a box drawn with
    lines (``├───┼───┤``, ``┡━━━╇━━━┩``, ``╠═══╬═══╣`` under the header)."""
    r = random.Random(seed)
    secrets: list[str] = []
    rows = []
    for _ in range(r.randint(1, 4)):
        row = []
        for name in header:
            low = name.lower()
            if low in ("password", "pass", "api_key"):
                secret = "".join(r.choice(string.ascii_letters) for _ in range(9)) + str(r.randint(10, 99)) + "Qz"
                secrets.append(secret)
                row.append(secret)
            else:
                row.append({"user": "bob", "username": "alice@example.com", "login": "admin",
                            "notes": "prod"}.get(low, r.choice(["db", "grafana", "nas"])))
        rows.append(row)
    text = _table(kind, header, rows)
    expected = text
    for secret in secrets:
        expected = expected.replace(secret, redaction_marker(secret))
    if wrapped:
        text, expected = json.dumps({"output": text}, ensure_ascii=False), json.dumps({"output": expected},
                                                                                        ensure_ascii=False)
    assert scrub_text(text) == expected

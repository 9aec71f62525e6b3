"""The credential shapes found by what stands in front of them, after the scrubber's review (spec 01 OBS-57, OBS-58,
OBS-59; spec 04 FMT-33a): client options with quoted passwords, string prefixes, URL userinfo, session parameters,
cookies, parameter defaults, YAML / TOML / code forms, argument lists, full-width and tab separators, foreign
credential words; what stays around each secret (host and path, closing markup, ``Digest`` parameter names,
``pass:``, the punctuation after a value); and the ordinary text that stays whole (placeholders, code after a
quoted key, brackets, prose and headings, help texts, templates, settings, paths, translations).

Every secret is generated (random letters and digits, 12-40 characters, never a dictionary word) and every shape is
checked plain, JSON-escaped one to three times (alone or as a document's string) and percent-encoded: the output is
the input with exactly the secret's encoded span replaced by its marker. The detectors' pre-checks are exact:
``find_spans(text) == find_spans(text, gated=False)`` for generated texts made of every name the name rules accept.
"""

from __future__ import annotations

import random
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine import scrub_clients as sc
from hermes_pipeline.engine import scrub_names as sn
from hermes_pipeline.engine.scrub import find_spans, redaction_marker, scrub_text

from tests.engine._scrub_support import ALNUM, password, wrapper

SECRETS = st.text(alphabet=ALNUM, min_size=12, max_size=40).filter(
    lambda s: any(c.isdigit() for c in s) and any(c.isalpha() for c in s))
"""Generated credentials: letters and digits, 12-40 characters (a digit and a letter, so never a word)."""

WRAPPERS = [("plain", 1), ("json", 1), ("json", 2), ("json", 3), ("doc", 1), ("doc", 2), ("url", 1)]

Shape = tuple[str, Callable[[str], str]]


def _same(s: str) -> str:
    return s


def _slashed(s: str) -> str:
    return s[:5] + "/" + s[5:]


def _hashed(s: str) -> str:
    return s[:4] + "#" + s[4:]


def _asked(s: str) -> str:
    return s[:6] + "?" + s[6:]


def _grouped(s: str) -> str:
    """An app-specific password: four groups of four lower-case letters, generated (not words)."""
    r = random.Random(s)
    return "-".join("".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(4)) for _ in range(4))


# Each shape: the text with ``{s}`` where the secret stands, and how the secret is made from a generated one.
CLIENT_SHAPES: dict[str, Shape] = {
    "sshpass single-quoted": ("sshpass -p '{s}' ssh deploy@host", _same),
    "sshpass double-quoted": ('sshpass -p "{s}" ssh host', _same),
    "redis-cli quoted": ("redis-cli -h cache -a '{s}' ping", _same),
    "redis-cli double-quoted": ('redis-cli -a "{s}" --no-auth-warning', _same),
    "ldapsearch quoted": ("ldapsearch -x -D cn=admin -w '{s}' -b dc=example", _same),
    "docker login quoted": ("docker login -u me -p '{s}' registry.example.com", _same),
    "mongo quoted": ("mongo -u admin -p '{s}' admin", _same),
    "smbclient quoted": ("smbclient //h/share -U 'me%{s}'", _same),
    "smbclient double-quoted": ('smbclient //h/share -U "me%{s}"', _same),
    "curl user quoted": ("curl -u 'alice:{s}' https://x.example", _same),
    "curl user glued": ("curl -ualice:{s} https://x.example", _same),
    "sshpass argument list": ('subprocess.run(["sshpass", "-p", "{s}", "ssh", "h"])', _same),
    "mysql argument list": ('subprocess.run(["mysql", "-u", "root", "-p{s}", "db"])', _same),
    "keytool storepass": ("keytool -genkey -alias a -storepass {s} -dname CN=x", _same),
    "sqlcmd": ("sqlcmd -S db -U sa -P '{s}' -Q x", _same),
    "zip": ("zip -P {s} out.zip file", _same),
    "7z": ("7z a -p{s} out.7z dir", _same),
    "ssh-keygen": ("ssh-keygen -t ed25519 -N '{s}' -f key", _same),
    "openssl pass:": ("openssl enc -aes-256-cbc -pass pass:{s} -in f", _same),
    "openssl -k": ("openssl enc -k {s} -in f", _same),
    "powershell": ('$c = ConvertTo-SecureString "{s}" -AsPlainText -Force', _same),
    "sqlplus": ("sqlplus scott/{s}@orcl", _same),
}
STRING_SHAPES: dict[str, Shape] = {
    "bytes value": ("{{'password': b'{s}'}}", _same),
    "raw value": ("{{'password': r'{s}'}}", _same),
    "unicode value": ("{{'password': u'{s}'}}", _same),
    "bytes key and value": ("{{b'password': b'{s}'}}", _same),
    "f-string without a field": ('{{"token": f"{s}"}}', _same),
    "raw bytes assignment": ("password = rb'{s}'", _same),
    "toml single triple": ("token = '''{s}'''", _same),
    "toml double triple": ('token = """{s}"""', _same),
}
URL_SHAPES: dict[str, Shape] = {
    "bare token user": ("https://{s}@github.com/org/repo.git", _same),
    "remote set-url": ("git remote set-url origin https://{s}@github.com/o/r.git", _same),
    "user holding @": ("ftp://me@example.com:{s}@ftp.example.com/pub", _same),
    "scheme-relative": ("//alice:{s}@db.internal/path", _same),
    "password with /": ("postgres://app:{s}@db:5432/app", _slashed),
    "password with #": ("postgres://app:{s}@db:5432/app", _hashed),
    "password with ?": ("postgres://app:{s}@db:5432/app", _asked),
    "x-access-token user": ("git clone https://x-access-token:{s}@github.com/org/repo.git", _same),
    "__token__ user": ("pip install -i https://__token__:{s}@pypi.example.com/simple pkg", _same),
    "gitlab-ci-token user": ("https://gitlab-ci-token:{s}@gitlab.com/g/p.git", _same),
    "token user": ("https://token:{s}@github.com/org/repo.git", _same),
    "dsn key": ("SENTRY_DSN=https://{s}@o1.ingest.sentry.io/1", _same),
    "jwt parameter": ("https://x.example/cb?jwt={s}&page=2", _same),
    "session_id parameter": ("https://x.example/?session_id={s}", _same),
    "jsessionid path parameter": ("https://x.example/app;jsessionid={s}?a=1", _same),
    "ticket parameter": ("https://sso.example/validate?ticket={s}&service=x", _same),
    "sid parameter": ("https://x.example/?sid={s}", _same),
}
HEADER_SHAPES: dict[str, Shape] = {
    "later cookie": ("Cookie: theme=dark; PHPSESSID={s}; lang=en", _same),
    "last cookie": ("Cookie: a=1; JSESSIONID={s}", _same),
    "set-cookie": ("Set-Cookie: session={s}; Path=/; HttpOnly", _same),
    "cookie in json": ('{{"Cookie": "theme=dark; sid={s}"}}', _same),
    "connect.sid": ("cookie: connect.sid={s}", _same),
    "bearer in markup": ("<Authorization>Bearer {s}</Authorization>", _same),
    "bearer in parentheses": ("(Authorization: Bearer {s})", _same),
    "bearer in brackets": ("[Bearer {s}]", _same),
    "digest": ('Authorization: Digest username="bob", realm="r", nonce="abc", response="{s}"', _same),
}
CONFIG_SHAPES: dict[str, Shape] = {
    "compose default": ("password: ${{DB_PASSWORD:-{s}}}", _same),
    "assign default": ("API_KEY=${{API_KEY:={s}}}", _same),
    "own default": ("PASSWORD=${{PASSWORD:-{s}}}", _same),
    "exported default": ('export TOKEN="${{GITHUB_TOKEN:-{s}}}"', _same),
    "yaml tag": ("password: !!str {s}", _same),
    "yaml anchor": ("password: &pw {s}\nother: *pw", _same),
    "yaml tag and anchor": ("password: !!str &pw {s}", _same),
    "yaml literal block": ("password: |\n  {s}\nnext: 1", _same),
    "yaml folded block": ("password: >-\n  {s}\nnext: 1", _same),
    "yaml next line": ("password:\n  {s}\nnext: 1", _same),
    "yaml list": ("passwords:\n  - {s}\nnext: 1", _same),
    "flow list": ('api_keys: ["{s}"]', _same),
    "json list": ('{{"api_keys": ["{s}"]}}', _same),
    "k8s env": ('- name: DB_PASSWORD\n  value: "{s}"', _same),
    "name and value": ('{{"name": "API_KEY", "value": "{s}"}}', _same),
    "key and value": ('[{{"key":"password","value":"{s}"}}]', _same),
    "php array": ("'password' => '{s}',", _same),
    "php double-quoted": ('"password" => "{s}"', _same),
    "ruby symbol": (":password => '{s}'", _same),
    "perl pair": ("password => '{s}'", _same),
    "wordpress define": ("define('DB_PASSWORD', '{s}');", _same),
    "environ item": ("os.environ['DB_PASSWORD'] = '{s}'", _same),
    "config item": ('config["password"] = "{s}"', _same),
    "minified js": ('{{user:"a",password:"{s}"}}', _same),
    "minified single": ("{{password:'{s}'}}", _same),
    "argv flag": ('args: ["--token", "{s}"]', _same),
    "setdefault": ('os.environ.setdefault("API_KEY", "{s}")', _same),
    "getenv default": ('os.getenv("API_KEY", "{s}")', _same),
    "auth tuple": ('auth=("alice", "{s}")', _same),
    "odbc braces": ("Server=tcp:db;Password={{{s}}};Database=app", _same),
    "full-width colon": ("password：{s}", _same),
    "full-width equals": ("password＝{s}", _same),
    "tab": ("PASSWORD\t{s}", _same),
    "russian": ("Пароль: {s}", _same),
    "chinese": ("密码：{s}", _same),
    "german": ("Passwort: {s}", _same),
    "spanish": ("contraseña: {s}", _same),
    "portuguese": ("senha={s}", _same),
    "short pw": ("DB_PW={s}", _same),
    "app password groups": ("app_password: {s}", _grouped),
    "connection string": ("CONNECTION_STRING={s}", _same),
    "ConnectionString": ("ConnectionString: {s}", _same),
    "sid flag": ("--sid {s}", _same),
    "netrc": ("machine example.com login alice password {s}", _same),
    "dockerfile env": ("ENV DB_PASSWORD {s}", _same),
    "aws configure": ("aws configure set aws_secret_access_key {s}", _same),
    "setx": ("setx API_KEY {s}", _same),
    "fish set": ("set -gx API_KEY {s}", _same),
    "cdata": ("<password><![CDATA[{s}]]></password>", _same),
    "value attribute": ('<password value="{s}"/>', _same),
    "element on its own line": ("<password>\n  {s}\n</password>", _same),
    "entry key": ('<entry key="password">{s}</entry>', _same),
    "android string": ('<string name="api_key">{s}</string>', _same),
    "cjk comma after": ("API_KEY={s}，下一个", _same),
    "cjk full stop after": ("API_KEY={s}。次", _same),
    "cjk bracket after": ("API_KEY={s}」", _same),
    "nul after": ("API_KEY={s}\x00HOST=x", _same),
}
ALL_SHAPES = {**CLIENT_SHAPES, **STRING_SHAPES, **URL_SHAPES, **HEADER_SHAPES, **CONFIG_SHAPES}


def _check(template: str, secret: str) -> None:
    """``template`` with ``secret`` in every wrapper: exactly the secret's encoded span becomes its marker."""
    before, after = template.split("{s}")
    before, after = before.replace("{{", "{").replace("}}", "}"), after.replace("{{", "{").replace("}}", "}")
    for kind, level in WRAPPERS:
        encode, left, right = wrapper(kind, level)
        text = left + encode(before) + encode(secret) + encode(after) + right
        expected = left + encode(before) + redaction_marker(secret) + encode(after) + right
        assert scrub_text(text) == expected, (kind, level)


@pytest.mark.parametrize("name", sorted(ALL_SHAPES))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(secret=SECRETS)
def test_obs58_obs59_each_shape_loses_exactly_its_secret_in_every_wrapper(name: str, secret: str) -> None:
    """OBS-58 (recall) and OBS-59 (only the value, nothing else): each shape of the review, with a generated secret,
    plain, JSON-escaped 1-3x, in a document and percent-encoded: the output is the input with exactly the secret's
    span replaced (the host and path after a token user, ``pass:``, the closing tag, the ``-`` of ``${X:-P}``, the
    cookie names, ``username=``, the punctuation after a value stay)."""
    template, make = ALL_SHAPES[name]
    _check(template, make(secret))


# ---------------------------------------------------------------------------------------------- false positives

ORDINARY = [
    # placeholders after Bearer / Basic (OBS-57 keeps the scheme word; a placeholder is no credential)
    'curl -H "Authorization: Bearer $TOKEN" https://api.example.com', "Authorization: Bearer ${OPENAI_API_KEY}",
    "Authorization: `Bearer ${token}`", "Authorization: Bearer ***", "Authorization: Bearer [REDACTED]",
    "Authorization: Bearer YOUR_API_KEY", "Authorization: Bearer sk-...", "Authorization: Bearer <token>",
    # code after a quoted key
    '"max_tokens": self.max_tokens,', '"input_tokens": result.get("input_tokens"),',
    '"api_key": os.environ["API_KEY"],', '{"api_key": api_key}', '"max_completion_tokens": max_completion_tokens,',
    'headers = {"Authorization": f"Bearer {api_key}"}', '"password": _PGVECTOR_PASSWORD,',
    # an opening bracket is never a value
    "AUTH_PASSWORD_VALIDATORS = [", "PASSWORD_HASHERS = [", "SECRET_KEY = (", "cookie_jar = []", "secrets = {}",
    "api_keys: [...]", "security: [{bearerAuth: []}]", 'token.meta = {"kind": alert_kind}',
    # Basic / Bearer in prose and headings, a challenge's parameters
    "## Basic Usage", "# Basic setup", "Basic Auth", "use Basic auth", "Visual Basic 6", "Bearer JWT",
    "the Bearer scheme", "Basic Example2", "Use HTTP Basic Authentication (RFC 7617).",
    'WWW-Authenticate: Bearer realm="x"', 'WWW-Authenticate: Bearer realm="example", error="invalid_token"',
    'WWW-Authenticate: Basic realm="Restricted Area"',
    # docstrings and help texts
    "    api_key: The API key to use.", "Options:\n  --password TEXT  The password.\n  --token TEXT     API token.",
    "password: HTTP Basic Auth password.", "credentials: Hard coded authorized credentials. It can be a",
    'print("ERROR: No client secret stored. Run --client-secret first.")',
    # templates and f-strings
    "password: {{ .Values.db.password }}", "api_key={{ api_key }}", 'f"password={password!r}"',
    'f"token={self.token}"', "token: ${{ secrets.GITHUB_TOKEN }}",
    # settings, counts, identifiers, type annotations
    "fetch(url, { credentials: 'same-origin' })", "credentials: include", "secrets: inherit", "otp: disabled",
    "mfa: enabled", "cookie: HttpOnly", "PASS: test_login (0.01s)", "AUTH_RETRIES = 3", "MAX_PASS = 5",
    'pat: "^[a-z]+$"', "code=codes.X", "min(a, key=_distance_key_fn)", "create_key=_descriptor._internal_create_key",
    "credentials: ChannelCredentials | None", "pin=12", "token.map = lines", "username, password = value",
    "storage_key: storage.SerializedStorageKey", "code = codes.IMPORT_NOT_FOUND",
    "RegOpenKeyEx = winreg.OpenKeyEx", "errSSLServerAuthCompleted = -9841", "status_code=HTTP_401_UNAUTHORIZED,",
    # paths, ARNs, resource names under credential names
    "GOOGLE_APPLICATION_CREDENTIALS=/home/u/.config/gcloud/sa.json", "SSH_AUTH_SOCK=/tmp/ssh-XXXXabcd1234/agent.1",
    "secret_arn=arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbC123",
    "SecretId: arn:aws:secretsmanager:us-east-1:123456789012:secret:prod-db-Xy12Ab",
    'export GOOGLE_APPLICATION_CREDENTIALS="$HOME/keys/sa.json"', 'dsn: "postgres://localhost/app"',
    "secret: projects/my-proj/secrets/db-password/versions/latest",
    # translations: a phrase is no name
    '{"Forgot password?": "Mot de passe oublié ?"}', '"Invalid token": "Jeton invalide"',
    '{"login.password": "Password"}',
    # sentinels and defaults
    "PASSWORD=changeme", "PASSWORD=your-password-here", "OPENAI_API_KEY=sk-your-key-here", "OPENAI_API_KEY=sk-...",
    '"api_key": "aws-sdk",', 'api_key = "no-key-required"', "password: ${DB_PASSWORD}", "PASSWORD=${PASSWORD:-}",
    "password: ${PW:?must be set}", "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
    # URLs whose '@' or ':' is no userinfo, cookies without credentials
    "https://localhost:8080/@types/node", "http://example.com:8080/users/@alice", "ssh://git@github.com/o/r.git",
    "Cookie: theme=dark; lang=en", "Set-Cookie: theme=dark; Path=/; HttpOnly",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_obs59_ordinary_text_near_credential_words_is_kept(text: str) -> None:
    """OBS-59 / OBS-57: the review's false positives (placeholders after a scheme word, code after a quoted key,
    brackets, prose and headings, help texts, templates, settings, paths, translations, sentinels) stay whole."""
    assert scrub_text(text) == text


_IDENTS = ["result", "items", "value", "config", "client", "session_id", "entry_json", "token_provider", "alert_kind",
           "current_key", "lines", "headers", "payload", "max_tokens"]
_TYPES = ["ChannelCredentials", "SessionStore", "PrivateKeyTypes", "HTTPBasicAuth", "AccessTokenProvider",
          "RealtimeSessionParam", "MinimumLengthValidator", "SerializedStorageKey"]
_WORDS = ["usage", "setup", "example", "overview", "configuration", "options", "reference", "authentication"]
_NAMES = ["password", "api_key", "token", "secret", "auth_token", "credentials", "access_key", "client_secret",
          "db_password", "session_token"]


def _ordinary(r: random.Random) -> str:
    """A generated line of the review's false-positive classes (each kept by a rule, whatever its words)."""
    name, ident, typ, word = r.choice(_NAMES), r.choice(_IDENTS), r.choice(_TYPES), r.choice(_WORDS)
    return r.choice([
        f'"{name}": self.{ident},', f'"{name}": {ident},', f'"{name}": os.environ["{name.upper()}"],',
        f'"{name}": {ident}.get("{ident}"),', f"{name.upper()}_VALIDATORS = [", f"{name} = {{}}",
        f"{name}: {typ} | None = None", f"## Basic {word.title()}", f"# Bearer {word}", f"Use Basic {word} here.",
        f"{name}: The {word} to use.", f"  --{name.replace('_', '-')} TEXT  The {word}.",
        f"{name}: {{{{ .Values.{ident}.{name} }}}}", f'f"{name}={{{ident}!r}}"', f"{name}={{{{ {ident} }}}}",
        f"{name}: ${{{name.upper()}}}", f"Authorization: Bearer ${{{name.upper()}}}",
        f"{name.upper()}_FILE=/run/secrets/{ident}.txt",
        f"{name}_arn=arn:aws:secretsmanager:us-east-1:1:secret:{ident}",
        f'"Forgot {name.replace("_", " ")}?": "{word}"', f"{name}: {ident}", f"{name} = {ident}",
        f"{name.upper()}_RETRIES = {r.randint(0, 999)}", f"max_{name}_length = {r.randint(0, 64)}",
    ])


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_property_obs59_generated_lines_of_the_reviewed_classes_are_kept(seed: int) -> None:
    """OBS-59: lines generated from the review's false-positive classes, with other names, identifiers, types and
    words, stay whole (alone and several joined)."""
    r = random.Random(seed)
    lines = [_ordinary(r) for _ in range(r.randint(1, 4))]
    for text in (lines[0], "\n".join(lines)):
        assert scrub_text(text) == text


MAX_CHANGED_RATIO = 0.001


def test_fmt33a_real_code_changes_at_most_a_tenth_of_a_percent() -> None:
    """OBS-59 on real text: of the lines of the Python sources installed here (the standard library and the
    environment's packages, their tests and this package aside: a sample of 200,000 lines of code, docstrings,
    comments and data), at most 0.1 % are changed by the scrubber."""
    skip = {"test", "tests", "idlelib", "hermes_pipeline"}
    files = sorted({p for key in ("stdlib", "purelib") for p in Path(sysconfig.get_paths()[key]).rglob("*.py")
                    if not skip & set(p.parts)})
    random.Random(43).shuffle(files)
    lines: list[str] = []
    for path in files:
        try:
            lines.extend(line for line in path.read_text(encoding="utf-8").splitlines() if len(line) >= 5)
        except (OSError, UnicodeDecodeError):
            continue
        if len(lines) >= 200_000:
            break
    if len(lines) < 200_000:
        pytest.skip("not enough Python sources are installed here")
    changed = [line for line in lines if scrub_text(line) != line]
    ratio = len(changed) / len(lines)
    assert ratio <= MAX_CHANGED_RATIO, f"{len(changed)} of {len(lines)} changed ({ratio:.3%}): {changed[:40]}"


# ---------------------------------------------------------------------------------------------- exact pre-checks


def _accepted_names() -> list[str]:
    """Every kind of name the name rules accept (read from their tables), written in the cases and separators names
    are written in."""
    compounds: tuple[tuple[str, ...], ...] = getattr(sn, "_COMPOUNDS", (("connection", "string"),))
    foreign: tuple[str, ...] = getattr(sn, "FOREIGN_WORDS", ("пароль", "密码"))
    query: Callable[[str], int] = getattr(sn, "query_credential", sn.credential_name)
    names = sorted(sn._STRONG_WORDS | sn._WEAK_WORDS) + [f"db_{w}" for w in sorted(sn._PASS_WORDS)]
    names += [f"{q}_key" for q in sorted(sn._KEY_QUALIFIERS)] + [f"{q}_keys" for q in sorted(sn._WEAK_KEY_QUALIFIERS)]
    names += ["_".join(c) for c in compounds] + ["".join(w.title() for w in c) for c in compounds]
    names += [f"my{g}" for g in sn._GLUED_STRONG] + list(foreign) + [f"数据库{foreign[1]}"]
    names += ["session_id", "jsessionid", "PHPSESSID", "ticket", "jwt", "sid", "_gh_sess", "ASP.NET_SessionId",
              "spring.datasource.password", "token.value", "db_pw", "connection_string", "ConnectionString"]
    out = []
    for name in names:
        for variant in (name, name.upper(), name.title().replace("_", ""), name.replace("_", "-")):
            if sn.credential_name(variant) or query(variant) or variant.lower().replace("_", "") in (
                    "connectionstring", "sid", "jwt", "sessionid", "ticket", "dbpw"):
                out.append(variant)
    return sorted(set(out))


ACCEPTED = _accepted_names()
_FRAGMENTS = ACCEPTED + [
    "=", "：", "＝", ": ", ":", " = ", "=>", " := ", "\t", "\n", "\n  ", "\n  - ", " ", '"', "'", "`", "b'", 'f"', "[",
    "]", "(", ")", "{", "}", "${", ":-", "}", "?", "&", ";", "#", ",", "//", "://", "https://", "@", "u:", "%", "|",
    ">-", "!!str ", "&pw ", "<", ">", "</", "/>", "value=", "value", "name", "key", "Cookie: ", "a=1; ",
    "Authorization: ", "Bearer ", "Basic ", "Digest ", "response=", "realm=", "--", "-", "-p", "-P", "-a", "-w", "-u",
    "-N", "-k", "-storepass ", "login ", "machine h ", "password ", "ENV ", "setx ", "set -x ", "configure set ",
    "mysql ", "sshpass ", "redis-cli ", "ldapsearch ", "docker ", "smbclient ", "curl ", "openssl ", "pass:",
    "keytool ", "sqlcmd ", "zip ", "7z ", "ssh-keygen ", "sqlplus ", "u/", "/p:", "xfreerdp ",
    "ConvertTo-SecureString ", "define(", "setdefault(", "Xk9mQ2vLp7Rt", "Yy8nR3wMq6Su", "changeme", "$TOKEN",
    "x-oauth-basic", "ÄÖ", "İ", "\\n", "\\\"", "%3D",
]


_VALUES = ["Xk9mQ2vLp7Rt", "changeme", "$TOKEN", "'Yy8nR3wMq6Su'", '"Zb4Tq9LmW2xK"', "483920", "a", ""]
_SEPARATORS = ["=", ": ", ":", "：", "＝", "\t", " ", " = ", "=>", '": "', "' => '", "\n  ", "\n  - "]
_PAIRS = st.builds(lambda lead, name, sep, value: lead + name + sep + value, st.sampled_from(["", "?", "&", ";", "--",
                                                                                              '"', " ", "\n"]),
                   st.sampled_from(ACCEPTED), st.sampled_from(_SEPARATORS), st.sampled_from(_VALUES))
"""A name the rules accept, a separator and a value (what a gate must never skip)."""


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(st.one_of(st.sampled_from(_FRAGMENTS), _PAIRS), max_size=14).map("".join))
@example(text="spring.datasource.password\tXk9mQ2vLp7Rt&-gh-sess=changeme")
@example(text="WEBHOOK_KEY\tXk9mQ2vLp7Rt-gh-sess=>changeme")
@example(text="?Senha\tXk9mQ2vLp7Rt")  # a foreign name and its value apart by a tab (the pre-check wanted a space)
def test_property_obs58_prechecks_are_exact_for_every_accepted_name(text: str) -> None:
    """OBS-58: the pre-checks that spare the detectors on texts without a name hint are exact: over texts built of
    every name the name rules accept (strong, weak, qualified keys, compounds, glued words, foreign words, session
    names of URLs and cookies), separators, values, clients and options, the gated spans equal the ungated ones."""
    assert find_spans(text) == find_spans(text, gated=False)


@pytest.mark.parametrize("name", ACCEPTED)
def test_obs58_every_accepted_name_in_every_shape_is_found_with_its_pre_check(name: str) -> None:
    """OBS-58: every accepted name in each name shape (``N=v``, ``?n=v``, ``N: v``, quoted pair, flag, element) is
    found as the ungated reference finds it, and its generated value is redacted by some shape."""
    secret = password(random.Random(len(name)))
    for shape in ("{n}={v}", "?{n}={v}", "{n}: {v}", '"{n}": "{v}"', "--{n} {v}", "<{n}>{v}</{n}>", "{n}\t{v}"):
        text = shape.format(n=name, v=secret)
        assert find_spans(text) == find_spans(text, gated=False), text
    assert any(secret not in scrub_text(shape.format(n=name, v=secret))
               for shape in ("{n}={v}", "?{n}={v}", '"{n}": "{v}"'))


def test_obs58_client_hints_name_every_client_rule() -> None:
    """OBS-58: every client that has a password rule is named by a pre-check hint (the gate cannot skip one)."""
    assert "keytool" in sc._CLIENT_RULES and "sqlplus" in sc._CLIENT_RULES  # the clients of the review's section 2
    for name in sc._CLIENT_RULES:
        assert any(hint in name for hint in sc.CLIENT_HINTS) or not sc._CLIENT_RULES[name], name
    for start in sc._CLIENT_STARTS:
        assert start == "psql" or any(hint in start for hint in sc.CLIENT_HINTS), start

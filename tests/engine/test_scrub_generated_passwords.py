"""Generated passwords under credential names lose exactly their span (spec 01 OBS-58, OBS-59; spec 04 FMT-33a;
review s44 L1 / R1 and L12).

A password manager's passwords (12 to 20 characters of letters, digits and ``!#$%()*+-./:<=>?@[]^_{|}~``, with a
lower and an upper case letter, a digit and a symbol) under generated credential names, in the forms env files,
shells, YAML, JSON, Python and command lines write them (quoted where the symbols need it, so that the value is the
whole password): the scrubbed text is the text with exactly the password replaced by its marker, every other byte
kept, plain and JSON-escaped. The same for the passwords those forms can hold unquoted.

What kept such passwords before: a value read as a call or a subscript from its start (``Hunter2(xyz``,
``zRA9[@a9{S_k|pXz``), a quoted value starting with ``. ) ] } , ; +`` after an unquoted name, placeholder rules that
read one piece of the value (``my`` / ``here`` anywhere, a leading ``!``, ``prefix...``, ``.*``, ``://``), the rule
for a variable named for what it holds (``token_8f3k2j9x7q1m``), and a number under any name holding ``token``.
"""

from __future__ import annotations

import json
import random
import re
import string

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import redaction_marker, scrub_text

SYMBOLS = "!#$%()*+-./:<=>?@[]^_{|}~"
ALPHABET = string.ascii_letters + string.digits + SYMBOLS
BARE_SYMBOLS = "!#$%*+-./:=?@^_~"
"""The symbols an unquoted value can hold (``( ) [ ] { } < > | ;`` and ``&`` end it, as shells and YAML read it)."""

_PREFIXES = ("", "DB", "API", "SMTP", "GITHUB", "OPENAI", "AWS", "REDIS", "APP", "CLIENT", "ADMIN", "MYSQL")
_WORDS = ("PASSWORD", "PASSWD", "PASS", "PWD", "TOKEN", "SECRET", "API_KEY", "SECRET_KEY", "ACCESS_TOKEN",
          "AUTH_TOKEN", "PRIVATE_KEY", "PASSPHRASE", "CLIENT_SECRET", "REFRESH_TOKEN", "SECRET_ACCESS_KEY")


def _password(r: random.Random, symbols: str = SYMBOLS) -> str:
    """A generated password: 12, 16 or 20 characters, a lower and an upper case letter, a digit and a symbol."""
    alphabet = string.ascii_letters + string.digits + symbols
    while True:
        s = "".join(r.choice(alphabet) for _ in range(r.choice([12, 16, 20])))
        if (any(c.islower() for c in s) and any(c.isupper() for c in s) and any(c.isdigit() for c in s)
                and any(c in symbols for c in s)):
            return s


def _names(r: random.Random) -> tuple[str, str, str]:
    """A generated credential name as an env file (``DB_PASSWORD``), code (``db_password`` / ``dbPassword``) and a
    command line (``--db-password``) write it."""
    parts = [p for p in (r.choice(_PREFIXES), r.choice(_WORDS)) if p]
    upper = "_".join(parts)
    words = upper.lower().split("_")
    code = r.choice(["_".join(words), words[0] + "".join(w.title() for w in words[1:])])
    return upper, code, "--" + "-".join(words)


QUOTED_FORMS = (
    '{UP}="{s}"', "{UP}='{s}'", 'export {UP}="{s}"', "export {UP}='{s}'", "{UP}='{s}'\nHOST=db.internal\n",
    '{code}: "{s}"', "{code}: '{s}'", "db:\n  {code}: '{s}'\n  host: db.internal\n", "{code} = '{s}'",
    '{code} = "{s}"  # from the vault', "{{'{code}': '{s}'}}", "{flag} '{s}' --verbose", '{flag}="{s}" run',
)
BARE_FORMS = ("{UP}={s}", "export {UP}={s}", "{UP}={s}\nHOST=db.internal", "{code}: {s}", "  {code}: {s}\n  port: 5432",
              "{flag} {s} --verbose", "{flag}={s}")


def _exact(text: str, secret: str) -> None:
    """``text`` (holding ``secret`` once) plain and JSON-escaped: exactly the secret becomes its marker."""
    assert text.count(secret) == 1
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))
    doc = json.dumps({"content": text})
    assert scrub_text(doc) == doc.replace(json.dumps(secret)[1:-1], redaction_marker(secret))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**64), form=st.sampled_from(QUOTED_FORMS))
@example(seed=8005525, form='export {UP}="{s}"')  # wBela[fg2.v] read as a subscript in code
@example(seed=44801393, form='{UP}="{s}"')  # {a1evI:QID_>/kgh(+:} read as a format field
def test_property_obs58_obs59_generated_passwords_in_quoted_forms_are_redacted_exactly(seed: int, form: str) -> None:
    """OBS-58, OBS-59 (L1): a generated password with symbols, quoted under a generated credential name in an env
    file, a shell, YAML, Python or a command line, loses exactly its span, whatever symbol it starts or ends with."""
    r = random.Random(seed)
    up, code, flag = _names(r)
    secret = _password(r)
    _exact(form.format(UP=up, code=code, flag=flag, s=secret), secret)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**64), extra=st.booleans())
@example(seed=8005525, extra=False)  # wBela[fg2.v] read as a subscript in code
def test_property_obs58_obs59_generated_passwords_in_json_are_redacted_exactly(seed: int, extra: bool) -> None:
    """OBS-58, OBS-59 (L1): a generated password as the value of a credential key in a JSON document (alone or beside
    other keys, and as that document's text inside another one) loses exactly its span."""
    r = random.Random(seed)
    _, code, _ = _names(r)
    secret = _password(r)
    doc: dict[str, object] = {code: secret}
    if extra:
        doc = {"user": "bob", code: secret, "port": 5432, "tags": ["a", "b"]}
    text = json.dumps(doc)
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))
    outer = json.dumps({"arguments": text})
    assert scrub_text(outer) == outer.replace(secret, redaction_marker(secret))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**64), form=st.sampled_from(BARE_FORMS))
@example(seed=39289504, form="{UP}={s}")  # v5.PP_t8.Pyc: dotted like an attribute read, no name's words in it
@example(seed=1_808_966_075_688_790_784, form="{UP}={s}")  # PW=…: a password's first run is no inner pair's name
def test_property_obs58_obs59_generated_passwords_unquoted_are_redacted_exactly(seed: int, form: str) -> None:
    """OBS-58, OBS-59 (L1): a generated password of the symbols an unquoted value holds, written unquoted (an env
    file, ``export``, YAML, a command line), loses exactly its span. (A value starting with ``-``, ``=``, ``~``,
    ``#`` or ``!`` is another thing there: an option, ``==``, ``=~``, a YAML comment or tag.)"""
    r = random.Random(seed)
    up, code, flag = _names(r)
    while True:
        secret = _password(r, BARE_SYMBOLS)
        if secret[0] not in "-=~#!" and secret[-1] not in ".:?!":
            break
    _exact(form.format(UP=up, code=code, flag=flag, s=secret), secret)


@pytest.mark.parametrize("text, secret", [
    ('"password": "zRA9[@a9{S_k|pXz"', "zRA9[@a9{S_k|pXz"),
    ('DB_PASSWORD="L(K777p-zNk8cL6j"', "L(K777p-zNk8cL6j"),
    ('{"password": "Pa55word[1]"}', "Pa55word[1]"),
    ("DB_PASSWORD=Hunter2(xyz)", "Hunter2(xyz)"),
    ("API_KEY=abc(XY)Z9q", "abc(XY)Z9q"),
    ('DB_PASSWORD=".YYZYn9^ZhyiA4uoR>gn"', ".YYZYn9^ZhyiA4uoR>gn"),
    ("password: '}Cu3%ZR1zTOl'", "}Cu3%ZR1zTOl"),
    ('API_TOKEN=")AL5$~wIScGebc$-"', ")AL5$~wIScGebc$-"),
    ('"password": "hwLXVPC+@%R7$My["', "hwLXVPC+@%R7$My["),
    ('"password": "!Xk9mQ2vLp7Rt"', "!Xk9mQ2vLp7Rt"),
    ('"password": "my-dog-Rover-2"', "my-dog-Rover-2"),
    ('"password": "0.*lrFnr~4_["', "0.*lrFnr~4_["),
    ('"password": "<Xk9mQ2vLp7Rt>"', "<Xk9mQ2vLp7Rt>"),
    ('"password": "$Xk9mQ2vLp7Rt"', "$Xk9mQ2vLp7Rt"),
    ('"password": "${Vi_P29yTI}"', "${Vi_P29yTI}"),
    ('"password": "rrk+://Zl9-S"', "rrk+://Zl9-S"),
    ("API_TOKEN=token_8f3k2j9x7q1m", "token_8f3k2j9x7q1m"),
    ('"secret": "secret_8f3k2j9x7q1m4n"', "secret_8f3k2j9x7q1m4n"),
    ("API_KEY=key_4f8a9b2c7d1e9a0b", "key_4f8a9b2c7d1e9a0b"),
    ("secret: !CJ3DvL35PAzweRu", "!CJ3DvL35PAzweRu"),
])
def test_obs58_the_reviewed_generated_passwords_are_redacted(text: str, secret: str) -> None:
    """OBS-58, OBS-59 (L1 a-d): the review's passwords that a call, a subscript, a start character, a placeholder
    rule or the variable rule kept."""
    _exact(text, secret)


@pytest.mark.parametrize("text, secret", [
    ('PASSWORD="V0=/yOU0IxfQ]5<5m.~X"', "V0=/yOU0IxfQ]5<5m.~X"), ("password: 'v1=Xk9mQ2[vLp7'", "v1=Xk9mQ2[vLp7"),
    ('{"token": "sha1=Qz8~mP2!x"}', "sha1=Qz8~mP2!x"), ('PASSPHRASE="/t[o=1]x.*CK"', "/t[o=1]x.*CK"),
    ("passphrase: 'q.*[Z=2]wR'", "q.*[Z=2]wR"),
])
def test_obs58_passwords_that_start_like_a_digest_or_read_like_a_pattern_are_redacted(text: str, secret: str) -> None:
    """OBS-58 (found among 200,000 generated passwords): a digest's algorithm stays before its digest only
    (``sha256=<hex>``, Slack's ``v0=<hex>``), not before the rest of a password (``V0=/yOU0…``); a pattern's letters
    apart are of one case when it has no escape (``/t[o=1]x.*CK`` mixes them as passwords do)."""
    _exact(text, secret)


@pytest.mark.parametrize("text, secret", [
    ("API_KEY=Xk9mQ2vLp7Rt...", "Xk9mQ2vLp7Rt"),
    ("Logging in with password=Xk9mQ2vLp7Rt... done", "Xk9mQ2vLp7Rt"),
])
def test_obs58_an_ellipsis_after_a_generated_value_is_no_placeholder(text: str, secret: str) -> None:
    """OBS-58, OBS-59 (L1c): ``prefix...`` is a placeholder only when the prefix is not generated; the ellipsis after
    a password stays, the password goes."""
    _exact(text, secret)


@pytest.mark.parametrize("text", [
    "OPENAI_API_KEY=sk-...", 'api_key = "sk-proj-..."', "PASSWORD=your-password-here",
    "OPENAI_API_KEY=sk-your-key-here", '"api_key": "YOUR_API_KEY"', '"token": "<your-token>"',
    "password: ${DB_PASSWORD}", 'token = "$GITHUB_TOKEN"', '"api_key": os.environ["API_KEY"],',
    '"input_tokens": result.get("input_tokens"),', "token = get_token(a, b)", "password=getpass.getpass(\n    prompt)",
    "token = uuid.uuid4().hex[:8]", "if key := m.group(1):", 'pat = "^[a-z]+$"',
    'token_re = r"(?P<token>[A-Za-z0-9_-]+)"', '_HEX_PAT = "[0-9A-Fa-f]{1,4}"', "api_key=api_key_value",
    "token=user_token", '"password": "my_password"', "Resources: !Ref DbPassword",
    'key="hypothesis.strategies.random_module()"', '"apiKey": "os.getenv(\'X\')"',
    "PHOTON_TOKEN=$(openssl rand -hex 16)", "credentials: Annotated[\n    str, Depends()]",
    "GOOGLE_APPLICATION_CREDENTIALS=/home/u/.config/gcloud/sa.json", '"session": "aiohttp.ClientSession"',
    "password: Callable[[str, str], bool] | None = None",
])
def test_obs59_code_and_placeholders_under_credential_names_are_kept(text: str) -> None:
    """OBS-59: what the narrowed rules must still keep: placeholders (their names not generated), calls and
    subscripts of code (closing, or spread over lines), patterns, variables named for what they hold, paths."""
    assert scrub_text(text) == text


def _piped_password(r: random.Random) -> str:
    """A generated password holding ``|`` between pieces of letters (and digits), its last character a digit."""
    pieces = ["".join(r.choice(string.ascii_letters + string.digits * r.randint(0, 1)) for _ in range(r.randint(3, 9)))
              for _ in range(r.randint(2, 3))]
    return "|".join(pieces) + r.choice(string.digits)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**64), form=st.sampled_from(
    ("https://h/x?u=bob&{low}={s}&page=2", '{UP}="{s}"', "{low}: '{s}'", "{low}: {s}")))
@example(seed=0, form="https://h/x?u=bob&{low}=LLNeraOiq|ojXL6ozPl4&page=2")
def test_property_obs58_a_password_holding_pipes_is_no_union_of_types(seed: int, form: str) -> None:
    """OBS-58 (CI, stop 47): ``LLNeraOiq|ojXL6ozPl4`` was kept as a union of types (``{ArrayBuffer|DataView}``): a
    piece of a password is no type name (a digit is no letter of an English word; a lower-case member is one of the
    type names signatures write), and a union unbracketed names at least one type."""
    r = random.Random(seed)
    secret = _piped_password(r)
    if "LLNeraOiq" in form:
        form, secret = form.replace("LLNeraOiq|ojXL6ozPl4", "{s}"), "LLNeraOiq|ojXL6ozPl4"
    name = r.choice(_WORDS)
    text = form.format(UP=name, low=name.lower(), s=secret)
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))


@pytest.mark.parametrize("text", [
    "password: string|null", "token?: string | undefined", "@param {string|Buffer} password",
    "* `key`: {ArrayBuffer|TypedArray|DataView|Buffer|Object}", "secret <Buffer|string>",
])
def test_obs59_unions_of_types_under_credential_names_are_kept(text: str) -> None:
    """OBS-59: a signature's union of types where a value would be is kept."""
    assert scrub_text(text) == text


def _url_password(r: random.Random) -> str:
    """A password written unencoded in a URL: chunks of letters and digits joined by ``@ / # ? % = + ~ ^ * !``, every
    ``@`` followed by a symbol (so no host can follow it), no ``//``, no ``%XX``, its first character a letter
    (``oauth2:41/6d2i@gitlab.com`` reads as a port and a path), its last a digit."""
    alnum = string.ascii_letters + string.digits
    out = r.choice(string.ascii_letters) + "".join(r.choice(alnum) for _ in range(r.randint(1, 5)))
    for _ in range(r.randint(1, 4)):
        symbol = r.choice("@/#?%=+~^*!")
        out += symbol + (r.choice("=+~^*!") if symbol == "@" else r.choice("ghijkmnpqrstuvwxyz") if symbol == "%"
                         else "")  # no %XX escape: what a password's escapes encode is test_scrub_encoded_views
        out += "".join(r.choice(alnum) for _ in range(r.randint(2, 6)))
    return out + r.choice(string.digits)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**64), form=st.sampled_from((
    "git clone https://oauth2:{p}@gitlab.com/g/r.git", 'psql "postgresql://u:{p}@h/d"',
    "mysql://admin:{p}@db.internal:3306/app", "DATABASE_URL=postgres://app:{p}@10.0.0.5:5432/prod",
    "amqp://guest:{p}@rabbit:5672/")))
@example(seed=0, form="git clone https://oauth2:H!@=Cip6sNzgDJM_T_/b#J@gitlab.com/g/r.git")
def test_property_obs58_a_url_password_written_unencoded_may_hold_at_signs(seed: int, form: str) -> None:
    """OBS-58 / OBS-59: a password that RFC 3986 wants encoded but people write as is (``@ / # ?`` in it) ends at the
    ``@`` a host follows, when no host follows its own ``@`` (``u:6+DIg_@sO6~t^I/_W@h/d``): exactly its span goes,
    the host, port and path stay."""
    secret = _url_password(random.Random(seed))
    if "H!@=" in form:
        form, secret = form.replace("H!@=Cip6sNzgDJM_T_/b#J", "{p}"), "H!@=Cip6sNzgDJM_T_/b#J"
    text = form.format(p=secret)
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))


def _base64_password(r: random.Random, where: str) -> str:
    """A password made as ``openssl rand -base64 32`` makes one (44 characters, ``/`` and ``+`` among them, ``=`` at
    its end), made to start with ``/`` (``lead``), to hold ``//`` (``double``) or to start with digits before a ``/``
    as a port does (``port``): one draw in twenty, twenty and twelve."""
    alphabet = string.ascii_letters + string.digits + "+/"
    while True:
        out = "".join(r.choice(alphabet) for _ in range(43)) + "="
        if where == "lead":
            out = "/" + out[1:]
        elif where == "double":
            k = r.randrange(1, 40)
            out = out[:k] + "//" + out[k + 2:]
        else:
            k = r.randrange(1, 5)
            out = "".join(r.choice(string.digits) for _ in range(k)) + "/" + out[k + 1:]
        if "://" not in out and (where == "lead") == out.startswith("/") and sum(c.isdigit() for c in out) >= 2 \
                and sum(c.isupper() for c in out) >= 2 and sum(c.islower() for c in out) >= 2:
            return out


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**64), where=st.sampled_from(("lead", "double", "port")), form=st.sampled_from((
    "mysql://root:{p}@db:3306/app", "redis://:{p}@cache:6379/0", "DATABASE_URL=postgres://app:{p}@10.0.0.5:5432/prod",
    'psql "postgresql://u:{p}@h/d"', "amqp://guest:{p}@rabbit:5672/")))
def test_property_obs58_a_base64_url_password_may_start_with_a_slash_or_hold_two(seed: int, where: str,
                                                                                form: str) -> None:
    """OBS-58: a base64 password written unencoded after a userinfo's ``:`` that starts with ``/`` (``root:/yvZk…=@db``:
    no empty port), holds ``//`` (``:yYBg6+…//oGnK…=@cache``: no path) or starts with digits then ``/``
    (``root:5/sfiC0…=@db``: no port and path) goes whole; the host, port and path stay."""
    secret = _base64_password(random.Random(seed), where)
    text = form.format(p=secret)
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))


@pytest.mark.parametrize("text", ["http://localhost:/users/@alice", "see https://host:8080//x@y.com",
                                  "http://host:8080/api/v1/users/@me", "https://registry:443/v2/@types/node",
                                  "git clone ssh://git@host:/srv/repo.git", "https://a.com:abc//foo@bar.com"])
def test_obs55_an_empty_port_or_a_double_slash_before_a_path_is_no_password(text: str) -> None:
    """OBS-55: ``host:/path@x``, ``host:port/path/@x`` and ``host:x//path@y`` hold no password: what would be one is
    no generated value."""
    assert scrub_text(text) == text


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**64), name=st.sampled_from(("client_secret", "auth_token", "api_key", "access_token")))
def test_property_obs58_a_name_value_setting_may_hold_equals_signs(seed: int, name: str) -> None:
    """OBS-58: ``client_secret tL@ER1_otJH=+@gLJC_aXXOF`` (a ``name value`` line, the value generated) loses its
    value though it holds ``=`` (a value starting as a pair does, ``key=value`` with a lower-case word, is the
    pair's)."""
    r = random.Random(seed)
    alnum = string.ascii_letters + string.digits
    secret = (r.choice(string.digits) + "".join(r.choice(alnum) for _ in range(r.randint(2, 7)))
              + r.choice(["=", "=+", "@", "=_"])
              + "".join(r.choice(alnum) for _ in range(r.randint(4, 10))) + r.choice(string.digits))
    text = f"{name} {secret}"
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**64), name=st.sampled_from(("client_secret", "auth_token", "api_key", "access_token")))
def test_property_obs58_a_name_value_settings_value_may_hold_brackets(seed: int, name: str) -> None:
    """OBS-58: ``client_secret nNddauLsEp2<8t``, ``client_secret j3}8naY2(i8untY``, ``… kQNjdpeM+3kz0d5,uw``: a
    generated value's brackets, commas and semicolons are its own (code there, ``get_key(x)``, ``Optional[str]``, is
    told by what it is, test_scrub_false_positives)."""
    r = random.Random(seed)
    alnum = string.ascii_letters + string.digits
    secret = (r.choice(string.ascii_letters) + "".join(r.choice(alnum) for _ in range(r.randint(3, 8)))
              + r.choice("<>(){}[],;") + "".join(r.choice(alnum) for _ in range(r.randint(2, 8)))
              + r.choice(string.digits))
    text = f"{name} {secret}"
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**64), form=st.sampled_from((
    "mysql -uroot -p'{p}' app", 'mysql -u root -p"{p}" db; echo done', "redis-cli -a '{p}' ping | head",
    "mongo -u admin -p '{p}' --authenticationDatabase admin", "PGPASSWORD='{p}' psql -h db && echo ok")))
@example(seed=114_674_199_139, form="mysql -uroot -p'{p}' app")  # Yy2RN7G}ZIP}9Y0: a client's name inside the quotes
def test_property_obs58_a_quoted_argument_holding_shell_separators_is_one_argument(seed: int, form: str) -> None:
    """OBS-58: a quoted password holding ``;``, ``|`` or ``&`` (``mysql -p'cg9;x+r2y[p2<B5w' app``) is one argument:
    the command does not end inside the quotes, and exactly the password goes."""
    r = random.Random(seed)
    alnum = string.ascii_letters + string.digits
    secret = "".join(r.choice(alnum) for _ in range(r.randint(3, 7)))
    for _ in range(r.randint(1, 3)):
        secret += r.choice(";|&<>(){}[]") + "".join(r.choice(alnum) for _ in range(r.randint(2, 6)))
    secret += r.choice(string.digits)
    text = form.format(p=secret)
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))


STRONG_TOKEN_NAMES = ("refresh_token", "authToken", "X-Amz-Security-Token", "access_token", "id_token",
                      "GITHUB_TOKEN", "sessionToken", "vault_token")
COUNT_NAMES = ("max_tokens", "num_tokens", "token_count", "input_tokens", "maxTokens", "prompt_tokens", "tokens")


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(STRONG_TOKEN_NAMES), number=st.integers(1000, 9_999_999_999),
       form=st.sampled_from(["{n}={v}", "{n}: {v}", '"{n}": "{v}"', "{n}='{v}'"]))
def test_property_obs58_a_number_under_a_token_name_is_a_credential(name: str, number: int, form: str) -> None:
    """OBS-58 (L12): a number of four to ten digits under a name that holds a token (``refresh_token=483920``) is
    redacted, as the sanitizer hides it; only count names keep their number."""
    secret = str(number)
    _exact(form.format(n=name, v=secret), secret)


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(COUNT_NAMES), number=st.integers(0, 9_999_999_999),
       form=st.sampled_from(["{n}={v}", "{n}: {v}", '"{n}": {v}', '"{n}": "{v}"']))
def test_property_obs59_a_number_under_a_count_name_is_kept(name: str, number: int, form: str) -> None:
    """OBS-59 (L12): counts stay (``max_tokens=128000``, ``"input_tokens": "1000"``)."""
    text = form.format(n=name, v=number)
    assert scrub_text(text) == text


_EVERY_SYMBOL = "!#$%&()*+,-./:;<=>?@[]^_{|}~"
_AMBIGUOUS = re.compile(r"&[A-Za-z_$]|[;,](?:[a-z]+|[A-Z][a-z]+)(?:[_.-][A-Za-z]+)*=|[;&][a-z]+(?:[;&|]|$)"
                        r"|\(\)|\)\.[A-Za-z_]|<[a-z][a-z0-9]*>|[)\]}>]$")
"""What a setting's value cannot be told from (docs/privacy.md): a query's next pair (``&x=``), a next pair named by
a word (``;Database=``), a command after ``;`` or ``&``, code (``()``, ``).x``), a placeholder (``<name>``), and a
last closing bracket (one opened before the value may close there)."""


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**64), form=st.sampled_from((
    "pw: {p}", "password={p}", "db.password={p}", "spring.datasource.password={p}", "- password: {p}",
    "New password: {p}", "token:{p}", "  api_key: {p}\n", "DB_PASSWORD={p}\nDB_USER=app", "[client]\npassword={p}\n",
    "Staging admin password: {p}", "export AUTH_TOKEN={p}")))
@example(seed=0, form="pw: {p}")
@example(seed=1085, form="pw: {p}")  # QR4P(R*)]tKhg…: a ] closing no bracket opened before is no call's
@example(seed=148306227, form="pw: {p}")  # OtpVx_1Ea=…: a password's first run is no inner pair's name
@example(seed=52000108, form="Staging admin password: {p}")  # idnoYuhHM[wY]<5w!g9JSz read as a subscript
@example(seed=52005620, form="DB_PASSWORD={p}\nDB_USER=app")  # x(KkXw);?uIEvTI^FWyd read as a call
@example(seed=41000298, form="db.password={p}")  # nMieYZzg[/]*fc: an operator alone is no subscript's argument
@example(seed=282163, form="pw: {p}")  # uuc=LHH$;ELT=vN: three capitals are no connection string's next pair
def test_property_obs58_a_settings_value_is_its_whole_run_to_the_lines_end(seed: int, form: str) -> None:
    """OBS-58 / OBS-59: a setting that starts its line under a strong name, its unquoted value one run to the line's
    end, loses that whole run however many of ``; , & ) ] } < >`` a generated password holds (``G711%n}?tOE=>8Wq``,
    ``KE7m@.;BT=K3z3``, ``w,J$Qt=Dnjx9``: 1 in 55 such passwords kept a part, or all, before), as a line of its own
    and as a JSON string's text."""
    r = random.Random(seed)
    alnum = string.ascii_letters + string.digits
    chars = [r.choice(alnum) for _ in range(r.randint(12, 24))]
    for _ in range(r.randint(2, 5)):
        chars[r.randrange(1, len(chars) - 1)] = r.choice(_EVERY_SYMBOL)
    secret = "".join(chars)
    if seed == 0 and form == "pw: {p}":
        secret = "G711%n}?tOE=>8WqcE"
    assume(_AMBIGUOUS.search(secret) is None)
    text = form.format(p=secret)
    expected = text.replace(secret, redaction_marker(secret))
    assert scrub_text(text) == expected
    # as a tool's result: a JSON string's text is a line too (its quotes bound it), once or twice encoded
    assert scrub_text(json.dumps({"content": text})) == json.dumps({"content": expected})
    assert scrub_text(json.dumps(json.dumps([text, 1]))) == json.dumps(json.dumps([expected, 1]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**64), upper=st.booleans(), form=st.sampled_from((
    "pw: {p}", "password={p}", "db.password={p}", "- password: {p}", "DB_PASSWORD={p}\nDB_USER=app",
    "  api_key: {p}\n", "export AUTH_TOKEN={p}")))
@example(seed=0, upper=True, form="pw: {p}")
def test_property_obs58_a_settings_value_of_letters_of_one_case_and_symbols_is_its_whole_run(
        seed: int, upper: bool, form: str) -> None:
    """OBS-58: letters of one case alone with a generator's symbols among them (``A=CX]EXWAMSKD``: no digit, no
    second case) are the whole run to the line's end too (``]EXWAMSKD`` was kept). An opening bracket among them is
    left out: in letters of one case it reads as code (``decrypt(blob)``, ``env[key]``), as docs/privacy.md says; so
    are ``; , &``, before which capitals and ``=`` read as a connection string's next pair (``;SERVER=``), and ``%``
    (``spaymjgai%+i`` holds a format's ``%+i``)."""
    r = random.Random(seed)
    letters = string.ascii_uppercase if upper else string.ascii_lowercase
    chars = [r.choice(letters) for _ in range(r.randint(12, 24))]
    for _ in range(r.randint(2, 5)):
        chars[r.randrange(1, len(chars) - 1)] = r.choice(_EVERY_SYMBOL.translate(str.maketrans("", "", "_-.([{<;,&%")))
    secret = "A=CX]EXWAMSKD" if seed == 0 else "".join(chars)
    assume(_AMBIGUOUS.search(secret) is None and sum(c.isalpha() for c in secret) >= 8)
    text = form.format(p=secret)
    expected = text.replace(secret, redaction_marker(secret))
    assert scrub_text(text) == expected
    assert scrub_text(json.dumps({"content": text})) == json.dumps({"content": expected})


@pytest.mark.parametrize("text", [
    "        password=self._pw2,", "    token=tokens[i],", "password=getValue().toString()", "secret=Secret(x=1)",
    "  api_key=cfg.api_key)", "token=get_token(a,b);", "    password=args.password,", "password: [REDACTED]",
    "pw: ${PW:-default}", "api_key: env(API_KEY)", "password=<your-password>",
])
def test_obs59_code_and_placeholders_running_to_a_lines_end_stay(text: str) -> None:
    """OBS-59: the whole-run reading of a setting's value leaves code and placeholders as they are (an argument over
    lines and its comma, a call, a subscript, a template)."""
    assert scrub_text(text) == text


@pytest.mark.parametrize("text, secret", [
    ("pw: L[-7p-WZ]#smiJy08RLK", "L[-7p-WZ]#smiJy08RLK"), ("token:Redc[lW,]%4qLj", "Redc[lW,]%4qLj"),
    ("aws_secret_access_key = k[J]?o$-WNG+Xc[-w_3b_RpK", "k[J]?o$-WNG+Xc[-w_3b_RpK"),
    ("password=Xq[7]$vK2m!", "Xq[7]$vK2m!"),
])
def test_obs58_a_password_reading_as_a_subscript_then_symbols_is_redacted(text: str, secret: str) -> None:
    """OBS-58: what code never glues to a closed subscript or call (``#``, ``$``, ``%``, ``^``, ``~``, ``@``, ``?`` or
    ``!`` before more of it) makes the value a password, not code (``args[0]``, ``x[0]?.y``, ``d[k]!`` stay)."""
    _exact(text, secret)


@pytest.mark.parametrize("text", ["token = args[0]", "token = x[0]?.y", "pw = d[k]!", 'token = cfg["a"] # comment'])
def test_obs59_a_subscript_followed_as_code_continues_it_stays(text: str) -> None:
    """OBS-59: a subscript followed by what code writes after one stays."""
    assert scrub_text(text) == text


@pytest.mark.parametrize("value", ["wBela[fg2.v]", "Xq9[zT.k4]", "aQw7[b.Rt2]", "{a1evI:QID_>/kgh(+:}",
                                   "{abc:Q>/k(+:}"])
def test_obs58_a_password_shaped_as_a_subscript_is_hidden(value: str) -> None:
    """OBS-58: a generated password that happens to read as a subscript (a name, ``[``, an attribute path, ``]``) is
    code only when its names are written as code names are; runs drawn at random are a password's."""
    for text in (f'export API_PASSWD="{value}"', f"password = '{value}'", json.dumps({"password": value})):
        assert scrub_text(text) == text.replace(value, redaction_marker(value)), text


@pytest.mark.parametrize("text", ['password = "args[token.index]"', 'token = "key[:8]"', 'password: cfg[auth.password]',
                                  'api_key = "{key[:8]}...{key[-4:]}"', 'x = f"{token:>8}"', 'token = "{token:.8}"',
                                  'password = "{date:yyyy-MM-dd}"', 'token = "{self.token}"'])
def test_obs55_a_subscript_of_code_names_stays(text: str) -> None:
    """OBS-55: code reading a credential through a subscript or a format field stays."""
    assert scrub_text(text) == text


@pytest.mark.parametrize("value", ["2iQqCwPcgQDgVpL_xxx", "Xk9mQ2vLp7Rt-XXXX", "aB3dE6gH9kLm.****"])
def test_obs58_a_generated_prefix_before_a_mask_is_no_placeholder(value: str) -> None:
    """OBS-58: ``sk-proj-xxx`` and ``AKIAXXXX`` show where a key goes; a generated string before ``xxx`` is a value
    that ends with a mask's letters by chance (or a key shown in part)."""
    text = f"| host | password |\n|---|---|\n| db | {value} |"
    assert scrub_text(text) == text.replace(value, redaction_marker(value))
    for kept in ("password: sk-proj-xxx", "password: ghp_****abcd", "password: my-token-xxx", "token: xxxxxxxx"):
        assert scrub_text(kept) == kept


@pytest.mark.parametrize("value", ["idnoYuhHM[wY]<5w!g9JSz", "x(KkXw);?uIEvTI^FWyd", "DEq[bstg]:2/zQVRNJW",
                                   "bY[7R7Kv+U7M]*>l"])
def test_obs58_a_call_or_subscript_with_what_code_never_glues_after_it_is_a_password(value: str) -> None:
    """OBS-58: a password that starts like a call or a subscript (``x(KkXw)``, ``DEq[bstg]``) and goes on with what
    no code glues to one (``;?…``, ``:2/…``, ``<5w!…``) is a password, whole."""
    for text in (f"password: {value}", f"DB_PASSWORD={value}"):
        assert scrub_text(text) == text.replace(value, redaction_marker(value))


@pytest.mark.parametrize("value", ["m.group(1);", "keys[0]", "f(x)<5", 'os.environ["PW"]!', "cfg[k]?.pw", "x[0]+1"])
def test_obs55_code_glued_after_a_call_or_a_subscript_stays(value: str) -> None:
    """OBS-55: what code glues after a call or a subscript (a statement's end, an operator and one operand,
    TypeScript's ``!``, optional chaining) keeps the value code."""
    assert scrub_text(f"password: {value}") == f"password: {value}"


@pytest.mark.parametrize(("text", "secret"), [
    ("apiKey: <%@Xl:CYO%09k:Q$Tk-@91P", "<%@Xl:CYO%09k:Q$Tk-@91P"), ("token=<%Xk9mQ2vLp7", "<%Xk9mQ2vLp7")])
def test_obs58_a_password_starting_like_a_template_tag_is_hidden(text: str, secret: str) -> None:
    """OBS-58: ``<%`` opens an ERB tag only before ``=``, ``-``, ``#`` or a blank (or where the value was cut):
    ``<%@Xl:CYO…`` is a generated password's start."""
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))


@pytest.mark.parametrize("text", ['password: <%= ENV["DB_PASSWORD"] %>', 'password: <%=ENV["PW"]%>',
                                  'password: "<%= @pw %>"', "token: <%- secret %>", "password: <%"])
def test_obs59_template_tags_under_a_name_stay(text: str) -> None:
    assert scrub_text(text) == text


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**64), wrapper=st.sampled_from(["SecretStr", "pydantic.SecretStr", "SecretBytes", "bytes",
                                                             "str", "Password", "Secret"]),
       quote=st.sampled_from(["'", '"']),
       form=st.sampled_from(["Config(client_secret={w})", "password={w}", "api_key = {w}", "{{'api_key': {w}}}",
                             '{{"token": {w}, "x": 1}}', "client_secret: {w}", "Settings(db_url='x', password={w})"]))
def test_property_obs58_a_literal_wrapped_in_a_call_that_only_holds_it_is_the_value(seed: int, wrapper: str,
                                                                                     quote: str, form: str) -> None:
    """OBS-58: a credential written through a call that only holds it (pydantic's ``SecretStr('P')``, ``bytes("P")``)
    under a credential's name, in code, a repr or a dict: the literal goes alone, the call stays."""
    secret = _password(random.Random(seed), symbols="!#$%*+-./:<=>?@^_~")
    text = form.format(w=f"{wrapper}({quote}{secret}{quote})")
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))


@pytest.mark.parametrize("text", ["password=os.getenv('DB_PASSWORD')", "token=str(uuid4())",
                                  "password=SecretStr('**********')", "api_key: SecretStr = SecretStr('')",
                                  "password=str('password')", "{'token': str(uuid4())}"])
def test_obs59_calls_reading_a_value_elsewhere_and_masked_reprs_stay(text: str) -> None:
    assert scrub_text(text) == text

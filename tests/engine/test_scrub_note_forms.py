"""A credential in the forms people write notes in (OBS-55, OBS-58, OBS-59): the short names ``pw`` / ``pwd`` in a
sentence, a clause (``the token, which is P, ...``), a value in parentheses after the clause naming it (``the password
I gave you earlier (P)``), ``name -- P``, a label in square brackets (``[API token] P``), a name and its value with
only a blank between (``signing secret P``), a login sentence (``Log in as admin / P``: the user stays), a PIN (digits
too, named in capitals), a table row named by a phrase (``| Wi-Fi password | P |``); and the scheme word ``bearer``
naming a label (``**bearer token**: P``, ``bearer token:P``), whose word is no credential.

Every generated value loses exactly its span; texts whose value is a word, a pointer or prose stay as they are."""

from __future__ import annotations

import json
import random
import string

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import redaction_marker, scrub_text

from ._scrub_support import assert_only_secret_hidden, note_password

_ALNUM = string.ascii_letters + string.digits


def _value(r: random.Random) -> str:
    """A generated password: an upper, a lower and a digit, 12-24 characters, a symbol inside at times."""
    return note_password(r)


_SHORT = ("pw", "pwd", "PW", "Pwd")
_SHORT_FORMS = ("My {n} is {P}.", "The {n} for the staging DB is {P}", "{n} is set to {P} in prod",
                "use {n} {P} for the mirror", "Your new {n} is: {P}", "Use {P} as the {n}.", "I changed my {n} to {P}.",
                "the {n} is now {P}, don't share it", "{n} for ssh is {P}", "{n} is `{P}`")


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(_SHORT), form=st.sampled_from(_SHORT_FORMS))
def test_property_obs58_59_pw_and_pwd_name_a_password_in_a_sentence(seed: int, name: str, form: str) -> None:
    """OBS-58: ``pw`` and ``pwd`` are a password's names in a sentence as ``password`` is."""
    secret = _value(random.Random(seed))
    assert_only_secret_hidden(form.format(n=name, P=secret), secret)


_NAMES = ("password", "token", "app password", "API token", "client secret", "webhook secret", "root password",
          "passphrase", "access token", "DB password", "pwd")
_CLAUSE_FORMS = ("The {n}, which is {P}, goes in the vault", "the {n}, that was {P}, expired",
                 "The {n} I gave you earlier ({P}) is wrong", "the {n} you sent me ({P}) works",
                 "the {n} we used last week ({P}) was rotated", "{n} -- {P}", "- {n} -- {P}",
                 "[{n}] {P}", "  [{n}] {P} (rotate monthly)")


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(_NAMES), form=st.sampled_from(_CLAUSE_FORMS))
def test_property_obs58_59_a_value_in_a_clause_parentheses_dashes_or_after_a_bracketed_label(
        seed: int, name: str, form: str) -> None:
    """OBS-58/59: a clause (``, which is P,``), parentheses after the clause naming the credential, two hyphens
    between blanks and a label in square brackets give a value; only the value goes."""
    secret = _value(random.Random(seed))
    assert_only_secret_hidden(form.format(n=name, P=secret), secret)


_BARE = ("secret", "signing secret", "pwd", "pw", "webhook secret", "password", "API token")
_BARE_LEADS = ("Remember: ", "Note to self - ", "", "- ", "FYI ")
_BARE_ENDS = ("", " (expires Friday)", " for the mirror", ".")


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(_BARE), lead=st.sampled_from(_BARE_LEADS),
       end=st.sampled_from(_BARE_ENDS))
def test_property_obs58_59_a_name_and_its_value_with_a_blank_between(seed: int, name: str, lead: str,
                                                                      end: str) -> None:
    """OBS-58: a password's or a secret's name, a blank, a value that looks generated."""
    secret = _value(random.Random(seed))
    assert_only_secret_hidden(f"{lead}{name} {secret}{end}", secret)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), lead=st.sampled_from(("Remember: ", "Note to self - ", "- ", "", "(", "* ")),
       end=st.sampled_from(_BARE_ENDS))
def test_property_obs58_59_pass_starting_a_clause_then_a_random_value(seed: int, lead: str, end: str) -> None:
    """OBS-58: ``pass`` where a clause starts (a line, a label's colon, a dash, a bullet), then a value that looks
    random, is a password's name (``Remember: pass P``); the verb in a sentence is not (below)."""
    secret = _value(random.Random(seed))
    assert_only_secret_hidden(f"{lead}pass {secret}{end}", secret)


@pytest.mark.parametrize("text", [
    "pass the test", "Remember: pass the salt", "we pass Xk9mQ2vLp7Rt to the function",
    "If it fails, pass `--no-verify`.", "- pass 3 of 5", "Note to self - pass on_error to the hook",
])
def test_obs55_pass_as_a_verb_stays(text: str) -> None:
    """OBS-55: ``pass`` as a verb mid-sentence, or before a word, a flag, a count or a name, keeps its text."""
    assert scrub_text(text) == text


_MORE_FORMS = ("Password updated -> {P}", "DB_PASSWORD → {P}", "the api key rotated -> {P}.", "token => {P}",
               "Set OPENAI_API_KEY to {P}", "please update the GITHUB_TOKEN to {P}", "he gave me {P} as the password",
               "IT sent us {P} as the new API key.", 'Password for wifi "HomeNet" is {P}',
               "The token for 'prod' is {P}", "deploy key {P}", "Signing key {P} (rotated in May)",
               "the wifi password? {P}", "- refresh_token | {P}", "* AWS_SECRET_ACCESS_KEY | {P}  ",
               "> DB_PASSWORD:\n  value: {P}", "The PIN I gave you earlier ({P}) is wrong")


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), form=st.sampled_from(_MORE_FORMS))
def test_property_obs58_59_an_arrow_a_setter_sentence_a_value_given_as_and_a_quoted_qualifier(
        seed: int, form: str) -> None:
    """OBS-58: a name and an arrow (after the verb that changed it too) or a question mark, ``set NAME to P``, ``gave
    me P as the password``, a qualifier in quotes before the copula, a compound key's name and a random value, a list
    item's open row (``- refresh_token | P``), a quoted YAML key over its ``value``, a PIN in parentheses after the
    clause naming it: only the value goes."""
    secret = _value(random.Random(seed))
    assert_only_secret_hidden(form.format(P=secret), secret)


@pytest.mark.parametrize("text", [
    "password -> see vault", "set DB_PASSWORD to the value from vault", "I got 401 as the response",
    "the primary key column", "signing key 3f9a", "the deploy key is read-only", "api key rotation",
    "we gave them access as the admin", "Set API_KEY to empty to disable it", "What is the password? I forgot it",
    "Did you rotate the token? Yes, yesterday", "- cat notes.txt | grep password", "* token | count\n* foo | 12",
    "my PIN (4 digits) is fine",
])
def test_obs55_those_forms_without_a_generated_value_stay(text: str) -> None:
    """OBS-55: the same forms with a word, a pointer, a short hex or no value at all keep their text."""
    assert scrub_text(text) == text


_ACCOUNT_FORMS = ("bob@example.com:{P}", "Gmail: bob@example.com / {P}", "- ana.lee+work@mail.example.org | {P}",
                  "bob@example.com:{P} (old)", "user bob pass {P}", "login admin, pass {P}",
                  "Your API token has been regenerated: {P}", "password reset: {P}", "password\n{P}",
                  "# secret\n{P}\n", "**API token**\n{P}", "Notes\n\nWi-Fi password\n{P}\n\nMore later",
                  "Credentials for staging are admin / {P}")


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), form=st.sampled_from(_ACCOUNT_FORMS), wrap=st.booleans())
def test_property_obs58_59_an_account_line_a_user_then_pass_a_verb_and_colon_and_a_heading_then_its_value(
        seed: int, form: str, wrap: bool) -> None:
    """OBS-58/59: an e-mail address and a password after ``:``, ``/`` or ``|`` (the address stays), ``user bob pass
    P``, the verb that made a value then a colon, and a line holding only a credential's name above a line holding
    only a random value, a login's credentials with a qualifier (``Credentials for staging are admin / P``: the user
    stays); in a tool result's JSON string too."""
    secret = _random_value(random.Random(seed))
    text = form.format(P=secret)
    assert_only_secret_hidden(json.dumps({"output": text}) if wrap else text, secret)


def _random_value(r: random.Random) -> str:
    """:func:`_value` with no symbol an address or a JSON string would read otherwise (``@``, ``/``)."""
    while True:
        secret = _value(r)
        if "@" not in secret and "/" not in secret:
            return secret


@pytest.mark.parametrize("text", [
    "git clone git@github.com:NVIDIA/NeMo2.git", "bob@example.com:8080", "contact bob@example.com / 555-1234",
    "email me at bob@example.com: ThanksAgain2024", "ssh deploy@10.0.0.5:/srv/app", "## Token\nUse the CLI to get one",
    "password\nSerializedStorageKey", "# Password\nReset it in the console.", "user bob pass the test",
    '<a href="http://www.mail-archive.com/bug-make@gnu.org/msg01658.html">this</a>',
    "see https://lists.example.org/archives/dev@example.org:Msg2024abc",
])
def test_obs55_addresses_paths_and_headings_over_prose_stay(text: str) -> None:
    """OBS-55: an scp-like git address, a port, a phone number, a word after an address, an address in a URL's path,
    a heading over prose or a name keep their text."""
    assert scrub_text(text) == text


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(("token", "secret", "password")))
def test_property_obs58_a_base64_value_may_start_with_a_slash_after_a_bare_name(seed: int, name: str) -> None:
    """OBS-58: ``token /gyewMGI4…+2cR/AQgb…`` (base64 starts with ``/`` one time in 64): the value goes; a path after
    the name stays (below)."""
    r = random.Random(seed)
    body = "".join(r.choice(_ALNUM) for _ in range(16)) + "Xk9" + "".join(r.choice(_ALNUM + "+/") for _ in range(24))
    secret = "/" + body + "="
    assert_only_secret_hidden(f"{name} {secret} expires tomorrow", secret)


@pytest.mark.parametrize("text", ["token /usr/local/share/Tokens2/file.txt", "password /etc/secrets/db_password_file",
                                  "secret /run/secrets/ApiKey1234567890abc"])
def test_obs55_a_path_after_a_bare_name_stays(text: str) -> None:
    """OBS-55: a file's path after a credential's name points at the credential; it holds none."""
    assert scrub_text(text) == text


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), verb=st.sampled_from(("Login", "Log in", "log-in", "Sign in", "sign in")),
       how=st.sampled_from(("with", "as", "using")),
       user=st.sampled_from(("admin", "root", "ana@example.com", "svc_ci")),
       blank=st.sampled_from((" / ", "/", " /")))
def test_property_obs59_a_login_sentence_loses_the_password_and_keeps_the_user(
        seed: int, verb: str, how: str, user: str, blank: str) -> None:
    """OBS-59: ``Log in as admin / P``: the user stays, the password goes."""
    secret = _value(random.Random(seed))
    assert_only_secret_hidden(f"{verb} {how} {user}{blank}{secret}", secret)


@settings(max_examples=150, deadline=None)
@given(pin=st.from_regex(r"[0-9]{4,10}", fullmatch=True),
       form=st.sampled_from(("My PIN is {P}.", "PIN: {P}", "Note to self - PIN {P} (expires Friday)",
                             "The PIN was changed to {P} yesterday.", "Your new PIN is: {P}", "the card's PIN is {P}",
                             "I changed my PIN to {P}.", "set the SIM PIN to {P}", "Use {P} as the new PIN.",
                             "use {P} as the PIN for the card")))
def test_property_obs58_a_pin_named_in_capitals_is_a_credential_of_digits(pin: str, form: str) -> None:
    """OBS-58: a PIN is digits; named ``PIN`` its value goes (``pin`` in lower case is also a connector's)."""
    assert_only_secret_hidden(form.format(P=pin), pin)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32),
       name=st.sampled_from(("Wi-Fi password", "e-mail password", "Wi-Fi-Passwort", "wifi password", "DB password")))
def test_property_obs58_a_table_row_named_by_a_hyphenated_phrase(seed: int, name: str) -> None:
    """OBS-58: a row's first cell naming a credential in words joined by hyphens and blanks."""
    secret = _value(random.Random(seed))
    assert_only_secret_hidden(f"| {name} | {secret} |", secret)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32),
       form=st.sampled_from(("* **bearer token**: {P}", "**Bearer token**: {P}", "bearer token:{P}", "bearer token={P}",
                             "- __bearer token__: {P}", "`bearer token`: {P}")))
def test_property_obs59_the_scheme_word_naming_a_label_keeps_the_label(seed: int, form: str) -> None:
    """OBS-59: ``bearer token`` names a label: the word ``token`` is no credential (it was hidden with the label's
    markup, or with the value glued to it), the value after the label goes."""
    r = random.Random(seed)
    secret = "ghp_" + "".join(r.choice(_ALNUM) for _ in range(36))
    assert_only_secret_hidden(form.format(P=secret), secret)


@pytest.mark.parametrize("text", [
    "pwd is /home/alice/projects", "Run pwd to see the directory; the pwd is /srv/app", "the pw is strong enough",
    "The password manager (1Password) keeps it", "The token I gave you earlier (see above) is wrong",
    "secret sauce recipe", "Remember: token budget 4096", "the password -- see vault", "Log in as admin / see the wiki",
    "a secret, which is kept in the vault, is fine", "pw: see vault", "the pin is 13", "Set pin 13 high",
    "PIN 13 drives the LED", "My PIN is not set", "the PIN is 123", "set the PIN to high", "route the PIN to GPIO4",
    "use 2024 as the PIN year", "[x] rotate the token", "[token] see vault",
    "the bearer token is stored in the keychain", "Use a bearer token: see the docs", "| Wi-Fi password | ask Ana |",
    "Authorization: Basic <base64 of user:password>", "[API token] $API_TOKEN",
])
def test_obs55_the_same_forms_without_a_credential_stay(text: str) -> None:
    """OBS-55: a word, a path, a pointer, a placeholder, a short number or prose in the same forms is kept."""
    assert scrub_text(text) == text


@pytest.mark.parametrize(("text", "secret"), [
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    ('curl -H "Authorization: Bearer Qw3rTy9uIoP1aSdF" https://x', "Qw3rTy9uIoP1aSdF"),
    ("Authorization: Bearer abcdefghijklmnop", "abcdefghijklmnop"),
])
def test_obs57_a_schemes_credential_still_goes(text: str, secret: str) -> None:
    """OBS-57: a token68 after the scheme word is still the credential (base64's padding is no label's sign)."""
    assert_only_secret_hidden(text, secret)


def _token(r: random.Random) -> str:
    """A generated value of one of the shapes services hand out: random letters and digits, hex, a UUID, base64."""
    kind = r.randrange(4)
    if kind == 0:
        return _value(r)
    if kind == 1:
        return "".join(r.choice("0123456789abcdef") for _ in range(r.choice((32, 40, 64))))
    if kind == 2:
        h = "".join(r.choice("0123456789abcdef") for _ in range(32))
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"
    while True:
        b = "".join(r.choice(_ALNUM + "+/") for _ in range(40))
        if any(c.isdigit() for c in b) and any(c.isupper() for c in b) and b[0] not in "+/":
            return b


_SETTINGS = ("DB_PASSWORD", "AWS_SECRET_ACCESS_KEY", "smtp_password", "apiKey", "auth_token", "clientSecret",
             "GITHUB_TOKEN", "refresh_token")


@settings(max_examples=250, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(_SETTINGS),
       form=st.sampled_from(("the {n} is {P}", "my {n} was {P}.", "{n} is now {P}", "Error: invalid {n} '{P}'",
                             "invalid {n} \"{P}\" for user bob", "rejected {n} `{P}` (401)")))
def test_property_obs58_59_a_settings_name_in_a_sentence(seed: int, name: str, form: str) -> None:
    """OBS-58: a setting's name (``DB_PASSWORD``, ``apiKey``) in a sentence with its copula, or with its value quoted
    right after it (an error message quoting what it refused)."""
    secret = _token(random.Random(seed))
    assert_only_secret_hidden(form.format(n=name, P=secret), secret)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(("password", "api_key", "DB_PASSWORD", "token")),
       pad=st.integers(0, 6), tail=st.sampled_from(("", "\n host     | db.local", "\n(1 row)")))
def test_property_obs58_59_a_row_without_outer_bars(seed: int, name: str, pad: int, tail: str) -> None:
    """OBS-58: what ``psql`` prints (``name | value`` rows, a ``----+----`` separator, ``\\x``'s records) loses the
    value a row's name names, and a column's value under a header naming a credential."""
    secret = _token(random.Random(seed))
    assert_only_secret_hidden(f"  key {' ' * pad}| value\n------{'-' * pad}+------\n {name} {' ' * pad}| {secret}{tail}", secret)
    assert_only_secret_hidden(f"-[ RECORD 1 ]------\nid {' ' * pad}| 7\n{name} | {secret}{tail}", secret)
    assert_only_secret_hidden(f" id | user  | {name}\n----+-------+------\n  1 | admin | {secret}", secret)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32),
       name=st.sampled_from(("webhook_secret", "AWS_SECRET_ACCESS_KEY", "password", "token")),
       indent=st.sampled_from(("  ", "    ", "\t")), lead=st.sampled_from(("", "env:\n  ")))
def test_property_obs58_a_yaml_value_key_under_a_credentials_key(seed: int, name: str, indent: str,
                                                                 lead: str) -> None:
    """OBS-58: ``DB_PASSWORD:\\n  value: P``: the ``value`` key is named by the key that holds it."""
    secret = _value(random.Random(seed))
    inner = (indent + "  ") if lead else indent
    assert_only_secret_hidden(f"{lead}{name}:\n{inner}value: {secret}\n{inner}description: the database", secret)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32),
       form=st.sampled_from(('refresh_token: process.env.X || "{P}"', "const secret = cfg.get('x') || '{P}';",
                             'password = ENV["DB_PASSWORD"] || "{P}"', 'var key = config["ApiKey"] ?? "{P}";',
                             'SECRET_KEY <- "{P}"', "db.password <<- '{P}'", 'api_token = settings["x"] or "{P}"')))
def test_property_obs58_a_literal_standing_in_for_a_credential_in_code(seed: int, form: str) -> None:
    """OBS-58: the literal after ``||`` / ``??`` / ``or`` when the subscript read or the name assigned names a
    credential, and R's ``<-`` assignment of a string."""
    secret = _value(random.Random(seed))
    assert_only_secret_hidden(form.format(P=secret), secret)


@pytest.mark.parametrize("text", [
    "If that's your intention, pass `allow_module_level=True`.", "winreg.KEY_READ | winreg.KEY_WOW64_32KEY",
    "the DB_PASSWORD is set in .env", "if api_key is None: raise", "assert secret_key is generated_key",
    "the API_KEY is required", "invalid token 'YOUR_TOKEN'", "self.api_key is not None",
    "password:\n  value: null", "password:\n  value: ${DB_PASSWORD}", "description:\n  value: Xk9mQ2vLp7RtYu8",
    "const apiKey = process.env.API_KEY || '';", "x = a || \"Xk9mQ2vLp7RtYu8\"", 'x <- "Xk9mQ2vLp7RtYu8"',
    "token <- Sys.getenv(\"TOKEN\")", "cat notes.txt | grep password | head -5", "echo password | xargs -n1",
    "token | count\n------+------\nfoo   | 12", "password | see vault",
])
def test_obs55_code_and_prose_in_those_forms_stay(text: str) -> None:
    """OBS-55: an argument in backticks after ``pass``, a bitwise or, a check of a setting, a placeholder, an empty
    or a read fallback, a pipeline and a count keep every character."""
    assert scrub_text(text) == text


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32),
       form=st.sampled_from(("[API token] {P}", "> [vault token] {P}", "DB_PASSWORD:\n  value: {P}",
                             "config:\n  api_key:\n    value: {P}", "the DB_PASSWORD is {P}", "webhook secret -- {P}",
                             "Log in as admin / {P}", "password | {P}\nhost     | db.local")))
def test_property_obs59_a_note_in_a_json_string_loses_the_same_value(seed: int, form: str) -> None:
    """OBS-59: the forms above inside a tool's JSON output (``{"output": "…"}``) lose the same value, nothing else."""
    import json

    secret = _value(random.Random(seed))
    assert_only_secret_hidden(json.dumps({"output": form.format(P=secret), "exit_code": 0}), secret)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(("password", "the token is", "pw", "secret")),
       url=st.sampled_from(("https://x.example/app;jsessionid={P}?a=1", "https://x.example/cb?code={P}&state=1",
                            "postgres://bob:{P}@db.local/app")))
@example(seed=646607, name="password", url="https://x.example/app;jsessionid={P}?a=1")  # AEWPkoGFjUXJG06?: a draw
def test_property_obs59_a_url_after_a_name_in_a_sentence_loses_only_its_own_secret(seed: int, name: str,
                                                                                   url: str) -> None:
    """OBS-59: a URL given after a credential's name in a sentence is no password itself: only what its own readers
    take (a session id, a code, a userinfo password) goes, the rest of the URL stays."""
    secret = _value(random.Random(seed)).replace("%", "x").replace("+", "x").replace("#", "x")
    assert_only_secret_hidden(f"2026-06-14T00:00:00Z {name} {url.format(P=secret)} policy check passed", secret)


@pytest.mark.parametrize("text", [
    "remind backporter about v8\\_embedder\\_string (Keyhan Vakil)", "source argument for a token is "
    "<code>args[token.index]</code>.</li>", "the hotkey is Ctrl+Shift+K2", "see monkey-patch (Keyboard)",
])
def test_obs55_a_key_inside_a_word_and_an_elements_tag_stay(text: str) -> None:
    """OBS-55: ``key`` inside a word (``Keyhan``) names nothing, and an element's tag after a name is markup."""
    assert scrub_text(text) == text


# ------------------------------------------------------------------------------------------------------------------
# A login by initials (u: bob p: P), a login line labelled by u/p or user/pw, a wireless network's line (Wi-Fi: SSID / P)
# ------------------------------------------------------------------------------------------------------------------

_LOGIN_FORMS = ("u: {u} p: {P}", "U: {u} | P: {P}", "user={u}, p={P}.", "login: {u}; p: {P}", "u/p: {u} / {P}",
                "- **user/pw**: {u} / {P}", "Wi-Fi: {u} / {P}", "wifi: {u} / {P}\nnext line", "SSID/password: {u} / {P}",
                "WLAN: {u} / {P}", "Username/Pwd: {u} / {P}")


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), form=st.sampled_from(_LOGIN_FORMS), wrapped=st.booleans())
def test_property_obs58_59_a_login_by_initials_or_a_networks_line_loses_its_password_only(
        seed: int, form: str, wrapped: bool) -> None:
    """OBS-58 / OBS-59: ``u: bob p: P``, ``u/p: bob / P`` and ``Wi-Fi: HomeNet / P``: the user (or the network's
    name) stays, the generated password alone becomes its marker, in a tool result's JSON too."""
    r = random.Random(seed)
    user = r.choice(("bob", "admin", "HomeNet", "deploy", "ana.silva", "office_wifi"))
    secret = _value(r)
    text = form.format(u=user, P=secret)
    if wrapped:
        text = json.dumps({"output": text})
        secret = json.dumps(secret)[1:-1]
    assert_only_secret_hidden(text, secret)


@pytest.mark.parametrize("text", ["u: 3 p: 4", "x: bob p: Xk9fPq2ZmW7tLr4", "Wi-Fi: 2.4GHz / 5GHz", "wifi: on / off",
                                  "u: bob p: see the vault", "layout: u: left p: right", "http://u:p@host"])
def test_obs55_initials_and_network_lines_without_a_generated_value_stay(text: str) -> None:
    """OBS-55: initials around no generated value, and a network's line of settings, stay."""
    assert scrub_text(text) == text


# ------------------------------------------------------------------------------------------------------------------
# An account's password holding an @ or in an element (<pre>bob@x.com:P</pre>); a weak key handed over after a dash
# ------------------------------------------------------------------------------------------------------------------

_ACCOUNT_FORMS = ("Gmail: bob@example.com / {P}", "<pre>bob@example.com:{P}</pre>", "- ana@mail.example.org | {P}",
                  "<td>ops@example.com:{P}</td>", "bob@example.com:{P}\n")
_HANDED_KEY_FORMS = ("Here is your key - {P}", "Here's the key - {P}.", "your key — {P}", "Here is your new key -- {P}")


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), form=st.sampled_from(_ACCOUNT_FORMS + _HANDED_KEY_FORMS), at=st.booleans())
def test_property_obs58_59_an_accounts_password_with_an_at_and_a_key_handed_over_lose_their_value_only(
        seed: int, form: str, at: bool) -> None:
    """OBS-58 / OBS-59: the address stays and the password goes, an ``@`` inside it too (``P@ss…`` is no address) and
    in an element of a page; ``Here is your key - P`` (a weak key handed over, a value drawn at random) loses ``P``."""
    r = random.Random(seed)
    secret = _value(r)
    if at:
        k = r.randrange(1, len(secret))
        secret = secret[:k] + "@" + secret[k:]
    assert_only_secret_hidden(form.format(P=secret), secret)


@pytest.mark.parametrize("text", ["bob@example.com:alice@example.org", "bob@example.com / Xk9@mail.example.org",
                                  "<td>bob@example.com</td>", "The key - sorted by date", "press your key - then Enter",
                                  "your key - ~/.ssh/id_ed25519"])
def test_obs55_two_addresses_and_a_dash_after_a_key_without_a_random_value_stay(text: str) -> None:
    """OBS-55: an address after an address, and a dash after a key followed by words or a path, stay."""
    assert scrub_text(text) == text


_QUALIFIED_FORMS = ("Password for bob@example.com: {P}", "- **Password for bob.smith@corp.example.org:** {P}",
                    "Gmail password for alice+work@mail.example.com: {P}", "The passphrase I chose is {P}",
                    "The password we use is {P}", "the token you need for CI is {P}.",
                    "The API key that I gave you is {P}", "the password they set for the router is {P}",
                    "password for gmail {P}", "token for the CI bot {P}, keep it", "secret on staging {P}",
                    "пароль от почты {P}", "Passwort für den Server {P}", "senha do wifi {P}",
                    "contraseña del banco {P}.")


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), form=st.sampled_from(_QUALIFIED_FORMS))
def test_property_obs58_59_a_credential_qualified_by_its_account_or_whose_it_is_loses_its_value_only(
        seed: int, form: str) -> None:
    """OBS-58 / OBS-59 (stop 56 soak): a label naming the account by its address (``Password for bob@example.com:
    P``), a clause saying whose the credential is before the copula (``The passphrase I chose is P``), and a phrase
    saying what it is for between a name and its bare value (``password for gmail P``, ``пароль от почты P``): the
    value goes, the address, the clause and the phrase stay."""
    secret = _value(random.Random(seed))
    assert_only_secret_hidden(form.format(P=secret), secret)


@pytest.mark.parametrize("text", [
    "The password you entered is incorrect", "The token I used was expired", "The password I use is the same as before",
    "The password I chose is long enough", "Passwort für den Server vergessen", "пароль от почты Gmail",
    "token of type Bearer", "password for the admin account is stored in vault",
    "Password for bob@example.com: see vault",
    "Reset password for bob@example.com: done", "secret for staging abc123",
    "# rejects x-api-key with 401 and requires Authorization: Bearer.", "requires Authorization: Basic"])
def test_obs55_such_clauses_and_phrases_without_a_generated_value_stay(text: str) -> None:
    """OBS-55: a clause or a phrase whose sentence goes on in words (``is incorrect``, ``vergessen``) keeps them; a
    label of several words naming the ``Authorization`` header keeps its scheme word (a comment of a library on this
    machine lost ``Bearer.``)."""
    assert scrub_text(text) == text


_SKILL = """---
name: deploy-staging
description: Deploy the app to staging
version: 1.2.0
---
# Deploy to staging

1. Export the token: `export GITHUB_TOKEN={gh}`
2. Log in: `docker login -u deploy -p {pw} registry.example.com`
3. The DB password is {made} (staging only).

```bash
PGPASSWORD={pw} psql -h db -U app
```

```yaml
db:
  user: app
  password: "{word}"
```
```
REDIS_PASSWORD={word}
```
Admin UI: admin / {dashed}
"""


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), encodings=st.integers(0, 2))
def test_property_obs58_a_skill_written_by_the_agent_loses_each_credential_and_nothing_else(seed: int,
                                                                                           encodings: int) -> None:
    """OBS-58 / OBS-59: a SKILL.md the agent writes with ``skill_manage`` (a code span holding an export under a
    label, a client's option, a made password in a sentence, a plain word quoted in YAML and in an env line, a login
    line's dashed words), as the file and as the tool's JSON argument (once or twice encoded): each credential becomes its marker,
    every other character stays."""
    r = random.Random(seed)
    values = {"gh": "ghp_" + "".join(r.choice(string.ascii_letters + string.digits) for _ in range(36)),
              "pw": "".join(r.choice(string.ascii_letters) for _ in range(9)) + str(r.randint(10, 99)) + "Qz",
              "made": r.choice(["hunter", "falcon", "river"]) + str(r.randint(10, 99)),
              "word": r.choice(["postgres", "raspberry", "sunshine"]),
              "dashed": "-".join([r.choice(["Blue", "Falcon", "River"]), r.choice(["Sky", "Moon"]),
                                  str(r.randint(10, 99))])}
    skill = _SKILL.format(**values)
    expected = skill
    for value in values.values():
        expected = expected.replace(value, redaction_marker(value))
    text, want = skill, expected
    for _ in range(encodings):
        text = json.dumps({"action": "create", "name": "deploy-staging", "content": text})
        want = json.dumps({"action": "create", "name": "deploy-staging", "content": want})
    assert scrub_text(text) == want

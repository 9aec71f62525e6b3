"""Key material written as code writes numbers, inputs that validation errors repeat, and a value's own last mark
(OBS-55, OBS-57, OBS-58, OBS-59).

- A private key written in hexadecimal after ``0x`` (``PRIVATE_KEY=0x<64 hex>``, an Ethereum wallet's) is key
  material under a credential's name; a hexadecimal literal of 64 bits at most stays (``MASK_KEY = 0xFFFFFFFF``).
- A database URL's password is not percent-encoded: its ``#`` is the password's, not a fragment's
  (``jdbc:…?user=app&password=Xk9#mQ2$vL``); a token's parameter still ends at a fragment (``?token=P#top``).
- A generated value's last ``!`` or ``?`` followed by a word in lower case, a digit, an option or a path is its own
  (``--password Passw0rd! --verbose``, ``password=P@ss! user=bob``); before a capital it ends a sentence
  (``token=P! Next``). A word, one mark and a number keeps the ``!`` people end it with (``password Bluebird-77!``).
- pydantic's validation errors repeat the input they refused, after the field's location: as the message
  (``db.password`` / ``  Input should be … [type=…, input_value='P', input_type=str]``) and as the records of
  ``errors()`` or a FastAPI 422 body (``"loc": ["body", "password"], "msg": …, "input": "P"``); the input goes when
  the location names a credential, and stays otherwise.
- A weak ``key`` in a sentence after the environment or the owner it is for (``the staging key P``, ``my key P``)
  or after ``with`` / ``using`` (``signed with key P``) gives a value that looks drawn at random; a lookup's key stays
  (``the primary key user_id2024``, ``sort by the key column_name``).
"""

from __future__ import annotations

import json
import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from hermes_pipeline.engine.scrub import redaction_marker, scrub_text

from tests.engine._scrub_support import note_password, password

HEX = "0123456789abcdef"


def _hidden_alone(text: str, *values: str) -> None:
    expected = text
    for value in values:
        expected = expected.replace(value, redaction_marker(value))
    assert scrub_text(text) == expected, text


# --------------------------------------------------------------------------- key material after 0x

HEX_KEY_FORMS = ["PRIVATE_KEY={k}", "private_key: {k}", "ETH private key: {k}", "wallet private key is {k}",
                 "secret key: {k}", 'export DEPLOYER_PRIVATE_KEY="{k}"', "signing_key = {k}", "SECRET_KEY={k} ./run"]


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), digits=st.sampled_from([32, 40, 64]), upper=st.booleans(),
       form=st.sampled_from(HEX_KEY_FORMS))
def test_property_key_material_after_0x_is_hidden_alone(seed: int, digits: int, upper: bool, form: str) -> None:
    """OBS-58: ``0x`` and 32 or more hexadecimal digits under a credential's name are the key (an Ethereum private
    key is ``0x`` and 64); the prefix goes with it, nothing around it changes."""
    r = random.Random(seed)
    body = "".join(r.choice(HEX) for _ in range(digits))
    key = "0x" + (body.upper() if upper else body)
    _hidden_alone(form.format(k=key), key)


@pytest.mark.parametrize("text", [
    "MASK_KEY = 0xFFFFFFFF", "key = 0x1F", "key: 0xdeadbeefcafebabe", "token_mask=0x00FF00FF00FF00FF",
    "The tx hash is 0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
    "address: 0x742d35Cc6634C0532925a3b844Bc454e4438f44e", "encrypted with key id 0x4AEE18F8",
])
def test_hex_literals_of_64_bits_and_hashes_without_a_name_stay(text: str) -> None:
    """OBS-59: a literal of 64 bits at most is a number of code, and a hash or an address named as one is no key."""
    assert scrub_text(text) == text


# --------------------------------------------------------------------------- a password's URL parameter


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), name=st.sampled_from(["password", "pwd", "pass", "db_password"]),
       form=st.sampled_from(["jdbc:postgresql://db:5432/app?user=app&{n}={p}",
                             "jdbc:mysql://db/app?{n}={p}&useSSL=false", "https://x.org/login?user=bob&{n}={p}",
                             "mongodb://db/app?authSource=admin&{n}={p} next"]))
def test_property_a_hash_sign_inside_a_passwords_url_parameter_is_the_passwords(seed: int, name: str,
                                                                                form: str) -> None:
    """OBS-57: a password written into a URL's query as it is typed keeps its ``#`` (a fragment never follows a
    password): the whole value goes, up to the next parameter."""
    r = random.Random(seed)
    value = note_password(r, share=0)
    cut = r.randrange(1, len(value))
    value = value[:cut] + "#" + value[cut:]
    _hidden_alone(form.format(n=name, p=value), value)


def test_a_tokens_url_parameter_still_ends_at_a_fragment() -> None:
    """OBS-57: a token's parameter is not a typed password: a ``#`` after it starts the URL's fragment, which
    stays."""
    token = password(random.Random(3), 26)
    _hidden_alone(f"https://example.com/reset?token={token}#top", token)


# --------------------------------------------------------------------------- a value's last mark

MARK_FORMS = ["--password={p} next", "mycmd --password {p} --verbose", "PASSWORD={p} ./run", "password={p} user=bob",
              "wget --user=admin --password={p} https://example.com/file", "token={p} 2>&1", "api_key={p} $HOME"]


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), mark=st.sampled_from("!?"), form=st.sampled_from(MARK_FORMS))
def test_property_a_generated_values_last_mark_before_a_word_or_an_option_is_its_own(seed: int, mark: str,
                                                                                     form: str) -> None:
    """OBS-57: no sentence goes on in lower case, with a digit, an option, a path or a variable after its ``!`` or
    ``?``: there the mark is the value's last character, and it goes with it."""
    value = note_password(random.Random(seed), share=0) + mark
    _hidden_alone(form.format(p=value), value)


def test_a_mark_before_a_capital_still_ends_the_sentence() -> None:
    """OBS-57: ``token=P! Next``: before a capital the mark is the sentence's, and it stays."""
    value = note_password(random.Random(5), share=0)
    _hidden_alone(f"token={value}! Next we deploy.", value)


@pytest.mark.parametrize("text, value", [
    ('§ Home Wi-Fi: network "Fam5G", password Bluebird-77!\n§ User prefers short answers', "Bluebird-77!"),
    ("The password is summer_2020! ok", "summer_2020!"),
    ("wifi password Bluebird-77?", "Bluebird-77?"), ("the wifi password is Rex.2019?", "Rex.2019?"),
])
def test_a_word_a_mark_and_a_number_keep_the_mark_people_end_them_with(text: str, value: str) -> None:
    """OBS-57: as ``Summer2024!``, a password of a word, a mark and a number keeps its last ``!`` or ``?``."""
    _hidden_alone(text, value)


# --------------------------------------------------------------------------- validation errors


class _Database(BaseModel):
    password: int
    host: str


class _Settings(BaseModel):
    api_key: int
    db: _Database
    name: int
    email: int


def _refused(secret: str, other: str) -> ValidationError:
    try:
        _Settings.model_validate({"api_key": secret, "db": {"password": secret + "x", "host": "db"},
                                  "name": other, "email": other + "@example.org"})
    except ValidationError as error:
        return error
    raise AssertionError("the model accepted the input")


def _renderings(error: ValidationError) -> list[str]:
    records = error.errors(include_url=False)
    return [str(error), error.json(), repr(records), json.dumps({"detail": records}, default=str),
            json.dumps({"detail": records}, default=str, indent=2),
            json.dumps({"output": str(error)})]  # a tool's result holding the message


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), made=st.booleans())
def test_property_a_validation_error_loses_the_credential_it_repeats(seed: int, made: bool) -> None:
    """OBS-55 / OBS-57: pydantic's message, its ``errors()`` and a FastAPI 422 body repeat the refused input after
    the field's location; under ``api_key`` and ``db.password`` that input is the credential: it goes, in every
    rendering, and the other fields' inputs and every other byte stay."""
    r = random.Random(seed)
    secret = (r.choice(["Falcon", "harbor", "Violet"]) + str(r.randint(10, 9999)) + r.choice(["", "!"])) if made \
        else note_password(r)
    other = "".join(r.choice(string.ascii_lowercase) for _ in range(8))
    for text in _renderings(_refused(secret, other)):
        out = scrub_text(text)
        assert secret not in out, text
        assert out.count("<redacted:") == 2, (text, out)  # api_key's and db.password's, nothing else
        assert other in out and "db" in out, out


def test_a_validation_errors_input_under_another_name_stays() -> None:
    """OBS-59: an input refused for a field that names no credential (a user name, an e-mail address, a host) is
    the message's own text."""
    text = ("2 validation errors for User\nname\n  String should have at most 5 characters [type=string_too_long, "
            "input_value='alice-long-name', input_type=str]\nemail\n  value is not a valid email address "
            "[type=value_error, input_value='bob@example', input_type=str]\npassword\n  Field required "
            "[type=missing, input_value={'name': 'alice-long-name'}, input_type=dict]")
    assert scrub_text(text) == text


# --------------------------------------------------------------------------- a weak key's owner


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), form=st.sampled_from([
    "Deploys the app with the staging key {p}", "Deploys the app with key {p} and then exits",
    "use my key {p} for the demo", "the prod key {p} is in the vault", "signed using key {p}",
    "description: Deploys with the team key {p}"]))
def test_property_a_weak_key_after_its_owner_gives_a_random_value(seed: int, form: str) -> None:
    """OBS-57: after the environment or the owner a key is for, or what is done with it, a value that looks drawn at
    random is the key."""
    value = password(random.Random(seed), 20)
    _hidden_alone(form.format(p=value), value)


@pytest.mark.parametrize("text", [
    "the primary key user_id2024 is indexed", "sort by the key column_name first", "press the key K to continue",
    "signed with key 4AEE18F83AFDEB23", "with the staging key stg_config_main as the dict key", "my key is here",
    "look up the test key user_12 in the map", "with key: value pairs",
])
def test_a_lookups_key_and_words_after_a_key_stay(text: str) -> None:
    """OBS-59: a database's or a map's key, a keyboard's, a GPG key id and words are no credential."""
    assert scrub_text(text) == text


# --------------------------------------------------------------------------- names, quotes and edits


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), form=st.sampled_from([
    "psw={p}", "PSWD: {p}", "DB_PASS_PROD={p}", "ADMIN_PW_OLD={p}", "pass_2={p}", "apikey {p}",
    "password: '{a}''{b}'", "sql = 'INSERT …'; password = '{a}''{b}' -- escaped", "PASSWORD={a}\\ {b} ./run",
    "sed -i 's/API_KEY=.*/API_KEY={p}/' .env", 'sed -i "s|^DB_PASSWORD=.*|DB_PASSWORD={p}|" .env',
    "sed -e 's#token=[^ ]*#token={p}#g' app.env", 'git commit -m "rotate key, new one is {p}"',
    "jeton d'accès : {p}", "mot de passe de l'admin : {p}", "暗号鍵: {p}", "私钥：{p}",
]))
def test_property_names_quotes_and_edits_that_hold_a_credential(seed: int, form: str) -> None:
    """OBS-57: an abbreviated password's name (``psw``), ``pass`` before the environment it is for
    (``DB_PASS_PROD``), ``apikey`` and a blank, YAML's and SQL's ``''`` inside single quotes, the shell's escaped
    blank, each part of a sed substitution (an agent editing its ``.env``), the key named again as *the new one*, a
    label with an apostrophe, the Japanese and Chinese words for an encryption and a private key: the value goes,
    nothing else."""
    r = random.Random(seed)
    value = password(r, 20)
    if "{a}" in form:
        a, b = value[:8], value[8:]
        sep = "''" if "''" in form else "\\ "
        _hidden_alone(form.format(a=a, b=b), a + sep + b)
    else:
        _hidden_alone(form.format(p=value), value)


@pytest.mark.parametrize("text", [
    "pass_through=true", "PASS_THRESHOLD=80", "pass_rate=0.95", "PASS_FAIL=fail", "the apikey header",
    "{'password': '', 'user': 'bob'}", "path=C:\\ Program", "sed -i 's/DEBUG=.*/DEBUG=false/' .env",
    "sed -i 's/API_KEY=.*/API_KEY=${NEW_KEY}/' .env", "the key, new one is better", "it's fine: yes",
    "Don't forget: the key is in the drawer", "鍵を開ける", "本当にこの鍵: keygrip%%0A  %s%%0A",
    "   pass8\t等於-parenb -istrip cs8", "le jeton est expiré", 'x.login("a", "this is not it")',
    'smtp.login("me@gmail.com", "abcd efgh ijkl mnop")',
])
def test_settings_and_words_beside_those_forms_stay(text: str) -> None:
    """OBS-59: ``pass`` before what is not an environment, an empty password, a path's escaped blank, sed editing
    a setting or putting a variable, words after *one*, an apostrophe in prose, the Japanese for a door's key, an
    app password's placeholder."""
    assert scrub_text(text) == text


@pytest.mark.parametrize("text, value", [
    ('smtp.login("me@gmail.com", "qwer tyui opas dfgh")', "qwer tyui opas dfgh"),
    ("server.login(user, 'hwqz kmvb ptra ylsc')", "hwqz kmvb ptra ylsc"),
    ("비밀번호는 Qwer1234! 입니다", "Qwer1234!"),
    ("The password is Passw0rd! now.", "Passw0rd!"),
])
def test_an_app_password_in_a_login_call_and_a_mark_a_sentence_goes_on_after(text: str, value: str) -> None:
    """OBS-57: an app password's four groups given to a login call by position; a ``!`` that a sentence goes on
    after in lower case or in a script without case is the password's."""
    _hidden_alone(text, value)


@pytest.mark.parametrize("text, value", [
    ("1. Log in with **admin** / **Adm1n!pw9**", "Adm1n!pw9"),
    ("Log in with `admin` / `Adm1n!pw9`", "Adm1n!pw9"),
    ("Credentials → user **ops**, password **0ps!Pass9**", "0ps!Pass9"),
    ("Network security key: Falcon1302", "Falcon1302"),
])
def test_a_login_in_emphasis_and_the_wifi_password_as_windows_names_it(text: str, value: str) -> None:
    """OBS-57: a login sentence's user and password in emphasis or backticks; ``Network security key`` (the
    Wi-Fi password in Windows' words) names a password people make."""
    _hidden_alone(text, value)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), name=st.sampled_from(["password_hash", "PASSWORD_HASH", "pw_hash",
                                                             "passwd_digest", "hashed_password"]),
       scheme=st.sampled_from(["$2b$12$", "$2y$10$", "$6$rounds=5000$", "$argon2id$v=19$m=65536,t=3,p=4$", "$y$j9T$"]),
       sep=st.sampled_from([": ", "=", " = ", ": '", '": "']))
def test_property_a_password_hash_under_its_name_is_hidden_whole(seed: int, name: str, scheme: str, sep: str) -> None:
    """OBS-58: a password's hash in modular crypt form (bcrypt, sha512-crypt, argon2, yescrypt) is as good as the
    password to whoever cracks it: under a name saying it is a password's hash, the whole hash goes."""
    r = random.Random(seed)
    digest = scheme + "".join(r.choice(string.ascii_letters + string.digits + "./") for _ in range(53))
    close, open_ = ("'", "") if sep.endswith("'") else ('"', '"') if sep.endswith('"') else ("", "")
    _hidden_alone(f"{open_}{name}{sep}{digest}{close}\nnext: 1", digest)


@pytest.mark.parametrize("text", [
    "file_hash: $2b$12$abcdefghijklmnopqrstuuKq8Zf0yH8y1VrDkO8wS1X8pX9oW", "            # pass 2: reconciliation",
    "Pass 1: parse", "Security key: YubiKey 5C NFC", "network security key type: WPA2-Personal",
    "password **required**", "Log in with **admin** / **your password**",
])
def test_hashes_of_files_passes_of_a_program_and_hardware_keys_stay(text: str) -> None:
    """OBS-59: a file's hash, a program's second pass, a hardware security key's model, a word in emphasis."""
    assert scrub_text(text) == text


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), form=st.sampled_from([
    "de API-sleutel is {p}", "klucz API: {p}", "API anahtarı: {p}", "API-nyckel: {p}", "API-avain: {p}",
    "khóa API: {p}", "kunci API: {p}", "Le secret client est {p}", "la clé secrète : {p}", "API kulcs: {p}",
]))
def test_property_the_word_for_key_in_other_languages_beside_api(seed: int, form: str) -> None:
    """OBS-57: Dutch, Polish, Turkish, Swedish, Finnish, Vietnamese, Indonesian, Hungarian and French name an API's
    key (or a client's secret) in their own words; the value after them goes."""
    value = password(random.Random(seed), 20)
    _hidden_alone(form.format(p=value), value)


@pytest.mark.parametrize("text", [
    "de sleutel is zoek", "klucz do drzwi jest w szufladzie", "khóa học: Python cơ bản", "Le secret client est partagé",
    "API anahtarı: lütfen girin",
])
def test_what_those_words_say_otherwise_stays(text: str) -> None:
    """OBS-59: a lost key, a door's key, a course (Vietnamese *khóa học*), words after the name."""
    assert scrub_text(text) == text


def test_a_validation_errors_location_is_the_line_right_before_its_message() -> None:
    """OBS-57: the location is read on the message's line before, whatever short lines stand above it (``x``,
    ``Settings``), and on no other."""
    value = password(random.Random(11), 16)
    message = f"  Input should be a valid integer [type=int_parsing, input_value='{value}', input_type=str]"
    _hidden_alone(f"x\napi_key\n{message}", value)
    _hidden_alone(f"Settings\ndb.password\r\n{message}\n", value)
    kept = f"api_key\nname\n{message}"
    assert scrub_text(kept) == kept  # the location is ``name``, not the line above it


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), lines=st.integers(1, 16), crlf=st.booleans(), inline=st.booleans())
def test_property_an_openvpn_static_key_loses_its_hex_lines_only(seed: int, lines: int, crlf: bool,
                                                                inline: bool) -> None:
    """OBS-58: an OpenVPN static key (``openvpn --genkey``, a profile's ``<tls-auth>``): its hex lines go, its two
    markers and what surrounds them stay."""
    r = random.Random(seed)
    nl = "\r\n" if crlf else "\n"
    body = nl.join("".join(r.choice(HEX) for _ in range(32)) for _ in range(lines))
    block = f"-----BEGIN OpenVPN Static key V1-----{nl}{body}{nl}-----END OpenVPN Static key V1-----"
    text = f"<tls-auth>{nl}{block}{nl}</tls-auth>{nl}key-direction 1" if inline else f"#{nl}{block}{nl}"
    _hidden_alone(text, body)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), form=st.sampled_from([
    "spring:\n  datasource:\n    password: ${{DB_PASSWORD:{p}}}\n", "api.key=${{API_KEY:{p}}}",
    'password: "${{db.password:{p}}}"',
]))
def test_property_a_spring_placeholders_default_goes_its_variable_stays(seed: int, form: str) -> None:
    """OBS-57: Spring's ``${NAME:default}`` falls back to a literal, as the shell's ``${NAME:-default}`` does: the
    default goes, the variable's name stays."""
    value = note_password(random.Random(seed))
    _hidden_alone(form.format(p=value), value)


@pytest.mark.parametrize("text", ["password: ${DB_PASSWORD}", "password: ${db.password:}",
                                  'password: "${DB_PASSWORD:changeme}"', "token: ${TOKEN:?token is required}",
                                  "PublicKey = xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg="])
def test_placeholders_without_a_default_and_public_keys_stay(text: str) -> None:
    """OBS-59: a placeholder with no default, or a placeholder's own default word, and a WireGuard peer's public
    key."""
    assert scrub_text(text) == text

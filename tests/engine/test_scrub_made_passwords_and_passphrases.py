"""Passwords as people and password managers make them, where a name or a sentence says what they are (OBS-55, OBS-57,
OBS-58).

- A word, one mark and a number (``Bluebird-77``, ``summer_2020``) where a sentence states the password (``Change
  your password to P``, ``The password is P``), as a word and a number glued (``hunter22``) already was.
- ``Change`` / ``update`` / ``rotate`` in the present, as ``set`` and ``changed`` were.
- An environment variable's name glued in capitals (``Set PGPASSWORD to P``, ``the PGPASSWORD is P``).
- A passphrase of words joined by dashes, what password managers make by default (``correct-horse-battery-staple``)
  under a password's name or where a sentence states it; words of a setting or a note stay (``no-key-required``).
- Under a name of a user and a password together, a value that starts with the user's own pair (``creds:
  user=alice pass=P``) is no password: the user's name stays, the password is hidden by its own name.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import redaction_marker, scrub_text
from hermes_pipeline.engine.scrub_names import dashed_passphrase

WORDS = ["bluebird", "river", "summer", "winter", "falcon", "galaxy", "orbit", "tundra", "rematch", "unsaid",
         "marble", "pepper", "cactus", "harbor", "lantern", "violet", "anchor", "copper", "maple", "zebra", "wiry",
         "staple", "battery", "horse", "correct", "willow", "saddle", "meadow", "thunder", "pocket"]
"""Words a person or a password manager's word list makes passwords of (none a word of a setting or a note)."""

STATED = ["Change your password to {p}", "Change your password to {p} tomorrow.", "Set the password to {p}",
          "I set the root password to {p}", "The password is {p}", "the wifi password was changed to {p}",
          "Update the admin password to {p} please", "The new password: {p}", "password: {p}"]


def _hidden_alone(text: str, value: str) -> None:
    assert scrub_text(text) == text.replace(value, redaction_marker(value)), text


@settings(max_examples=300, deadline=None)
@given(word=st.sampled_from(WORDS), capital=st.booleans(), mark=st.sampled_from("-_.@#*+"),
       number=st.integers(0, 9999), form=st.sampled_from(STATED))
def test_property_a_word_a_mark_and_a_number_stated_as_the_password_is_hidden_alone(
        word: str, capital: bool, mark: str, number: int, form: str) -> None:
    value = f"{word.capitalize() if capital else word}{mark}{number}"
    _hidden_alone(form.format(p=value), value)


@pytest.mark.parametrize("text", [
    "the password is sha-256 hashed", "Change your password to utf-8", "the password was set to gpt-4",
    "The password is case-sensitive", "Change your password to something stronger",
    "Update the password to at least 12 characters", "the password is base-64 encoded",
    "Set the password to the value from the vault", "the password is one-time-use",
    "the password is read-only-access", "the password is see-the-vault-entry"])
def test_what_a_sentence_says_of_a_password_stays(text: str) -> None:
    assert scrub_text(text) == text


@pytest.mark.parametrize(("text", "value"), [
    ("Set PGPASSWORD to hunter22 before running", "hunter22"),
    ("set DB_PASSWORD to hunter22", "hunter22"),
    ("the PGPASSWORD is Xk29mqLLq8", "Xk29mqLLq8"),
    ("Set MYSQL_PWD to summer24", "summer24"),
    ("Rotate the key to Xk29mqLLq8", "Xk29mqLLq8"),
    ("Update your API key to sk-live-4f8a9b2c7d1e", "sk-live-4f8a9b2c7d1e")])
def test_a_settings_name_glued_in_capitals_and_verbs_in_the_present(text: str, value: str) -> None:
    _hidden_alone(text, value)


@pytest.mark.parametrize("text", [
    "Set PGPASSWORD to the value from the vault", "Set PGPASSWORD to an empty string",
    "Set OPENAI_API_KEY to your key", "The PASSWORDS are rotated", "Set ENABLE_PASSWORD to true"])
def test_what_is_said_of_a_settings_name_stays(text: str) -> None:
    assert scrub_text(text) == text


PASSPHRASE_FORMS = ["password: {p}", "pw: {p}", "WIFI: MyHomeNet / pw: {p}", "DB_PASSWORD={p}", '"password": "{p}"',
                    "--password {p}", "mysql_password: {p}", "the password is {p}",
                    "The wifi password is {p}, enjoy", "I set the password to {p}", "passphrase: {p}",
                    "password: {p}."]


@settings(max_examples=300, deadline=None)
@given(words=st.lists(st.sampled_from(WORDS), min_size=3, max_size=6), form=st.sampled_from(PASSPHRASE_FORMS))
def test_property_a_dashed_passphrase_under_a_passwords_name_is_hidden_alone(words: list[str], form: str) -> None:
    value = "-".join(words)
    assert dashed_passphrase(value)
    _hidden_alone(form.format(p=value), value)


@pytest.mark.parametrize("text", [
    "password: no-key-required", "password: same-as-above", "password: read-from-env", "password: kebab-case-string",
    "password_policy: must-include-upper", "api_key: correct-horse-battery-staple", "auth: same-origin-policy",
    "password: see-the-vault", "token: aws-sdk-default", "password: not-set", "password: use-env-var"])
def test_words_of_a_setting_or_under_another_name_stay(text: str) -> None:
    assert scrub_text(text) == text


@pytest.mark.parametrize(("text", "kept", "hidden"), [
    ("Here are the creds: user=alice pass=Winter2025!", "user=alice", "Winter2025!"),
    ("credentials: username=bob password=Xk29mqLLq", "username=bob", "Xk29mqLLq"),
    ("DB_CREDENTIALS=user=admin;pass=Xk29mqLLq", "user=admin", "Xk29mqLLq")])
def test_a_users_own_pair_under_a_name_of_credentials_stays(text: str, kept: str, hidden: str) -> None:
    out = scrub_text(text)
    assert kept in out and hidden not in out
    _hidden_alone(text, hidden)


def test_creds_holding_only_the_users_pair_stay() -> None:
    assert scrub_text("creds: user=alice") == "creds: user=alice"
    assert scrub_text("creds: alice:Sunshine99") == "creds: alice:" + redaction_marker("Sunshine99")


@settings(max_examples=200, deadline=None)
@given(word=st.sampled_from(["door", "gate", "alarm", "garage", "safe", "keypad", "lockbox", "building gate",
                             "front door"]),
       noun=st.sampled_from(["code", "combination", "code for the garage"]),
       verb=st.sampled_from([": ", " is ", " ", " = ", " changed to ", " was: "]),
       digits=st.from_regex(r"[0-9]{4,8}", fullmatch=True), tail=st.sampled_from(["", ".", "#", " thanks"]))
def test_property_the_digits_of_a_door_or_alarm_code_are_hidden_alone(word: str, noun: str, verb: str, digits: str,
                                                                      tail: str) -> None:
    """OBS-58: a code that opens a door, a gate, an alarm or a safe is as secret as a PIN; its digits alone go (the
    keypad's ``#`` stays)."""
    _hidden_alone(f"Remember: the {word} {noun}{verb}{digits}{tail}", digits)


@pytest.mark.parametrize("text", [
    "Error code: 4471", "zip code: 94105", "lock code v2.1", "the safe code: 2024-05-01",
    "Thread-safe code: 100 workers", "status code 404", "exit code 137", "door codes are printed on 2 cards"])
def test_other_codes_and_numbers_stay(text: str) -> None:
    assert scrub_text(text) == text


@pytest.mark.parametrize(("text", "value"), [
    ("NAS login: admin/Xk29mqLLq", "Xk29mqLLq"), ("login: admin/Bluebird77", "Bluebird77"),
    ("NAS login: admin/Falcon-1302", "Falcon-1302"), ("wifi: HomeNet/Bluebird77", "Bluebird77"),
    ("User's home wifi: SSID \"Casa-5G\", password Bluebird-77", "Bluebird-77"),
    ("router admin pw Bluebird-77", "Bluebird-77")])
def test_a_login_with_a_glued_slash_and_a_made_password_with_no_verb(text: str, value: str) -> None:
    _hidden_alone(text, value)


@pytest.mark.parametrize("text", [
    "account: settings/profile2024", "login: api/v1beta2", "Login: oauth/callback", "Sign-in: /auth/login",
    "Login page: https://x.com/login", "account: prod/us-east-1", "wifi password summer-24"])
def test_paths_after_a_login_label_stay(text: str) -> None:
    assert scrub_text(text) == text


def test_a_name_labelling_its_own_value_names_nothing_before_it() -> None:
    """``ssh pi@host (password: P)``: the parenthesis labels its own value; the host before it is no password."""
    out = scrub_text("ssh pi@raspberrypi.local (password: Xk29mqLLq)")
    assert out == "ssh pi@raspberrypi.local (password: " + redaction_marker("Xk29mqLLq") + ")"
    assert scrub_text("ssh pi@raspberrypi.local (password: raspberry)").startswith("ssh pi@raspberrypi.local (")
    _hidden_alone("Xk29mqLLq8 (the DB password)", "Xk29mqLLq8")


@pytest.mark.parametrize(("text", "value"), [
    ('Password for the NAS is "Bluebird 77"', "Bluebird 77"), ('password: "Bluebird 77"', "Bluebird 77"),
    ("The wifi password has been changed to Bluebird-77.", "Bluebird-77"),
    ("new password -> Bluebird_77", "Bluebird_77"),
    ("Netflix: alice@x.com pw Bluebird-77", "Bluebird-77")])
def test_a_word_and_a_number_apart_in_quotes_and_after_arrows(text: str, value: str) -> None:
    """A blank between the word and the number only inside quotes, where a value may hold one."""
    _hidden_alone(text, value)


def test_a_mysql_native_password_hash_in_a_query_result_is_hidden() -> None:
    """OBS-58: ``*`` and 40 upper-case hex digits, what ``mysql.user`` prints, with no header naming it in the row
    (the hash is what MySQL's handshake takes); a bullet or emphasis before other text stays."""
    digest = "*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9"
    _hidden_alone(f'{{"output": "| root | localhost | {digest} |\\n"}}', digest)
    for text in ("* 6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9", "**6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9**",
                 "*6bb4837eb74329105ee4568dda7dc67ed2ca2ad9"):
        assert scrub_text(text) == text


@settings(max_examples=200, deadline=None)
@given(words=st.lists(st.sampled_from(WORDS), min_size=3, max_size=8),
       form=st.sampled_from(["passphrase: {p}", "GPG passphrase: {p}.", "Passphrase: {p}\nmore text",
                             "- **Passphrase:** {p}", "ssh_passphrase: {p}", '"passphrase": "{p}"']))
def test_property_a_passphrase_of_words_with_blanks_after_its_label_is_hidden_alone(words: list[str],
                                                                                    form: str) -> None:
    """Under a passphrase's own name the words of the rest of the line are the value, blanks and all."""
    value = " ".join(words)
    _hidden_alone(form.format(p=value), value)


@pytest.mark.parametrize("text", [
    "Passphrase: see the vault", "passphrase: not set yet", "passphrase: the passphrase used to encrypt the key",
    "passphrase: optional passphrase for the key", "password: correct horse battery staple"])
def test_words_after_a_passphrase_label_that_say_something_stay(text: str) -> None:
    assert scrub_text(text) == text


@pytest.mark.parametrize(("text", "values"), [
    ("name,email,password\nalice,a@x.com,Bluebird-77\nbob,b@x.com,hunter2\ncarol,c@x.com,required\n",
     ["Bluebird-77", "hunter2"]),
    ("host,user,password\ndb,app,Falcon_1302", ["Falcon_1302"]),
    ("INSERT INTO users (name, password) VALUES ('alice', 'Bluebird-77');", ["Bluebird-77"]),
    ("insert into api_keys (owner, api_key) values ('ci', 'Xk29mqLLq8ZzYy');", ["Xk29mqLLq8ZzYy"]),
    ("INSERT INTO users (id, name, password, created) VALUES (1, 'alice', 'Bluebird-77', NOW()), "
     "(2, 'bob', 'Falcon#1302', NOW());", ["Bluebird-77", "Falcon#1302"]),
    ("chpasswd <<< 'alice:Bluebird-77'", ["Bluebird-77"]), ('sudo chpasswd <<< "alice:Bluebird-77"', ["Bluebird-77"]),
    ("usermod -p $(openssl passwd -1 Bluebird-77) alice", ["Bluebird-77"]),
    ("openssl passwd -6 -salt xyz Bluebird-77", ["Bluebird-77"])])
def test_passwords_in_a_column_an_insert_or_a_hashing_command(text: str, values: list[str]) -> None:
    """OBS-58: a CSV column named for a password holds passwords people make too; an SQL ``INSERT`` gives each value
    to the column at its position; ``chpasswd <<< 'user:P'`` and ``openssl passwd … P`` take the password."""
    expected = text
    for value in values:
        expected = expected.replace(value, redaction_marker(value))
    assert scrub_text(text) == expected


@pytest.mark.parametrize("text", [
    "INSERT INTO users (name, email) VALUES ('alice', 'a@x.com');",
    "INSERT INTO users (name, password) VALUES ('alice', NULL);", "INSERT INTO users (name, password) VALUES (?, ?)",
    "INSERT INTO t (password) VALUES ('changeme');", "INSERT INTO t (a, password) VALUES ('x');",
    "openssl passwd -stdin", "openssl passwd -1 $PASSWORD", "The openssl passwd command hashes a password",
    "id,token_type,expires\n1,bearer,3600"])
def test_inserts_and_commands_without_a_password_stay(text: str) -> None:
    assert scrub_text(text) == text


def _dashed_value(words: list[str], capitals: list[bool], number: int, where: int) -> str:
    pieces = [w.capitalize() if c else w for w, c in zip(words, capitals)]
    pieces.insert(where % (len(pieces) + 1), str(number))
    return "-".join(pieces)


@settings(max_examples=300, deadline=None)
@given(words=st.lists(st.sampled_from(WORDS), min_size=2, max_size=4), capitals=st.lists(st.booleans(), min_size=4,
                                                                                          max_size=4),
       number=st.integers(0, 9999), where=st.integers(0, 4),
       form=st.sampled_from(STATED + ["The password became {p}", "the root password became {p} yesterday",
                                      "Password updated to {p}", "changed the password to {p} yesterday"]))
def test_property_words_and_a_number_joined_by_dashes_stated_as_the_password_are_hidden_alone(
        words: list[str], capitals: list[bool], number: int, where: int, form: str) -> None:
    """OBS-58: what people make a password they can remember of (``Blue-Falcon-77``, ``blue-falcon-77``,
    ``Falcon-77-Blue``): words and a number joined by dashes, where a sentence states it (``became`` too)."""
    value = _dashed_value(words, capitals, number, where)
    _hidden_alone(form.format(p=value), value)


@pytest.mark.parametrize("text", [
    "The key is aes-256-gcm", "the token is valid-for-30-days", "The password is at-least-12-chars",
    "The token is X-Auth-Token", "The key is rsa-sha2-512", "The encoding is utf-8-sig", "the page became unresponsive",
    "the token became invalid after 2 hours", "the password is user-defined", "The password is Read-From-Env-2"])
def test_technical_names_and_settings_joined_by_dashes_stay(text: str) -> None:
    assert scrub_text(text) == text


@settings(max_examples=200, deadline=None)
@given(verb=st.sampled_from(["set", "Set", "change", "changed", "reset", "update", "updated", "rotate", "rotated",
                             "updating", "Setting", "changing", "rotating"]),
       name=st.sampled_from(["password", "admin password", "API key", "token", "root password", "DB password"]),
       value=st.sampled_from(["Xk9mQ2vLp7", "BlueFalcon77", "Qz8!rT2#vW5p", "hunter22x", "sk-aBcDeFgHiJkLmNoPqRsTuVw"]),
       tail=st.sampled_from(["", ".", " now", " on prod"]))
def test_property_a_verb_with_no_article_before_the_name_states_the_value(verb: str, name: str, value: str,
                                                                          tail: str) -> None:
    """OBS-58: as a command, a changelog or a log line writes it, with no article (``set password to P``,
    ``updating API key to P``): the value goes alone, as after ``set the password to``."""
    _hidden_alone(f"{verb} {name} to {value}{tail}", value)


@pytest.mark.parametrize("text", [
    "reset password to default", "set password to the one in the vault", "Change password to something stronger.",
    "Rotate key to rotate the logs", "set key to true", "set token to None", "change password to match policy",
    "set password to empty", "updating token to the new format"])
def test_what_a_verb_with_no_article_says_of_a_password_stays(text: str) -> None:
    assert scrub_text(text) == text


@pytest.mark.parametrize("form", [
    "the app password they gave me was {p}, use it for SMTP", "the app password I made was {p}",
    "use the app password {p} for smtp", "The Gmail app password (for the NAS) is {p}."])
@pytest.mark.parametrize("sep", [" ", "-"])
def test_an_app_passwords_four_groups_in_any_sentence_giving_a_value_are_hidden_alone(form: str, sep: str) -> None:
    """OBS-58: an app password's four groups wherever a sentence gives a value (a clause saying who made it too),
    spaces and all."""
    value = sep.join(["hvkz", "pqmt", "wrxa", "jlne"])
    _hidden_alone(form.format(p=value), value)


@settings(max_examples=100, deadline=None)
@given(words=st.lists(st.sampled_from(WORDS), min_size=3, max_size=6),
       form=st.sampled_from(["passphrase = {p}", "PASSPHRASE={p}", "key_passphrase = {p}\nnext = 1",
                             "gpg_passphrase = {p}"]))
def test_property_a_passphrase_of_words_with_blanks_after_equals_is_hidden_alone(words: list[str], form: str) -> None:
    """As after a passphrase's label, after ``=`` the words of the rest of the line are the value."""
    value = " ".join(words)
    _hidden_alone(form.format(p=value), value)


PLAIN_WORDS = ["raspberry", "postgres", "sunshine", "sekrit", "letmein", "dragon", "monkey", "nodejs", "hunter",
               "trustno", "welcome", "qwerty"]


@settings(max_examples=200, deadline=None)
@given(word=st.sampled_from(PLAIN_WORDS), form=st.sampled_from([
    "DB_PASSWORD={p}", "export REDIS_PASSWORD={p}\nREDIS_HOST=cache", "POSTGRES_PASSWORD={p}\nPOSTGRES_DB=app",
    "  AUTH_TOKEN={p}", "SMTP_PASS={p}  # the relay", '{{"content": "DB_PASSWORD={p}"}}',
    '{{"output": "HOST=db\\nREDIS_PASSWORD={p}\\n"}}']))
def test_property_a_plain_word_is_the_value_of_an_env_line(word: str, form: str) -> None:
    """OBS-58: where a value can only be a literal, a plain word is the password: an env file's or a shell's
    ``NAME=word`` on its own line (under any strong name). In code (``password = word``, ``token.map = lines``) and
    after a colon (``password: items`` is as often a mapping's code as a YAML file's string) a bare word is an
    identifier and stays."""
    _hidden_alone(form.format(p=word), word)


@pytest.mark.parametrize("text", [
    "password: str", "    password: bytes", "password: string", "proxy_auth: tuple", "    native_token: object",
    "token: lines", "session_key: agent", "api_key: ollama", "password: required", "PASSWORD=changeme",
    "TOKEN=none", "API_KEY=your_api_key_here", "TOKEN_TYPE=bearer", "password = lines", "token.map = lines",
    "password: optional", "password: hash", "password: items", "db_password: result", "api_key: payload"])
def test_types_placeholders_and_identifiers_after_a_name_stay(text: str) -> None:
    assert scrub_text(text) == text


@settings(max_examples=150, deadline=None)
@given(words=st.lists(st.sampled_from(WORDS), min_size=3, max_size=5), number=st.none() | st.integers(0, 999),
       quote=st.sampled_from(['"{p}"', "'{p}'", "“{p}”"]),
       form=st.sampled_from(["The passphrase is {q}", "Remember: SSH key passphrase is {q}", "The password is {q}.",
                             "the wifi password was changed to {q} yesterday"]))
def test_property_words_in_quotes_stated_as_a_passphrase_are_hidden_alone(words: list[str], number: int | None,
                                                                          quote: str, form: str) -> None:
    """OBS-58: a passphrase written with blanks, a number among its words perhaps, in quotes where a sentence states
    it (``The passphrase is "blue whale 42 sunrise"``)."""
    if number is not None:
        words = words[:1] + [str(number)] + words[1:]
    value = " ".join(words)
    _hidden_alone(form.format(q=quote.format(p=value)), value)


@pytest.mark.parametrize("text", ['The password is "see the vault"', 'the password is "not set yet"',
                                  'The password is "the same as above"', 'the token is "read from env"'])
def test_notes_in_quotes_stated_as_the_value_stay(text: str) -> None:
    assert scrub_text(text) == text


@pytest.mark.parametrize(("text", "value"), [
    ("User's NAS: 192.168.1.20, admin / Tr0ub4dor&3x", "Tr0ub4dor&3x"),
    ("router: 10.0.0.1:8080, root / Xk9mQ2vLp7", "Xk9mQ2vLp7"),
    ("staging db: db.internal, bob@example.com / Falcon#1302", "Falcon#1302"),
    ("The door code at the office is 4471", "4471"), ("the alarm code in the shed: 90210", "90210")])
def test_an_address_before_a_login_and_a_place_after_a_code(text: str, value: str) -> None:
    """A service's login line noting its address first (the address and the user stay), and a code's place named
    after it (``the door code at the office is …``)."""
    _hidden_alone(text, value)
